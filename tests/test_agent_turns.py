"""How an agent's turn can end besides "done", and what its edit becomes (DESIGN §4, §14).

A turn that exits non-zero, crashes or times out is a hard stop: its edit goes to the
quarantine stash, the tree is restored, the goal is blocked (exit 3). An agent that reports
its usage limit leaves the tree restored and the goal paused (exit 4). The goal's time
budget ends a turn still running at its deadline (its partial edit set aside, exit 4), and
reaching the step cap pauses the goal after a warning. Real git repositories, the real CLI,
the scripted agent."""

from __future__ import annotations

from pathlib import Path

import pytest
from goalkit import CALC, FIX, Project
from helpers import git


@pytest.fixture
def project(repo: Path, tmp_path: Path) -> Project:
    return Project(repo, tmp_path)


EDIT = {"replace": [["calc.py", "a - b", "a + b"]], "write": {"notes/plan.md": "half done\n"}}


def restored(project: Project) -> None:
    """The tree is as the unit found it; the unit's edit is in the quarantine stash."""
    root = project.root
    assert (root / "calc.py").read_text() == CALC and not (root / "notes").exists()
    assert git(root, "stash", "list", "--format=%gs").splitlines() == ["axpipe quarantine: calc unit 1"]
    assert sorted(git(root, "diff", "--name-only", "stash@{0}^1", "stash@{0}").split()) == ["calc.py",
                                                                                            "notes/plan.md"]


@pytest.mark.parametrize(("turn", "overrides", "why"), [
    ({"exit": 1, "say": "cannot finish"}, [], "failed: exit code 1"),
    ({"sleep": 60}, ["agent.timeout=2s"], "timed out: timed out after 2 s"),
    ({"sleep": 60}, ["agent.timeout=2s", "goal.budget.time=1h"], "timed out: timed out after 2 s"),
], ids=["exit-1", "agent-timeout", "agent-timeout-within-the-time-budget"])
def test_a_turn_that_fails_is_a_hard_stop_and_its_edit_is_quarantined(
        project: Project, turn: dict[str, object], overrides: list[str], why: str) -> None:
    project.recipe(turns=[{**EDIT, **turn}, FIX])
    result = project.run("calc", *overrides)
    assert result.exit_code == 3, result.stdout + result.stderr
    goal = project.status()["goal"]
    assert goal["status"] == "blocked" and goal["blocked"]["kind"] == "agent"
    assert goal["reason"].startswith(f"the agent's turn {why}")
    restored(project)
    assert not project.receipts()  # nothing the failed turn left was judged


USAGE_LIMIT = '  usage_limits: ["(?i)usage limit reached(?:, resets (?P<resets>[^.]+))?"]\n'


def test_an_agent_at_its_usage_limit_pauses_the_goal_with_the_tree_restored(project: Project) -> None:
    project.recipe(turns=[{**EDIT, "say": "Usage limit reached, resets at 14:00.", "exit": 1}, FIX],
                   agent_extra=USAGE_LIMIT)
    result = project.cli("run", "recipe=calc", "--json")
    assert result.exit_code == 4, result.stdout + result.stderr
    goal = project.status()["goal"]
    assert goal["status"] == "paused" and goal["blocked"] is None
    assert goal["reason"].startswith("the agent reached its usage limit (usage limit reported: Usage limit reached, "
                                     "resets at 14:00); it resets at 14:00; resume the goal once it has reset")
    restored(project)
    finished = [event for event in project.events(result) if event["type"] == "agent.finished"]
    assert finished[0]["status"] == "usage-limit"
    resumed = project.cli("goal", "resume")  # the limit has reset: the goal goes on from the restored tree
    assert resumed.exit_code == 0, resumed.stdout + resumed.stderr
    assert project.status()["goal"]["status"] == "complete"


def test_the_time_budget_ends_a_running_turn_at_its_deadline(project: Project) -> None:
    pid_file = project.scratch / "agent.pid"
    project.recipe(turns=[{**EDIT, "run": [f"echo $PPID > {pid_file}"], "sleep": 60}],
                   goal_extra="  budget: {time: 1s}\n")
    result = project.cli("run", "recipe=calc", "--json", timeout=40)  # not the agent's 60 s
    assert result.exit_code == 4, result.stdout + result.stderr
    goal = project.status()["goal"]
    assert goal["status"] == "budget_limited"
    assert "of 1 s) spent: the agent's turn was stopped at the deadline" in goal["reason"]
    restored(project)  # the partial edit is set aside, not left in the tree
    assert not Path(f"/proc/{pid_file.read_text().strip()}").exists()  # the agent's process ended
    aside = next(event for event in project.events(result) if event["type"] == "unit.set_aside")
    assert aside["kind"] == "time-budget" and aside["status"] == "budget_limited"


def test_the_step_cap_warns_at_90_percent_then_pauses_and_a_raised_cap_resumes(project: Project) -> None:
    project.recipe(turns=[{"say": "looking"}, {"say": "still looking"}, FIX], goal_extra="  budget: {steps: 2}\n")
    assert project.run().exit_code == 6
    resumed = project.cli("goal", "resume")
    assert resumed.exit_code == 6, resumed.stdout + resumed.stderr
    events = project.events(resumed)
    warning = next(event for event in events if event["type"] == "goal.steps_warning")
    assert (warning["steps_used"], warning["cap"]) == (1, 2)
    prompts = project.prompts()
    assert len(prompts) == 2 and "## Steps" not in prompts[0]
    assert "This goal has used 1 of its 2 steps" in prompts[1]
    status = project.status()
    assert (status["goal"]["status"], status["budget"]["steps_used"]) == ("paused", 2)
    assert status["goal"]["reason"] == "step cap (2 of 2 steps) reached; raise goal.budget.steps to resume"
    assert resumed.stderr.strip().splitlines()[-1] == "Goal paused: calc.add adds its arguments"
    assert project.cli("goal", "resume").exit_code == 6  # the same cap: paused again, no turn
    assert len(project.prompts()) == 2
    raised = project.run("calc", "goal.budget.steps=4")
    assert raised.exit_code == 0, raised.stdout + raised.stderr
    assert project.status()["goal"]["status"] == "complete"



def test_a_commit_the_agent_made_is_told_in_the_events(project: Project) -> None:
    """The CLIs' deny rules for `git commit` can be passed with another spelling: the runner
    reads what moved (HEAD and every ref) instead of trusting them (docs/agents.md)."""
    project.recipe(turns=[{**FIX, "run": ["git add -A", "git -C . commit -qm wip"]}])
    head = git(project.root, "rev-parse", "HEAD").strip()
    result = project.cli("run", "recipe=calc", "--json")
    moved = [event for event in project.events(result) if event["type"] == "agent.refs_moved"]
    assert len(moved) == 1
    after = git(project.root, "rev-parse", "HEAD").strip()
    assert moved[0]["refs"] == [{"ref": "HEAD", "before": head, "after": after},
                                {"ref": "refs/heads/main", "before": head, "after": after}]


def test_a_turn_that_commits_nothing_tells_nothing(project: Project) -> None:
    project.recipe(turns=[FIX])
    result = project.cli("run", "recipe=calc", "--json")
    assert result.exit_code == 0
    assert not [event for event in project.events(result) if event["type"] == "agent.refs_moved"]
