"""Receipts in goals: what `axpipe verify` may run (the frozen held-out command only), the
fingerprint the idempotent kind compares, the recipe's fingerprint limits, and signals
that end a verification (SIGHUP as SIGTERM)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from goalkit import FIX, Project

SECRET = "python3 -c 'import calc; assert calc.double(21) == 0'"  # fails: double(21) is 42


@pytest.fixture
def project(repo: Path, tmp_path: Path) -> Project:
    return Project(repo, tmp_path)


def hidden_recipe(project: Project) -> None:
    checks = ('    - {id: unit, acceptance: [AC1], command: "python3 -m unittest -q"}\n'
              f'    - id: hidden\n      acceptance: [AC1]\n      held_out: true\n'
              f'      command: {json.dumps(SECRET)}\n')
    project.recipe(checks=checks, turns=[FIX], outside=True)


def held_out_file(tmp_path: Path) -> Path:
    [path] = (tmp_path / "private").glob("*/contracts/*.json")
    return path


# -- held-out checks run only their frozen command ------------------------------------------


def test_an_edited_held_out_command_is_refused_and_nothing_is_recorded(project: Project, tmp_path: Path) -> None:
    hidden_recipe(project)
    assert project.run().exit_code == 6  # the hidden check fails: bad success, not complete
    stored = held_out_file(tmp_path)
    descriptions = json.loads(stored.read_text())
    descriptions["hidden"]["command"] = "true"
    stored.write_text(json.dumps(descriptions))
    receipts_before = project.receipts()

    result = project.cli("verify", "hidden")

    assert result.exit_code == 2, result.stdout + result.stderr
    assert (f"held-out check 'hidden' of goal 'calc': its description in the private folder ({stored}) "
            "does not match the frozen contract") in result.stderr
    assert "true" not in result.stdout
    assert project.receipts() == receipts_before  # nothing ran, nothing was recorded
    assert project.status()["checks"][1]["status"] == "failed"


def test_an_unreadable_held_out_file_is_refused_with_its_path(project: Project, tmp_path: Path) -> None:
    hidden_recipe(project)
    project.run()
    stored = held_out_file(tmp_path)
    stored.write_text("{not json")
    receipts_before = project.receipts()

    result = project.cli("verify", "hidden")

    assert result.exit_code == 2, result.stdout + result.stderr
    assert "internal error" not in result.stderr
    assert f"the private folder's held-out descriptions {stored} cannot be read (not JSON:" in result.stderr
    assert project.receipts() == receipts_before


@pytest.mark.parametrize("damage", ["edit", "break"])
def test_running_the_recipe_again_restores_a_damaged_held_out_file(project: Project, tmp_path: Path,
                                                                    damage: str) -> None:
    hidden_recipe(project)
    project.run()
    stored = held_out_file(tmp_path)
    original = stored.read_text()
    if damage == "edit":
        stored.write_text(original.replace(json.dumps(SECRET)[1:-1], "true"))
        assert stored.read_text() != original
    else:
        stored.write_text("{not json")
    project.run()  # the recipe still matches the frozen contract: its descriptions are written again
    assert json.loads(stored.read_text()) == json.loads(original)
    result = project.cli("verify", "hidden")
    assert result.exit_code == 1, result.stdout + result.stderr  # the frozen command ran, and failed
