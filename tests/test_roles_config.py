"""Bad input to ``roles:`` and ``goal.task_file``: a config error (exit 2) naming the key or the
file, before anything runs, nothing written (issue 19)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import git, run_cli, write_recipe

ECHO = "{kind: command, command: [echo], model: m1}"


@pytest.mark.parametrize(("body", "expected"), [
    (f"roles:\n  plannr: {ECHO}\n", "roles.plannr: unknown key (did you mean 'planner'?)"),
    ("roles:\n  planner: {model: m2}\n  implementer: " + ECHO + "\n",
     "roles.planner.command: missing required key"),
    ("roles:\n  implementer: " + ECHO + "\nagent: " + ECHO + "\n",
     "roles.implementer: declare the implementer once"),
    ("roles:\n  implementer: " + ECHO + "\n  qa: {command: [echo], model: m1}\n",
     "roles.qa.model: QA uses the implementer's model 'm1'"),
    ("agent: " + ECHO + "\nreviewers:\n  - {name: tester, qa: true, model: m1, command: [echo]}\n",
     "reviewers[0].model: QA uses the agent's model 'm1'"),
    ("roles:\n  implementer: " + ECHO + "\n  qa: {command: [echo], model: m2}\n  judge: {command: [echo], model: m2}\n",
     "roles.judge.model: the judge uses QA's model 'm2'"),
    ("roles:\n  implementer: " + ECHO + "\ngoal_task_file: ../T.md\n",
     "goal.task_file: '../T.md' is not a project path"),
    ("roles:\n  implementer: " + ECHO + "\ngoal_task_file: out/T.md\n", "goal.task_file: 'out/T.md' leads outside the "
                                                                        "project"),
    ("roles:\n  implementer: " + ECHO + "\ngoal_task_file: tasks/broken.md\n",
     "goal.task_file: tasks/broken.md: the front matter is not valid YAML"),
    ("roles:\n  implementer: " + ECHO + "\ngoal_task_file: tasks/twice.md\n",
     "goal.task_file: tasks/twice.md: section '## Plan' appears twice"),
])
def test_bad_roles_and_task_files_are_refused_before_anything_runs(repo: Path, tmp_path: Path, body: str,
                                                                     expected: str) -> None:
    (repo / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", repo / "out")
    (repo / "tasks").mkdir()
    (repo / "tasks" / "broken.md").write_text("---\nid: [T\n---\n")
    (repo / "tasks" / "twice.md").write_text("---\nid: T\n---\n## Plan\n## Plan\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "tasks")
    task_file = ""
    if "goal_task_file:" in body:
        body, task_file = body.split("goal_task_file: ")
        task_file = f"  task_file: {task_file.strip()}\n"
    write_recipe(repo / "recipes", "bad", f"name: bad\n{body}goal:\n  objective: x\n{task_file}")
    result = run_cli("run", "recipe=bad", cwd=repo)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert expected in result.stderr
    assert "Nothing was run and nothing was written." in result.stderr
    assert not (repo / ".axpipe").exists()
