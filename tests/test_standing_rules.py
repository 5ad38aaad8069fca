"""Standing rules (DESIGN §15): ``axpipe rules sync|check`` and the check before every unit."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import git
from rolekit import CRITERION, FIX, TaskProject

RULES = "# Standing rules\n\n- Never push.\n- Keep the tests.\n"
AGENTS_MD = "# Notes for agents\n\nBuild with make.\n"


@pytest.fixture
def project(repo: Path, tmp_path: Path) -> TaskProject:
    project = TaskProject(repo, tmp_path)
    (repo / ".axpipe-rules.md").write_text(RULES)
    (repo / "AGENTS.md").write_text(AGENTS_MD)
    project.roles(planner={"turns": [{"criteria": [CRITERION]}]}, implementer={"turns": [{"replace": [FIX]}]},
                  extra="rules: {standing: .axpipe-rules.md}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "rules")
    return project


def test_check_exits_2_on_drift_and_sync_fixes_only_the_block(project: TaskProject) -> None:
    missing = project.cli("rules", "check", "--recipe", "tasks")
    assert missing.exit_code == 2
    assert missing.stdout == "drift AGENTS.md: no standing-rules block (run `axpipe rules sync`)\n"
    synced = project.cli("rules", "sync", "--recipe", "tasks")
    assert synced.exit_code == 0 and synced.stdout == "synced AGENTS.md\n"
    text = (project.root / "AGENTS.md").read_text()
    assert text == (AGENTS_MD + "\n<!-- axpipe:standing-rules:begin -->\n" + RULES.rstrip("\n")
                    + "\n<!-- axpipe:standing-rules:end -->\n")
    assert project.cli("rules", "check", "--recipe", "tasks").exit_code == 0
    (project.root / "AGENTS.md").write_text(text.replace("- Keep the tests.", "- Delete the tests.")
                                            + "\nMore notes.\n")
    drifted = project.cli("rules", "check", "--recipe", "tasks")
    assert drifted.exit_code == 2
    assert drifted.stdout == ("drift AGENTS.md:9: differs from .axpipe-rules.md: '- Delete the tests.' "
                              "(the source says '- Keep the tests.')\n")
    assert project.cli("rules", "sync", "--recipe", "tasks").exit_code == 0
    assert (project.root / "AGENTS.md").read_text() == text + "\nMore notes.\n"  # the rest of the file untouched


def test_no_unit_runs_on_drifted_standing_rules(project: TaskProject) -> None:
    result = project.run_tasks()
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "standing rules out of sync: AGENTS.md: no standing-rules block" in result.stdout + result.stderr
    assert project.prompts_of("planner") == [] and project.prompts_of("implementer") == []
    assert project.cli("rules", "sync", "--recipe", "tasks").exit_code == 0
    done = project.run_tasks()
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "The standing rules are in `.axpipe-rules.md`: follow them." in project.prompts_of("implementer")[0]


def test_a_missing_source_or_a_target_leading_out_is_a_config_error(project: TaskProject, tmp_path: Path) -> None:
    os.symlink(tmp_path, project.root / "out")
    result = project.cli("run", "recipe=tasks", "rules.standing=nope.md", "rules.targets=[out/AGENTS.md]")
    assert result.exit_code == 2
    assert "rules.standing: 'nope.md' does not exist (the standing rules' source)" in result.stderr
    assert "rules.targets[0]: 'out/AGENTS.md' leads outside the project" in result.stderr
    assert not (project.root / ".axpipe").exists()
