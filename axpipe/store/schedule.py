"""SQL for scheduled tasks and their runs (tables of migration ``0002_schedule.sql``).

Every function takes a :class:`~axpipe.store.Store`. Decisions (when a task fires next,
what a late occurrence becomes, how failures back off) are made by callers in
:mod:`axpipe.scheduling` and passed in as callbacks, so they happen *inside* the one
``BEGIN IMMEDIATE`` transaction that also writes their result: a task's schedule never
advances without its run rows, and two backends never claim the same occurrence.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from axpipe.store import Store

Row = dict[str, Any]
OPEN = ("queued", "starting", "running")
_OPEN_SQL = "('queued', 'starting', 'running')"


def _rows(cursor: sqlite3.Cursor) -> list[Row]:
    return [dict(row) for row in cursor.fetchall()]


def _one(cursor: sqlite3.Cursor) -> Row | None:
    row = cursor.fetchone()
    return dict(row) if row else None


def _insert(db: sqlite3.Connection, table: str, values: Row) -> int:
    columns = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    cursor = db.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", tuple(values.values()))
    return int(cursor.lastrowid or 0)


def _update(db: sqlite3.Connection, table: str, key: str, values: Row) -> None:
    assignments = ", ".join(f"{column} = ?" for column in values)
    db.execute(f"UPDATE {table} SET {assignments} WHERE id = ?", (*values.values(), key))


# -- tasks ------------------------------------------------------------------------------


def get_task(store: Store, task_id: str) -> Row | None:
    return _one(store.connection.execute("SELECT * FROM schedule_tasks WHERE id = ?", (task_id,)))


def list_tasks(store: Store) -> list[Row]:
    """Every task, soonest first; paused and done tasks (no next run) last, by id."""
    return _rows(store.connection.execute(
        "SELECT * FROM schedule_tasks ORDER BY next_run IS NULL, next_run, id"))


def add_task(store: Store, task: Row) -> bool:
    """Insert ``task``; False (and nothing written) when its id is taken."""
    with store.transaction() as db:
        if db.execute("SELECT 1 FROM schedule_tasks WHERE id = ?", (task["id"],)).fetchone():
            return False
        _insert(db, "schedule_tasks", task)
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
            existing = _one(db.execute("SELECT * FROM schedule_tasks WHERE id = ?", (task["id"],)))
            values = merge(existing, task)
            if values is None:
                changes.append((task["id"], "unchanged"))
            elif existing is None:
                _insert(db, "schedule_tasks", values)
                changes.append((task["id"], "created"))
            else:
                _update(db, "schedule_tasks", task["id"], values)
                changes.append((task["id"], "updated"))
    return changes


def pause_task(store: Store, task_id: str, *, reason: str, now: str) -> Row | None:
    """Pause a task and cancel its runs that have not started; None when there is no such task."""
    with store.transaction() as db:
        task = _one(db.execute(
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
        return _one(db.execute(
            "UPDATE schedule_tasks SET status = CASE WHEN ? IS NULL THEN 'done' ELSE 'active' END, "
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


@dataclass
class Claim:
    """What one due task becomes: its new ``next_run`` (None: no more) and the run rows to add."""

    next_run: str | None
    runs: list[Row] = field(default_factory=list)
    task_status: str = "active"


Planner = Callable[[Row, Row | None], Claim]


def claim_due(store: Store, *, now: str, limit: int, backend: str, plan: Planner) -> tuple[int, list[Row]]:
    """Claim up to ``limit`` due tasks in one transaction; returns how many tasks were due
    and the run rows written.

    ``plan(task, open_run)`` decides each task's claim (``open_run`` is its unfinished run,
    if any). The ``UPDATE … WHERE next_run = <seen>`` makes a claim conditional on nobody
    having moved the task meanwhile; under ``BEGIN IMMEDIATE`` no one can, so it always
    holds, and the check keeps it true should the locking ever change.
    """
    written: list[Row] = []
    with store.transaction() as db:
        due = _rows(db.execute(
            "SELECT * FROM schedule_tasks WHERE status = 'active' AND next_run <= ? ORDER BY next_run, id LIMIT ?",
            (now, limit)))
        for task in due:
            open_run = _one(db.execute(
                f"SELECT id, status FROM schedule_runs WHERE task_id = ? AND status IN {_OPEN_SQL} "
                "ORDER BY id LIMIT 1", (task["id"],)))
            claim = plan(task, open_run)
            claimed = db.execute(
                "UPDATE schedule_tasks SET next_run = ?, status = ?, updated_at = ? "
                "WHERE id = ? AND next_run = ? RETURNING id",
                (claim.next_run, claim.task_status, now, task["id"], task["next_run"])).fetchone()
            if claimed is None:
                continue
            for run in claim.runs:
                values = {**run, "task_id": task["id"], "backend": backend, "queued_at": now}
                values["id"] = _insert(db, "schedule_runs", values)
                written.append(values)
    return len(due), written


def queue_manual_run(store: Store, task_id: str, run: Row) -> tuple[int | None, Row | None]:
    """Queue a run now unless the task has an unfinished one: ``(run id, None)`` or
    ``(None, the open run)``. Raises KeyError for an unknown task."""
    with store.transaction() as db:
        if db.execute("SELECT 1 FROM schedule_tasks WHERE id = ?", (task_id,)).fetchone() is None:
            raise KeyError(task_id)
        open_run = _one(db.execute(
            f"SELECT id, status FROM schedule_runs WHERE task_id = ? AND status IN {_OPEN_SQL} LIMIT 1",
            (task_id,)))
        if open_run is not None:
            return None, open_run
        return _insert(db, "schedule_runs", {**run, "task_id": task_id}), None


# -- runs -------------------------------------------------------------------------------


def get_run(store: Store, run_id: int) -> Row | None:
    return _one(store.connection.execute("SELECT * FROM schedule_runs WHERE id = ?", (run_id,)))


def list_runs(store: Store, task_id: str, limit: int | None = None) -> list[Row]:
    """A task's runs, newest first."""
    return _rows(store.connection.execute(
        "SELECT * FROM schedule_runs WHERE task_id = ? ORDER BY id DESC LIMIT ?", (task_id, limit or -1)))


