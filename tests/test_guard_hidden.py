"""Ignored files pytest still reads: a ``conftest.py`` hidden from git through
``.git/info/exclude`` or a ``.gitignore`` is part of the change the guards judge, in the
snapshot, in ``axpipe guard`` and in the repair loop."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from conftest import CLI
from helpers import git

from axpipe.change.from_git import snapshot
from axpipe.change.runner_files import ignored_runner_files
from axpipe.guard.run import find_cheating

AGENT = Path(__file__).resolve().parent / "agents" / "scripted_agent.py"
CALC = "def add(a, b):\n    return a - b\n"
TESTS = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
SKIP_ALL = ("import pytest\n\n\ndef pytest_collection_modifyitems(config, items):\n    for item in items:\n"
            "        item.add_marker(pytest.mark.skip(reason='later'))\n")
FIXTURE = "import pytest\n\n\n@pytest.fixture\ndef numbers():\n    return [1, 2]\n"
HIDE = "echo conftest.py >> .git/info/exclude"


@pytest.fixture
def calc(repo: Path) -> Path:
    (repo / "calc.py").write_text(CALC)
    (repo / "tests").mkdir()
    (repo / "tests" / "test_calc.py").write_text(TESTS)
    (repo / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    (repo / ".gitignore").write_text("__pycache__/\nhtmlcov/\nbuild/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "calc")
    return repo


def listed(root: Path, tree: str) -> list[str]:
    return git(root, "ls-tree", "-r", "--name-only", tree).split()


def test_a_conftest_hidden_through_info_exclude_is_judged(calc: Path) -> None:
    before = snapshot(calc)
    with (calc / ".git" / "info" / "exclude").open("a") as exclude:
        exclude.write("conftest.py\n")
    (calc / "conftest.py").write_text(SKIP_ALL)
    assert git(calc, "status", "--porcelain") == ""  # invisible to git itself
    findings = find_cheating(calc, before)
    assert [(finding.file, finding.guard) for finding in findings] == [("conftest.py", "skipped-test")]
    assert "conftest.py" in listed(calc, snapshot(calc))


def test_only_folders_pytest_collects_are_looked_into(calc: Path) -> None:
    (calc / ".git" / "info" / "exclude").write_text("tests/conftest.py\nlocal/\n")
    for path in ("tests/conftest.py", "htmlcov/conftest.py", "local/deep/setup.cfg", "build/conftest.py",
                 ".venv/lib/conftest.py", "env/conftest.py", "htmlcov/notes.py"):
        (calc / path).parent.mkdir(parents=True, exist_ok=True)
        (calc / path).write_text("# x\n")
    (calc / "env" / "pyvenv.cfg").write_text("home = /usr\n")   # a virtualenv: pytest skips it
    (calc / ".gitignore").write_text("__pycache__/\nhtmlcov/\nbuild/\nenv/\n")
    expected = ["htmlcov/conftest.py", "local/deep/setup.cfg", "tests/conftest.py"]
    assert ignored_runner_files(calc) == expected
    index_before = (calc / ".git" / "index").read_bytes()
    shot = listed(calc, snapshot(calc / "tests"))  # also from a subfolder
    assert set(expected) <= set(shot) and not {"build/conftest.py", "htmlcov/notes.py"} & set(shot)
    assert (calc / ".git" / "index").read_bytes() == index_before  # the user's index is untouched


def test_a_hidden_conftest_that_did_not_change_is_no_change(calc: Path) -> None:
    (calc / ".git" / "info" / "exclude").write_text("conftest.py\n")
    (calc / "conftest.py").write_text(SKIP_ALL)  # the developer's own, there before the agent ran
    before = snapshot(calc)
    (calc / "calc.py").write_text(CALC.replace("-", "+"))
    assert find_cheating(calc, before) == []


def test_a_hidden_honest_conftest_passes(calc: Path) -> None:
    before = snapshot(calc)
    (calc / ".git" / "info" / "exclude").write_text("conftest.py\n")
    (calc / "conftest.py").write_text(FIXTURE)
    assert find_cheating(calc, before) == []


def test_axpipe_guard_sees_a_hidden_conftest(cli: CLI, calc: Path) -> None:
    (calc / ".git" / "info" / "exclude").write_text("conftest.py\n")
    (calc / "conftest.py").write_text(SKIP_ALL)
    result = cli("guard")
    assert result.exit_code == 1, result.stderr
    assert "conftest.py:6: skipped-test: pytest_collection_modifyitems now skips tests" in result.stdout


def agent_command(tmp_path: Path, turns: list[dict[str, object]]) -> str:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"turns": turns, "default": {}}))
    return f"env SCRIPTED_AGENT_PLAN={shlex.quote(str(plan))} {shlex.quote(sys.executable)} {shlex.quote(str(AGENT))}"


TARGET = f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider"
CHEAT = {"run": [HIDE], "write": {"conftest.py": SKIP_ALL}}
FIX = {"replace": [["calc.py", "a - b", "a + b"]]}


def test_the_repair_loop_rejects_a_hidden_cheat(cli: CLI, calc: Path, tmp_path: Path) -> None:
    # --allow-test-edits: the guards judge the hidden conftest.py (protected tests would revert it first)
    result = cli("repair", TARGET, "--json", "--allow-test-edits", "--agent-command",
                 agent_command(tmp_path, [CHEAT, FIX, FIX]))
    report = json.loads(result.stdout)
    first = report["iterations"][0]
    assert first["guard"] == "skipped-test"
    assert first["fix"].startswith("rejected by the skipped-test guard (conftest.py:6: skipped-test: "
                                   "pytest_collection_modifyitems now skips tests")
    assert report["discarded"] == ["iteration 1: conftest.py (+6 -0) (skipped-test)"]


def test_a_rejected_hidden_cheat_is_removed_by_the_revert(cli: CLI, calc: Path, tmp_path: Path) -> None:
    result = cli("repair", TARGET, "--json", "--agent-command", agent_command(tmp_path, [CHEAT, FIX, FIX]))
    report = json.loads(result.stdout)
    assert not (calc / "conftest.py").exists()
    assert report["status"] == "resolved" and report["iterations_used"] == 3, report
    assert "calc.py" in report["final_diff"] and "conftest.py" not in report["final_diff"]


def test_the_repair_loop_keeps_an_honest_hidden_conftest(cli: CLI, calc: Path, tmp_path: Path) -> None:
    honest = {"run": [HIDE], "write": {"conftest.py": FIXTURE}, "replace": [["calc.py", "a - b", "a + b"]]}
    result = cli("repair", TARGET, "--json", "--allow-test-edits", "--agent-command", agent_command(tmp_path, [honest]))
    assert result.exit_code == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["status"] == "resolved" and not report["discarded"]
    assert "conftest.py (+6 -0)" in report["iterations"][0]["fix"]
