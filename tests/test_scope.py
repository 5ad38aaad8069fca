"""The scope contract: after the work phase every committed and every newly dirty path must be
in scope; a violation quarantines the unit's change in a named stash, restores the tree and
blocks the goal (exit 3)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from goalkit import FIX, Project
from helpers import git

from axpipe.unit.scope import Scope, pattern_problem


@pytest.mark.parametrize("pattern, allowed, refused", [
    ("calc.py", ["calc.py"], ["calc.pyc", "src/calc.py", "calc.py.bak"]),
    ("src", ["src", "src/a.py", "src/deep/b.py"], ["srcx/a.py", "lib/src/a.py"]),
    ("src/", ["src/a.py"], ["srcx"]),
    ("./docs/*.md", ["docs/a.md"], ["docs/sub/a.md", "docs/a.txt"]),
    ("src/invoices/**", ["src/invoices/a.py", "src/invoices/x/y/z.py"], ["src/payments/a.py"]),
    ("**/*.test.ts", ["a.test.ts", "src/lib/b.test.ts"], ["src/lib/b.ts"]),
    ("src/*", ["src/a.py", "src/pkg/inner.py"], ["lib/a.py"]),
    ("file?.txt", ["file1.txt"], ["file10.txt"]),
    ("v[12].md", ["v1.md", "v2.md"], ["v3.md"]),
    ("v[1-3].md", ["v1.md", "v2.md", "v3.md"], ["v4.md", "v-.md"]),
    ("v[!1].md", ["v2.md"], ["v1.md", "v/.md"]),
    ("v[^1].md", ["v2.md"], ["v1.md"]),
    ("[[]x].md", ["[x].md"], ["x.md"]),
    (".", ["anything/at/all"], []),
])
def test_scope_globs(pattern: str, allowed: list[str], refused: list[str]) -> None:
    scope = Scope([pattern])
    assert [path for path in allowed if not scope.allows(path)] == []
    assert [path for path in refused if scope.allows(path)] == []


def test_an_empty_scope_allows_nothing() -> None:
    assert Scope([]).outside(["a", "b/c"]) == ["a", "b/c"]


@pytest.mark.parametrize("pattern, problem", [
    ("", "a scope entry must be a non-empty path or glob"),
    ("/abs", "'/abs' is absolute"),
    ("a/../../b", "'a/../../b' leaves the repository ('..')"),
    ("!x", "exclusions are not supported"),
])
def test_bad_patterns(pattern: str, problem: str) -> None:
    found = pattern_problem(pattern)
    assert found is not None and problem in found


@pytest.fixture
def project(repo: Path, tmp_path: Path) -> Project:
    return Project(repo, tmp_path)


def stashes(root: Path) -> list[str]:
    return git(root, "stash", "list", "--format=%gs").splitlines()


def test_work_inside_scope_passes_the_contract(project: Project) -> None:
    project.recipe(turns=[FIX], extra="scope: [calc.py]\n")
    result = project.run()
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "scope held: 1 changed path(s) inside calc.py" in result.stdout
    assert stashes(project.root) == []


def test_a_violation_quarantines_the_unit_restores_the_tree_and_blocks(project: Project) -> None:
    root = project.root
    before_head = git(root, "rev-parse", "HEAD").strip()
    # What was there before the unit stays as it was: a dirty file, an untracked file, a staged one.
    (root / "README.md").write_text("a project, edited by its owner\n")
    (root / "owner-notes.txt").write_text("mine\n")
    (root / "staged.txt").write_text("staged by the owner\n")
    git(root, "add", "staged.txt")
    turn = {"replace": [["calc.py", "a - b", "a + b"]],
            "write": {"docs/new.md": "out of scope\n", "notes/tmp.txt": "untracked, out of scope\n"},
            "delete": ["test_calc.py"],
            "run": ["git add calc.py docs/new.md test_calc.py",
                    "git commit -qm 'agent commit' -- calc.py docs/new.md test_calc.py"]}
    # allow_test_edits: the unit's deletion of the test is scope's to judge (protected tests would revert it)
    project.recipe(turns=[turn], extra="scope: [calc.py]\n", goal_extra="  allow_test_edits: true\n")
    result = project.run()
    assert result.exit_code == 3, result.stdout + result.stderr
    assert stashes(root) == ["axpipe quarantine: calc unit 1"]
    # the tree is as it was before the unit
    assert git(root, "rev-parse", "HEAD").strip() == before_head
    assert "a - b" in (root / "calc.py").read_text()
    assert (root / "test_calc.py").exists()
    assert not (root / "docs").exists() and not (root / "notes").exists()
    assert (root / "README.md").read_text() == "a project, edited by its owner\n"
    assert (root / "owner-notes.txt").read_text() == "mine\n"
    assert git(root, "diff", "--cached", "--name-only").split() == ["staged.txt"]
    # the stash holds exactly the unit's change, untracked files included, and brings it back
    shown = git(root, "stash", "show", "--name-status", "stash@{0}").split("\n")
    assert sorted(line for line in shown if line) == ["A\tdocs/new.md", "A\tnotes/tmp.txt", "D\ttest_calc.py",
                                                      "M\tcalc.py"]
    # the agent's commit stays reachable for a person to look at
    assert git(root, "log", "-1", "--format=%s", "refs/axpipe/quarantine/calc/unit-1").strip() == "agent commit"
    status = project.status()["goal"]
    assert status["status"] == "blocked"
    assert status["blocked"]["kind"] == "scope"
    assert status["reason"] == ("scope: 3 path(s) outside scope (calc.py): docs/new.md, notes/tmp.txt, "
                                "test_calc.py")
    assert status["blocked"]["evidence"][0].endswith("(axpipe quarantine: calc unit 1)")
    record = json.loads((root / ".axpipe" / "artifacts" / "calc" / "unit-1" / "hard-stop.json").read_text())
    assert record["kind"] == "scope" and record["outside"] == ["docs/new.md", "notes/tmp.txt", "test_calc.py"]
    assert record["notes"] == []
    git(root, "stash", "apply", "-q", "stash@{0}")
    assert "a + b" in (root / "calc.py").read_text() and (root / "docs" / "new.md").exists()


def test_the_unit_and_its_outcome_are_recorded(project: Project) -> None:
    project.recipe(turns=[{"write": {"stray.txt": "x\n"}}], extra="scope: [calc.py]\n")
    assert project.run().exit_code == 3
    connection = sqlite3.connect(project.root / ".axpipe" / "state.db")
    row = connection.execute("SELECT number, status, stash, start_head FROM units").fetchone()
    assert row[0] == 1 and row[1] == "quarantined" and len(row[2]) == 40
    assert row[3] == git(project.root, "rev-parse", "HEAD").strip()


def test_a_resumed_goal_starts_its_next_unit_on_the_clean_tree(project: Project) -> None:
    project.recipe(turns=[{"write": {"stray.txt": "x\n"}}, FIX], extra="scope: [calc.py]\n")
    assert project.run().exit_code == 3
    assert not (project.root / "stray.txt").exists()
    second = project.run()  # a person resumes by running again
    assert second.exit_code == 0, second.stdout
    connection = sqlite3.connect(project.root / ".axpipe" / "state.db")
    assert [row[0] for row in connection.execute("SELECT status FROM units ORDER BY number")] == [
        "quarantined", "passed"]


def test_goal_resume_holds_the_scope_contract_as_a_run_does(project: Project) -> None:
    # The first run's turn stays in scope but does not fix; `goal resume` drives the next turn,
    # which writes outside the scope: the same hard stop as in a run.
    looked = {"replace": [["calc.py", "a - b", "a - b  # looked at"]]}
    project.recipe(turns=[looked, {"write": {"stray.txt": "x\n"}}], extra="scope: [calc.py]\n")
    first = project.run()
    assert first.exit_code == 6, first.stdout + first.stderr
    resumed = project.cli("goal", "resume")
    assert resumed.exit_code == 3, resumed.stdout + resumed.stderr
    assert stashes(project.root) == ["axpipe quarantine: calc unit 2"]
    assert not (project.root / "stray.txt").exists()
    assert "a - b  # looked at" in (project.root / "calc.py").read_text()  # the first unit's work stays
    events = [json.loads(line) for line in resumed.stdout.splitlines()]
    assert [event["phase"] for event in events if event["type"] == "phase.started"] == ["work", "gate"]
    assert resumed.stderr.splitlines()[-1].startswith("Goal blocked:")
    assert project.status()["goal"]["blocked"]["kind"] == "scope"
    connection = sqlite3.connect(project.root / ".axpipe" / "state.db")
    assert [row[0] for row in connection.execute("SELECT status FROM units ORDER BY number")] == [
        "passed", "quarantined"]


def test_goal_resume_ends_each_unit_through_the_settle_phase(project: Project) -> None:
    looked = {"replace": [["calc.py", "a - b", "a - b  # looked at"]]}
    project.recipe(turns=[looked, looked, FIX], extra="scope: [calc.py]\n")
    assert project.run().exit_code == 6
    resumed = project.cli("goal", "resume")
    assert resumed.exit_code == 0, resumed.stdout + resumed.stderr
    events = [json.loads(line) for line in resumed.stdout.splitlines()]
    started = [event["phase"] for event in events if event["type"] == "phase.started"]
    assert started == ["work", "gate", "verify", "review", "settle"] * 2
    scope_checks = [event for event in events if event["type"] == "scope.checked"]
    assert len(scope_checks) == 2 and all(event["ok"] for event in scope_checks)
    connection = sqlite3.connect(project.root / ".axpipe" / "state.db")
    assert [row[0] for row in connection.execute("SELECT status FROM units ORDER BY number")] == [
        "passed", "passed", "passed"]


def test_goal_resumes_idle_timeout_during_the_gate_is_no_hard_stop(project: Project) -> None:
    # The watchdog kills the gate's command; what that leaves is no evidence against the unit,
    # so its work stays in the tree and the goal is not blocked.
    looked = {"replace": [["calc.py", "a - b", "a - b  # looked at"]]}
    second = {"replace": [["calc.py", "# looked at", "# looked at twice"]]}
    project.recipe(turns=[looked, second], extra='gate: {command: "sleep 3"}\n')
    assert project.run().exit_code == 6  # no watchdog in a run: the gate takes its 3 s and passes
    resumed = project.cli("goal", "resume", "--idle-timeout-ms", "1500", timeout=60)
    assert resumed.exit_code == 124, resumed.stdout + resumed.stderr
    assert stashes(project.root) == []
    assert "# looked at twice" in (project.root / "calc.py").read_text()
    assert project.status()["goal"]["status"] == "active"
    connection = sqlite3.connect(project.root / ".axpipe" / "state.db")
    assert [row for row in connection.execute("SELECT status, reason FROM units ORDER BY number")][1] == (
        "interrupted", "gate not judged: goal resume's idle timeout (1.5s without an event)")


def test_goal_resume_probes_the_environment_before_each_unit(project: Project) -> None:
    looked = {"replace": [["calc.py", "a - b", "a - b  # looked at"]]}
    project.recipe(turns=[looked, FIX], extra="probe: 'test -z \"$SERVICE_DOWN\"'\n")
    assert project.run().exit_code == 6
    prompts = len(project.prompts())
    down = project.cli("goal", "resume", env={"SERVICE_DOWN": "1"})
    assert down.exit_code == 5, down.stdout + down.stderr
    assert len(project.prompts()) == prompts  # no agent turn without the environment
    assert project.cli("goal", "resume").exit_code == 0
