"""A ``loop:`` recipe ended by a signal its run turns into an interrupt says which signal."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from goalkit import Project
from helpers import wait_for
from loopkit import FAST, Background, Gate, command_recipe, loop_status

from axpipe.runtime.processes import pid_alive


def test_sighup_to_a_recipe_loop_is_reported_as_sighup(repo: Path, tmp_path: Path) -> None:
    project = Project(repo, tmp_path)
    project.env.update(FAST)
    gate = Gate(tmp_path / "gate")
    command_recipe(project, "gated", command=gate.command, interval="100ms")
    loop = Background(project, "run", "recipe=gated")
    try:
        wait_for(lambda: gate.started() == [1], what="tick 1's command")
        tick_pid = gate.pid(1)
        os.kill(loop.pid, signal.SIGHUP)
        result = loop.wait()
    finally:
        gate.release("all")
        loop.kill()
    assert result.exit_code == 130, result.stdout + result.stderr
    wait_for(lambda: not pid_alive(tick_pid), timeout=10, what="the tick's command to be gone")
    last = loop_status(project)["last"]
    assert (last["state"], last["end_reason"]) == ("ended", "interrupted (SIGHUP)")
