"""The sweep: claim every due task and decide what each occurrence becomes.

A task is due when its ``next_run`` is not after now. Claiming it advances ``next_run``
past now and writes the run rows in the same transaction (:func:`axpipe.store.schedule.claim_due`).
Each occurrence ends up in exactly one row:

* on time (found within ``grace`` of its time, plus the sweep's own interval: a backend
  that sweeps every minute finds an occurrence up to a minute late when nothing is wrong):
  one ``queued`` run;
* missed (found later than that): with ``catch_up: run_once`` all of the task's due
  occurrences fold into one ``queued`` run that records how many; with ``skip`` the missed
  ones become one ``skipped`` row with the reason and an on-time one still runs;
* the task's previous run still unfinished: ``skipped`` (overlap), never a second run;
* the task backing off after failures: ``skipped`` with the back-off.

Several occurrences found in one sweep (a schedule faster than the sweep interval) fold
into one row that records the count. A cron task after a long outage folds at most
:data:`MAX_FOLD` occurrences and says "at least".
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from axpipe import clock
from axpipe.duration import format_duration
from axpipe.records import record
from axpipe.schedule.timing import ScheduleError, schedule_of
from axpipe.store import Store
from axpipe.store import schedule as queries

MAX_FOLD = 1000
BATCH = 100


@record
class SweepResult:
    """What one sweep did."""

    tasks: int
    runs: list[dict[str, Any]]
    seconds: float


def sweep(store: Store, *, backend: str, now: datetime | None = None, batch: int = BATCH,
          cadence: float = 0.0) -> SweepResult:
    """Claim every task due at ``now`` (default: the schedule clock), ``batch`` per transaction.

    ``cadence`` is the seconds between this backend's sweeps: an occurrence found that much
    later than its ``grace`` was found by the first sweep that could find it, so it is on
    time, not missed. Short transactions let other backends and one-shot commands write
    between batches.
    """
    moment = now or clock.now()
    started = time.perf_counter()
    tasks = 0
    runs: list[dict[str, Any]] = []
    while True:
        due, claimed, written = queries.claim_due(
            store, now=clock.iso(moment), limit=batch, backend=backend,
            plan=lambda task, open_run: plan_claim(task, open_run, moment, cadence))
        tasks += claimed
        runs.extend(written)
        if due < batch:
            return SweepResult(tasks, runs, time.perf_counter() - started)


def plan_claim(task: dict[str, Any], open_run: dict[str, Any] | None, now: datetime,
               cadence: float = 0.0) -> queries.Claim:
    """The claim of one due task at ``now``: its next run and the rows for its occurrences."""
    claim = _plan(task, open_run, now, cadence)
    for row in claim.runs:
        if row["status"] == "skipped":
            row["finished_at"] = clock.iso(now)
    return claim


def _plan(task: dict[str, Any], open_run: dict[str, Any] | None, now: datetime, cadence: float) -> queries.Claim:
    try:
        schedule = schedule_of(task["kind"], task["expression"], task["tz"])
        occurrences, capped, following = schedule.due(clock.parse_iso(task["next_run"]), now, MAX_FOLD)
    except (ScheduleError, ValueError, KeyError) as error:
        # A row that cannot be computed must not stall every sweep: pause it and say why.
        row = _row(task, "skipped", [clock.parse_iso(task["next_run"])], "schedule",
                   f"the schedule cannot be computed ({error}); task paused")
        return queries.Claim(next_run=None, runs=[row], task_status="paused")
    next_run = clock.iso(following) if following is not None else None
    status = "active" if following is not None else "done"
    count = _count(len(occurrences), capped)
    if open_run is not None:
        reason = (f"overlap: run {open_run['id']} of this task is still {_state(open_run['status'])}; "
                  f"{count} not run")
        return queries.Claim(next_run, [_row(task, "skipped", occurrences, "schedule", reason)], status)
    backoff = task["backoff_until"]
    if backoff is not None and clock.parse_iso(backoff) > now:
        reason = (f"backing off after {task['consecutive_failures']} consecutive failure(s) until "
                  f"{clock.short_iso(clock.parse_iso(backoff))}; {count} not run")
        return queries.Claim(next_run, [_row(task, "skipped", occurrences, "schedule", reason)], status)
    grace = float(task["grace"])
    missed = [moment for moment in occurrences if (now - moment).total_seconds() > grace + cadence]
    on_time = occurrences[len(missed):]
    window = f"beyond the grace of {format_duration(grace)}" + (
        f" and the sweep interval of {format_duration(cadence)}" if cadence else "")
    if missed and task["catch_up"] == "skip":
        rows = [_row(task, "skipped", missed, "catch_up",
                     f"missed: {_count(len(missed), capped)} found {window}, from {_span(missed)}; "
                     "catch_up is skip")]
        if on_time:
            rows.append(_row(task, "queued", on_time, "schedule", _folded_note(on_time)))
        return queries.Claim(next_run, rows, status)
    if missed:
        reason = f"catch-up: one run for {count} ({len(missed)} found {window}), from {_span(occurrences)}"
        return queries.Claim(next_run, [_row(task, "queued", occurrences, "catch_up", reason)], status)
    return queries.Claim(next_run, [_row(task, "queued", on_time, "schedule", _folded_note(on_time))], status)


def _row(task: dict[str, Any], status: str, occurrences: list[datetime], trigger: str,
         reason: str | None) -> dict[str, Any]:
    row = {"scheduled_for": clock.iso(occurrences[0]), "last_scheduled": clock.iso(occurrences[-1]),
           "folded": len(occurrences), "trigger": trigger, "status": status, "reason": reason,
           "recipe": task["recipe"], "overrides": task["overrides"],
           "max_run_duration": task["max_run_duration"]}
    return row


def _folded_note(occurrences: list[datetime]) -> str | None:
    if len(occurrences) == 1:
        return None
    return (f"{len(occurrences)} occurrences since the last sweep, folded into one run "
            f"(the schedule is faster than the sweep), from {_span(occurrences)}")


def _count(number: int, capped: bool) -> str:
    noun = "occurrence" if number == 1 and not capped else "occurrences"
    return f"{'at least ' if capped else ''}{number} {noun}"


def _span(occurrences: list[datetime]) -> str:
    first, last = clock.short_iso(occurrences[0]), clock.short_iso(occurrences[-1])
    return first if first == last else f"{first} to {last}"


def _state(status: str) -> str:
    return {"queued": "waiting for the checkout", "starting": "starting"}.get(status, status)
