"""Usage and cost budgets fed by what the agent's CLI printed (DESIGN §4, §18).

The scripted agent runs under a preset and prints what that CLI prints (a claude-code
stream-json result with its usage and ``total_cost_usd``); the preset reads it, and the
goal's ``budget.tokens`` / ``budget.cost`` are enforced from it: one wrap-up turn, then
``budget_limited``. Real git repositories, the real CLI, the scripted agent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from goalkit import FIX, Project


@pytest.fixture
def project(repo: Path, tmp_path: Path) -> Project:
    return Project(repo, tmp_path)


def claude_result(cost: float, tokens_in: int = 1000, tokens_out: int = 50) -> str:
    """The last line of `claude -p --output-format stream-json` (tests/agent_outputs/claude-code)."""
    return json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": "Done.",
                       "total_cost_usd": cost, "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
                       "modelUsage": {"claude-x": {"inputTokens": tokens_in, "outputTokens": tokens_out,
                                                   "cacheReadInputTokens": 0, "cacheCreationInputTokens": 0,
                                                   "costUSD": cost}}})


def finished(project: Project, result: Any) -> list[dict[str, Any]]:
    return [event for event in project.events(result) if event["type"] == "agent.finished"]


def test_a_cost_budget_gives_one_wrap_up_turn_then_budget_limited(project: Project) -> None:
    project.recipe(kind="claude-code", default={"say": claude_result(0.03)}, goal_extra="  budget: {cost: 0.05}\n")
    assert project.run().exit_code == 6  # one turn: $0.03 of $0.05
    result = project.cli("goal", "resume")
    assert result.exit_code == 4, result.stdout + result.stderr
    prompts = project.prompts()
    assert len(prompts) == 3 and "## Wrap up" in prompts[2] and "cost budget is spent" in prompts[2]
    status = project.status()
    assert status["goal"]["status"] == "budget_limited"
    assert status["goal"]["reason"].startswith("cost budget ($0.0600 of $0.05) spent")
    assert status["budget"]["cost"] == 0.05
    assert status["budget"]["cost_used"] == pytest.approx(0.09)  # the wrap-up turn's cost counted too
    assert status["budget"]["tokens_used"] == 3 * 1050
    assert [(event["cost"], event["tokens_in"], event["tokens_out"]) for event in finished(project, result)] == \
        [(0.03, 1000, 50), (0.03, 1000, 50)]
    text = project.cli("goal", "status").stdout
    assert "cost $0.0900/$0.05, " in text


def test_a_tokens_budget_counts_what_the_cli_reported(project: Project) -> None:
    """No AXPIPE_USAGE_FILE: the tokens come from the CLI's own result."""
    project.recipe(kind="claude-code", default={"say": claude_result(0.001, 700, 20)},
                   goal_extra="  budget: {tokens: 1000}\n")
    project.run()
    assert project.cli("goal", "resume").exit_code == 4
    status = project.status()
    assert status["goal"]["reason"].startswith("tokens budget (1440 of 1000 tokens) spent")


def test_a_turn_that_reports_no_cost_spends_a_cost_budget(project: Project) -> None:
    """Fail closed: the command agent wrote tokens but no cost; an unknown cost may be any cost."""
    project.recipe(turns=[{"say": "working", "tokens": 10}, FIX], goal_extra="  budget: {cost: 5}\n")
    assert project.run().exit_code == 6
    status = project.status()
    assert status["budget"]["unpriced_turns"] == 1
    assert "+ 1 unpriced turn(s)" in project.cli("goal", "status").stdout
    assert project.cli("goal", "resume").exit_code == 0  # the wrap-up turn fixed it
    prompts = project.prompts()
    assert len(prompts) == 2 and "cost budget is spent" in prompts[1]


def test_a_usage_file_may_report_cost(project: Project) -> None:
    project.recipe(turns=[{"say": "working", "tokens": 10, "cost": 0.25}, FIX], goal_extra="  budget: {cost: 5}\n")
    assert project.run().exit_code == 6
    status = project.status()
    assert (status["budget"]["cost_used"], status["budget"]["unpriced_turns"]) == (0.25, 0)
