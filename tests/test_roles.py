"""Roles end to end through the CLI (DESIGN §14, §15): the planner writes the plan into the
task file, the implementer is told its scope and the bounce reason, QA and judge decide, and a
role writing outside its sections is quarantined. Every agent is a scripted program reading
its real prompt in a real git repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import git
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


TASK = """---
id: T-7
status: open
bounces: 0
---
# T-7: add adds

## Goal

calc.add adds its arguments.

## Plan

Fix the operator.

### Review

Fine by me. -- Ana

## Acceptance criteria

1. **[closes]** add() adds: `python3 -m unittest -q`

## Implementation notes

## Verdict
"""


def committed_task(project: TaskProject) -> None:
    (project.root / "tasks").mkdir()
    (project.root / "tasks" / "T-7.md").write_text(TASK)
    (project.root / "tasks" / "T-8.md").write_text(TASK.replace("T-7", "T-8"))
    git(project.root, "add", "-A")
    git(project.root, "commit", "-q", "-m", "tasks")


def test_an_implementer_writing_the_verdict_section_is_quarantined(project: TaskProject) -> None:
    committed_task(project)
    project.roles(implementer={"turns": [{"replace": [FIX], "task_section": ["Verdict", "judge: CONFIRMED"]}]},
                  goal_extra="  task_file: tasks/T-7.md\n")
    result = project.run_tasks()
    assert result.exit_code == 3, result.stdout + result.stderr
    goal = project.status()["goal"]
    assert goal["blocked"]["kind"] == "task-file"
    assert goal["reason"] == ("task file tasks/T-7.md: the implementer unit wrote section 'Verdict', which its role "
                              "does not own (the implementer role writes Implementation notes)")
    assert "axpipe quarantine: tasks unit 1" in git(project.root, "stash", "list")
    assert (project.root / "tasks" / "T-7.md").read_text() == TASK  # the tree is back as it was
    assert "a - b" in (project.root / "calc.py").read_text()


def test_an_implementer_writing_its_notes_in_a_committed_task_file_keeps_to_its_scope(project: TaskProject) -> None:
    committed_task(project)
    project.roles(implementer={"turns": [{"replace": [FIX], "notes": "swapped the operator"}]},
                  goal_extra="  task_file: tasks/T-7.md\n")
    result = project.run_tasks()
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "swapped the operator" in (project.root / "tasks" / "T-7.md").read_text()
    assert "### Scope\n\n- `calc.py`\n- `tasks/T-7.md`\n" in project.prompts_of("implementer")[0]


def test_an_implementer_editing_another_tasks_file_is_quarantined(project: TaskProject) -> None:
    committed_task(project)
    project.roles(implementer={"turns": [{"replace": [FIX, ["tasks/T-8.md", "Fix the", "Break the"]]}]},
                  scope="[calc.py, 'tasks/**']", goal_extra="  task_file: tasks/T-7.md\n")
    result = project.run_tasks()
    assert result.exit_code == 3, result.stdout + result.stderr
    assert project.status()["goal"]["reason"] == ("task file: the implementer unit edited another task's file: "
                                                  "T-8.md (it works on tasks/T-7.md only)")


def test_a_refused_planner_plan_parks_the_goal_before_any_code_unit(project: TaskProject) -> None:
    bad = ["- **[closes]** add() adds: `python3 -m unittest -q`", "2. **[closes]** the file exists: `test -f calc.py`"]
    project.roles(planner={"turns": [{"criteria": bad}]}, implementer={"turns": [{"replace": [FIX]}]})
    result = project.run_tasks()
    assert result.exit_code == 3, result.stdout + result.stderr
    assert project.prompts_of("implementer") == []
    goal = project.status()["goal"]
    assert goal["status"] == "blocked" and goal["blocked"]["kind"] == "plan"
    assert goal["blocked"]["problems"][0] == (
        "criterion '- **[closes]** add() adds: `python3 -m unittest -q`': not read as a criterion, number it N.: "
        "N. **[closes]** text: `command`")
    assert goal["blocked"]["problems"][1].startswith("criterion 2: ")
    assert "presence" in goal["blocked"]["problems"][1]
    shown = project.cli("goal", "status")
    assert "plan refused (2 problem(s) in task file .axpipe/tasks/tasks.md)" in shown.stdout
    # a person fixes the plan in the task file; the next run goes on without planning again
    task = project.root / ".axpipe" / "tasks" / "tasks.md"
    task.write_text(task.read_text().replace(bad[0], "1. **[closes]** add() adds: `python3 -m unittest -q`")
                    .replace(bad[1] + "\n", ""))
    again = project.run_tasks()
    assert again.exit_code == 0, again.stdout + again.stderr
    assert len(project.prompts_of("planner")) == 1
    assert project.status()["goal"]["status"] == "complete"


def test_the_bounce_reason_reaches_the_next_implementer_prompt_verbatim(project: TaskProject) -> None:
    reason = "add() is right but the fix hides a bug in double()."
    project.roles(planner={"turns": [{"criteria": [CRITERION]}]},
                  implementer={"turns": [{"replace": [FIX]}, {"notes": "looked again"}]},
                  qa={"default": PASS}, judge={"calls": [{"say": f"{reason}\njudge: REJECTED"}, CONFIRMED]})
    first = project.run_tasks()
    assert first.exit_code == 6, first.stdout + first.stderr
    second = project.run_tasks()
    assert second.exit_code == 0, second.stdout + second.stderr
    prompts = project.prompts_of("implementer")
    assert "Why the last unit bounced" not in prompts[0]
    assert f"- judge (judge): REJECTED\n\n```\n{reason}\njudge: REJECTED\n```\n" in prompts[1]
    assert "- qa (qa): PASS\n" in prompts[1]
    assert "- bounces left: 1 of 2" in prompts[1]
    assert reason in project.task_text().split("## Implementation notes")[1]  # the careful agent quoted it


def test_the_implementer_keeps_to_the_scope_it_is_told(project: TaskProject) -> None:
    edits = {"replace": [FIX, ["README.md", "a project", "a calc project"]]}
    project.roles(planner={"turns": [{"criteria": [CRITERION]}]}, implementer={"turns": [edits]})
    result = project.run_tasks()
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "left README.md alone: it is outside my scope (calc.py)" in project.task_text()


def test_without_the_scope_in_its_prompt_the_same_agent_leaves_its_scope(project: TaskProject) -> None:
    """The team's own turn template drops the told block: the agent no longer knows its scope."""
    edits = {"replace": [FIX, ["README.md", "a project", "a calc project"]]}
    project.roles(planner={"turns": [{"criteria": [CRITERION]}]}, implementer={"turns": [edits]})
    prompts = project.root / "recipes" / "prompts"
    prompts.mkdir()
    (prompts / "told.md.j2").write_text("Objective: {{ told.objective }}\n")
    git(project.root, "add", "-A")
    git(project.root, "commit", "-q", "-m", "our prompts")
    result = project.run_tasks()
    assert result.exit_code == 3, result.stdout + result.stderr
    assert project.status()["goal"]["blocked"]["kind"] == "scope"
    assert "### Scope" not in project.prompts_of("implementer")[0]


