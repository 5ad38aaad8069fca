"""SQL for units of work and the bounce counter (migration 0005)."""

from __future__ import annotations

import json
from typing import Any

from axpipe.store import Store, now_iso


def start_unit(store: Store, *, goal_id: str, session_id: str, start_head: str | None, start_ref: str | None,
               start_tree: str | None) -> int:
    """Record a new unit of ``goal_id`` and return its number (1 for the goal's first)."""
    with store.transaction() as db:
        number = int(db.execute("SELECT COALESCE(MAX(number), 0) + 1 FROM units WHERE goal_id = ?",
                                (goal_id,)).fetchone()[0])
        db.execute("INSERT INTO units (goal_id, number, session_id, status, start_head, start_ref, start_tree, "
                   "started_at) VALUES (?, ?, ?, 'running', ?, ?, ?, ?)",
                   (goal_id, number, session_id, start_head, start_ref, start_tree, now_iso()))
    return number


def finish_unit(store: Store, goal_id: str, number: int, *, status: str, reason: str | None = None,
                stash: str | None = None) -> None:
    with store.transaction() as db:
        db.execute("UPDATE units SET status = ?, reason = ?, stash = COALESCE(?, stash), finished_at = ? "
                   "WHERE goal_id = ? AND number = ?", (status, reason, stash, now_iso(), goal_id, number))


def record_verdicts(store: Store, goal_id: str, number: int, verdicts: list[dict[str, Any]]) -> None:
    with store.transaction() as db:
        db.execute("UPDATE units SET verdicts = ? WHERE goal_id = ? AND number = ?",
                   (json.dumps(verdicts), goal_id, number))


def get_unit(store: Store, goal_id: str, number: int) -> dict[str, Any] | None:
    row = store.connection.execute("SELECT * FROM units WHERE goal_id = ? AND number = ?",
                                   (goal_id, number)).fetchone()
    if row is None:
        return None
    unit = dict(row)
    unit["verdicts"] = json.loads(unit["verdicts"])
    return unit


def list_units(store: Store, goal_id: str) -> list[dict[str, Any]]:
    rows = store.connection.execute("SELECT * FROM units WHERE goal_id = ? ORDER BY number", (goal_id,)).fetchall()
    return [{**dict(row), "verdicts": json.loads(row["verdicts"])} for row in rows]


def bounces(store: Store, goal_id: str) -> int:
    row = store.connection.execute("SELECT bounces FROM goals WHERE id = ?", (goal_id,)).fetchone()
    return int(row[0]) if row is not None else 0


def add_bounce(store: Store, goal_id: str) -> int:
    """Count one bounce in one statement and return the new count."""
    with store.transaction() as db:
        row = db.execute("UPDATE goals SET bounces = bounces + 1, updated_at = ? WHERE id = ? RETURNING bounces",
                         (now_iso(), goal_id)).fetchone()
    return int(row[0])


def reset_bounces(store: Store, goal_id: str) -> None:
    with store.transaction() as db:
        db.execute("UPDATE goals SET bounces = 0, updated_at = ? WHERE id = ?", (now_iso(), goal_id))