def count_runs(store: Store, task_id: str) -> int:
    return int(store.connection.execute("SELECT COUNT(*) FROM schedule_runs WHERE task_id = ?",
                                        (task_id,)).fetchone()[0])


def open_runs(store: Store) -> list[Row]:
    """Runs that are queued, starting or running, oldest first."""
    return _rows(store.connection.execute(f"SELECT * FROM schedule_runs WHERE status IN {_OPEN_SQL} ORDER BY id"))


def dispatch_next(store: Store, *, backend: str, host: str, token: str, now_real: float) -> Row | None:
    """Mark the oldest queued run ``starting`` for this backend, unless a scheduled run is
    already starting or running: runs of one store share the checkout's run lock, so they
    go one at a time."""
    with store.transaction() as db:
        return _one(db.execute(
            "UPDATE schedule_runs SET status = 'starting', backend = ?, host = ?, dispatch_token = ?, "
            "dispatched_real = ? WHERE id = (SELECT MIN(id) FROM schedule_runs WHERE status = 'queued') "
            "AND NOT EXISTS (SELECT 1 FROM schedule_runs WHERE status IN ('starting', 'running')) RETURNING *",
            (backend, host, token, now_real)))


def start_run(store: Store, run_id: int, *, token: str, pid: int, started_at: str, now_real: float,
              run_dir: str, log: str) -> Row | None:
    """The launcher's claim: ``starting`` → ``running`` only with the dispatch token it was
    given. None means another launcher has it, or it was cancelled or re-queued."""
    with store.transaction() as db:
        return _one(db.execute(
            "UPDATE schedule_runs SET status = 'running', launcher_pid = ?, started_at = ?, heartbeat_real = ?, "
            "run_dir = ?, log = ? WHERE id = ? AND status = 'starting' AND dispatch_token = ? RETURNING *",
            (pid, started_at, now_real, run_dir, log, run_id, token)))