def test_the_prototype_writes_its_section_once_before_the_first_implementer_unit(project: TaskProject) -> None:
    project.roles(planner={"turns": [{"criteria": [CRITERION]}]},
                  prototype={"turns": [{"task_section": ["Prototype", "Swapping the operator is enough."]}]},
                  implementer={"turns": [{"replace": [FIX]}]})
    result = project.run_tasks()
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "Swapping the operator is enough." in project.task_text()
    prompt = project.prompts_of("prototype")[0]
    assert "## Your role: prototype" in prompt and "only `.axpipe/artifacts/tasks/`" in prompt
    assert "the task file's `Prototype` section" in prompt


def test_a_prototype_that_edits_code_is_quarantined(project: TaskProject) -> None:
    project.roles(planner={"turns": [{"criteria": [CRITERION]}]}, prototype={"turns": [{"replace": [FIX]}]},
                  implementer={"turns": [{"replace": [FIX]}]})
    result = project.run_tasks()
    assert result.exit_code == 3, result.stdout + result.stderr
    goal = project.status()["goal"]
    assert goal["blocked"]["kind"] == "read-only"
    assert goal["reason"] == "the prototype wrote outside .axpipe/artifacts/tasks/: calc.py"
    assert project.prompts_of("implementer") == []
    assert "a - b" in (project.root / "calc.py").read_text()


def test_qa_writing_the_verdict_section_is_quarantined(project: TaskProject) -> None:
    write_verdict = ("python3 -c \"import pathlib; p = pathlib.Path('.axpipe/tasks/tasks.md'); "
                     "p.write_text(p.read_text().replace('## Verdict', '## Verdict\\n\\nCONFIRMED'))\"")
    project.roles(planner={"turns": [{"criteria": [CRITERION]}]}, implementer={"turns": [{"replace": [FIX]}]},
                  qa={"calls": [{"run": [write_verdict], "say": "qa: PASS"}]}, judge={"calls": [CONFIRMED]})
    result = project.run_tasks()
    assert result.exit_code == 3, result.stdout + result.stderr
    assert project.status()["goal"]["reason"] == (
        "task file .axpipe/tasks/tasks.md: the qa unit wrote section 'Verdict', which its role does not own "
        "(the qa role writes QA)")


def test_the_task_loop_recipe_plans_implements_and_is_judged_on_its_sample(repo: Path) -> None:
    from helpers import run_cli

    result = run_cli("run", "recipe=task-loop", "--json", cwd=repo)
    assert result.exit_code == 0, result.stdout + result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    started = [event for event in events if event["type"] == "agent.started"]
    assert [event["phase"] for event in started] == ["plan", "work"]
    verdicts = [event["verdict"] for event in events if event["type"] == "unit.verdict"]
    assert verdicts == ["PASS", "CONFIRMED"]


