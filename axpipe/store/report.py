"""Read-only SQL for ``axpipe report``: everything the report shows, in few statements.

A project with a thousand runs must report in well under two seconds, so the report reads
whole tables once (ordered) instead of asking per goal or per task.
"""

from __future__ import annotations

from axpipe.store import Store
from axpipe.store.rows import Row, rows


def runs(store: Store, since: str) -> list[Row]:
    """Every ``axpipe run`` row started at or after ``since``, newest first."""
    return rows(store.connection.execute(
        "SELECT * FROM runs WHERE started_at >= ? ORDER BY started_at DESC, rowid DESC", (since,)))


def goals(store: Store) -> list[Row]:
    return rows(store.connection.execute("SELECT * FROM goals ORDER BY id"))


def contracts(store: Store) -> list[Row]:
    return rows(store.connection.execute("SELECT * FROM contracts ORDER BY created_at"))


def latest_sessions(store: Store) -> dict[str, str]:
    """Each goal's latest session id (the one ``goal status`` judges)."""
    found: dict[str, str] = {}
    for row in store.connection.execute("SELECT goal_id, id FROM sessions ORDER BY started_at, rowid"):
        found[row["goal_id"]] = row["id"]
    return found


def receipts(store: Store, since: str) -> list[Row]:
    """Every receipt started at or after ``since``, oldest first (a check's history in order)."""
    return rows(store.connection.execute(
        "SELECT id, goal_id, session_id, check_id, held_out, fingerprint, fingerprint_reason, command, exit_code, "
        "status, summary, started_at, finished_at, artifacts FROM receipts WHERE started_at >= ? "
        "ORDER BY started_at, rowid", (since,)))


def units(store: Store) -> list[Row]:
    return rows(store.connection.execute("SELECT * FROM units ORDER BY goal_id, number"))


def schedule_tasks(store: Store) -> list[Row]:
    return rows(store.connection.execute("SELECT * FROM schedule_tasks ORDER BY id"))


def schedule_runs(store: Store, since: str) -> list[Row]:
    """Every scheduled run queued at or after ``since``, newest first."""
    return rows(store.connection.execute(
        "SELECT id, task_id, scheduled_for, last_scheduled, folded, trigger, status, reason, queued_at, started_at, "
        "finished_at, exit_code, run_dir, log FROM schedule_runs WHERE queued_at >= ? ORDER BY id DESC", (since,)))