def beat_run(store: Store, run_id: int, *, pid: int, now_real: float) -> tuple[bool, str | None]:
    """A running launcher's heartbeat: ``(still ours, cancel reason or None)``."""
    with store.transaction() as db:
        row = db.execute(
            "UPDATE schedule_runs SET heartbeat_real = ? WHERE id = ? AND status = 'running' AND launcher_pid = ? "
            "RETURNING cancel_requested", (now_real, run_id, pid)).fetchone()
    return (False, None) if row is None else (True, row[0])


def request_cancel(store: Store, run_id: int, reason: str) -> None:
    with store.transaction() as db:
        db.execute("UPDATE schedule_runs SET cancel_requested = ? WHERE id = ? AND status = 'running'",
                   (reason, run_id))


TaskPolicy = Callable[[Row, str], tuple[Row, str]]


def finish_run(store: Store, run_id: int, *, expect: Sequence[str], status: str, reason: str,
               exit_code: int | None, finished_at: str, policy: TaskPolicy,
               token: str | None = None) -> Row | None:
    """Record how a run ended and update its task in one transaction.

    Only a run currently in one of the ``expect`` states (and with ``token``, when given)
    is finished, so a launcher and a recovering backend never both record it.
    ``reason`` is appended to the reason the run already has. ``policy(task, status)``
    returns the task columns to change and a note to append too (back-off, pause).
    Returns the finished run, or None.
    """
    states = ", ".join("?" for _ in expect)
    token_clause = " AND dispatch_token = ?" if token is not None else ""
    with store.transaction() as db:
        # The sweep's reason (a catch-up, a fold) stays; the outcome is appended to it.
        run = _one(db.execute(
            f"UPDATE schedule_runs SET status = ?, reason = CASE WHEN reason IS NULL THEN ? "
            f"ELSE reason || '; ' || ? END, exit_code = ?, finished_at = ? "
            f"WHERE id = ? AND status IN ({states}){token_clause} RETURNING *",
            (status, reason, reason, exit_code, finished_at, run_id, *expect, *([token] if token else []))))
        if run is None:
            return None
        task = _one(db.execute("SELECT * FROM schedule_tasks WHERE id = ?", (run["task_id"],)))
        if task is not None:
            changes, note = policy(task, status)
            if changes:
                _update(db, "schedule_tasks", task["id"], {**changes, "updated_at": finished_at})
            if note:
                run["reason"] = f"{run['reason']}; {note}"
                db.execute("UPDATE schedule_runs SET reason = ? WHERE id = ?", (run["reason"], run_id))
    return run


def requeue_starting(store: Store, *, dead_backends: Sequence[str], dispatched_before: float) -> list[Row]:
    """Put back in the queue runs whose dispatching backend died, or whose launcher never
    claimed them in time. The dispatch token is cleared, so a late launcher cannot start
    them behind the next one's back."""
    marks = ", ".join("?" for _ in dead_backends) or "NULL"
    with store.transaction() as db:
        return _rows(db.execute(
            f"UPDATE schedule_runs SET status = 'queued', dispatch_token = NULL WHERE status = 'starting' "
            f"AND (backend IN ({marks}) OR dispatched_real < ?) RETURNING *", (*dead_backends, dispatched_before)))


def count_by_status(store: Store) -> dict[str, int]:
    rows = store.connection.execute("SELECT status, COUNT(*) FROM schedule_tasks GROUP BY status").fetchall()
    return {row[0]: int(row[1]) for row in rows}


def child_summary(store: Store, run_dir: str) -> str | None:
    """The summary the ``axpipe run`` of a scheduled run recorded in ``runs`` (by its folder)."""
    row = store.connection.execute("SELECT summary FROM runs WHERE run_dir = ? ORDER BY started_at DESC LIMIT 1",
                                   (run_dir,)).fetchone()
    return row[0] if row and row[0] else None
