"""Protected tests (repair.protect, goal.protect): an agent's edits to the project's tests are
reverted before any guard runs and reported as protected-path, in a repair and in a goal's
unit; allowing test edits turns it off. Real repositories, the real CLI, scripted agents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import CLI
from goalkit import Project
from helpers import git
from test_repair import CHEAT, FIX, TEST_CALC, agent_command, make_calc, report_of

from axpipe.guard import protect

WEAKENED = {"replace": [["test_calc.py", "self.assertEqual(add(2, 3), 5)", "self.assertTrue(add(2, 3))"]]}


@pytest.fixture
def calc(repo: Path) -> Path:
    return make_calc(repo)


def test_a_repairs_edit_to_a_test_is_reverted_as_protected_path(cli: CLI, calc: Path, tmp_path: Path) -> None:
    result = cli("repair", "python3 -m unittest -q", "--json", "--agent-command", agent_command(tmp_path, [CHEAT, FIX]))
    assert result.exit_code == 0, result.stdout + result.stderr
    report = report_of(result)
    first = report["iterations"][0]
    assert first["guard"] == protect.GUARD
    assert first["evidence"] == ["test_calc.py: protected-path: the fix edited a protected file (repair.protect); "
                                 "the edit was reverted"]
    assert report["discarded"] == ["iteration 1: test_calc.py (+1 -0) (protected-path)"]
    assert (calc / "test_calc.py").read_text() == TEST_CALC  # byte for byte
    assert report["final_diff"] == "calc.py (+1 -1)"


def test_a_protected_edit_the_agent_staged_is_unstaged_and_the_users_staging_stays(
        cli: CLI, calc: Path, tmp_path: Path) -> None:
    (calc / "notes.txt").write_text("staged by the user\n")
    git(calc, "add", "notes.txt")
    staged = {**CHEAT, "replace": [*CHEAT["replace"], *FIX["replace"]], "run": ["git add test_calc.py calc.py"]}
    result = cli("repair", "python3 -m unittest -q", "--json", "--agent-command", agent_command(tmp_path, [staged]))
    assert result.exit_code == 0, result.stdout + result.stderr
    assert report_of(result)["iterations"][0]["guard"] == protect.GUARD
    assert git(calc, "diff", "--cached", "--name-only").split() == ["calc.py", "notes.txt"]
    assert git(calc, "show", ":test_calc.py") == TEST_CALC  # the entry before the agent ran


def test_the_rest_of_a_fix_that_also_edits_a_test_is_kept_and_judged(cli: CLI, calc: Path, tmp_path: Path) -> None:
    both = {"replace": [*WEAKENED["replace"], *FIX["replace"]]}
    (calc / "notes.txt").write_text("the user's\n")
    before = (calc / "notes.txt").stat()
    result = cli("repair", "python3 -m unittest -q", "--json", "--agent-command", agent_command(tmp_path, [both]))
    assert result.exit_code == 0, result.stdout + result.stderr
    report = report_of(result)
    first = report["iterations"][0]
    assert first["guard"] == protect.GUARD
    assert first["fix"] == "calc.py (+1 -1); the edits to protected files were reverted (test_calc.py)"
    assert report["status"] == "resolved" and report["final_diff"] == "calc.py (+1 -1)"
    assert (calc / "test_calc.py").read_text() == TEST_CALC
    after = (calc / "notes.txt").stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)  # only the protected path


def test_allowing_test_edits_lets_the_guards_judge_them(cli: CLI, calc: Path, tmp_path: Path) -> None:
    result = cli("repair", "python3 -m unittest -q", "--json", "--allow-test-edits", "--budget", "1",
                 "--agent-command", agent_command(tmp_path, [WEAKENED]))
    report = report_of(result)
    assert report["iterations"][0]["guard"] == "loosened-assertion"  # the guards, not the protection


def test_protect_names_the_files_a_fix_may_not_touch(cli: CLI, calc: Path, tmp_path: Path) -> None:
    # Only calc.py is protected here: editing the test is allowed, fixing calc.py is not.
    result = cli("repair", "python3 -m unittest -q", "--json", "--budget", "1", "--protect", "calc.py",
                 "--agent-command", agent_command(tmp_path, [FIX]))
    assert result.exit_code == 4, result.stdout + result.stderr
    report = report_of(result)
    assert report["iterations"][0]["guard"] == protect.GUARD
    assert "return a - b" in (calc / "calc.py").read_text()


def test_a_file_the_fix_created_under_a_protected_path_is_removed(cli: CLI, calc: Path, tmp_path: Path) -> None:
    planted = {"write": {"tests/conftest.py": "collect_ignore = ['test_calc.py']\n"}}
    result = cli("repair", "python3 -m unittest -q", "--json", "--budget", "1",
                 "--agent-command", agent_command(tmp_path, [planted]))
    assert report_of(result)["iterations"][0]["guard"] == protect.GUARD
    assert not (calc / "tests" / "conftest.py").exists()
    assert git(calc, "status", "--porcelain") == ""


@pytest.mark.parametrize(("extra", "message"), [
    ("    protect: []\n", "repair[0].protect: name at least one glob"),
    ("    protect: [tests/**]\n    allow_test_edits: true\n", "repair[0].protect: has no effect with"),
    ("    protect: [/etc/passwd]\n", "repair[0].protect[0]: '/etc/passwd' is absolute"),
])
def test_a_protect_list_that_means_nothing_is_refused(repo: Path, tmp_path: Path, extra: str, message: str) -> None:
    project = Project(repo, tmp_path)
    project.recipe(agent=True, extra=f'repair:\n  - target: "python3 -m unittest -q"\n{extra}')
    result = project.run()
    assert result.exit_code == 2, result.stdout + result.stderr
    assert message in result.stderr


def test_a_goal_units_edit_to_a_test_is_reverted(repo: Path, tmp_path: Path) -> None:
    project = Project(repo, tmp_path)
    both = {"replace": [["test_calc.py", "self.assertEqual(add(2, 3), 5)", "self.assertTrue(True)"],
                        ["calc.py", "a - b", "a + b"]]}
    original = (project.root / "test_calc.py").read_text()
    project.recipe(turns=[both])
    result = project.run("calc", "--json")
    assert (project.root / "test_calc.py").read_text() == original
    events = project.events(result)
    reverted = [event for event in events if event["type"] == "goal.protected_path"]
    assert [event["paths"] for event in reverted] == [["test_calc.py"]]
    assert result.exit_code == 0, result.stdout + result.stderr  # the honest part completes the goal
    assert project.status()["goal"]["status"] == "complete"


def test_a_goal_that_allows_test_edits_keeps_them(repo: Path, tmp_path: Path) -> None:
    project = Project(repo, tmp_path)
    edit = {"replace": [["test_calc.py", "def test_double(self):", "def test_double_again(self):"]]}
    project.recipe(turns=[edit], goal_extra="  allow_test_edits: true\n")
    result = project.run("calc", "--json")
    assert "def test_double_again(self):" in (project.root / "test_calc.py").read_text()
    assert not [event for event in project.events(result) if event["type"] == "goal.protected_path"]
    assert json.dumps(result.stdout).count("protected-path") == 0
