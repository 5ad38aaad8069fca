"""``axpipe runtime start|status|stop``: the backend that fires scheduled tasks."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from axpipe import clock, workspace
from axpipe.duration import DurationError, format_duration, parse_duration
from axpipe.errors import AxpipeError, InputError, not_found_message
from axpipe.store import Store
from axpipe.store import runtime as queries
from axpipe.store import schedule as schedule_queries

SWEEP_MAX = 24 * 3600.0


def start(*, sweep_interval: str) -> int:
    """Run a backend in the foreground until SIGTERM, SIGINT or ``runtime stop``."""
    try:
        every = parse_duration(sweep_interval)
    except DurationError as error:
        raise InputError(f"--sweep-interval: {error}") from None
    minimum = clock.timings().min_sweep_interval
    if every < minimum:
        raise InputError(f"--sweep-interval: {sweep_interval} is below the minimum {format_duration(minimum)}")
    if every > SWEEP_MAX:
        raise InputError(f"--sweep-interval: {sweep_interval} is above the maximum {format_duration(SWEEP_MAX)}")
    # deferred: ~23 modules and subprocess load only when this action needs them
    from axpipe.runtime.backend import Backend
    from axpipe.runtime.duties import default_duties

    root = workspace.find_root()
    workspace.ensure_state_dir(root)
    with Store(workspace.store_path(root)) as store:
        backend = Backend(store=store, root=root, sweep_interval=every, duties=default_duties(every))
        return backend.serve()


def _describe_backends(store: Store | None) -> list[dict[str, Any]]:
    if store is None:
        return []
    # deferred: ~6 modules and subprocess load only when this action needs them
    from axpipe.runtime.liveness import backend_alive

    now_real = time.time()
    return [{"id": row["id"], "pid": row["pid"], "host": row["host"], "alive": backend_alive(row, now_real),
             "started_at": clock.short_iso(clock.parse_iso(row["started_at"])),
             "heartbeat_age": round(now_real - row["heartbeat_real"], 3), "sweep_interval": row["sweep_interval"],
             "last_sweep_at": clock.short_iso(clock.parse_iso(row["last_sweep_at"])) if row["last_sweep_at"] else None,
             "last_sweep_seconds": row["last_sweep_seconds"], "sweeps": row["sweeps"], "claimed": row["claimed"],
             "testing": row["testing"]} for row in queries.list_backends(store)]


def status(*, as_json: bool) -> int:
    """Backends of this project and their work; exit 0 when one is alive, 1 when none is."""
    root = workspace.find_root()
    path = workspace.store_path(root)
    store = Store(path) if path.exists() else None
    backends = _describe_backends(store)
    alive = any(backend["alive"] for backend in backends)
    tasks: dict[str, int] = {"active": 0, "paused": 0, "done": 0}
    queued = 0
    running: list[dict[str, Any]] = []
    upcoming = None
    if store is not None:
        tasks.update(schedule_queries.count_by_status(store))
        for run in schedule_queries.open_runs(store):
            if run["status"] == "running":
                running.append({"id": run["id"], "task": run["task_id"], "launcher_pid": run["launcher_pid"],
                                "started_at": clock.short_iso(clock.parse_iso(run["started_at"]))})
            else:
                queued += 1
        due = [task for task in schedule_queries.list_tasks(store) if task["next_run"]]
        if due:
            upcoming = {"task": due[0]["id"], "next_run": clock.short_iso(clock.parse_iso(due[0]["next_run"]))}
    if as_json:
        json.dump({"alive": alive, "backends": backends, "tasks": tasks,
                   "runs": {"queued": queued, "running": running}, "next": upcoming}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0 if alive else 1
    out = sys.stdout
    for backend in backends:
        state = "alive" if backend["alive"] else "dead"
        sweep = (f"last sweep {backend['last_sweep_at']} ({backend['last_sweep_seconds'] * 1000:.1f} ms)"
                 if backend["last_sweep_at"] else "no sweep yet")
        out.write(f"backend {backend['id']}  {state}  pid {backend['pid']} on {backend['host']}, since "
                  f"{backend['started_at']}, heartbeat {backend['heartbeat_age']:.1f} s ago, sweep every "
                  f"{format_duration(backend['sweep_interval'])}, {sweep}, {backend['sweeps']} sweeps, "
                  f"{backend['claimed']} tasks claimed\n")
        if backend["testing"]:
            out.write(f"  testing switches on: {backend['testing']}\n")
    if not alive:
        out.write(f"No live runtime backend for {root}: scheduled tasks do not fire. "
                  "Start one with `axpipe runtime start`.\n")
    out.write(f"tasks: {tasks['active']} active, {tasks['paused']} paused, {tasks['done']} done; "
              f"runs: {len(running)} running, {queued} waiting\n")
    for run in running:
        out.write(f"  running: {run['task']} run {run['id']} since {run['started_at']} "
                  f"(launcher pid {run['launcher_pid']})\n")
    if upcoming:
        out.write(f"next: {upcoming['task']} at {upcoming['next_run']}\n")
    return 0 if alive else 1


def stop(*, backend_id: str | None, timeout: str) -> int:
    """Ask the live backends (or one) to stop and wait until they have; runs in progress go on."""
    try:
        wait = parse_duration(timeout)
    except DurationError as error:
        raise InputError(f"--timeout: {error}") from None
    root = workspace.find_root()
    path = workspace.store_path(root)
    if not path.exists():
        if backend_id is not None:  # as with a store that lists no live backend
            raise InputError("--id: " + not_found_message("live backend", backend_id, []))
        sys.stdout.write("No live runtime backend for this project; nothing to stop.\n")
        return 0
    # deferred: ~6 modules and subprocess load only when this action needs them
    from axpipe.runtime.liveness import backend_alive, live_backends

    with Store(path) as store:
        live = live_backends(store)
        if backend_id is not None:
            if backend_id not in {row["id"] for row in live}:
                raise InputError("--id: " + not_found_message("live backend", backend_id, [row["id"] for row in live]))
            live = [row for row in live if row["id"] == backend_id]
        if not live:
            sys.stdout.write("No live runtime backend for this project; nothing to stop.\n")
            return 0
        queries.request_stop(store, [row["id"] for row in live], "requested by `axpipe runtime stop`")
        give_up = time.monotonic() + wait
        remaining = live
        while remaining and time.monotonic() < give_up:
            time.sleep(0.05)
            rows = {row["id"]: row for row in queries.list_backends(store)}
            remaining = [row for row in remaining if row["id"] in rows and backend_alive(rows[row["id"]])]
        for row in live:
            if row not in remaining:
                sys.stdout.write(f"stopped backend {row['id']} (pid {row['pid']} on {row['host']})\n")
        if remaining:
            names = ", ".join(f"{row['id']} (pid {row['pid']})" for row in remaining)

            raise AxpipeError(f"backend {names} did not stop within {format_duration(wait)}; "
                              "it may be busy or hung: stop its process with SIGTERM")
    return 0
