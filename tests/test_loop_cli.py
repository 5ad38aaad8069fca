"""The loop commands' text: help, `loop status` as a person and as JSON reads it, the Hydra
quoting that carries a prompt into a run, and the recipe rules a loop must satisfy."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from goalkit import Project
from helpers import wait_for, write_recipe
from loopkit import FAST, Gate, command_recipe, loop_status, running_loop

from axpipe.commands.loop import hydra_quote
from axpipe.errors import ConfigError
from axpipe.recipe.validation import validate_recipe

VOLATILE = ("id", "pid", "host", "run", "started_at", "ended_at", "heartbeat_age", "next_tick_at", "finished_at",
            "busy_skips")


@pytest.fixture
def project(repo: Path, tmp_path: Path) -> Project:
    made = Project(repo, tmp_path)
    made.env.update(FAST)
    return made


def steady(value: Any) -> Any:
    """``value`` with what changes from run to run (ids, pids, times, counts of skipped firings) masked."""
    if isinstance(value, dict):
        return {key: f"<{key}>" if key in VOLATILE and item is not None else steady(item)
                for key, item in value.items()}
    if isinstance(value, list):
        return [steady(item) for item in value]
    return value


def masked_text(text: str, root: Path) -> str:
    text = text.replace(str(root), "<root>")
    text = re.sub(r"loop-\d{8}-\d{6}-[0-9a-f]{4}", "<loop>", text)
    text = re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+Z", "<time>", text)
    text = re.sub(r"pid \d+ on \S+", "pid <pid> on <host>", text)
    return re.sub(r"busy-skips \d+", "busy-skips <n>", text)


def test_help_of_the_loop_commands(project: Project, snapshot: object) -> None:
    for args in (["loop", "--help"], ["loop", "start", "--help"], ["loop", "status", "--help"],
                 ["loop", "stop", "--help"]):
        result = project.cli(*args)
        assert result.exit_code == 0
        assert result.stdout == snapshot(name=" ".join(args))


def test_status_of_an_ended_loop(project: Project, snapshot: object) -> None:
    command_recipe(project, "twice", command="true", interval="20ms", max_runs=2)
    assert project.run("twice").exit_code == 0
    assert steady(loop_status(project)) == snapshot(name="json")
    text = project.cli("loop", "status")
    assert text.exit_code == 1
    assert masked_text(text.stdout, project.root) == snapshot(name="text")


def test_status_of_a_running_loop(project: Project, tmp_path: Path, snapshot: object) -> None:
    gate = Gate(tmp_path / "gate")
    command_recipe(project, "gated", command=gate.command, interval="100ms", max_runs=3)
    loop = subprocess.Popen([sys.executable, "-m", "axpipe", "run", "recipe=gated"], cwd=project.root,
                            env={**os.environ, **project.env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        gate.release(1)
        wait_for(lambda: gate.started() == [1, 2], what="tick 2")
        wait_for(lambda: running_loop(project, lambda row: row["runs"] == 1 and row["tick"] is not None),
                 what="tick 2 in the status")
        status = loop_status(project)
        command = status["loop"]["command"]
        status["loop"]["command"] = "<gate command>"
        assert command == gate.command
        assert steady(status) == snapshot(name="json")
        text = project.cli("loop", "status")
        assert text.exit_code == 0
        shown = masked_text(text.stdout, project.root).replace(gate.command, "<gate command>")
        assert shown == snapshot(name="text")
    finally:
        gate.release("all")
        assert loop.wait(timeout=60) == 0


@pytest.mark.parametrize("text", [
    "plain", "it's", 'say "hi"', "back\\slash", "trail\\", "trail\\\\", "${oops}", "\\${x}", "\\\\${x}",
    "$${x}", "a $ b { } }", "multi\nline\ttab", "unicode é 😀", "=,:[]{}", "'", "''", "\\'", "\\", "",
    "  spaces  ", "-m", "key=value", "~x", "null", "[1, 2]",
])
def test_hydra_quote_composes_back_to_the_same_text(text: str) -> None:
    from hydra import compose, initialize_config_dir

    from axpipe import resources

    with initialize_config_dir(config_dir=str(resources.conf_dir()), version_base="1.3"):
        composed = compose("config", overrides=[f"++loop_prompt_probe={hydra_quote(text)}"])
    assert composed.loop_prompt_probe == text


def problems(config: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as raised:
        validate_recipe(config, config, recipe_name="r")
    return [(problem.path, problem.message) for problem in raised.value.problems]


AGENT = {"kind": "command", "command": "true"}
GOAL = {"objective": "o", "acceptance": {"AC1": {"tag": "closes", "text": "t", "check": "c"}},
        "checks": [{"id": "c", "acceptance": ["AC1"], "command": "python3 -V"}]}


def test_a_loop_prompt_needs_a_goal_to_send_it_to() -> None:
    assert problems({"name": "r", "agent": AGENT, "loop": {"interval": "1m", "prompt": "go"}}) == [
        ("loop.prompt", "a loop prompt is sent to the goal's agent each tick: declare `goal:` "
                        "(or repeat a command with `loop.command`)")]


def test_a_loop_needs_a_command_or_a_goal() -> None:
    assert problems({"name": "r", "agent": AGENT, "work": {"prompt": "x"}, "loop": {"interval": "1m"}}) == [
        ("loop", "nothing to repeat: declare `loop.command`, or a `goal` for the loop to drive")]


def test_loops_that_can_run() -> None:
    for config in ({"name": "r", "loop": {"interval": "1m", "command": "make sync"}},
                   {"name": "r", "goal": GOAL, "loop": {"interval": "1m"}},
                   {"name": "r", "goal": GOAL, "agent": AGENT, "loop": {"interval": "1m", "prompt": "go"}},
                   {"name": "r", "goal": GOAL, "agent": AGENT, "loop": {"interval": "1m", "command": "make"}}):
        recipe, _ = validate_recipe(config, config, recipe_name="r")
        assert recipe.loop is not None and recipe.loop.interval == 60


def test_loop_status_json_matches_the_store_row(project: Project) -> None:
    write_recipe(project.root / "recipes", "once", 'name: once\nloop:\n  interval: 30s\n  command: "true"\n'
                                                   "  max_runs: 1\n")
    assert project.run("once").exit_code == 0
    row = sqlite3.connect(project.root / ".axpipe" / "state.db").execute(
        "SELECT id, runs, busy_skips, interval, command, status FROM loops").fetchone()
    last = loop_status(project)["last"]
    assert (last["id"], last["runs"], last["busy_skips"], last["interval"], json.dumps(last["command"]),
            "ended") == row
