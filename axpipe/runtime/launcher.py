"""The process that carries one scheduled run: ``python -m axpipe.runtime.launcher``.

A backend starts one launcher per run and does not wait for it. The launcher

1. claims the run in the store (``starting`` → ``running``, only with the dispatch token
   the backend gave it), so two launchers for one run cannot both start it;
2. runs the ordinary ``axpipe run recipe=NAME overrides...`` in the project root, its output
   going straight to the run's log, and records its pid;
3. heartbeats while it runs, and ends the whole process tree when the run exceeds its
   ``max_run_duration`` (recorded failed), when its task is deleted or recovery has given
   the run up, or when the launcher itself gets SIGTERM, SIGINT or SIGHUP (recorded
   cancelled);
4. records the outcome and updates the task (failure count, back-off, pause) in one
   transaction.

Because the launcher records its own outcome, a run survives the death of the backend that
started it and is counted exactly once. A run does not survive its launcher: ``axpipe run``
gets SIGTERM when the launcher dies (:mod:`axpipe.runtime.reaper`), and the recovering
backend ends whatever of the run is left before it records the outcome, so the checkout's
lock is free for the next run; see docs/schedules.md and docs/operations.md.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from axpipe import clock, process
from axpipe.duration import format_duration
from axpipe.error_handler import ERROR_FILE_ENV
from axpipe.process import ProcessResult
from axpipe.runtime import reaper
from axpipe.runtime.processes import end_processes, kill_tree, marked
from axpipe.schedule import policy
from axpipe.store import Store
from axpipe.store import dispatch as runs
from axpipe.store import schedule as queries


class Monitor(threading.Thread):
    """Heartbeats for the run and ends it on overrun, on a signal, or when the run is no
    longer the launcher's to run."""

    def __init__(self, store_path: Path | str, run_id: int, max_seconds: float, token: str) -> None:
        super().__init__(name="axpipe-launcher-monitor", daemon=True)
        self.store_path = store_path
        self.token = token
        self.run_id = run_id
        self.deadline = time.monotonic() + max_seconds
        self.max_seconds = max_seconds
        self.done = threading.Event()
        self.timed_out = False
        self.cancelled: str | None = None
        self.lost = False

    def cancel(self, reason: str) -> None:
        """Ask the monitor to end the run (safe from a signal handler)."""
        self.cancelled = self.cancelled or reason
        self.done.set()

    def run(self) -> None:
        interval = clock.timings().heartbeat
        with Store(self.store_path) as store:
            while not self.done.wait(max(0.0, min(interval, self.deadline - time.monotonic()))):
                if time.monotonic() >= self.deadline:
                    self.timed_out = True
                    break
                if not runs.beat_run(store, self.run_id, pid=os.getpid(), now_real=time.time()):
                    self.lost = True  # task deleted, or recovery gave up on us: stop working for nobody
                    break
        if self.timed_out or self.cancelled or self.lost:
            kill_tree(os.getpid())
            end_processes(marked(reaper.MARK_ENV, self.token), grace=0.5)  # any that left the tree


def command(run: dict[str, Any], run_dir: Path) -> list[str]:
    """``axpipe run recipe=NAME overrides... hydra.run.dir=...`` with this interpreter."""
    quoted = "'" + str(run_dir).replace("\\", "\\\\").replace("'", "\\'") + "'"
    return [sys.executable, "-m", "axpipe", "run", f"recipe={run['recipe']}", *json.loads(run["overrides"]),
            f"hydra.run.dir={quoted}"]


def outcome(monitor: Monitor, result: ProcessResult, summary: str | None) -> tuple[str, str, int | None]:
    """``(status, reason, exit code)`` of a finished run."""
    if monitor.cancelled:
        return "cancelled", f"cancelled: {monitor.cancelled}; its processes were ended", result.exit_code
    if monitor.lost:
        return "cancelled", "cancelled: the run's record was removed (task deleted)", result.exit_code
    if monitor.timed_out:
        return ("failed", f"exceeded max_run_duration {format_duration(monitor.max_seconds)}: cancelled, "
                          "its process group killed", result.exit_code)
    detail = f": {summary}" if summary else ""
    return ("succeeded" if result.ok else "failed"), f"{result.describe()}{detail}", result.exit_code


