"""The gate phase of `axpipe run`: a gate without a goal fails the run; in a goal's unit a
failing gate and the unit timeout are hard stops with their evidence kept."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from goalkit import FIX, Project
from helpers import git, run_cli, write_recipe

LINT = "ruff check --isolated --no-cache --select F --output-format concise ."


@pytest.fixture
def project(repo: Path, tmp_path: Path) -> Project:
    return Project(repo, tmp_path)


def test_a_recipe_that_only_gates_fails_the_run_on_a_blamed_finding(repo: Path) -> None:
    (repo / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    write_recipe(repo / "recipes", "ci", f'name: ci\ngate:\n  baseline: HEAD\n  phases:\n    lint: "{LINT}"\n')
    (repo / "old.py").write_text("import os\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "old finding")
    clean = run_cli("run", "recipe=ci", cwd=repo)
    assert clean.exit_code == 0, clean.stdout + clean.stderr
    assert "gate passed: lint passed (1 pre-existing)" in clean.stdout
    (repo / "new.py").write_text("import sys\n")
    dirty = run_cli("run", "recipe=ci", "--json", cwd=repo)
    assert dirty.exit_code == 1
    finished = next(json.loads(line) for line in dirty.stdout.splitlines() if '"gate.finished"' in line)
    assert finished["status"] == "failed" and Path(finished["report"]).is_file()
    assert "/gate/report.md" in finished["report"] and "/.axpipe/runs/" in finished["report"]


def test_a_failing_gate_in_a_unit_is_a_hard_stop(project: Project) -> None:
    project.recipe(turns=[{**FIX, "write": {"extra.py": "import sys\n"}}],
                   extra=f'gate:\n  phases:\n    lint: "{LINT}"\n')
    result = project.run()
    assert result.exit_code == 3, result.stdout
    goal = project.status()["goal"]
    assert goal["blocked"]["kind"] == "gate"
    assert goal["reason"] == "gate failed: lint failed (1 blamed)"
    report = Path(goal["blocked"]["evidence"][1])
    assert report.name == "report.md" and "blamed: extra.py:1:8: F401" in report.read_text()
    assert git(project.root, "stash", "list", "--format=%gs").splitlines() == ["axpipe quarantine: calc unit 1"]
    assert not (project.root / "extra.py").exists()


def test_a_passing_gate_lets_the_unit_go_on(project: Project) -> None:
    project.recipe(turns=[FIX], extra=f'gate:\n  phases:\n    lint: "{LINT}"\nscope: [calc.py]\n')
    result = project.run()
    assert result.exit_code == 0, result.stdout
    assert "scope held: 1 changed path(s) inside calc.py; gate passed: lint passed" in result.stdout
    report = project.root / ".axpipe" / "artifacts" / "calc" / "gate" / "unit-1" / "report.md"
    assert report.is_file()


def test_the_unit_timeout_stops_a_hanging_agent_and_keeps_the_evidence(project: Project) -> None:
    project.recipe(turns=[{"replace": [["calc.py", "a - b", "a + b"]], "say": "working on it", "sleep": 60}],
                   extra="limits: {unit_timeout: 5s}\n")
    started = time.monotonic()
    result = project.run()
    assert result.exit_code == 3, result.stdout
    assert time.monotonic() - started < 40
    goal = project.status()["goal"]
    assert goal["blocked"]["kind"] == "unit-timeout"
    assert goal["reason"] == "unit 1 ran longer than limits.unit_timeout (5s); stopped during its work phase"
    assert git(project.root, "stash", "list", "--format=%gs").splitlines() == ["axpipe quarantine: calc unit 1"]
    assert "a - b" in (project.root / "calc.py").read_text()
    turns = project.root / ".axpipe" / "goals" / "calc" / "turns"
    assert (turns / "0001-prompt.md").is_file()  # what the agent was told is kept
    assert (project.root / ".axpipe" / "artifacts" / "calc" / "unit-1" / "hard-stop.json").is_file()


def test_the_unit_timeout_also_ends_a_hanging_gate(project: Project) -> None:
    project.recipe(turns=[FIX], extra="limits: {unit_timeout: 6s}\n"
                                      "gate:\n  command: \"python3 -c 'import time; time.sleep(60)'\"\n")
    started = time.monotonic()
    result = project.run()
    assert result.exit_code == 3, result.stdout
    assert time.monotonic() - started < 40
    assert project.status()["goal"]["blocked"]["kind"] == "unit-timeout"
    log = project.root / ".axpipe" / "artifacts" / "calc" / "gate" / "unit-1" / "command-workspace.log"
    assert log.is_file()
