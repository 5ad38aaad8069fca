"""Loops under test: background axpipe processes, a gate that holds ticks open, status polls."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from goalkit import Project
from helpers import AXPIPE, Completed, interrupts_as_default, write_recipe

GATE = Path(__file__).resolve().parent / "agents" / "tick_gate.py"
FAST = {"AXPIPE_TESTING_FAST": "1"}


class Gate:
    """A folder through which a test holds loop ticks open (see agents/tick_gate.py)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    @property
    def command(self) -> str:
        return shlex.join([sys.executable, str(GATE), str(self.folder)])

    def release(self, tick: int | str) -> None:
        (self.folder / f"release-{tick}").touch()

    def lines(self) -> list[str]:
        log = self.folder / "log"
        return log.read_text().splitlines() if log.exists() else []

    def started(self) -> list[int]:
        return [int(line.split()[1]) for line in self.lines() if line.startswith("started")]

    def pid(self, tick: int) -> int:
        return next(int(line.split()[2]) for line in self.lines() if line.startswith(f"started {tick} "))


class HeldProbe:
    """A recipe's probe that holds the run in its probe step until a test releases it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    @property
    def command(self) -> str:
        script = ("import os, sys, time\nopen(sys.argv[1] + '/pid', 'w').write(str(os.getpid()))\n"
                  "while not os.path.exists(sys.argv[1] + '/release'): time.sleep(0.02)")
        return shlex.join([sys.executable, "-c", script, str(self.folder)])

    def pid(self) -> int | None:
        path = self.folder / "pid"
        text = path.read_text() if path.exists() else ""
        return int(text) if text else None

    def release(self) -> None:
        (self.folder / "release").touch()


class Background:
    """``python -m axpipe ARGS`` running in the background."""

    def __init__(self, project: Project, *args: str) -> None:
        self.process = subprocess.Popen([*AXPIPE, *args], cwd=project.root, env={**os.environ, **project.env},
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        preexec_fn=interrupts_as_default)
        self.result: Completed | None = None

    @property
    def pid(self) -> int:
        return self.process.pid

    def wait(self, timeout: float = 60.0) -> Completed:
        if self.result is None:
            out, err = self.process.communicate(timeout=timeout)
            self.result = Completed(self.process.returncode, out, err)
        return self.result

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.communicate(timeout=30)


def events(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def of_type(found: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [event for event in found if event["type"] == kind]


def loop_status(project: Project) -> dict[str, Any]:
    result = project.cli("loop", "status", "--json")
    assert result.exit_code in (0, 1), result.stderr
    payload: dict[str, Any] = json.loads(result.stdout)
    assert payload["running"] == (result.exit_code == 0)
    return payload


def running_loop(project: Project, check: Callable[[dict[str, Any]], bool] = lambda _: True) -> dict[str, Any] | None:
    """The running loop's status when ``check`` holds for it, else None (for :func:`wait_for`)."""
    loop = loop_status(project)["loop"]
    return loop if loop is not None and check(loop) else None


def command_recipe(project: Project, name: str, *, command: str, interval: str = "100ms", max_runs: int = 500,
                   extra: str = "") -> str:
    """A goal-less recipe whose loop runs ``command``."""
    write_recipe(project.root / "recipes", name, f"name: {name}\n{extra}loop:\n  interval: {interval}\n"
                                                 f"  command: {json.dumps(command)}\n  max_runs: {max_runs}\n")
    return name


def loop_section(*, interval: str = "100ms", prompt: str | None = None, command: str | None = None,
                 max_runs: int = 20) -> str:
    lines = ["loop:", f"  interval: {interval}", f"  max_runs: {max_runs}"]
    if prompt is not None:
        lines.append(f"  prompt: {json.dumps(prompt)}")
    if command is not None:
        lines.append(f"  command: {json.dumps(command)}")
    return "\n".join(lines) + "\n"
