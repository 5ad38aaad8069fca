"""Roles end to end through the CLI (DESIGN §14, §15): the planner writes the plan into the
task file, the implementer is told its scope and the bounce reason, QA and judge decide, and a
role writing outside its sections is quarantined. Every agent is a scripted program reading
its real prompt in a real git repository."""

from __future__ import annotations

from pathlib import Path

import pytest
from rolekit import CONFIRMED, CRITERION, FIX, PASS, TaskProject


@pytest.fixture
def project(repo: Path, tmp_path: Path) -> TaskProject:
    return TaskProject(repo, tmp_path)


def test_planner_implementer_qa_judge_complete_a_goal_through_its_task_file(project: TaskProject) -> None:
    project.roles(planner={"turns": [{"criteria": [CRITERION]}]},
                  implementer={"turns": [{"replace": [FIX], "notes": "add() now adds"}]},
                  qa={"calls": [PASS]}, judge={"calls": [CONFIRMED]})
    result = project.run_tasks()
    assert result.exit_code == 0, result.stdout + result.stderr
    task = project.task_text()
    assert CRITERION in task and "add() now adds" in task
    assert "a + b" in (project.root / "calc.py").read_text()
    status = project.status()
    assert status["goal"]["status"] == "complete"
    assert [check["id"] for check in status["checks"]] == ["criterion-1"]
    implementer = project.prompts_of("implementer")[0]
    assert "- C1 [closes] add() adds: check `criterion-1` runs `python3 -m unittest -q`" in implementer
    assert "### Scope\n\n- `calc.py`\n" in implementer
    assert "The task file is `.axpipe/tasks/tasks.md`" in implementer
    planner = project.prompts_of("planner")[0]
    assert "You are the planner" in planner and "## Your role: planner" in planner