def _summary(store: Store, run_dir: Path, error_file: Path, output: str, *, failed: bool) -> str | None:
    """Why the run ended: when it failed, the error ``axpipe run`` reported, whole (bounded);
    else the summary it recorded in the store; else the last line it printed."""
    try:
        reported = error_file.read_text(encoding="utf-8", errors="replace").strip() if failed else ""
    except OSError:
        reported = ""
    if reported:
        return reported if len(reported) <= _REASON_LIMIT else reported[:_REASON_LIMIT] + " …"
    recorded = runs.child_summary(store, str(run_dir))
    if recorded:
        return recorded
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else None


_REASON_LIMIT = 4000


def _tail(log: Path, offset: int) -> str:
    """What was written to the run's log since ``offset`` (its last 64 KiB at most)."""
    try:
        with log.open("rb") as file:
            size = file.seek(0, os.SEEK_END)
            file.seek(max(offset, size - 65536))
            return file.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def _log_size(log: Path) -> int:
    try:
        return log.stat().st_size
    except OSError:
        return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m axpipe.runtime.launcher")
    parser.add_argument("--store", required=True, help="the SQLite file, or env:NAME for a URL in $NAME")
    parser.add_argument("--run", required=True, type=int)
    parser.add_argument("--token", required=True)
    parser.add_argument("--root", required=True, type=Path)
    args = parser.parse_args(argv)
    reaper.become_subreaper()  # what the run leaves behind (setsid, a killed `axpipe run`) comes back to us
    location: Path | str = os.environ[args.store[4:]] if args.store.startswith("env:") else Path(args.store)
    store = Store(location)
    task_dir = args.root / ".axpipe" / "runs" / "schedule"
    pending = queries.get_run(store, args.run)
    if pending is None:
        print(f"axpipe launcher: run {args.run} does not exist (its task was deleted)")
        return 0
    run_dir = task_dir / pending["task_id"] / str(args.run)
    log = Path(str(run_dir) + ".log")
    error_file = Path(str(run_dir) + ".error")
    run = runs.start_run(store, args.run, token=args.token, pid=os.getpid(), started_at=clock.iso(clock.now()),
                         now_real=time.time(), run_dir=str(run_dir), log=str(log))
    if run is None:
        print(f"axpipe launcher: run {args.run} is not waiting for this launcher (cancelled, re-queued or "
              "started by another); nothing to do")
        return 0
    monitor = Monitor(location, args.run, float(run["max_run_duration"]), args.token)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda number, _: monitor.cancel(f"the launcher received {signal.Signals(number).name}"))
    monitor.start()
    argv_run = command(run, run_dir)
    env = {**os.environ, "AXPIPE_SCHEDULE_TASK": run["task_id"], "AXPIPE_SCHEDULE_RUN": str(args.run),
           "AXPIPE_SCHEDULED_FOR": run["scheduled_for"], reaper.MARK_ENV: args.token,
           reaper.PARENT_ENV: str(os.getpid()), ERROR_FILE_ENV: str(error_file)}
    print(f"axpipe launcher: run {args.run} of task {run['task_id']}: {process.command_text(argv_run)}", flush=True)
    offset = _log_size(log)
    started = time.monotonic()
    # Not through axpipe.process: the run writes straight into its log (this launcher's own
    # output), not into a pipe to the launcher, so a run whose launcher dies is never hit by
    # a broken pipe; it ends by the parent-death signal instead (axpipe.runtime.reaper).
    child = subprocess.Popen(argv_run, cwd=args.root, env=env, stdin=subprocess.DEVNULL,
                             start_new_session=True, close_fds=True)
    runs.record_child(store, args.run, token=args.token, pid=child.pid)
    if monitor.done.is_set():  # cancelled or lost before the run started: the monitor's kill found nothing
        kill_tree(os.getpid())
    returncode = child.wait()
    monitor.done.set()
    monitor.join()
    reaper.end_descendants(grace=1.0)  # anything of the run still alive ends with it
    result = ProcessResult(command=process.command_text(argv_run), exit_code=returncode if returncode >= 0 else None,
                           signal=-returncode if returncode < 0 else None, duration=time.monotonic() - started)
    status, reason, exit_code = outcome(monitor, result, _summary(store, run_dir, error_file, _tail(log, offset),
                                                                   failed=not result.ok))
    finished = runs.finish_run(store, args.run, expect=("running",), token=args.token, status=status,
                               reason=reason, exit_code=exit_code, finished_at=clock.iso(clock.now()),
                               policy=policy.after_run(clock.now()))
    print(f"axpipe launcher: run {args.run} {status}: {finished['reason'] if finished else reason}", flush=True)
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
