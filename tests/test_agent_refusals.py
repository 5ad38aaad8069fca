"""Refusals the input alone decides come before anything is written (DESIGN §11: exit 2,
nothing ran, nothing changed): `axpipe repair`'s, before the checkout's lock, store and run
folder; a recipe's (a repair's, a goal's agent), with every other problem of the recipe,
before the goal and its session are registered. An agent whose program is missing is one
of them, as a check's is (DESIGN §5). Real repositories, the real CLI as a subprocess."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import CLI
from helpers import git, tree, write_recipe

AGENT = Path(__file__).resolve().parent / "agents" / "scripted_agent.py"
TARGET = "python3 -c pass"  # already holds: a good path resolves without calling the agent


def written(root: Path) -> tuple[list[str], str]:
    """Everything a run could leave: the work tree (``.axpipe/`` included) and git's
    exclude file, where a run hides ``.axpipe/``."""
    exclude = root / ".git" / "info" / "exclude"
    return tree(root), exclude.read_text() if exclude.exists() else ""


def report_of(stdout: str) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(stdout)
    return report


# -- axpipe repair ---------------------------------------------------------------------------


@pytest.mark.parametrize(("target", "args", "reason"), [
    (TARGET, ["--agent-command", "no-such-program-xyz --fix"],
     "--agent-command: the agent's program 'no-such-program-xyz' is not on PATH"),
    (TARGET, ["--agent-command", "cd . && no-such-program-xyz"],  # the first program, after a built-in
     "--agent-command: the agent's program 'no-such-program-xyz' is not on PATH"),
    (TARGET, ["--agent-command", "./missing-fixer.sh"],
     "--agent-command: the agent's program './missing-fixer.sh' does not exist in the project"),
    (TARGET, ["--agent-command", ""], "--agent-command: empty command"),
    (TARGET, ["--agent-command", "echo 'unbalanced"],
     "--agent-command: not a valid shell command (No closing quotation): \"echo 'unbalanced\""),
    (TARGET, [], "a repair needs an agent to make its fixes (--agent, --agent-command, or `agent:`)"),
    (TARGET, ["--agent", "nosuch"], "repair.agent.kind: unknown agent 'nosuch'; available: aider, claude-code, "
                                    "codex, command, gemini-cli, ruff-fix (entry point group axpipe.agents)"),
    ("  ", ["--agent-command", "true"], "nothing actionable: the target is empty"),
    (TARGET, ["--condition", "vibes", "--agent-command", "true"],
     "repair.success.kind: unknown check kind 'vibes'; available: browser, command, git-scope, idempotent, no-match, "
     "oracle, pytest, receipts (entry point group axpipe.checks)"),
    (TARGET, ["--condition", "git-scope", "--agent-command", "true"],
     "the success condition cannot be verified: check kind 'git-scope' does not run the target"),
    (TARGET, ["--guards", "nosuch", "--agent-command", "true"],
     "--guards: unknown guard 'nosuch'; available: condition, javascript, python (entry point group axpipe.guards)"),
])
def test_a_repair_refused_by_its_input_writes_nothing(cli: CLI, repo: Path, target: str, args: list[str],
                                                       reason: str) -> None:
    before = written(repo)
    result = cli("repair", target, "--json", *args)
    assert result.exit_code == 2, result.stdout + result.stderr
    report = report_of(result.stdout)
    assert (report["status"], report["reason"], report["iterations"]) == ("input-error", reason, [])
    assert result.stderr == f"axpipe: error: {reason}\n"
    # No .axpipe/ (lock, store, run folder), no exclude entry: the workspace as it was.
    assert written(repo) == before
    assert not (repo / ".axpipe").exists()


def test_a_repair_refused_outside_git_writes_nothing(cli: CLI, tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    result = cli("repair", TARGET, "--agent-command", "true", cwd=folder)
    assert result.exit_code == 2
    assert result.stderr.endswith("axpipe: error: repair needs a git repository: the guards judge each "
                                  "iteration's diff\n")
    assert list(folder.iterdir()) == []


def test_the_agents_program_is_found_on_path_in_the_project_and_by_absolute_path(cli: CLI, repo: Path) -> None:
    (repo / "fixer.sh").write_text("#!/bin/sh\nexit 0\n")
    (repo / "fixer.sh").chmod(0o755)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a fixer")
    for command in ("./fixer.sh", str(repo / "fixer.sh"), f"{sys.executable} -c pass", "true"):
        result = cli("repair", TARGET, "--json", "--agent-command", command)
        assert result.exit_code == 0, (command, result.stdout + result.stderr)
        assert report_of(result.stdout)["status"] == "resolved"


# -- a recipe's repairs --------------------------------------------------------------------------


def recipe_project(repo: Path, body: str) -> None:
    (repo / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    write_recipe(repo / "recipes", "fix", "name: fix\n" + body)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a recipe")


@pytest.mark.parametrize(("body", "problem"), [
    (f'repair:\n  target: "{TARGET}"\n  agent: {{kind: command, command: "no-such-program-xyz --fix"}}\n',
     "repair.agent.command: the agent's program 'no-such-program-xyz' is not on PATH"),
    (f'repair:\n  - target: "{TARGET}"\n    agent: {{kind: command, command: "true"}}\n'
     f'  - target: "{TARGET}"\n    agent: {{kind: command, command: [./missing-fixer.sh]}}\n',
     "repair[1].agent.command: the agent's program './missing-fixer.sh' does not exist in the project"),
    (f'agent: {{kind: command, command: [no-such-program-xyz]}}\nrepair:\n  target: "{TARGET}"\n',
     "agent.command: the agent's program 'no-such-program-xyz' is not on PATH"),
    ('repair:\n  target: "  "\n  agent: {kind: command, command: "true"}\n',
     "repair.target: nothing actionable: the target is empty"),
    (f'repair:\n  target: "{TARGET}"\n  agent: {{kind: command, command: ""}}\n',
     "repair.agent.command: empty command"),
    (f'repair:\n  target: "{TARGET}"\n  success: {{kind: git-scope}}\n  agent: {{kind: command, command: "true"}}\n',
     "repair.success.kind: the success condition cannot be verified: check kind 'git-scope' does not run the "
     "target"),
])
def test_a_recipe_repair_refused_by_its_input_writes_nothing(cli: CLI, repo: Path, body: str, problem: str) -> None:
    recipe_project(repo, body)
    before = written(repo)
    result = cli("run", "recipe=fix")
    assert result.exit_code == 2, result.stdout + result.stderr
    assert f"  - {problem}  (from recipes/fix.yaml)\n" in result.stderr
    assert "Nothing was run and nothing was written." in result.stderr
    assert written(repo) == before and not (repo / ".axpipe").exists()


def test_a_recipe_repair_outside_git_is_refused_before_anything_is_written(cli: CLI, tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    write_recipe(folder / "recipes", "fix", f'name: fix\nrepair:\n  target: "{TARGET}"\n'
                                            '  agent: {kind: command, command: "true"}\n')
    (folder / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    before = tree(folder)
    result = cli("run", "recipe=fix", cwd=folder)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "  - repair: repair needs a git repository: the guards judge each iteration's diff" in result.stderr
    assert tree(folder) == before


def test_an_agent_nothing_starts_is_not_looked_up(cli: CLI, repo: Path) -> None:
    # The top-level agent is not the repair's: a run never starts it, so its program is not refused.
    recipe_project(repo, f'agent: {{kind: command, command: [no-such-program-xyz]}}\nrepair:\n  target: "{TARGET}"\n'
                         '  agent: {kind: command, command: "true"}\n')
    result = cli("run", "recipe=fix")
    assert result.exit_code == 0, result.stdout + result.stderr


def agent_problems(config: dict[str, Any], root: Path | None) -> list[tuple[str, str]]:
    from axpipe.errors import ConfigError
    from axpipe.recipe.validation import validate_recipe

    try:
        validate_recipe(config, config, recipe_name="r", root=root)
    except ConfigError as error:
        return [(problem.path, problem.message) for problem in error.problems if "agent" in problem.path]
    return []


def test_a_loop_command_replaces_the_agent_so_its_program_is_not_looked_up(repo: Path) -> None:
    goal = {"objective": "the tests pass", "acceptance": {"AC1": {"tag": "closes", "text": "pass", "check": "t"}},
            "checks": [{"id": "t", "acceptance": ["AC1"], "command": "python3 -c pass"}]}
    agent = {"kind": "command", "command": ["no-such-program-xyz"]}
    missing = [("agent.command", "the agent's program 'no-such-program-xyz' is not on PATH")]
    assert agent_problems({"name": "r", "agent": agent, "goal": goal}, repo) == missing  # the control
    assert agent_problems({"name": "r", "agent": agent, "goal": goal,
                           "loop": {"interval": "1m", "prompt": "go"}}, repo) == missing
    assert agent_problems({"name": "r", "agent": agent, "goal": goal,
                           "loop": {"interval": "1m", "command": "python3 -c pass"}}, repo) == []
    assert agent_problems({"name": "r", "agent": agent, "goal": goal}, None) == []  # no workspace: not looked up


def test_the_agents_program_is_looked_up_on_the_path_it_runs_with(cli: CLI, repo: Path, tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "site-fixer").write_text("#!/bin/sh\nexit 0\n")
    (tools / "site-fixer").chmod(0o755)
    own_path = f"{tools}:/usr/bin:/bin"
    # On the agent's own PATH only (its `env`): found, the repair runs and resolves.
    recipe_project(repo, f'repair:\n  target: "{TARGET}"\n'
                         f'  agent: {{kind: command, command: "site-fixer --go", env: {{PATH: "{own_path}"}}}}\n')
    assert cli("run", "recipe=fix").exit_code == 0
    # On axpipe's PATH but not on the agent's own: the agent could not start it, so refused.
    recipe_project(repo, f'repair:\n  target: "{TARGET}"\n'
                         '  agent: {kind: command, command: "site-fixer --go", env: {PATH: "/usr/bin:/bin"}}\n')
    before = written(repo)
    result = cli("run", "recipe=fix", env={"PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"})
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "repair.agent.command: the agent's program 'site-fixer' is not on PATH" in result.stderr
    assert written(repo) == before


# -- a goal's agent ------------------------------------------------------------------------------


GOAL = """goal:
  objective: "the tests pass"
  acceptance:
    AC1: {tag: closes, text: "the tests pass", check: unit}
  checks:
    - {id: unit, acceptance: [AC1], command: "CHECK", purpose: "the tests pass"}
