"""A plain, non-editable `pip install .` into a fresh venv gives a working axpipe from any
directory, with conf, recipes and first-party plugins inside the installed package."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT, project_venv
from review_fixtures import build

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    venv = tmp_path_factory.mktemp("fresh") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    completed = subprocess.run([*pip, str(ROOT)], capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr[-3000:]
    # The demo's lint check needs ruff, which axpipe ships as an optional extra.
    completed = subprocess.run([*pip, "ruff"], capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return venv


def run(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), "/usr/local/bin", "/usr/bin", "/bin"])
    return subprocess.run([str(venv / "bin" / "axpipe"), *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=120)


def test_the_installed_package_carries_conf_recipes_and_plugins(installed: Path, tmp_path: Path) -> None:
    listing = run(installed, "recipes", "list", "--json", cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    demo = next(item for item in json.loads(listing.stdout) if item["name"] == "demo")
    assert demo["source"] == "built-in"
    assert "site-packages/axpipe/_bundled/recipes/demo.yaml" in demo["path"]
    plugins = json.loads(run(installed, "plugins", "list", "--json", cwd=tmp_path).stdout)
    builtin = {plugin["name"] for plugin in plugins if plugin["distribution"] == "axpipe"}
    assert {"command", "oracle", "no-match"} <= builtin
    assert all(plugin["error"] is None for plugin in plugins)


def test_the_installed_axpipe_runs_the_demo_from_any_directory(installed: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "somewhere" / "else"
    elsewhere.mkdir(parents=True)
    result = run(installed, "run", "recipe=demo", "--json", cwd=elsewhere)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    finished = {event["check"]: event for event in events if event["type"] == "check.finished"}
    assert finished["unit-tests"]["status"] == "passed"  # after the scripted agent fixed the planted bug
    assert events[-1]["type"] == "run.finished" and events[-1]["status"] == "succeeded"
    assert (elsewhere / ".axpipe" / "runs").is_dir()
    assert not (elsewhere / "outputs").exists()


def test_the_demo_runs_without_the_venv_on_path(installed: Path, tmp_path: Path) -> None:
    # As from pipx or a venv that is not activated: `python3` on PATH is another Python,
    # which cannot import axpipe's sample agent; ruff is found next to axpipe's interpreter.
    system_python = next((folder for folder in ("/usr/local/bin", "/usr/bin", "/bin")
                          if (Path(folder) / "python3").exists()), None)
    if system_python is None:
        pytest.skip("no python3 outside the venv on this machine")
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = os.pathsep.join(["/usr/local/bin", "/usr/bin", "/bin"])
    result = subprocess.run([str(installed / "bin" / "axpipe"), "run", "recipe=demo"], cwd=tmp_path,
                            capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "python3 -m unittest -q in 3/4" in result.stdout


def test_run_help_and_cfg_work_when_installed(installed: Path, tmp_path: Path) -> None:
    assert run(installed, "run", "--help", cwd=tmp_path).returncode == 0
    shown = run(installed, "run", "recipe=demo", "--cfg", "job", cwd=tmp_path)
    assert "name: demo" in shown.stdout


def test_receipts_verify_runs_the_projects_pytest_not_axpipes(installed: Path, repo: Path) -> None:
    # As from pipx: axpipe's venv has no pytest, and python3 on PATH is that venv's.
    assert subprocess.run([str(installed / "bin" / "python"), "-c", "import pytest"],
                          capture_output=True).returncode != 0
    build(repo)
    result = run(installed, "receipts", "verify", "--root", "review", cwd=repo)
    assert result.returncode == 1
    assert (f"pytest is not installed for {installed / 'bin' / 'python3'} (python3 on PATH): install it there, or "
            "name another interpreter with --python") in result.stdout
    # The project's own venv, which has pytest, runs its tests.
    project_venv(repo / ".venv")
    (repo / ".git" / "info" / "exclude").write_text(".venv/\n")
    result = run(installed, "receipts", "verify", "--root", "review", cwd=repo)
    assert result.returncode == 0, result.stdout
    assert "1 fixed with a passing regression test" in result.stdout
