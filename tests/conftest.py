"""Shared fixtures: real git repositories in temporary folders, the CLI as a subprocess,
and an environment that never touches the developer's own projects."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers import GIT_IDENTITY, Completed, git, run_cli

from axpipe.plugin import registry

# Real sample projects live under resources/ (the guard corpus has failing tests on purpose).
collect_ignore = ["resources"]
# A real PostgreSQL for the store contract tests (pg_server, pg_url, store_location).
pytest_plugins = ["pg_plugin"]


@pytest.fixture(scope="session")
def entry_point_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache folder for the whole session (see :func:`isolated_environment`)."""
    return tmp_path_factory.mktemp("xdg-cache")


@pytest.fixture(autouse=True)
def isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, entry_point_cache: Path) -> Iterator[None]:
    """No recipe path, debug flag or git identity leaks in from the developer's shell; the
    private folder is the test's own; the venv's programs (ruff, python3) are on PATH, as in
    an activated venv.

    ``CI`` and ``BUILD_NUMBER`` are removed because the sample projects' own pytest reads
    them: on a CI machine it prints its short summary untruncated, so the tool output kept
    in gate and repair reports (and their snapshots) would differ from a developer's run.
    ``PYTEST_ADDOPTS`` would reach those inner runs too.

    ``PYTHONDONTWRITEBYTECODE`` and ``PYTHONUNBUFFERED`` are removed so that every process a
    test starts runs as on a user's machine, where neither is set: with the first, Python
    writes no bytecode anywhere, which hid axpipe leaving ``__pycache__/`` in checkouts and
    running outdated bytecode (``.ci/run`` unsets both for the test process itself).

    ``XDG_CACHE_HOME`` points at a session folder: on Linux stevedore caches entry points
    there in a file per ``sys.path``, and ``python -m axpipe`` puts each test's folder on
    ``sys.path``, so the suite would leave thousands of files in the developer's
    ``~/.cache``. pip's cache stays where it was (``PIP_CACHE_DIR``), so the tests that
    install packages keep using it."""
    for name in ("AXPIPE_RECIPE_PATH", "AXPIPE_STORE_URL", "AXPIPE_DEBUG", "HYDRA_FULL_ERROR",
                 "CI", "BUILD_NUMBER", "PYTEST_ADDOPTS", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AXPIPE_PRIVATE_DIR", str(tmp_path / "private"))
    if "PIP_CACHE_DIR" not in os.environ:
        user_cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
        monkeypatch.setenv("PIP_CACHE_DIR", os.path.join(user_cache, "pip"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(entry_point_cache))
    venv_bin = str(Path(sys.executable).parent)
    if venv_bin not in os.environ.get("PATH", "").split(os.pathsep):
        monkeypatch.setenv("PATH", os.pathsep.join([venv_bin, os.environ.get("PATH", "")]))
    for name, value in GIT_IDENTITY.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    registry.forget()
    yield
    registry.forget()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with one commit."""
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("a project\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


CLI = Callable[..., Completed]


@pytest.fixture
def cli(repo: Path) -> CLI:
    """Call ``axpipe`` as a subprocess, in ``repo`` unless ``cwd=`` says otherwise."""

    def call(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
             timeout: float = 120) -> Completed:
        return run_cli(*args, cwd=cwd or repo, env=env, timeout=timeout)

    return call


@pytest.fixture(scope="session")
def node_modules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """vitest and jest, installed from the npm registry once per session (shared by the gate's
    and the guards' tests of Node runners)."""
    npm = shutil.which("npm")
    if shutil.which("node") is None or npm is None:
        pytest.skip("Node.js and npm are not installed; the Node runners need them (CI has both)")
    folder = tmp_path_factory.mktemp("node-runners")
    version = subprocess.run([npm, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    # npm 10 machines cannot install Vite 8 (docs/reviews.md): there Vite 7 with Vitest 3.
    vitest = {"vitest": "^3.2.0", "vite": "^7.0.0"} if int(version.split(".")[0]) <= 10 else {
        "vitest": "4.1.12", "vite": "^8.0.0"}
    (folder / "package.json").write_text(json.dumps({"name": "axpipe-gate-runners", "private": True,
                                                     "devDependencies": {**vitest, "jest": "^29.7.0"}}))
    completed = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--loglevel=error"], cwd=folder,
                               capture_output=True, text=True, timeout=900)
    assert completed.returncode == 0, f"npm install failed:\n{completed.stdout}\n{completed.stderr}"
    return folder / "node_modules"