"""


def goal_project(repo: Path, agent_command: str, check: str = "python3 -c pass") -> None:
    recipe_project(repo, f"agent:\n  kind: command\n  command: {agent_command}\n" + GOAL.replace("CHECK", check))


@pytest.mark.parametrize("command", ["[no-such-program-xyz, --go]", '"no-such-program-xyz --go"',
                                     '"FOO=1 no-such-program-xyz"'])
def test_a_goals_missing_agent_program_is_a_plan_refusal(cli: CLI, repo: Path, command: str) -> None:
    goal_project(repo, command)
    before = written(repo)
    result = cli("run", "recipe=fix")
    assert result.exit_code == 2, result.stdout + result.stderr
    assert ("  - agent.command: the agent's program 'no-such-program-xyz' is not on PATH  (from recipes/fix.yaml)\n"
            in result.stderr)
    # Before the goal and its session: no store (so no goal row), no run folder, nothing.
    assert written(repo) == before and not (repo / ".axpipe").exists()


def test_every_plan_problem_is_listed_with_the_agents(cli: CLI, repo: Path) -> None:
    goal_project(repo, "[no-such-program-xyz]", check="no-such-checker -q")
    result = cli("run", "recipe=fix")
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "recipe 'fix' is invalid (2 problems):" in result.stderr
    assert "  - agent.command: the agent's program 'no-such-program-xyz' is not on PATH" in result.stderr
    assert "  - goal.checks[0].command: check 'unit': 'no-such-checker' is not a command on PATH or in the project" \
        in result.stderr
    assert not (repo / ".axpipe").exists()


def test_a_goal_refused_for_its_agent_leaves_an_existing_store_without_a_goal(cli: CLI, repo: Path) -> None:
    # A store from an earlier run: the refused one adds no goal, session or run to it.
    recipe_project(repo, f'repair:\n  target: "{TARGET}"\n  agent: {{kind: command, command: "true"}}\n')
    assert cli("run", "recipe=fix").exit_code == 0
    store = repo / ".axpipe" / "state.db"

    def rows() -> dict[str, int]:
        with sqlite3.connect(store) as connection:
            return {table: connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                    for table in ("goals", "sessions", "runs")}

    counted = rows()
    goal_project(repo, "[no-such-program-xyz]")
    before = written(repo)
    result = cli("run", "recipe=fix")
    assert result.exit_code == 2, result.stdout + result.stderr
    assert rows() == counted and counted["goals"] == 0
    assert written(repo) == before


def test_a_goals_agent_that_exists_runs(cli: CLI, repo: Path, tmp_path: Path) -> None:
    plan, log = tmp_path / "plan.json", tmp_path / "prompts.jsonl"
    plan.write_text(json.dumps({"turns": [], "default": {}}))
    goal_project(repo, f"[{json.dumps(sys.executable)}, {json.dumps(str(AGENT))}]\n"
                       f"  env: {{SCRIPTED_AGENT_PLAN: {json.dumps(str(plan))}, "
                       f"SCRIPTED_AGENT_LOG: {json.dumps(str(log))}}}")
    result = cli("run", "recipe=fix")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert len(log.read_text().splitlines()) == 1  # the agent took the goal's turn
    status = json.loads(cli("goal", "status", "--json").stdout)
    assert status["goal"]["status"] == "complete"


def test_a_presets_missing_program_names_the_preset(cli: CLI, repo: Path) -> None:
    """The recipe says `kind: codex`, not a command: the message says where the program comes
    from and how to give another one."""
    recipe_project(repo, "agent: {kind: codex}\n" + GOAL.replace("CHECK", "python3 -c pass"))
    result = cli("run", "recipe=fix", env={"PATH": "/usr/bin:/bin"})
    assert result.exit_code == 2, result.stdout + result.stderr
    assert ("  - agent.command: the agent's program 'codex' is not on PATH (the 'codex' agent runs it: "
            "install it, or set agent.command)  (from recipes/fix.yaml)\n") in result.stderr


def test_gate_and_review_judge_a_recipe_whose_agent_is_not_installed(cli: CLI, repo: Path) -> None:
    """They never start the recipe's agent, so a CI machine without it can still gate a change."""
    recipe_project(repo, "agent: {kind: command, command: [no-such-program-xyz]}\n"
                         + GOAL.replace("CHECK", "python3 -c pass")
                         + "gate: {command: 'python3 -c pass'}\n"
                         + "reviewers:\n  - {name: plain, kind: command,\n"
                         + "     command: [python3, -c, 'print(\"VERDICT: no findings\")']}\n")
    assert cli("run", "recipe=fix").exit_code == 2  # the control: a run would start the agent
    gate = cli("gate", "--recipe", "fix")
    assert gate.exit_code == 0, gate.stdout + gate.stderr
    assert "Gate passed" in gate.stdout
    review = cli("review", "round", "--recipe", "fix")
    assert "no-such-program-xyz" not in review.stdout + review.stderr
    assert review.exit_code == 0, review.stdout + review.stderr
