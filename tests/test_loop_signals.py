"""A ``loop:`` recipe ended by a signal its run turns into an interrupt says which signal;
``loop start`` ends on SIGHUP as on Ctrl-C (exit 130) at every stage: while it waits for
the loop it replaces, and while its run's probe runs."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from goalkit import Project
from helpers import wait_for, write_recipe
from loopkit import FAST, Background, Gate, HeldProbe, command_recipe, loop_status, running_loop

from axpipe.process import pid_alive


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


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGTERM], ids=lambda s: signal.Signals(s).name)
def test_a_signal_to_loop_start_waiting_for_the_loop_it_replaces_interrupts_it(repo: Path, tmp_path: Path,
                                                                               signum: int) -> None:
    project = Project(repo, tmp_path)
    project.env.update(FAST)
    gate = Gate(tmp_path / "gate")
    command_recipe(project, "gated", command=gate.command, interval="100ms")
    old = Background(project, "loop", "start", "100ms", "--command", gate.command, "--recipe", "gated")
    new: Background | None = None
    try:
        wait_for(lambda: gate.started() == [1], what="the old loop's tick 1")
        new = Background(project, "loop", "start", "100ms", "--command", "true", "--recipe", "gated")
        wait_for(lambda: running_loop(project, lambda row: row["state"] == "stopping"), what="the replacement")
        os.kill(new.pid, signum)
        result = new.wait()
        assert result.exit_code == 130, result.stdout + result.stderr
        assert result.stderr.endswith("axpipe: error: interrupted\n"), result.stderr
        assert old.process.poll() is None  # the old loop is left stopping, after its tick
    finally:
        gate.release("all")
        old.wait()
        if new is not None:
            new.kill()
    assert gate.started() == [1]
    assert loop_status(project)["last"]["end_reason"].startswith("stopped: replaced by a new loop")


def test_sighup_to_loop_start_in_its_runs_probe_names_the_signal(repo: Path, tmp_path: Path) -> None:
    project = Project(repo, tmp_path)
    project.env.update(FAST)
    probe = HeldProbe(tmp_path / "probe")
    write_recipe(project.root / "recipes", "probed", f"name: probed\nprobe: {json.dumps(probe.command)}\n")
    loop = Background(project, "loop", "start", "100ms", "--command", "true", "--recipe", "probed")
    try:
        probe_pid = wait_for(probe.pid, what="the run's probe")
        os.kill(loop.pid, signal.SIGHUP)
        result = loop.wait()
        wait_for(lambda: not pid_alive(probe_pid), timeout=10, what="the probe to be gone, not orphaned")
    finally:
        probe.release()
        loop.kill()
    assert result.exit_code == 130, result.stdout + result.stderr
    last = loop_status(project)["last"]
    assert (last["state"], last["runs"], last["end_reason"]) == ("ended", 0, "interrupted (SIGHUP)")
