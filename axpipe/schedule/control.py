"""``pause``, ``resume``, ``delete`` and ``run`` of a task: through a live backend when there
is one, written to the store directly otherwise (``run`` needs a backend).

With a live backend the command leaves a request row and waits for the answer; the
backend applies the same :func:`perform` and reacts at once (it dispatches a queued run
immediately, and the launcher of a run whose task is deleted ends it). A request no
backend claims in time is withdrawn and, for pause/resume/delete, written directly.
"""

from __future__ import annotations

import time
from datetime import datetime

from axpipe import clock
from axpipe.errors import EnvironmentNotReady, ExitCode
from axpipe.records import record
from axpipe.runtime.liveness import live_backends
from axpipe.schedule.timing import Schedule
from axpipe.store import Store
from axpipe.store import runtime as runtime_queries
from axpipe.store import schedule as queries

ACTIONS = ("pause", "resume", "delete", "run")
ANSWER_TIMEOUT = 15.0


@record
class Answer:
    exit_code: int
    message: str
    backend: str | None = None


def perform(store: Store, action: str, task_id: str, now: datetime) -> tuple[int, str]:
    """Apply ``action`` to task ``task_id``; returns the exit code and what happened."""
    task = queries.get_task(store, task_id)
    if task is None:
        return int(ExitCode.INPUT_ERROR), f"no scheduled task {task_id!r}"
    stamp = clock.iso(now)
    if action == "pause":
        if task["status"] != "active":
            return 0, f"task {task_id} is already {task['status']}; nothing to pause"
        waiting = [run["id"] for run in queries.list_runs(store, task_id) if run["status"] in ("queued", "starting")]
        queries.pause_task(store, task_id, reason="paused by a person", now=stamp)
        extra = f"; cancelled run {', '.join(map(str, waiting))}, which had not started" if waiting else ""
        return 0, f"paused task {task_id}{extra}"
    if action == "resume":
        if task["status"] != "paused":
            return 0, f"task {task_id} is {task['status']}; nothing to resume"
        schedule = Schedule(task["kind"], task["expression"], task["tz"])
        # A one-shot whose time passed while paused stays due: the sweep treats it as
        # missed, so catch_up decides (one run, or a skipped row).
        following = (datetime.fromisoformat(task["expression"]) if task["kind"] == "at"
                     else schedule.next_after(now))
        next_run = clock.iso(following) if following is not None else None
        queries.resume_task(store, task_id, next_run=next_run, now=stamp)
        shown = clock.short_iso(following) if following is not None else "none"
        return 0, f"resumed task {task_id}; next run {shown}"
    if action == "delete":
        running = queries.delete_task(store, task_id)
        extra = f"; its running run {', '.join(map(str, running or []))} is being cancelled" if running else ""
        return 0, f"deleted task {task_id} and its run history{extra}"
    if action == "run":
        run = {"scheduled_for": stamp, "last_scheduled": stamp, "folded": 1, "trigger": "manual",
               "status": "queued", "reason": "run now, by request", "recipe": task["recipe"],
               "overrides": task["overrides"], "max_run_duration": task["max_run_duration"], "queued_at": stamp}
        run_id, open_run = queries.queue_manual_run(store, task_id, run)
        if open_run is not None:
            return int(ExitCode.FAILED), (f"task {task_id} already has run {open_run['id']} {open_run['status']}; "
                                          "a task never runs twice at once")
        return 0, f"queued run {run_id} of task {task_id}"
    raise ValueError(f"unknown action {action!r}")


def submit(store: Store, action: str, task_id: str, *, timeout: float = ANSWER_TIMEOUT) -> Answer:
    """Apply ``action`` through a live backend, or directly when none is alive."""
    if not live_backends(store):
        if action == "run":
            raise EnvironmentNotReady(
                "no live runtime backend for this project: `schedule run` hands the run to a backend, "
                "and a one-shot command must not take on work it cannot finish. Start one with "
                "`axpipe runtime start` (under a supervisor, see docs/schedules.md), then try again. "
                "Nothing was queued.")
        return Answer(*perform(store, action, task_id, clock.now()))
    request = runtime_queries.add_request(store, action=action, task_id=task_id, now_real=time.time())
    give_up = time.monotonic() + timeout
    poll = clock.timings().request_poll / 2
    while time.monotonic() < give_up:
        row = runtime_queries.get_request(store, request)
        if row is not None and row["done_real"] is not None:
            return Answer(int(row["exit_code"]), str(row["message"]), str(row["claimed_by"]))
        time.sleep(poll)
    if runtime_queries.withdraw_request(store, request) and action != "run":
        code, message = perform(store, action, task_id, clock.now())
        return Answer(code, f"{message} (no backend answered within {timeout:g} s; written to the store directly)")
    raise EnvironmentNotReady(f"the runtime backend did not answer request {request} ({action} {task_id}) "
                              f"within {timeout:g} s; check `axpipe runtime status`")
