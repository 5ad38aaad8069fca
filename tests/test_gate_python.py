"""The gate's test phase on real Python projects (DESIGN §8, "the gate never passes a broken
change"): a fail-fast run is not taken for a complete one, the baseline runs the baseline's
code even where the project is installed in editable mode, and pytest and unittest
commands are narrowed without report flags.

The editable installs are real: ``pip install -e`` of a ``src/``-layout project (hatchling:
a ``.pth`` line naming ``src/``) and of a flat-layout one (setuptools: an import finder
mapping the package to its folder) into a throwaway venv, once per session. The projects'
folders stay where they were installed; each test gives them a fresh repository.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import git, run_cli

PYTEST = "python -m pytest -q -p no:cacheprovider"
KNOWN = "tests.test_calc::test_a_known_failure"
BROKEN = [f"tests.test_calc::test_add_{n}" for n in range(1, 10)]
# The first test fails before the change and after it, the same way; the change (a - b) breaks
# the nine others. A run that stops at the first failure sees only the old one.
TESTS = "from {package} import add\n\n\ndef test_a_known_failure():\n    assert add(0, 0) == 1\n" + "".join(
    f"\n\ndef test_add_{n}():\n    assert add({n}, {n}) == {2 * n}\n" for n in range(1, 10))
ADD = "def add(a, b):\n    return a + b\n"
HATCH = """[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "calc"
version = "0.1"

[tool.hatch.build.targets.wheel]
packages = ["src/calc"]
"""
SETUPTOOLS = """[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "flatcalc"
version = "0.1"

[tool.setuptools]
packages = ["flatcalc"]
"""


@dataclass
class Installed:
    venv: Path
    src_layout: Path  # hatchling, src/calc: the editable install is a .pth line naming src/
    flat_layout: Path  # setuptools, flatcalc/ at the top: an import finder maps the package

    @property
    def env(self) -> dict[str, str]:
        return {"PATH": os.pathsep.join([str(self.venv / "bin"), os.environ["PATH"]])}


def _layout(folder: Path, pyproject: str, package: str) -> None:
    """The project's files, committed in a new repository (any earlier one is gone)."""
    for child in folder.iterdir() if folder.exists() else []:
        shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    source = folder / ("src/calc" if package == "calc" else package)
    for path, text in {folder / "pyproject.toml": pyproject, source / "__init__.py": ADD,
                       folder / "tests" / "test_calc.py": TESTS.format(package=package),
                       folder / ".gitignore": "__pycache__/\n*.egg-info/\n"}.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(folder, "init", "-q", "-b", "main")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "calc")


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """A venv with pytest, and both projects installed in it with ``pip install -e``."""
    base = tmp_path_factory.mktemp("editable")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
           "--disable-pip-version-check"]
    done = subprocess.run([*pip, "pytest", "hatchling", "editables", "setuptools>=64"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    found = Installed(venv, base / "srcproj", base / "flatproj")
    _layout(found.src_layout, HATCH, "calc")
    _layout(found.flat_layout, SETUPTOOLS, "flatcalc")
    done = subprocess.run([*pip, "--no-build-isolation", "--no-deps", "-e", str(found.src_layout), "-e",
                           str(found.flat_layout)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return found


@pytest.fixture
def src_layout(installed: Installed) -> Path:
    _layout(installed.src_layout, HATCH, "calc")
    return installed.src_layout


def break_add(source: Path, body: str = "    return a - b\n") -> None:
    source.write_text(ADD.replace("    return a + b\n", body))


def gate(root: Path, test: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    result = run_cli("gate", "--baseline", "HEAD", "--json", "--test", test, cwd=root, env=env)
    assert result.stdout.startswith("{"), result.stderr
    return result.exit_code, json.loads(result.stdout)


def verdicts(report: dict[str, Any]) -> dict[str, list[str]]:
    items = report["phases"][0]["items"]
    return {verdict: sorted(item["subject"] for item in items if item["verdict"] == verdict)
            for verdict in ("blamed", "pre-existing")}


def whys(report: dict[str, Any]) -> dict[str, str]:
    return {item["subject"]: item["why"] for item in report["phases"][0]["items"]}


# -- a run that stops early proves nothing about the tests it skipped -------------------------


@pytest.mark.slow
def test_a_fail_fast_run_in_an_editable_src_layout_blames_every_broken_test(installed: Installed,
                                                                            src_layout: Path) -> None:
    break_add(src_layout / "src" / "calc" / "__init__.py")
    code, report = gate(src_layout, f"{PYTEST} -x --junitxml={{junit_xml}}", installed.env)
    assert code == 1, report["summary"]
    assert verdicts(report) == {"blamed": BROKEN, "pre-existing": [KNOWN]}
    test = report["phases"][0]
    assert "-x" not in test["attempts"][0]["command"].split()
    assert "ran without -x: a pytest run that stops early proves nothing about the tests it skips" in test["summary"]


def test_a_fail_fast_option_in_the_configuration_loses_too(repo: Path) -> None:
    # addopts = -x, --maxfail=1 on the command line: neither stops the gate's run early
    (repo / "pytest.ini").write_text("[pytest]\naddopts = -x\n")
    (repo / "calc.py").write_text(ADD)
    (repo / "tests").mkdir()
    (repo / "tests" / "test_calc.py").write_text(TESTS.format(package="calc"))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "calc")
    break_add(repo / "calc.py")
    code, report = gate(repo, f"{PYTEST} --maxfail=1 --junitxml={{junit_xml}}")
    assert code == 1
    assert verdicts(report) == {"blamed": BROKEN, "pre-existing": [KNOWN]}


@pytest.mark.parametrize("command", [PYTEST, f"{PYTEST} || true"], ids=["exit code", "exit code hidden"])
def test_a_run_that_stopped_before_its_end_fails_closed(repo: Path, command: str) -> None:
    # pytest.exit() in the middle of the run: exit code 2 (or pytest's words when `|| true`
    # hides it), the later tests never ran
    (repo / "calc.py").write_text(ADD)
    (repo / "tests").mkdir()
    (repo / "tests" / "test_calc.py").write_text(TESTS.format(package="calc").replace(
        "def test_add_5():", "def test_stop():\n    import pytest\n    pytest.exit('stopping here', returncode=2)\n"
                             "\n\ndef test_add_5():"))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "calc")
    (repo / "calc.py").write_text(ADD + "\n# a harmless change\n")
    code, report = gate(repo, command)
    assert code == 1
    assert verdicts(report) == {"blamed": ["(the test run)"], "pre-existing": [KNOWN]}
    assert whys(report)["(the test run)"] == ("the run stopped before its end, so the tests after that point never "
                                              "ran and the change is not shown to pass them")


# -- the baseline runs the baseline's code ----------------------------------------------------


@pytest.mark.slow
def test_an_editable_src_layout_install_does_not_make_the_baseline_run_the_workspace(installed: Installed,
                                                                                     src_layout: Path) -> None:
    break_add(src_layout / "src" / "calc" / "__init__.py")
    code, report = gate(src_layout, f"{PYTEST} --junitxml={{junit_xml}}", installed.env)
    assert code == 1, report["summary"]
    assert verdicts(report) == {"blamed": BROKEN, "pre-existing": [KNOWN]}
    assert {whys(report)[test] for test in BROKEN} == {"it passes at the baseline"}


@pytest.mark.slow
def test_an_editable_flat_layout_install_does_not_make_the_baseline_run_the_workspace(installed: Installed) -> None:
    # setuptools maps flatcalc to the workspace's folder with an import finder; `pytest` (the
    # venv's script) puts tests/ on sys.path, not the checkout, so only the finder knows flatcalc
    root = installed.flat_layout
    _layout(root, SETUPTOOLS, "flatcalc")
    break_add(root / "flatcalc" / "__init__.py")
    code, report = gate(root, "pytest -q -p no:cacheprovider --junitxml={junit_xml}", installed.env)
    assert code == 1, report["summary"]
    assert verdicts(report) == {"blamed": BROKEN, "pre-existing": [KNOWN]}


def test_a_pythonpath_into_the_workspace_is_moved_to_the_baseline(repo: Path) -> None:
    (repo / "src" / "calc").mkdir(parents=True)
    (repo / "src" / "calc" / "__init__.py").write_text(ADD)
    (repo / "tests").mkdir()
    (repo / "tests" / "test_calc.py").write_text(TESTS.format(package="calc"))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "calc")
    break_add(repo / "src" / "calc" / "__init__.py")
    code, report = gate(repo, f"{PYTEST} --junitxml={{junit_xml}}", {"PYTHONPATH": str(repo / "src")})
    assert code == 1, report["summary"]
    assert verdicts(report) == {"blamed": BROKEN, "pre-existing": [KNOWN]}


LOADS_BY_PATH = """import importlib.util
import os

spec = importlib.util.spec_from_file_location("calc", os.environ["CALC_SOURCE"])
calc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(calc)
add = calc.add
"""


def test_a_baseline_that_opened_the_changes_files_fails_closed(repo: Path) -> None:
    # The tests load calc.py from an absolute path in the environment: nothing can move that
    # to the baseline's copy, but the baseline's Python is seen opening the workspace's file.
    for name, text in {"calc.py": ADD, "tests/__init__.py": "", "tests/loader.py": LOADS_BY_PATH,
                       "tests/test_calc.py": TESTS.format(package="tests.loader")}.items():
        (repo / name).parent.mkdir(exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "calc")
    break_add(repo / "calc.py")
    code, report = gate(repo, f"{PYTEST} --junitxml={{junit_xml}}", {"CALC_SOURCE": str(repo / "calc.py")})
    assert code == 1, report["summary"]
    assert verdicts(report)["pre-existing"] == []
    assert whys(report)["tests.test_calc::test_a_known_failure"] == (
        "the baseline run read the change's own file(s) (calc.py) from the workspace instead of the baseline's, so "
        "its failures may be the change's: not known to fail at the baseline")


@pytest.mark.slow
def test_a_baseline_python_that_cannot_be_isolated_fails_closed(installed: Installed, src_layout: Path) -> None:
    # `python -I` ignores PYTHONPATH: the isolation never loads, the editable install wins
    break_add(src_layout / "src" / "calc" / "__init__.py")
    code, report = gate(src_layout, "python -I -m pytest -q -p no:cacheprovider --junitxml={junit_xml}", installed.env)
    assert code == 1, report["summary"]
    assert verdicts(report) == {"blamed": sorted([KNOWN, *BROKEN]), "pre-existing": []}
    assert whys(report)[KNOWN].startswith("the baseline run's Python never loaded axpipe's isolation")


@pytest.mark.slow
def test_a_baseline_that_named_the_changes_files_fails_closed(installed: Installed, src_layout: Path) -> None:
    # A runner axpipe does not know, under `python -I`: nothing isolates it, but its
    # tracebacks name the workspace's src/calc/__init__.py, a file the change touched.
    break_add(src_layout / "src" / "calc" / "__init__.py", "    raise ValueError('broken')\n")
    command = "sh -c 'python -I -m pytest -q -p no:cacheprovider --junitxml=\"$AXPIPE_JUNIT_XML\"'"
    code, report = gate(src_layout, command, installed.env)
    assert code == 1, report["summary"]
    assert verdicts(report)["pre-existing"] == []
    assert whys(report)[KNOWN] == (
        "the baseline run read the change's own file(s) (src/calc/__init__.py) from the workspace instead of the "
        "baseline's, so its failures may be the change's: not known to fail at the baseline")


# -- test identities without report flags -----------------------------------------------------


def _calc_repo(repo: Path, tests: dict[str, str]) -> None:
    (repo / "calc.py").write_text(ADD)
    for name, text in tests.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "calc")
    break_add(repo / "calc.py", "    return a - b if a != 3 else a + b\n")  # breaks all but test_add_3


def test_a_plain_pytest_command_is_narrowed(repo: Path) -> None:
    _calc_repo(repo, {"tests/test_calc.py": TESTS.format(package="calc")})
    code, report = gate(repo, PYTEST)
    assert code == 1
    assert verdicts(report) == {"blamed": [name for name in BROKEN if not name.endswith("_3")], "pre-existing": [KNOWN]}


UNITTESTS = """import unittest

from calc import add


class Calc(unittest.TestCase):
    def test_a_known_failure(self):
        self.assertEqual(add(0, 0), 1)

    def test_add_2(self):
        \"\"\"A docstring's first line is printed under the test's name.\"\"\"
        self.assertEqual(add(2, 2), 4)

    def test_add_3(self):
        self.assertEqual(add(3, 3), 6)

    def test_add_4(self):
        with self.subTest(n=4):
            self.assertEqual(add(4, 4), 8)
"""


@pytest.mark.parametrize("command", ["python -m unittest", "python -m unittest -f discover -s . -p 'test_*.py'"])
def test_a_plain_unittest_command_is_narrowed(repo: Path, command: str) -> None:
    _calc_repo(repo, {"test_calc.py": UNITTESTS})
    code, report = gate(repo, command)
    assert code == 1, report["summary"]
    assert verdicts(report) == {"blamed": ["test_calc.Calc.test_add_2", "test_calc.Calc.test_add_4 (n=4)"],
                                "pre-existing": ["test_calc.Calc.test_a_known_failure"]}
    assert whys(report)["test_calc.Calc.test_add_2"] == (
        "it does not fail at the baseline (unittest's output names only the tests that fail, so it passed there or "
        "did not exist)")


def test_a_long_message_that_names_the_checkout_is_the_same_failure_at_the_baseline(repo: Path) -> None:
    # The worktree's path is longer than the workspace's: a message cut short before the two
    # paths were evened out would read as a different failure.
    (repo / "calc.py").write_text(ADD)
    (repo / "tests").mkdir()
    (repo / "tests" / "test_paths.py").write_text("def test_where():\n    raise ValueError(' '.join([__file__] * 6))\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a test whose message names its file six times")
    (repo / "calc.py").write_text(ADD + "\n# a harmless change\n")
    code, report = gate(repo, PYTEST)
    assert code == 0, report["summary"]
    assert verdicts(report) == {"blamed": [], "pre-existing": ["tests.test_paths::test_where"]}
