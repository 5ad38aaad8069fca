"""A project with small recipes, a controllable schedule clock and real backend processes.

Time moves by rewriting the file named by ``AXPIPE_TESTING_CLOCK``; everything else —
backends, launchers, ``axpipe run`` children, the SQLite store and its claims — is real.
"""

from __future__ import annotations

import os
import signal
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from helpers import AXPIPE, Completed, git, run_cli, wait_for, write_recipe

from axpipe.store import Store

RECIPES = {
    "ok": """
name: ok
description: Appends the task and occurrence it ran for to .axpipe/fired.txt.
goal:
  objective: "record the run"
  acceptance:
    AC1: {tag: closes, text: "recorded", check: record}
  checks:
    - id: record
      acceptance: [AC1]
      command: "echo \\"$AXPIPE_SCHEDULE_TASK $AXPIPE_SCHEDULED_FOR\\" >> .axpipe/fired.txt"
""",
    "slow": """
name: slow
secs: 3
goal:
  objective: "take a while, then record the run"
  acceptance:
    AC1: {tag: closes, text: "recorded", check: record}
  checks:
    - id: record
      acceptance: [AC1]
      command: "sleep ${secs} && echo \\"$AXPIPE_SCHEDULE_TASK $AXPIPE_SCHEDULED_FOR\\" >> .axpipe/fired.txt"
      timeout: 2m
""",
    "fail": """
name: fail
goal:
  objective: "always fail"
  acceptance:
    AC1: {tag: closes, text: "never", check: nope}
  checks:
    - {id: nope, acceptance: [AC1], command: "exit 3"}
""",
    "hang": """
name: hang
goal:
  objective: "hang until killed"
  acceptance:
    AC1: {tag: closes, text: "never", check: wait}
  checks:
    - id: wait
      acceptance: [AC1]
      command: "echo $$ > .axpipe/hang-$AXPIPE_SCHEDULE_RUN.pid; exec sleep 120"
      timeout: 5m
""",
}


def iso(text: str) -> str:
    """``2026-05-01T10:00`` (UTC) in the store's fixed-width form."""
    value = datetime.fromisoformat(text).replace(tzinfo=UTC) if "+" not in text and "Z" not in text \
        else datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


class Project:
    """A git project with the recipes above, a testing clock, and helpers to drive it."""

    def __init__(self, root: Path, clock_file: Path, store_url: str | None = None) -> None:
        self.root = root
        self.clock_file = clock_file
        self.store_url = store_url  # a PostgreSQL store several projects (hosts) share
        # TZ: a task without --tz is read in this machine's zone; make that zone known.
        self.env = {"AXPIPE_TESTING_CLOCK": str(clock_file), "AXPIPE_TESTING_FAST": "1", "TZ": "UTC"}
        if store_url:
            self.env["AXPIPE_STORE_URL"] = store_url
        self.backends: list[subprocess.Popen[bytes]] = []
        self._started = 0

    @classmethod
    def create(cls, path: Path, now: str, store_url: str | None = None) -> Project:
        path.mkdir()
        git(path, "init", "-q", "-b", "main")
        (path / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
        for name, body in RECIPES.items():
            write_recipe(path / "recipes", name, body)
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", "recipes")
        project = cls(path, path.parent / f"{path.name}-clock.txt", store_url)
        project.set_clock(now)
        return project

    def set_clock(self, now: str) -> None:
        """Move schedule time to ``now`` (UTC unless it has an offset), atomically."""
        temporary = self.clock_file.with_suffix(".tmp")
        temporary.write_text(iso(now))
        os.replace(temporary, self.clock_file)

    def cli(self, *args: str, env: dict[str, str] | None = None) -> Completed:
        return run_cli(*args, cwd=self.root, env={**self.env, **(env or {})})

    def store(self) -> Store:
        return Store(self.store_url or self.root / ".axpipe" / "state.db")

    def query(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        with self.store() as store:
            return [dict(row) for row in store.connection.execute(sql, params).fetchall()]

    def runs(self, task: str | None = None) -> list[dict[str, Any]]:
        where = "WHERE task_id = ?" if task else ""
        return self.query(f"SELECT * FROM schedule_runs {where} ORDER BY id", *([task] if task else []))

    def task(self, task_id: str) -> dict[str, Any]:
        rows = self.query("SELECT * FROM schedule_tasks WHERE id = ?", task_id)
        assert rows, f"no task {task_id}"
        return rows[0]

    def fired(self) -> list[str]:
        path = self.root / ".axpipe" / "fired.txt"
        return path.read_text().splitlines() if path.exists() else []

    def start_backend(self, *args: str, sweep: str = "100ms") -> subprocess.Popen[bytes]:
        log = (self.root.parent / f"backend-{self._started}.log").open("wb")
        self._started += 1
        process = subprocess.Popen([*AXPIPE, "runtime", "start", "--sweep-interval", sweep, *args], cwd=self.root,
                                   env={**os.environ, **self.env}, stdout=log, stderr=subprocess.STDOUT)
        self.backends.append(process)
        wait_for(lambda: self._registered(process.pid), timeout=20, what=f"backend pid {process.pid} to register")
        return process

    def _registered(self, pid: int) -> bool:
        if not self.store_url and not (self.root / ".axpipe" / "state.db").exists():
            return False
        return bool(self.query("SELECT 1 FROM runtime_backends WHERE pid = ? AND sweeps > 0", pid))

    def swept_at(self, now: str, pid: int | None = None) -> bool:
        """Whether a backend (``pid``, or any) has swept at schedule time ``now`` or later."""
        rows = self.query("SELECT pid, last_sweep_at FROM runtime_backends")
        return any((pid is None or row["pid"] == pid) and (row["last_sweep_at"] or "") >= iso(now) for row in rows)

    def idle(self) -> bool:
        """No run queued, starting or running."""
        return not self.query("SELECT 1 FROM schedule_runs WHERE status IN ('queued', 'starting', 'running')")

    def advance(self, now: str, *, timeout: float = 60) -> None:
        """Move the clock, wait for a sweep at that time and for every run to finish."""
        self.set_clock(now)
        wait_for(lambda: self.swept_at(now), timeout=timeout, what=f"a sweep at {now}")
        wait_for(self.idle, timeout=timeout, what=f"runs fired at {now} to finish")

    def stop_backends(self) -> None:
        for process in self.backends:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.backends:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.backends.clear()

    def cleanup(self) -> None:
        """Stop the backends, then end any launcher still running (and what it started)."""
        self.stop_backends()
        if not self.store_url and not (self.root / ".axpipe" / "state.db").exists():
            return
        from axpipe.process import pid_alive
        from axpipe.runtime.processes import kill_tree

        for run in self.query("SELECT launcher_pid FROM schedule_runs WHERE status = 'running'"):
            pid = run["launcher_pid"]
            if pid and pid_alive(pid):
                kill_tree(pid, grace=0.5)
                os.kill(pid, signal.SIGKILL)

    def backend_log(self, index: int = 0) -> str:
        return (self.root.parent / f"backend-{index}.log").read_text()
