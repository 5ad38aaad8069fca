"""The evidence environment (axpipe.evidence.env): what axpipe runs for its own evidence
leaves the checkout as it found it (DESIGN §8), on a machine with Python's default
settings and on one that sets PYTHONDONTWRITEBYTECODE; and the suite itself runs as on a
user's machine."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest
from conftest import CLI
from helpers import ROOT, git

from axpipe.evidence import bytecode
from axpipe.evidence import env as evidence_env

CALC = "def add(a, b):\n    return a + b\n"
TESTS = """from calc import add


def test_add():
    assert add(1, 2) == 3


def test_known_broken():
    assert add(0, 0) == 1
"""


def test_the_variables_keep_caches_out_and_extend_the_users_pytest_options(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    found = evidence_env.variables(tmp_path, {"PYTEST_ADDOPTS": "-q"})
    assert found["PYTHONPYCACHEPREFIX"] == str(bytecode.evidence_prefix())
    assert found["PYTHONDONTWRITEBYTECODE"] == ""  # the cache outside the checkout is written and reused
    assert found["PYTEST_ADDOPTS"] == "-p no:cacheprovider -q"
    again = evidence_env.variables(tmp_path, {"PYTEST_ADDOPTS": found["PYTEST_ADDOPTS"]})
    assert again["PYTEST_ADDOPTS"] == found["PYTEST_ADDOPTS"]  # never added twice
    caches = [Path(found[name]) for name in ("PYTHONPYCACHEPREFIX", "RUFF_CACHE_DIR", "MYPY_CACHE_DIR")]
    assert all(tmp_path not in path.parents for path in caches)
    assert evidence_env.variables(tmp_path / "other")["MYPY_CACHE_DIR"] != found["MYPY_CACHE_DIR"]


@pytest.mark.parametrize("dont_write_bytecode", [None, "1"], ids=["python-defaults", "dont-write-bytecode"])
def test_a_gate_leaves_no_bytecode_cache_or_report_in_the_checkout(cli: CLI, repo: Path,
                                                                    dont_write_bytecode: str | None,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    if dont_write_bytecode is not None:
        monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", dont_write_bytecode)
    # No .gitignore: whatever a run leaves shows in `git status`. test_known_broken fails at
    # the baseline too, so the test phase also runs in the baseline's worktree.
    (repo / "calc.py").write_text(CALC)
    (repo / "test_calc.py").write_text(TESTS)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "calc")
    (repo / "calc.py").write_text('"""Adding."""\n\n' + CALC)
    result = cli("gate", "--baseline", "HEAD", "--json", "--lint", "ruff check .", "--typecheck", "mypy calc.py",
                 "--test", "python -m pytest -q --junitxml={junit_xml}")
    assert result.exit_code == 0, result.stdout[-3000:] + result.stderr
    test_phase = next(phase for phase in json.loads(result.stdout)["phases"] if phase["name"] == "test")
    assert [(item["verdict"], item["subject"].rpartition(":")[2]) for item in test_phase["items"]] == [
        ("pre-existing", "test_known_broken")]
    left = git(repo, "status", "--porcelain", "--ignored", "--untracked-files=all").splitlines()
    assert [line for line in left if not line.startswith("!! .axpipe/")] == [" M calc.py"]


def test_ci_runs_the_readme_test_command_as_on_a_users_machine() -> None:
    # This machine kind sets PYTHONDONTWRITEBYTECODE and PYTHONUNBUFFERED; a user's does not.
    lines = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if "pytest" in line
             and not line.lstrip().startswith("#")]
    assert len(lines) == 1, lines
    words = shlex.split(lines[0])
    assert words[:5] == ["env", "-u", "PYTHONDONTWRITEBYTECODE", "-u", "PYTHONUNBUFFERED"]
    readme = (ROOT / "README.md").read_text()
    assert f"&& {shlex.join(words[5:])}\n" in readme  # the README's test command, in step


def test_the_tests_run_as_on_a_users_machine() -> None:
    # conftest.isolated_environment: the processes the tests start inherit neither variable
    assert "PYTHONDONTWRITEBYTECODE" not in os.environ and "PYTHONUNBUFFERED" not in os.environ
