"""SQL for scheduled tasks and their runs (tables of migration ``0003_schedule.sql``).

Every function takes a :class:`~axpipe.store.Store`. Decisions (when a task fires next,
what a late occurrence becomes, how failures back off) are made by callers in
:mod:`axpipe.schedule` and passed in as callbacks. A task's schedule advances in the same
transaction as its run rows, so it never advances without them, and every write is
conditional on the state the decision was made from, so two backends never claim the same
occurrence.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import field
from typing import Any

from axpipe.records import record
from axpipe.store import Store
from axpipe.store.rows import Row, insert, one, rows, update

OPEN = ("queued", "starting", "running")
_SPREAD = 4  # SQLite claimers start at one of the first this many batches of due tasks
_OPEN_SQL = "('queued', 'starting', 'running')"


# -- tasks ------------------------------------------------------------------------------


def get_task(store: Store, task_id: str) -> Row | None:
    return one(store.connection.execute("SELECT * FROM schedule_tasks WHERE id = ?", (task_id,)))


def list_tasks(store: Store) -> list[Row]:
    """Every task, soonest first; paused and done tasks (no next run) last, by id."""
    return rows(store.connection.execute(
        "SELECT * FROM schedule_tasks ORDER BY next_run IS NULL, next_run, id"))


def add_task(store: Store, task: Row) -> bool:
    """Insert ``task``; False (and nothing written) when its id is taken."""
    with store.transaction() as db:
        if db.execute("SELECT 1 FROM schedule_tasks WHERE id = ?", (task["id"],)).fetchone():
            return False
        insert(db, "schedule_tasks", task)
    return True


Merge = Callable[[Row | None, Row], Row | None]


def register_tasks(store: Store, tasks: Sequence[Row], merge: Merge) -> list[tuple[str, str]]:
    """Upsert ``tasks`` by id in one transaction.

    ``merge(existing, new)`` returns the columns to write, or None to leave the row as it
    is. Returns ``(id, "created" | "updated" | "unchanged")`` per task.
    """
    changes = []
    with store.transaction() as db:
        for task in tasks:
            existing = one(db.execute("SELECT * FROM schedule_tasks WHERE id = ?", (task["id"],)))
            values = merge(existing, task)
            if values is None:
                changes.append((task["id"], "unchanged"))
            elif existing is None:
                insert(db, "schedule_tasks", values)
                changes.append((task["id"], "created"))
            else:
                update(db, "schedule_tasks", task["id"], values)
                changes.append((task["id"], "updated"))
    return changes


def pause_task(store: Store, task_id: str, *, reason: str, now: str) -> Row | None:
    """Pause a task and cancel its runs that have not started; None when there is no such task."""
    with store.transaction() as db:
        task = one(db.execute(
            "UPDATE schedule_tasks SET status = 'paused', status_reason = ?, next_run = NULL, updated_at = ? "
            "WHERE id = ? RETURNING *", (reason, now, task_id)))
        if task is not None:
            db.execute("UPDATE schedule_runs SET status = 'cancelled', reason = ?, finished_at = ? "
                       "WHERE task_id = ? AND status IN ('queued', 'starting')",
                       ("cancelled: the task was paused before the run started", now, task_id))
    return task


def resume_task(store: Store, task_id: str, *, next_run: str | None, now: str) -> Row | None:
    """Make a task active again with a fresh failure count; None when there is no such task."""
    with store.transaction() as db:
        return one(db.execute(
            "UPDATE schedule_tasks SET status = CASE WHEN CAST(? AS TEXT) IS NULL THEN 'done' ELSE 'active' END, "
            "status_reason = NULL, next_run = ?, consecutive_failures = 0, backoff_until = NULL, "
            "updated_at = ? WHERE id = ? RETURNING *", (next_run, next_run, now, task_id)))


def delete_task(store: Store, task_id: str) -> list[int] | None:
    """Delete a task and its history; returns the ids of its runs that were running (their
    launchers see the row vanish and kill the run), or None when there is no such task."""
    with store.transaction() as db:
        running = [row[0] for row in db.execute(
            "SELECT id FROM schedule_runs WHERE task_id = ? AND status = 'running'", (task_id,))]
        deleted = db.execute("DELETE FROM schedule_tasks WHERE id = ?", (task_id,)).rowcount
    return running if deleted else None


# -- claiming occurrences ---------------------------------------------------------------


@record
class Claim:
    """What one due task becomes: its new ``next_run`` (None: no more) and the run rows to add."""

    next_run: str | None
    runs: list[Row] = field(default_factory=list)
    task_status: str = "active"


Planner = Callable[[Row, Row | None], Claim]


def claim_due(store: Store, *, now: str, limit: int, backend: str, plan: Planner) -> tuple[int, int, list[Row]]:
    """Claim up to ``limit`` due tasks; returns how many were seen due, how many this call
    claimed, and the run rows written.

    ``plan(task, open_run)`` decides each task's claim (``open_run`` is its unfinished run,
    if any); every write is conditional on what the plan saw (the task's ``next_run`` and
    its oldest open run unchanged), so a task someone else moved meanwhile is left alone
    and nothing runs twice. Where the plan runs depends on the lock the engine takes:

    - SQLite locks the whole store for a write, so the plan (the schedule arithmetic, most
      of a claim's time) runs *before* the write transaction, on rows read without a lock;
      the transaction then holds the lock only as long as a bare claim does.
    - PostgreSQL locks rows: the due rows are taken with ``FOR UPDATE SKIP LOCKED`` and
      planned inside the transaction. Other backends skip them instead of waiting (and
      instead of planning rows they would then find taken), so backends on several hosts
      claim side by side; only a command touching one of these tasks waits for the batch.
    """
    if store.dialect == "postgresql":
        with store.claim_transaction() as db:
            due = _due(db, now, limit, store.skip_locked)
            claimed, written = _apply(db, due, _plans(db, due, plan), now=now, backend=backend)
        return len(due), claimed, written
    # Backends reading the same first batch would all plan it and all but one find it taken:
    # each starts at a random one of the first few full batches, else at the first (whose
    # size then tells the sweep whether more are due).
    spread = random.randrange(_SPREAD)
    due = _due(store.connection, now, limit, "", offset=limit * spread) if spread else []
    if len(due) < limit:
        due = _due(store.connection, now, limit, "")
    planned = _plans(store.connection, due, plan)
    with store.claim_transaction() as db:
        claimed, written = _apply(db, due, planned, now=now, backend=backend)
    return len(due), claimed, written


def _due(db: Any, now: str, limit: int, lock: str, offset: int = 0) -> list[Row]:
    return rows(db.execute("SELECT * FROM schedule_tasks WHERE status = 'active' AND next_run <= ? "
                           f"ORDER BY next_run, id LIMIT ? OFFSET ?{lock}", (now, limit, offset)))


def _plans(db: Any, due: list[Row], plan: Planner) -> list[tuple[Row | None, Claim]]:
    """Each due task's open run (its oldest unfinished one) and claim."""
    if not due:
        return []
    marks = ", ".join("?" for _ in due)
    open_runs = {row.pop("task_id"): row for row in rows(db.execute(
        "SELECT id, status, task_id FROM schedule_runs WHERE id IN (SELECT MIN(id) FROM schedule_runs "
        f"WHERE task_id IN ({marks}) AND status IN {_OPEN_SQL} GROUP BY task_id)", [task["id"] for task in due]))}
    return [(open_runs.get(task["id"]), plan(task, open_runs.get(task["id"]))) for task in due]


def _apply(db: Any, due: list[Row], planned: list[tuple[Row | None, Claim]], *, now: str,
           backend: str) -> tuple[int, list[Row]]:
    """Write the claims in two statements whatever the batch size (a round trip per task
    was most of a PostgreSQL claim's time): one conditional ``UPDATE … FROM (VALUES …)``
    of the tasks, one ``INSERT`` of the run rows of the tasks it moved."""
    if not due:
        return 0, []
    rows_sql = ", ".join("(CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS BIGINT))"
                         for _ in due)
    parameters: list[Any] = [now]
    for task, (open_run, claim) in zip(due, planned, strict=True):
        seen_open = open_run["id"] if open_run else 0
        parameters += [task["id"], claim.next_run, claim.task_status, task["next_run"], seen_open]
    # A task claimed, paused or given a run meanwhile fails the condition: its new state is someone else's.
    moved = {row[0] for row in db.execute(
        "UPDATE schedule_tasks SET next_run = v.column2, status = v.column3, updated_at = ? "
        f"FROM (VALUES {rows_sql}) AS v WHERE schedule_tasks.id = v.column1 AND schedule_tasks.next_run = v.column4 "
        "AND schedule_tasks.status = 'active' AND COALESCE((SELECT MIN(r.id) FROM schedule_runs r "
        f"WHERE r.task_id = v.column1 AND r.status IN {_OPEN_SQL}), 0) = v.column5 RETURNING schedule_tasks.id",
        parameters).fetchall()}
    written = [{**run, "task_id": task["id"], "backend": backend, "queued_at": now}
               for task, (_, claim) in zip(due, planned, strict=True) if task["id"] in moved for run in claim.runs]
    if written:
        # Skipped rows also set finished_at; the others leave it NULL, as its column does.
        columns = sorted({column for run in written for column in run})
        marks = ", ".join(f"({', '.join('?' for _ in columns)})" for _ in written)
        ids = {(row[1], row[2], row[3]): row[0] for row in db.execute(
            f"INSERT INTO schedule_runs ({', '.join(columns)}) VALUES {marks} "
            "RETURNING id, task_id, scheduled_for, status",
            [run.get(column) for run in written for column in columns]).fetchall()}
        for run in written:  # RETURNING's order is not promised: match rows by what tells them apart
            run["id"] = ids[(run["task_id"], run["scheduled_for"], run["status"])]
    return len(moved), written


def queue_manual_run(store: Store, task_id: str, run: Row) -> tuple[int | None, Row | None]:
    """Queue a run now unless the task has an unfinished one: ``(run id, None)`` or
    ``(None, the open run)``. Raises KeyError for an unknown task."""
    with store.transaction() as db:
        # FOR UPDATE on PostgreSQL: a claim in flight skips the task until this run is queued.
        if db.execute(f"SELECT 1 FROM schedule_tasks WHERE id = ?{store.for_update}", (task_id,)).fetchone() is None:
            raise KeyError(task_id)
        open_run = one(db.execute(
            f"SELECT id, status FROM schedule_runs WHERE task_id = ? AND status IN {_OPEN_SQL} LIMIT 1",
            (task_id,)))
        if open_run is not None:
            return None, open_run
        return insert(db, "schedule_runs", {**run, "task_id": task_id}), None


# -- runs -------------------------------------------------------------------------------


def get_run(store: Store, run_id: int) -> Row | None:
    return one(store.connection.execute("SELECT * FROM schedule_runs WHERE id = ?", (run_id,)))


def list_runs(store: Store, task_id: str, limit: int | None = None) -> list[Row]:
    """A task's runs, newest first."""
    if not limit:
        return rows(store.connection.execute(
            "SELECT * FROM schedule_runs WHERE task_id = ? ORDER BY id DESC", (task_id,)))
    return rows(store.connection.execute(
        "SELECT * FROM schedule_runs WHERE task_id = ? ORDER BY id DESC LIMIT ?", (task_id, limit)))


def count_runs(store: Store, task_id: str) -> int:
    return int(store.connection.execute("SELECT COUNT(*) FROM schedule_runs WHERE task_id = ?",
                                        (task_id,)).fetchone()[0])


def open_runs(store: Store) -> list[Row]:
    """Runs that are queued, starting or running, oldest first."""
    return rows(store.connection.execute(f"SELECT * FROM schedule_runs WHERE status IN {_OPEN_SQL} ORDER BY id"))


def count_by_status(store: Store) -> dict[str, int]:
    counts = store.connection.execute("SELECT status, COUNT(*) FROM schedule_tasks GROUP BY status").fetchall()
    return {row[0]: int(row[1]) for row in counts}

