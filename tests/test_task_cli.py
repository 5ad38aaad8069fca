"""``axpipe task show|approve|answer|note|replan|reopen`` through the CLI: a person's edits are
journalled and never count as a unit's work (DESIGN §14)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from helpers import AXPIPE, wait_for
from rolekit import CONFIRMED, CRITERION, FIX, PASS, TaskProject
from syrupy.assertion import SnapshotAssertion


@pytest.fixture
def project(repo: Path, tmp_path: Path) -> TaskProject:
    return TaskProject(repo, tmp_path)


def test_a_persons_approve_during_a_unit_is_not_the_units_work(project: TaskProject) -> None:
    ready, release = project.scratch / "ready", project.scratch / "release"
    project.roles(planner={"turns": [{"criteria": [CRITERION]}]},
                  implementer={"turns": [{"replace": [FIX], "notes": "fixed", "pause": [str(ready), str(release)]}]},
                  qa={"calls": [PASS]}, judge={"calls": [CONFIRMED]})
    running = subprocess.Popen([*AXPIPE, "run", "recipe=tasks"], cwd=project.root, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, env={**os.environ, **project.env})
    try:
        wait_for(lambda: ready.exists() or None, what="the implementer's unit to start")
        approved = project.cli("task", "approve", "tasks", "plan looks right")
        assert approved.exit_code == 0, approved.stderr
        assert approved.stdout == "task tasks: approve journalled in .axpipe/tasks/tasks.md\n"
        release.write_text("go")
        output, _ = running.communicate(timeout=120)
    finally:
        running.kill()
    assert running.returncode == 0, output
    task = project.task_text()
    assert "status: approved" in task and "approve: plan looks right" in task and "fixed" in task


def test_a_direct_edit_during_a_unit_counts_as_the_units(project: TaskProject) -> None:
    ready, release = project.scratch / "ready", project.scratch / "release"
    project.roles(planner={"turns": [{"criteria": [CRITERION]}]},
                  implementer={"turns": [{"replace": [FIX], "pause": [str(ready), str(release)]}]})
    running = subprocess.Popen([*AXPIPE, "run", "recipe=tasks"], cwd=project.root, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, env={**os.environ, **project.env})
    try:
        wait_for(lambda: ready.exists() or None, what="the implementer's unit to start")
        path = project.root / ".axpipe" / "tasks" / "tasks.md"
        path.write_text(path.read_text().replace("status: open", "status: approved"))
        release.write_text("go")
        output, _ = running.communicate(timeout=120)
    finally:
        running.kill()
    assert running.returncode == 3, output
    assert "wrote section 'front matter'" in project.status()["goal"]["reason"]


def test_show_lists_a_parked_plans_problems(project: TaskProject, snapshot: SnapshotAssertion) -> None:
    project.roles(planner={"turns": [{"criteria": ["- [closes] add() adds: `python3 -m unittest -q`"]}]},
                  implementer={"turns": [{"replace": [FIX]}]})
    assert project.run_tasks().exit_code == 3
    shown = project.cli("task", "show", "tasks")
    assert shown.exit_code == 0, shown.stderr
    assert shown.stdout == snapshot
    data = json.loads(project.cli("task", "show", "tasks", "--json").stdout)
    assert data["goal"]["status"] == "blocked" and data["criteria"] == []
    assert data["problems"] == ["criterion '- [closes] add() adds: `python3 -m unittest -q`': not read as a "
                                "criterion, number it N.: N. **[closes]** text: `command`"]


def test_replan_has_the_planner_write_the_plan_again(project: TaskProject) -> None:
    project.roles(planner={"turns": [{"criteria": ["- [closes] bad: `python3 -m unittest -q`"]},
                                     {"criteria": [CRITERION]}]},
                  implementer={"turns": [{"replace": [FIX]}]})
    assert project.run_tasks().exit_code == 3
    replanned = project.cli("task", "replan", ".axpipe/tasks/tasks.md")
    assert replanned.exit_code == 0, replanned.stderr
    again = project.run_tasks()
    assert again.exit_code == 0, again.stdout + again.stderr
    assert len(project.prompts_of("planner")) == 2
    assert "status: open" in project.task_text()


def test_reopen_resets_the_bounces_of_a_goal_blocked_for_them(project: TaskProject) -> None:
    rejected = {"say": "no.\njudge: REJECTED"}
    project.roles(planner={"turns": [{"criteria": [CRITERION]}]},
                  implementer={"turns": [{"replace": [FIX]}], "default": {"notes": "again"}},
                  qa={"default": PASS}, judge={"calls": [rejected, rejected], "default": CONFIRMED},
                  extra="limits: {bounces: 2}\n")
    assert project.run_tasks().exit_code == 6
    assert "bounces: 1" in project.task_text()
    assert project.run_tasks().exit_code == 3
    assert "bounces: 2" in project.task_text()
    reopened = project.cli("task", "reopen", "tasks", "the judge was wrong")
    assert reopened.stdout == ("task tasks: reopen journalled in .axpipe/tasks/tasks.md; goal tasks active again, "
                               "its bounces reset\n")
    assert "bounces: 0" in project.task_text()
    assert project.status()["goal"]["bounces"] == 0


@pytest.mark.parametrize("args", [["show", "nope"], ["note", "nope", "x"]])
def test_an_unknown_task_is_an_input_error(project: TaskProject, args: list[str]) -> None:
    result = project.cli("task", *args)
    assert result.exit_code == 2
    assert "no task 'nope'" in result.stderr


def test_replan_of_a_goal_with_a_frozen_contract_is_refused(project: TaskProject) -> None:
    project.roles(planner={"turns": [{"criteria": [CRITERION]}]}, implementer={"turns": [{"replace": [FIX]}]})
    assert project.run_tasks().exit_code == 0
    before = project.task_text()
    refused = project.cli("task", "replan", "tasks")
    assert refused.exit_code == 2
    assert "goal 'tasks' already has a frozen contract from this plan" in refused.stderr
    assert project.task_text() == before


def test_goal_resume_of_a_parked_plan_says_to_fix_the_task_file(project: TaskProject) -> None:
    project.roles(planner={"turns": [{"criteria": ["- [closes] bad: `python3 -m unittest -q`"]}]},
                  implementer={"turns": [{"replace": [FIX]}]})
    assert project.run_tasks().exit_code == 3
    resumed = project.cli("goal", "resume", "--goal", "tasks")
    assert resumed.exit_code == 1
    assert "goal 'tasks' has no plan yet (plan refused (1 problem(s)" in resumed.stderr
    assert "axpipe task show tasks" in resumed.stderr
    assert project.prompts_of("implementer") == []


def test_note_and_answer_add_journal_lines_and_record_the_files_hash(project: TaskProject) -> None:
    project.roles(planner={"turns": [{"criteria": [CRITERION]}]}, implementer={"turns": [{"replace": [FIX]}]})
    assert project.run_tasks().exit_code == 0
    assert project.cli("task", "note", "tasks", "remember the rounding").exit_code == 0
    assert project.cli("task", "answer", ".axpipe/tasks/tasks.md", "yes,\n  keep the order").exit_code == 0
    journal = json.loads(project.cli("task", "show", "tasks", "--json").stdout)["sections"]["Journal"]
    lines = [line for line in journal.splitlines() if line]
    assert [line.split(" ", 2)[2] for line in lines] == ["note: remember the rounding", "answer: yes, keep the order"]
    import hashlib

    entries = [json.loads(line) for line in
               (project.root / ".axpipe" / "tasks" / "journal" / "tasks.jsonl").read_text().splitlines()]
    assert entries[-1]["sha256"] == hashlib.sha256(project.task_text().encode()).hexdigest()


def test_a_hard_stop_keeps_the_persons_journalled_edit_and_drops_the_units(project: TaskProject) -> None:
    ready, release = project.scratch / "ready", project.scratch / "release"
    project.roles(planner={"turns": [{"criteria": [CRITERION]}]},
                  implementer={"turns": [{"replace": [FIX], "task_section": ["Verdict", "CONFIRMED by me"],
                                          "pause": [str(ready), str(release)]}]})
    running = subprocess.Popen([*AXPIPE, "run", "recipe=tasks"], cwd=project.root, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, env={**os.environ, **project.env})
    try:
        wait_for(lambda: ready.exists() or None, what="the implementer's unit to start")
        assert project.cli("task", "approve", "tasks", "go ahead").exit_code == 0
        release.write_text("go")
        output, _ = running.communicate(timeout=120)
    finally:
        running.kill()
    assert running.returncode == 3, output
    task = project.task_text()
    assert "CONFIRMED by me" not in task
    assert "status: approved" in task and "approve: go ahead" in task
    assert "the task file is back as the unit found it with the person's journalled edits" in output
