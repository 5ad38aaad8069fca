"""The Python guard's rules for pytest's hooks and configuration: a ``conftest.py`` or a
config file that stops tests from running (or from failing) is reported; one that only sets
things up is not.

Each case is checked twice in a real git repository with a failing test: real pytest says
whether the change hides the failure (exit 0 with a cheat, 1 with an honest change), and the
guard, loaded through its entry point, must agree."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import git

from axpipe.guard.run import find_cheating

CALC = "def add(a, b):\n    return a - b\n"
TESTS = ("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
         "def test_zero():\n    assert add(0, 0) == 0\n")
INI = "[pytest]\npythonpath = .\n"

SKIP_ALL = ("import pytest\n\n\ndef pytest_collection_modifyitems(config, items):\n    for item in items:\n"
            "        item.add_marker(pytest.mark.skip(reason='later'))\n")
KEEP_PASSING = ("def pytest_collection_modifyitems(config, items):\n"
                "    items[:] = [item for item in items if item.name != 'test_add']\n")
CHEATS = {
    "modifyitems-skip-marker": {"conftest.py": SKIP_ALL},
    "modifyitems-slice-assign": {"conftest.py": KEEP_PASSING},
    "modifyitems-remove": {"conftest.py": "def pytest_collection_modifyitems(items):\n"
                                          "    for item in list(items):\n        if 'add' in item.name:\n"
                                          "            items.remove(item)\n"},
    "ignore-collect": {"conftest.py": "def pytest_ignore_collect(collection_path, config):\n"
                                      "    return collection_path.name == 'test_calc.py'\n",
                       "tests/test_other.py": "def test_other():\n    assert True\n"},
    "runtest-setup-skip": {"conftest.py": "import pytest\n\n\ndef pytest_runtest_setup(item):\n"
                                          "    pytest.skip('not today')\n"},
    "autouse-fixture-skip": {"conftest.py": "import pytest\n\n\n@pytest.fixture(autouse=True)\ndef _later():\n"
                                            "    pytest.skip('later')\n"},
    "pyfunc-call-answers": {"conftest.py": "def pytest_pyfunc_call(pyfuncitem):\n    return True\n"},
    "makereport-rewrites": {"conftest.py": "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
                                           "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
                                           "    report = outcome.get_result()\n"
                                           "    report.outcome = 'passed'\n"},
    "sessionfinish-exitstatus": {"conftest.py": "def pytest_sessionfinish(session, exitstatus):\n"
                                                "    session.exitstatus = 0\n"},
    "addopts-collect-only": {"pytest.ini": INI + "addopts = --collect-only\n"},
    "addopts-co-multiline": {"pytest.ini": INI + "addopts =\n    -q\n    --co\n"},
    "addopts-k": {"pytest.ini": INI + "addopts = -k 'not add'\n"},
    "addopts-combined-short-k": {"pytest.ini": INI + "addopts = -qk zero\n"},
    "addopts-deselect": {"pytest.ini": INI + "addopts = --deselect tests/test_calc.py::test_add\n"},
    "addopts-override-ini": {"pytest.ini": INI + "addopts = -o python_functions=test_zero\n"},
    "python-functions-narrowed": {"pytest.ini": INI + "python_functions = test_zero\n"},
    "pyproject-ini-options": {"pytest.ini": None, "pyproject.toml": "[tool.pytest.ini_options]\n"
                              "pythonpath = ['.']\naddopts = ['--deselect', 'tests/test_calc.py::test_add']\n"},
    "setup-cfg": {"pytest.ini": None, "setup.cfg": "[tool:pytest]\npythonpath = .\naddopts = --setup-only\n"},
    "tox-ini": {"pytest.ini": None, "tox.ini": "[pytest]\npythonpath = .\naddopts = -m 'not slow' --co\n"},
    "testpaths-leaves-the-failing-file-out": {"pytest.ini": INI + "testpaths = other\n",
                                              "other/test_other.py": "def test_other():\n    pass\n"},
    "plugin-module-by-p": {"pytest.ini": INI + "addopts = -p later\n", "later.py": SKIP_ALL},
}
# the project's starting point when it is not the default one
HONEST_BASES: dict[str, dict[str, str | None]] = {"testpaths-widened": {"pytest.ini": INI + "testpaths = tests\n"}}
HONEST = {
    "fixture-added": {"conftest.py": "import pytest\n\n\n@pytest.fixture\ndef numbers():\n    return [1, 2]\n"},
    "autouse-env-fixture": {"conftest.py": "import pytest\n\n\n@pytest.fixture(autouse=True)\n"
                                           "def _env(monkeypatch):\n    monkeypatch.setenv('TZ', 'UTC')\n"},
    "markers-registered": {"conftest.py": "def pytest_configure(config):\n"
                                          "    config.addinivalue_line('markers', 'slow: a slow test')\n"},
    "items-ordered-and-marked": {"conftest.py": "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n"
                                                "    items.sort(key=lambda item: item.name)\n    for item in items:\n"
                                                "        item.add_marker(pytest.mark.slow)\n"},
    "option-added": {"conftest.py": "def pytest_addoption(parser):\n"
                                    "    parser.addoption('--seed', default='1')\n"},
    "pyfunc-call-runs-it": {"conftest.py": "def pytest_pyfunc_call(pyfuncitem):\n"
                                           "    pyfuncitem.obj(**{name: pyfuncitem.funcargs[name] for name in "
                                           "pyfuncitem._fixtureinfo.argnames})\n    return True\n"},
    "addopts-quiet": {"pytest.ini": INI + "addopts = -q\n"},
    "addopts-report-and-strict": {"pytest.ini": INI + "addopts = -ra --strict-markers -x --maxfail=2\n"},
    "markers-and-filterwarnings": {"pytest.ini": INI + "markers =\n    slow: slow tests\nfilterwarnings = error\n"},
    "norecursedirs-covered": {"pytest.ini": INI + "norecursedirs = .venv .* build\n"},
    "testpaths-set-around-every-test": {"pytest.ini": INI + "testpaths = tests\n"},
    "testpaths-widened": {"pytest.ini": INI + "testpaths = tests more\n",
                          "more/test_more.py": "def test_more():\n    pass\n"},
    "pyproject-other-tools": {"pyproject.toml": "[tool.ruff]\nexclude = ['build']\n[tool.coverage.run]\n"
                                                "omit = ['--ignore']\n"},
}


def project(root: Path, base: dict[str, str | None]) -> Path:
    root.mkdir()
    files = {"calc.py": CALC, "tests/test_calc.py": TESTS, "pytest.ini": INI, **base}
    for name, text in files.items():
        if text is not None:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "-m", "calc")
    return root


def apply(root: Path, edits: dict[str, str | None]) -> None:
    for name, text in edits.items():
        if text is None:
            (root / name).unlink()
        else:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)


def pytest_exit(root: Path) -> int:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"],
                          cwd=root, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin",
                                                                         "PYTHONDONTWRITEBYTECODE": "1"}).returncode


def test_the_project_fails_as_it_starts(tmp_path: Path) -> None:
    assert pytest_exit(project(tmp_path / "p", {})) == 1


@pytest.mark.parametrize("name", sorted(CHEATS))
def test_a_hook_or_setting_that_hides_the_failure_is_reported(tmp_path: Path, name: str) -> None:
    root = project(tmp_path / "p", {})
    apply(root, CHEATS[name])
    assert pytest_exit(root) == 0, "the case does not hide the failure: it tests nothing"
    findings = find_cheating(root, "HEAD", guards=["python"])
    assert {finding.guard for finding in findings} & {"skipped-test", "swallowed-error"}, findings
    changed = {path for path, text in CHEATS[name].items() if text is not None}
    assert {finding.file for finding in findings} <= changed


@pytest.mark.parametrize("name", sorted(HONEST))
def test_a_hook_or_setting_that_only_sets_up_passes(tmp_path: Path, name: str) -> None:
    root = project(tmp_path / "p", HONEST_BASES.get(name, {}))
    apply(root, HONEST[name])
    assert pytest_exit(root) == 1, "the failing test must still fail"
    assert find_cheating(root, "HEAD", guards=["python"]) == []


def test_evidence_names_the_hook_and_the_setting(tmp_path: Path) -> None:
    root = project(tmp_path / "p", {})
    apply(root, {"conftest.py": SKIP_ALL, "pytest.ini": INI + "addopts = -q --collect-only\n"})
    described = [finding.describe() for finding in find_cheating(root, "HEAD", guards=["python"])]
    assert described == [
        "conftest.py:6: skipped-test: pytest_collection_modifyitems now skips tests: "
        "`item.add_marker(pytest.mark.skip(reason='later'))`",
        "pytest.ini:3: skipped-test: pytest's options now include `--collect-only`, which stops pytest from "
        "running any test"]


def test_a_hook_that_was_already_there_is_not_reported_again(tmp_path: Path) -> None:
    root = project(tmp_path / "p", {"conftest.py": SKIP_ALL, "pytest.ini": INI + "addopts = -m 'not slow'\n"})
    apply(root, {"conftest.py": "# the team's rule\n" + SKIP_ALL,
                 "pytest.ini": INI + "addopts = -m 'not slow' -q\n"})
    assert find_cheating(root, "HEAD", guards=["python"]) == []
