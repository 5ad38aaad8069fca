"""Delivery end to end (DESIGN §16): the runner's commits, the branch contract, the push to a
real bare repository over file://, the retry, and the hard stop for an agent that commits."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest
from goalkit import FIX, Project, project_with_origin
from helpers import git

NOTE = {"write": {"notes.md": "first unit: looked at calc\n"}, "say": "a first step"}
DELIVER = "deliver:\n  remote: origin\n"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return project_with_origin(tmp_path)


def _subjects(root: Path, revisions: str) -> list[str]:
    return git(root, "log", "--reverse", "--format=%s", revisions).splitlines()


def _record(root: Path, goal: str = "calc") -> dict[str, object]:
    data: dict[str, object] = json.loads((root / ".axpipe" / "goals" / goal / "delivery.json").read_text())
    return data


def _remote_branch(remote: Path, name: str = "axpipe/calc") -> str | None:
    listed = git(remote, "for-each-ref", "--format=%(objectname)", f"refs/heads/{name}").strip()
    return listed or None


def test_each_unit_is_one_runner_commit_and_the_branch_is_pushed(project: Project) -> None:
    more = {"write": {"notes.md": "second unit: found the bug\n"}, "say": "a second step"}
    project.recipe(turns=[NOTE, more, FIX], extra=DELIVER)
    first = project.run()
    assert first.exit_code == 6, first.stderr
    assert git(project.root, "symbolic-ref", "--short", "HEAD").strip() == "axpipe/calc"
    assert _subjects(project.root, "main..axpipe/calc") == ["calc: calc.add adds its arguments"]
    assert _remote_branch(project.remote) is None  # type: ignore[attr-defined]  # not complete: nothing pushed

    resumed = project.cli("goal", "resume")  # drives the goal unit after unit until it settles
    assert resumed.exit_code == 0, resumed.stderr
    assert _subjects(project.root, "main..axpipe/calc") == ["calc: calc.add adds its arguments"] * 3
    tip = git(project.root, "rev-parse", "axpipe/calc").strip()
    assert _remote_branch(project.remote) == tip  # type: ignore[attr-defined]
    # each commit holds exactly its unit's change, with the unit and the receipts in the trailer
    assert git(project.root, "show", "--format=", "--name-only", "axpipe/calc~2").split() == ["notes.md"]
    assert git(project.root, "show", "--format=", "--name-only", "axpipe/calc~1").split() == ["notes.md"]
    assert git(project.root, "show", "--format=", "--name-only", "axpipe/calc").split() == ["calc.py"]
    units = [line for line in git(project.root, "log", "--format=%(trailers:key=Axpipe-Unit,valueonly)",
                                  "main..axpipe/calc").split() if line]
    assert units == ["3", "2", "1"]
    trailers = git(project.root, "log", "-1", "--format=%(trailers:only,unfold)", "axpipe/calc")
    assert "Axpipe-Task: calc" in trailers
    (line,) = [line for line in trailers.splitlines() if line.startswith("Axpipe-Receipt:")]
    check, status, digest = line.split(": ", 1)[1].split()
    assert (check, status) == ("unit", "passed")
    # the digest names the receipt the completion gate judged: the newest one, as stored
    newest = project.receipts()[-1]
    canonical = json.dumps(newest, sort_keys=True, separators=(",", ":"), default=str)
    assert digest == "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
    record = _record(project.root)
    assert record["status"] == "delivered" and record["pushed"] == tip
    # the unit's work is all committed; the recipe the test wrote was there before and is not the unit's
    assert git(project.root, "status", "--porcelain").splitlines() == ["?? recipes/calc.yaml"]


def test_a_commit_with_a_bad_subject_blocks_delivery_and_nothing_is_pushed(project: Project) -> None:
    project.recipe(turns=[NOTE, FIX], extra=DELIVER)
    assert project.run().exit_code == 6
    (project.root / "extra.txt").write_text("a person's change\n")
    git(project.root, "add", "extra.txt")
    git(project.root, "commit", "-q", "-m", "wip")  # on the task branch, between units
    result = project.run()
    assert result.exit_code == 3, result.stderr
    assert "deliver: branch contract: commit" in result.stdout + result.stderr
    assert "'wip' does not match '^calc: '" in result.stdout + result.stderr
    assert _remote_branch(project.remote) is None  # type: ignore[attr-defined]
    status = project.status()["goal"]
    assert status["status"] == "blocked" and status["reason"].startswith("deliver: branch contract: ")
    assert _record(project.root)["status"] == "blocked"


def test_an_agent_that_commits_is_a_hard_stop(project: Project) -> None:
    sneaky = {"write": {"calc.py": "def add(a, b):\n    return a + b\n\n\ndef double(x):\n    return x * 2\n"},
              "run": ["git add calc.py", "git commit -q -m 'calc: fixed by the agent'"]}
    project.recipe(turns=[sneaky], extra=DELIVER)
    before = git(project.root, "rev-parse", "main").strip()
    result = project.run()
    assert result.exit_code == 3, result.stderr
    status = project.status()["goal"]
    assert status["status"] == "blocked"
    assert status["reason"].startswith("deliver: only the runner commits; during unit 1: ")
    assert "refs/heads/axpipe/calc moved" in status["reason"]
    # the agent's commit is quarantined and the branch is back where the unit started
    assert git(project.root, "rev-parse", "axpipe/calc").strip() == before
    assert "axpipe quarantine: calc unit 1" in git(project.root, "stash", "list")
    assert _remote_branch(project.remote) is None  # type: ignore[attr-defined]


def test_an_agent_that_pushes_is_a_hard_stop(project: Project) -> None:
    pushy = {**FIX, "run": ["git push -q origin HEAD:refs/heads/agent-branch"]}
    project.recipe(turns=[pushy], extra=DELIVER)
    result = project.run()
    assert result.exit_code == 3, result.stderr
    reason = project.status()["goal"]["reason"]
    assert "refs/remotes/origin/agent-branch created at" in reason, reason
    assert "axpipe quarantine: calc unit 1" in git(project.root, "stash", "list")
    assert _remote_branch(project.remote) is None  # type: ignore[attr-defined]  # the task branch was not pushed


def test_a_rejected_push_leaves_the_goal_complete_and_deliver_retries_it(project: Project) -> None:
    hook = project.remote / "hooks" / "pre-receive"  # type: ignore[attr-defined]
    hook.write_text("#!/bin/sh\necho 'branch protected by policy' >&2\nexit 1\n")
    hook.chmod(0o755)
    project.recipe(turns=[FIX], extra=DELIVER)
    result = project.run()
    assert result.exit_code == 1, result.stderr
    said = result.stdout + result.stderr
    assert "deliver: push to origin rejected: [remote rejected] (pre-receive hook declined)" in said
    assert "branch protected by policy" in said and "retry with `axpipe deliver calc`" in said
    assert project.status()["goal"]["status"] == "complete"
    record = _record(project.root)
    assert record["status"] == "failed" and record["retry"] == "axpipe deliver calc"
    delivery = project.status()["delivery"]
    assert (delivery["status"], delivery["retry"], delivery["pushed"]) == ("failed", "axpipe deliver calc", None)
    shown = project.cli("goal", "status").stdout
    assert "  delivery:    failed (1 runner commit(s) on axpipe/calc, base main): push to origin rejected" in shown
    tip = git(project.root, "rev-parse", "axpipe/calc").strip()
    assert _remote_branch(project.remote) is None  # type: ignore[attr-defined]

    hook.unlink()
    dry = project.cli("deliver", "calc", "--dry-run")
    assert dry.exit_code == 0, dry.stderr
    assert f"would push {tip} to origin as refs/heads/axpipe/calc" in dry.stdout
    assert "- [x] ✓ **AC1** (closes) add() adds: receipt" in dry.stdout
    assert _remote_branch(project.remote) is None  # type: ignore[attr-defined]  # a dry run pushes nothing

    retried = project.cli("deliver", "calc")
    assert retried.exit_code == 0, retried.stderr
    assert _remote_branch(project.remote) == tip  # type: ignore[attr-defined]
    assert git(project.root, "rev-parse", "axpipe/calc").strip() == tip  # the local branch is intact
    assert _record(project.root)["status"] == "delivered"


def test_a_moved_upstream_parks_the_goal_and_is_never_force_pushed(project: Project, tmp_path: Path) -> None:
    project.recipe(turns=[NOTE, FIX], extra=DELIVER)
    assert project.run().exit_code == 6
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", project.remote.as_uri(), str(other))  # type: ignore[attr-defined]
    (other / "theirs.txt").write_text("someone else\n")
    git(other, "add", "theirs.txt")
    git(other, "commit", "-q", "-m", "calc: theirs")
    git(other, "push", "-q", "origin", "HEAD:refs/heads/axpipe/calc")
    theirs = git(other, "rev-parse", "HEAD").strip()
    result = project.run()
    assert result.exit_code == 3, result.stderr
    reason = project.status()["goal"]["reason"]
    assert reason.startswith(f"deliver: upstream moved: origin/axpipe/calc is at {theirs[:12]}, expected absent")
    assert _remote_branch(project.remote) == theirs  # type: ignore[attr-defined]


def test_no_remote_is_a_failed_delivery_with_the_retry(project: Project) -> None:
    git(project.root, "remote", "remove", "origin")
    project.recipe(turns=[FIX], extra=DELIVER)
    result = project.run()
    assert result.exit_code == 1, result.stderr
    assert "deliver: cannot read remote 'origin'" in result.stdout + result.stderr
    assert project.status()["goal"]["status"] == "complete"
    assert _record(project.root)["status"] == "failed"


def test_a_wrong_deliver_section_is_refused_before_anything_runs(project: Project) -> None:
    project.recipe(turns=[FIX], extra='deliver:\n  branch: "axpipe/{tsk}"\n  subject_pattern: "(["\n'
                                      '  author: nobody\n  pr: gitbucket\n')
    result = project.run()
    assert result.exit_code == 2, result.stdout + result.stderr
    said = result.stderr
    assert "deliver.branch: 'axpipe/{tsk}' uses {tsk}; it may use {task}" in said
    assert "deliver.subject_pattern: '([' is not a regex" in said
    assert "deliver.author: 'nobody' is not `Name <email>`" in said
    assert "deliver.pr: unknown deliverer 'gitbucket'; available: github, gitlab" in said
    assert not (project.root / ".axpipe" / "goals").exists()
    assert git(project.root, "symbolic-ref", "--short", "HEAD").strip() == "main"


def test_the_author_and_the_subject_come_from_the_recipe(project: Project) -> None:
    hooks = project.root / ".git" / "hooks"
    for name in ("post-checkout", "pre-commit"):  # the runner's switch and commit run neither
        (hooks / name).write_text(f"#!/bin/sh\necho ran >> {project.scratch / name}\nexit 1\n")
        (hooks / name).chmod(0o755)
    project.recipe(turns=[FIX], extra='deliver:\n  remote: origin\n  branch: "fix/{task}"\n'
                                      '  subject: "[{task}] unit {unit}: {summary}"\n'
                                      '  subject_pattern: "^\\\\[calc\\\\] "\n'
                                      '  author: "Delivery Bot <bot@example.invalid>"\n')
    result = project.run()
    assert result.exit_code == 0, result.stdout + result.stderr
    assert git(project.root, "log", "-1", "--format=%s|%an <%ae>", "fix/calc").strip() == \
        "[calc] unit 1: calc.add adds its arguments|Delivery Bot <bot@example.invalid>"
    tip = git(project.root, "rev-parse", "fix/calc").strip()
    assert _remote_branch(project.remote, "fix/calc") == tip  # type: ignore[attr-defined]
    assert not [name for name in ("post-checkout", "pre-commit")
                if (project.scratch / name).exists()]


RECORDING_AGENT = """import json, pathlib, sys
pathlib.Path(sys.argv[1]).write_text(json.dumps(sys.argv[2:]))
calc = pathlib.Path("calc.py")
calc.write_text(calc.read_text().replace("a - b", "a + b"))
"""


@pytest.mark.parametrize("delivering", [True, False])
def test_a_preset_starts_its_cli_without_commit_or_push(project: Project, delivering: bool) -> None:
    agent = project.scratch / "recording_agent.py"
    agent.write_text(RECORDING_AGENT)
    argv_file = project.scratch / "argv.json"
    recipe = (project.root / "recipes" / "calc.yaml")
    project.recipe(agent=False, extra=DELIVER if delivering else "")
    recipe.write_text(recipe.read_text() + f"agent:\n  kind: claude-code\n  command: [{json.dumps(sys.executable)}, "
                      f"{json.dumps(str(agent))}, {json.dumps(str(argv_file))}]\n")
    result = project.run()
    assert result.exit_code == 0, result.stdout + result.stderr
    flags = ["--disallowedTools", "Bash(git commit *)", "Bash(git push *)"]
    assert json.loads(argv_file.read_text()) == (flags if delivering else [])


def test_a_person_fixes_the_branch_and_deliver_pushes_it(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FILTER_BRANCH_SQUELCH_WARNING", "1")  # else git waits 10 s to warn about filter-branch
    project.recipe(turns=[NOTE, FIX], extra=DELIVER)
    assert project.run().exit_code == 6
    (project.root / "extra.txt").write_text("a person's change\n")
    git(project.root, "add", "extra.txt")
    git(project.root, "commit", "-q", "-m", "wip")
    assert project.run().exit_code == 3
    refused = project.cli("goal", "resume")
    assert refused.exit_code == 3  # blocked: driving it again does nothing
    git(project.root, "-c", "advice.detachedHead=false", "filter-branch", "-f", "--msg-filter",
        "sed 's/^wip$/calc: a person adds extra.txt/'", "main..axpipe/calc")
    result = project.cli("deliver", "calc")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert _subjects(project.root, "main..axpipe/calc")[1] == "calc: a person adds extra.txt"
    tip = git(project.root, "rev-parse", "axpipe/calc").strip()
    assert _remote_branch(project.remote) == tip  # type: ignore[attr-defined]
    assert project.status()["goal"]["status"] == "complete"


def test_a_goal_that_completes_without_any_commit_fails_the_branch_contract(project: Project) -> None:
    git(project.root, "checkout", "-q", "-b", "fixed")
    (project.root / "calc.py").write_text((project.root / "calc.py").read_text().replace("a - b", "a + b"))
    git(project.root, "commit", "-q", "-am", "fixed before the goal")
    project.recipe(agent=False, extra=DELIVER)  # no agent: the checks already pass, nothing to commit
    result = project.run()
    assert result.exit_code == 3, result.stdout + result.stderr
    assert "deliver: branch contract: axpipe/calc is not ahead of fixed: no commit since" in result.stdout
    assert _remote_branch(project.remote) is None  # type: ignore[attr-defined]
