"""A usage limit the agent's CLI reports pauses the goal until it resets (DESIGN §14, §18).

The scripted agent runs under the claude-code preset and prints what claude prints when
its plan's limit is reached (the lines of ``agent_outputs/claude-code/usage-limit-5h``,
with the reset moved to the test's clock). The unit ends with exit 4, its edit set aside
and the tree restored; the goal is paused with the reset time, `goal resume` before it
runs nothing, and after it the goal carries on. Real git repositories, the real CLI."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from goalkit import FIX, Project
from helpers import git

LIMIT_5H = Path(__file__).parent / "agent_outputs" / "claude-code" / "usage-limit-5h.stream-json.txt"


@pytest.fixture
def project(repo: Path, tmp_path: Path) -> Project:
    return Project(repo, tmp_path)


def claude_at_its_limit(resets_at: int) -> str:
    """The real output, its reset moved to ``resets_at`` (epoch seconds)."""
    lines = [line for line in LIMIT_5H.read_text().splitlines() if line.startswith("{")]
    return "\n".join(line.replace("1796672360", str(resets_at)) for line in lines)


EDIT = {"replace": [["calc.py", "a - b", "a + b"]]}


def test_a_usage_limit_pauses_the_goal_until_it_resets(project: Project) -> None:
    resets_at = int(time.time()) + 3 * 3600
    project.recipe(kind="claude-code", turns=[{**EDIT, "say": claude_at_its_limit(resets_at), "exit": 1}, FIX])
    result = project.cli("run", "recipe=calc", "--json")
    assert result.exit_code == 4, result.stdout + result.stderr
    status = project.status()
    expected = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(resets_at))
    assert (status["goal"]["status"], status["goal"]["resumes_at"]) == ("paused", expected)
    assert status["goal"]["reason"].startswith("the agent reached its usage limit (usage limit reported: You've hit "
                                               "your 5-hour limit")
    assert expected in status["goal"]["reason"]
    assert "a - b" in (project.root / "calc.py").read_text()  # the unit's edit was set aside
    assert git(project.root, "stash", "list", "--format=%gs").splitlines() == ["axpipe quarantine: calc unit 1"]
    finished = next(event for event in project.events(result) if event["type"] == "agent.finished")
    assert (finished["status"], finished["resets_at"]) == ("usage-limit", resets_at)
    early = project.cli("goal", "resume")
    assert early.exit_code == 6
    assert f"is paused by its agent's usage limit until {expected} (180 min from now)" in early.stderr
    again = project.run()
    assert again.exit_code == 6 and "usage limit until" in again.stdout, again.stdout
    assert len(project.prompts()) == 1  # nothing ran before the reset


def test_after_the_reset_resume_carries_on(project: Project) -> None:
    resets_at = int(time.time()) + 2
    project.recipe(kind="claude-code", turns=[{**EDIT, "say": claude_at_its_limit(resets_at), "exit": 1}, FIX])
    assert project.cli("run", "recipe=calc").exit_code == 4
    time.sleep(max(0.0, resets_at + 1 - time.time()))
    resumed = project.cli("goal", "resume")
    assert resumed.exit_code == 0, resumed.stdout + resumed.stderr
    status = project.status()
    assert (status["goal"]["status"], status["goal"]["resumes_at"]) == ("complete", None)


def test_a_limit_without_a_reset_time_can_be_resumed_at_once(project: Project) -> None:
    """An API-key 429 says no reset: the goal pauses, and a person resumes it when they judge."""
    line = json.dumps({"type": "result", "subtype": "success", "is_error": True, "api_error_status": 429,
                       "result": "API Error: Request rejected (429) · rate limited", "total_cost_usd": 0,
                       "modelUsage": {}})
    project.recipe(kind="claude-code", turns=[{**EDIT, "say": line, "exit": 1}, FIX])
    assert project.cli("run", "recipe=calc").exit_code == 4
    assert project.status()["goal"]["resumes_at"] is None
    assert project.cli("goal", "resume").exit_code == 0
