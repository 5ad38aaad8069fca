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


# -- baselines (DESIGN §8): the unit's starting commit; HEAD when a goal-less run started -------

GATE_TEST = 'gate:\n  phases:\n    test: "python -m pytest -q -p no:cacheprovider --junitxml={junit_xml}"\n'


def test_a_goal_less_run_narrows_against_head_when_it_started(repo: Path) -> None:
    # The user's last commit left test_double failing; the run (a repair, then the gate) did
    # not. Against HEAD's first parent, that commit would count as the run's change.
    (repo / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n\n\ndef double(x):\n    return x * 2\n")
    (repo / "test_calc.py").write_text("from calc import add, double\n\n\ndef test_add():\n    assert add(2, 3) == 5"
                                       "\n\n\ndef test_double():\n    assert double(4) == 8\n")
    (repo / "check.py").write_text("import pathlib, sys\nsys.exit(0 if pathlib.Path('fixed.txt').exists() else 1)\n")
    (repo / ".gitignore").write_text("__pycache__/\n")
    write_recipe(repo / "recipes", "fix", 'name: fix\nrepair:\n  target: "python3 check.py"\n  agent: {kind: command, '
                                          'command: "python3 -c \\"open(\'fixed.txt\', \'w\').write(\'ok\')\\""}\n'
                                          + GATE_TEST)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "calc")
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n\n\ndef double(x):\n    return x * 3\n")
    git(repo, "commit", "-qam", "the user's own change: double() breaks")
    head = git(repo, "rev-parse", "HEAD").strip()
    result = run_cli("run", "recipe=fix", "--json", cwd=repo)
    assert result.exit_code == 0, result.stdout + result.stderr
    finished = next(json.loads(line) for line in result.stdout.splitlines() if '"gate.finished"' in line)
    assert finished["baseline"] == head
    assert finished["summary"] == "gate passed: test passed (1 pre-existing)"
    report = json.loads((Path(finished["report"]).parent / "report.json").read_text())
    assert report["baseline_given"] == "HEAD when the run started"


def test_a_units_gate_narrows_against_the_commit_the_unit_started_from(project: Project) -> None:
    # The goal is planned in the first run; before the second, the user commits a change that
    # breaks test_double. The second unit's gate must not blame it on the unit.
    project.recipe(turns=[{"say": "looking around"}, FIX], extra=GATE_TEST)
    first = project.run()
    assert first.exit_code == 6, first.stdout
    (project.root / "calc.py").write_text((project.root / "calc.py").read_text().replace("x * 2", "x * 3"))
    git(project.root, "commit", "-qam", "the user's own change: double() breaks")
    start = git(project.root, "rev-parse", "HEAD").strip()
    second = project.cli("run", "recipe=calc", "--json")
    assert second.exit_code == 6, second.stdout  # not a hard stop (3): the goal goes on
    finished = next(json.loads(line) for line in second.stdout.splitlines() if '"gate.finished"' in line)
    assert (finished["baseline"], finished["status"]) == (start, "passed")
    assert finished["summary"] == "gate passed: test passed (1 pre-existing)"
