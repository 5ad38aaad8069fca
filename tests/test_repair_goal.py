"""A recipe's repairs in a goal's tick: they are the tick's work, so the goal's status and
budget are checked before them and what they use counts into that budget; and every
target is declared before the first runs. Real repositories, the real CLI, scripted agents."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from goalkit import AGENT, FIX, Project

BROKEN = "def add(a, b):\n    return a - b\n"


@pytest.fixture
def project(repo: Path, tmp_path: Path) -> Project:
    return Project(repo, tmp_path)


def repair_recipe(project: Project, turns: list[dict[str, Any]], *, budget: str = "", repair_budget: int = 4,
                  more_targets: str = "") -> None:
    """A goal without an agent of its own, whose test is repaired by a scripted agent."""
    plan = project.scratch / "repair-plan.json"
    plan.write_text(json.dumps({"turns": turns, "default": {}}))
    log = project.scratch / "repair-prompts.jsonl"
    agent = (f"{{kind: command, command: [{json.dumps(sys.executable)}, {json.dumps(str(AGENT))}], "
             f"env: {{SCRIPTED_AGENT_PLAN: {json.dumps(str(plan))}, SCRIPTED_AGENT_LOG: {json.dumps(str(log))}}}}}")
    extra = f"""repair:
  - target: "python3 -m unittest -q"
    budget: {repair_budget}
    agent: {agent}
{more_targets}"""
    project.recipe(agent=False, goal_extra=f"  budget: {{{budget}}}\n" if budget else "", extra=extra)


def repair_calls(project: Project) -> int:
    log = project.scratch / "repair-prompts.jsonl"
    return len(log.read_text().splitlines()) if log.exists() else 0


# -- 3: the goal's budget and status --------------------------------------------------------


def test_a_repairs_tokens_count_into_the_goals_budget(project: Project) -> None:
    repair_recipe(project, [{**FIX, "tokens": 1_000_000}], budget="tokens: 100")
    result = project.run()
    status = project.status()
    assert status["budget"]["tokens_used"] == 1_000_000
    # the repair resolved in its second iteration, then the goal's budget was found spent:
    # the tick's checks still ran, and the goal is budget limited unless they complete it
    assert status["budget"]["steps_used"] == 3  # two repair iterations and the tick
    assert result.exit_code == 0, result.stdout + result.stderr
    assert status["goal"]["status"] == "complete"


def test_a_spent_budget_stops_the_repair_before_its_next_fix(project: Project) -> None:
    # The first fix is useless and costs the whole budget: no second fix is asked for.
    repair_recipe(project, [{"write": {"notes.txt": "thinking\n"}, "tokens": 500}, FIX], budget="tokens: 100")
    result = project.run()
    assert result.exit_code == 4, result.stdout + result.stderr
    assert repair_calls(project) == 1
    status = project.status()
    assert status["goal"]["status"] == "budget_limited"
    assert "tokens budget (500 of 100 tokens) spent; this tick's repairs did not complete the goal" in \
        status["goal"]["reason"]
    assert (project.root / "calc.py").read_text().startswith(BROKEN)
    report = json.loads(next((project.root / ".axpipe" / "runs").glob("*/*/report.json")).read_text())
    assert report["status"] == "unresolved" and report["iterations_used"] == 2
    assert report["iterations"][1]["fix"] == "not attempted: the goal's tokens budget (500 of 100 tokens) is spent"


def test_a_reached_step_cap_runs_no_repair(project: Project) -> None:
    # The first run's repair (one iteration, one useless fix) and its tick use both steps;
    # the goal stays active. The second run must not call the repair agent again.
    repair_recipe(project, [{"write": {"notes.txt": "thinking\n"}}], budget="steps: 2", repair_budget=1)
    first = project.run()
    assert first.exit_code == 4, first.stdout + first.stderr  # the repair is unresolved
    assert repair_calls(project) == 1
    status = project.status()
    assert (status["goal"]["status"], status["budget"]["steps_used"]) == ("active", 2)
    second = project.run()
    assert second.exit_code == 6, second.stdout + second.stderr
    assert repair_calls(project) == 1  # the second run called no agent
    assert "paused: step cap (2 of 2 steps) reached; raise goal.budget.steps to resume" in second.stdout
    assert project.status()["goal"]["status"] == "paused"


def test_re_verifying_a_complete_goal_repairs_nothing(project: Project) -> None:
    repair_recipe(project, [FIX, {"replace": [["calc.py", "a - b", "a + b"]]}])
    assert project.run().exit_code == 0
    assert repair_calls(project) == 1
    (project.root / "calc.py").write_text(BROKEN + "\n\ndef double(x):\n    return x * 2\n")
    again = project.run()
    assert repair_calls(project) == 1  # no repair ran on the complete goal
    assert "goal is complete: no work" in again.stdout
    assert "a - b" in (project.root / "calc.py").read_text()
    assert again.exit_code == 6  # re-verified, no longer holds: the goal reopens
    assert project.status()["goal"]["status"] == "active"


def test_an_unresolved_repair_counts_its_iterations_and_the_tick(project: Project) -> None:
    repair_recipe(project, [], budget="steps: 50", repair_budget=2)
    result = project.run()
    assert result.exit_code == 4, result.stdout + result.stderr
    assert project.status()["budget"]["steps_used"] == 3


# -- 4: every target is declared before the first runs --------------------------------------


def test_a_later_target_refused_stops_the_run_before_the_first_changes_anything(project: Project) -> None:
    # Refused only once the run has started (its agent derives no verifying command); a
    # refusal the recipe alone decides comes before the run (tests/test_agent_refusals.py).
    repair_recipe(project, [FIX], more_targets='  - target: "every calculator test passes"\n'
                                               '    prose: true\n'
                                               '    agent: {kind: command, command: "true"}\n')
    before = (project.root / "calc.py").read_text()
    result = project.run()
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "repair[1]: the agent could not derive a verifying command for the end state" in \
        result.stdout + result.stderr
    assert repair_calls(project) == 0
    assert (project.root / "calc.py").read_text() == before
    assert project.status()["budget"]["steps_used"] == 0
