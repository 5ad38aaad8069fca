"""The built-in duties of the runtime backend: heartbeat, requests, sweep, dispatch, recovery."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

from axpipe import clock
from axpipe.runtime import liveness, orphans
from axpipe.runtime.backend import Backend, Child, Duty
from axpipe.schedule import control, policy
from axpipe.schedule.sweep import sweep
from axpipe.store import dispatch as runs
from axpipe.store import runtime as runtime_queries
from axpipe.store import schedule as queries
from axpipe.store.locate import ENV as STORE_URL_ENV

_FORGET_DEAD_AFTER = 3600.0


class Heartbeat:
    """Tell the store this backend lives; notice ``runtime stop``."""

    name = "heartbeat"

    def interval(self, backend: Backend) -> float:
        return backend.timings.heartbeat

    def run(self, backend: Backend) -> None:
        present, stop = runtime_queries.beat_backend(backend.store, backend.id, time.time())
        if not present:
            # Another backend took us for dead (a long suspend): our dispatches were put
            # back in the queue; register again and carry on.
            backend.log("this backend's row was gone (taken for dead); registering again")
            runtime_queries.register_backend(backend.store, {
                "id": backend.id, "pid": os.getpid(), "host": liveness.HOST,
                "root": str(backend.root), "started_at": clock.iso(clock.now()), "heartbeat_real": time.time(),
                "sweep_interval": backend.sweep_interval, "testing": " ".join(clock.testing_switches()) or None})
        elif stop:
            backend.stop(stop)


class Requests:
    """Answer pause/resume/delete/run requests left by one-shot commands."""

    name = "requests"

    def interval(self, backend: Backend) -> float:
        return backend.timings.request_poll

    def run(self, backend: Backend) -> None:
        while (request := runtime_queries.claim_request(backend.store, backend.id)) is not None:
            try:
                code, message = control.perform(backend.store, request["action"], request["task_id"], clock.now())
            except Exception as error:  # answer anyway: the command is waiting for it
                code, message = 1, f"the backend could not {request['action']} {request['task_id']}: {error}"
            runtime_queries.answer_request(backend.store, request["id"], exit_code=code, message=message,
                                           now_real=time.time())
            backend.log(f"request {request['id']} ({request['action']} {request['task_id']}): {message}")
            if request["action"] in ("run", "resume") and code == 0:
                backend.poke("dispatch" if request["action"] == "run" else "sweep")


class Sweep:
    """Claim every due task (once at start, then every sweep interval)."""

    name = "sweep"

    def __init__(self, every: float) -> None:
        self.every = every

    def interval(self, backend: Backend) -> float:
        return self.every

    def run(self, backend: Backend) -> None:
        now = clock.now()
        result = sweep(backend.store, backend=backend.id, now=now, cadence=self.every)
        runtime_queries.record_sweep(backend.store, backend.id, at=clock.iso(now), seconds=result.seconds,
                                     claimed=result.tasks)
        for row in result.runs:
            verb = "fired" if row["status"] == "queued" else row["status"]
            detail = f": {row['reason']}" if row["reason"] else ""
            backend.log(f"{verb} {row['task_id']} run {row['id']} (scheduled for "
                        f"{clock.short_iso(clock.parse_iso(row['scheduled_for']))}){detail}")
        if result.runs:
            backend.poke("dispatch")


class Dispatch:
    """Start the oldest queued run in a launcher process, one run at a time per store."""

    name = "dispatch"

    def interval(self, backend: Backend) -> float:
        return backend.timings.request_poll

    def run(self, backend: Backend) -> None:
        self._reap(backend)
        token = secrets.token_hex(8)
        run = runs.dispatch_next(backend.store, backend=backend.id, host=liveness.HOST, token=token,
                                 now_real=time.time())
        if run is None:
            return
        log = backend.root / ".axpipe" / "runs" / "schedule" / run["task_id"] / f"{run['id']}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("ab") as sink:
            # The launcher is axpipe's own worker, not a user command: it is started, not waited
            # for, in a session of its own so it outlives this backend. It runs the user's
            # `axpipe run` through axpipe.process.
            # A PostgreSQL URL holds a password: it travels in the environment, not in argv.
            where, env = backend.store.path, os.environ.copy()
            if not isinstance(where, Path):
                env[STORE_URL_ENV], where = where, f"env:{STORE_URL_ENV}"
            process = subprocess.Popen(
                [sys.executable, "-m", "axpipe.runtime.launcher", "--store", str(where),
                 "--run", str(run["id"]), "--token", token, "--root", str(backend.root)],
                cwd=backend.root, stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT,
                start_new_session=True, close_fds=True, env=env)
        backend.children[process.pid] = Child(process, int(run["id"]), token, log)
        backend.log(f"started {run['task_id']} run {run['id']} (launcher pid {process.pid}, log {log})")

    def _reap(self, backend: Backend) -> None:
        for pid, child in list(backend.children.items()):
            code = child.process.poll()
            if code is None:
                continue
            del backend.children[pid]
            finished = runs.finish_run(
                backend.store, child.run_id, expect=("starting",), token=child.token, status="failed",
                reason=f"the launcher exited with code {code} before starting the run (see {child.log})",
                exit_code=None, finished_at=clock.iso(clock.now()), policy=policy.after_run(clock.now()))
            if finished is not None:
                backend.log(f"run {child.run_id} failed: {finished['reason']}")


class Recovery:
    """Take over work of backends and launchers that died."""

    name = "recovery"

    def __init__(self) -> None:
        self.last_round: float | None = None

    def interval(self, backend: Backend) -> float:
        return backend.timings.heartbeat

    def run(self, backend: Backend) -> None:
        now_real = time.time()
        limits = backend.timings
        previous, self.last_round = self.last_round, now_real
        if previous is not None and now_real - previous > 3 * limits.heartbeat:
            # This backend itself was stalled (a suspended machine, a long lock): everyone's
            # heartbeat looks old now. Give the others one round to report before judging.
            backend.log(f"recovery: this backend was stalled for {now_real - previous:.1f} s; "
                        "judging other processes next round")
            return
        rows = runtime_queries.list_backends(backend.store)
        dead = [row["id"] for row in rows
                if row["id"] != backend.id and not liveness.backend_alive(row, now_real, limits)]
        for run in runs.requeue_starting(backend.store, dead_backends=dead,
                                         dispatched_before=now_real - limits.start_timeout):
            backend.log(f"re-queued {run['task_id']} run {run['id']}: its dispatch by {run['backend']} never started")
        if dead:
            runtime_queries.release_requests(backend.store, dead)
        for run in queries.open_runs(backend.store):
            if run["status"] != "running" or liveness.launcher_alive(run, now_real, limits):
                continue
            ended = orphans.end(run)
            status, reason = orphans.outcome(backend.store, run, now_real, ended)
            finished = runs.finish_run(
                backend.store, run["id"], expect=("running",), token=run["dispatch_token"], status=status,
                reason=reason, exit_code=None, finished_at=clock.iso(clock.now()),
                policy=policy.after_run(clock.now()))
            if finished is not None:
                backend.log(f"recovered {run['task_id']} run {run['id']}: {finished['reason']}")
        forget = [row["id"] for row in rows
                  if row["id"] in dead and now_real - row["heartbeat_real"] > _FORGET_DEAD_AFTER]
        if forget:
            runtime_queries.forget_backends(backend.store, forget)


def default_duties(sweep_interval: float) -> list[Duty]:
    """The built-in duties, in the order each turn of the loop runs them."""
    return [Heartbeat(), Requests(), Sweep(sweep_interval), Dispatch(), Recovery()]