def test_the_planners_scope_is_the_scope_contract_when_the_recipe_has_none(project: TaskProject) -> None:
    edits = {"replace": [FIX, ["README.md", "a project", "a calc project"]]}
    project.roles(planner={"turns": [{"criteria": [CRITERION], "task_section": ["Scope", "- `calc.py`"]}]},
                  implementer={"turns": [edits]}, scope=None)
    result = project.run_tasks()
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "### Scope\n\n- `calc.py`\n" in project.prompts_of("implementer")[0]
    assert "scope held: 1 changed path(s) inside calc.py" in result.stdout
    assert (project.root / "README.md").read_text() == "a project\n"


def test_an_implementer_that_changes_nothing_on_a_goal_without_work_parks(project: TaskProject) -> None:
    project.roles(planner={"turns": [{"criteria": [CRITERION]}]}, implementer={"turns": [{"notes": "nothing to do"}]},
                  qa={"default": PASS}, judge={"default": CONFIRMED})
    result = project.run_tasks()
    assert result.exit_code == 3, result.stdout + result.stderr
    goal = project.status()["goal"]
    assert goal["reason"] == "implement: no change inside scope" and goal["blocked"]["kind"] == "no-change"
    assert not (project.scratch / "qa.json.count").exists()  # QA never ran


def test_goal_resume_continues_a_task_goal_under_the_same_contract(project: TaskProject) -> None:
    project.roles(planner={"turns": [{"criteria": [CRITERION]}]},
                  implementer={"turns": [{"replace": [FIX]}, {"notes": "looked again"}]},
                  qa={"default": PASS}, judge={"calls": [{"say": "Not yet.\njudge: REJECTED"}, CONFIRMED]})
    assert project.run_tasks().exit_code == 6
    resumed = project.cli("goal", "resume", "--goal", "tasks")
    assert resumed.exit_code == 0, resumed.stdout + resumed.stderr
    assert "```\nNot yet.\njudge: REJECTED\n```" in project.prompts_of("implementer")[1]
    assert len(project.prompts_of("planner")) == 1


def test_a_forbidden_write_to_a_task_file_git_does_not_track_is_put_back(project: TaskProject) -> None:
    project.roles(planner={"turns": [{"criteria": [CRITERION]}]},
                  implementer={"turns": [{"replace": [FIX], "task_section": ["Verdict", "CONFIRMED by me"]}]})
    result = project.run_tasks()
    assert result.exit_code == 3, result.stdout + result.stderr
    assert "CONFIRMED by me" not in project.task_text()
    kept = project.root / ".axpipe" / "artifacts" / "tasks" / "unit-2" / "task-file.md"
    assert "CONFIRMED by me" in kept.read_text()
    assert f"the task file is back as the unit found it (the unit's version: {kept})" in result.stdout


def test_qa_and_the_judge_are_told_their_role_scope_and_task_file(project: TaskProject) -> None:
    record = "python3 -c \"import os; print('task file:', os.environ['AXPIPE_TASK_FILE'])\""
    project.roles(planner={"turns": [{"criteria": [CRITERION]}]}, implementer={"turns": [{"replace": [FIX]}]},
                  qa={"calls": [{"run": [record], "say": "qa: PASS"}]}, judge={"calls": [CONFIRMED]})
    assert project.run_tasks().exit_code == 0
    qa = project.prompts_of("qa")[0]
    assert ("## Your role: qa\n\nYou may write:\n- only `.axpipe/artifacts/tasks/`\n"
            "- the task file's `QA` section\n") in qa
    assert "### Scope\n\n- `calc.py`\n" in qa
    assert "## Your role: judge" in project.prompts_of("judge")[0]
    trace = (project.root / ".axpipe" / "artifacts" / "tasks" / "trace" / "unit-2-qa-qa.txt").read_text()
    assert f"task file: {project.root / '.axpipe' / 'tasks' / 'tasks.md'}" in trace


def test_a_plan_holding_a_credential_is_parked(project: TaskProject) -> None:
    secret = "ghp_" + "a1B2" * 9
    project.roles(planner={"turns": [{"criteria": [CRITERION], "task_section": ["Plan", f"push with {secret}"]}]},
                  implementer={"turns": [{"replace": [FIX]}]})
    result = project.run_tasks()
    assert result.exit_code == 3, result.stdout + result.stderr
    problems = project.status()["goal"]["blocked"]["problems"]
    assert problems == ["section 'Plan' contains a credential (GitHub token): keep secrets out of the plan"]
    assert secret not in result.stdout


def test_the_planners_tokens_count_into_the_goals_budget(project: TaskProject) -> None:
    project.roles(planner={"turns": [{"criteria": [CRITERION], "tokens": 50}]},
                  implementer={"turns": [{"replace": [FIX], "tokens": 7}]})
    assert project.run_tasks().exit_code == 0
    budget = project.status()["budget"]
    assert budget["tokens_used"] == 57
    assert budget["steps_used"] == 2  # the planner's unit and the implementer's
