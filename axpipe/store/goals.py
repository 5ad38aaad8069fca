"""SQL for goals, contracts, sessions, receipts and edited files (migration 0002)."""

from __future__ import annotations

import json
import os
from typing import Any

from axpipe.store import Store, faults, now_iso

_GOAL_FIELDS = {
    "recipe", "overrides", "variables", "objective", "assured", "status", "status_reason", "blocked", "contract_digest",
    "baseline", "workspace", "plan", "budget", "tokens_used", "time_used", "steps_used", "no_progress",
    "guidance_given", "wrap_up_done", "bad_success", "last_edit_at", "cost_used", "unpriced_turns", "resumes_at",
}


def _row(row: Any) -> dict[str, Any] | None:
    return dict(row) if row is not None else None


# -- goals ---------------------------------------------------------------------------------


def get_goal(store: Store, goal_id: str) -> dict[str, Any] | None:
    return _row(store.connection.execute("SELECT * FROM goals WHERE id = ?", (goal_id,)).fetchone())


def list_goals(store: Store) -> list[dict[str, Any]]:
    rows = store.connection.execute("SELECT * FROM goals ORDER BY updated_at DESC").fetchall()
    return [dict(row) for row in rows]


def insert_goal(store: Store, goal_id: str, **fields: Any) -> None:
    unknown = set(fields) - _GOAL_FIELDS
    if unknown:
        raise ValueError(f"unknown goal fields {sorted(unknown)}")
    now = now_iso()
    columns = ["id", *fields, "created_at", "updated_at"]
    values = [goal_id, *fields.values(), now, now]
    with store.transaction() as db:
        db.execute(f"INSERT INTO goals ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", values)


def update_goal(store: Store, goal_id: str, **fields: Any) -> None:
    unknown = set(fields) - _GOAL_FIELDS
    if unknown:
        raise ValueError(f"unknown goal fields {sorted(unknown)}")
    assignments = ", ".join(f"{name} = ?" for name in fields)
    with store.transaction() as db:
        db.execute(f"UPDATE goals SET {assignments}, updated_at = ? WHERE id = ?",
                   [*fields.values(), now_iso(), goal_id])


def add_usage(store: Store, goal_id: str, *, tokens: int = 0, seconds: float = 0.0, steps: int = 0,
              cost: float = 0.0, unpriced: int = 0) -> None:
    """Add to a goal's used budget in one statement (no read-modify-write race).
    ``unpriced``: agent turns that reported no cost (migration 0008)."""
    with store.transaction() as db:
        db.execute("UPDATE goals SET tokens_used = tokens_used + ?, time_used = time_used + ?, "
                   "steps_used = steps_used + ?, cost_used = cost_used + ?, unpriced_turns = unpriced_turns + ?, "
                   "updated_at = ? WHERE id = ?",
                   (tokens, seconds, steps, cost, unpriced, now_iso(), goal_id))


def delete_goal(store: Store, goal_id: str) -> None:
    with store.transaction() as db:
        for table, column in (("receipts", "goal_id"), ("sessions", "goal_id"), ("contracts", "goal_id"),
                              ("edited_files", "goal_id"), ("goals", "id")):
            db.execute(f"DELETE FROM {table} WHERE {column} = ?", (goal_id,))


# -- contracts -----------------------------------------------------------------------------


def insert_contract(store: Store, *, digest: str, goal_id: str, canonical: dict[str, Any],
                    revises: str | None = None, correction: str | None = None) -> None:
    with store.transaction() as db:
        db.execute("INSERT INTO contracts (digest, goal_id, canonical, revises, correction, created_at) "
                   "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                   (digest, goal_id, json.dumps(canonical, sort_keys=True), revises, correction, now_iso()))


def get_contract(store: Store, digest: str) -> dict[str, Any] | None:
    row = _row(store.connection.execute("SELECT * FROM contracts WHERE digest = ?", (digest,)).fetchone())
    if row is not None:
        row["canonical"] = json.loads(row["canonical"])
    return row


# -- sessions ------------------------------------------------------------------------------


def insert_session(store: Store, *, session_id: str, goal_id: str, contract_digest: str | None,
                   workspace: str, forked_from: str | None = None) -> None:
    with store.transaction() as db:
        db.execute("INSERT INTO sessions (id, goal_id, contract_digest, workspace, forked_from, started_at) "
                   "VALUES (?, ?, ?, ?, ?, ?)",
                   (session_id, goal_id, contract_digest, workspace, forked_from, now_iso()))


def get_session(store: Store, session_id: str) -> dict[str, Any] | None:
    return _row(store.connection.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone())


def latest_session(store: Store, goal_id: str) -> dict[str, Any] | None:
    return _row(store.connection.execute(
        "SELECT * FROM sessions WHERE goal_id = ? ORDER BY started_at DESC, rowid DESC LIMIT 1",
        (goal_id,)).fetchone())


def find_session(store: Store, session_id: str) -> dict[str, Any] | None:
    """A session by its id or an unambiguous prefix of it."""
    rows = store.connection.execute("SELECT * FROM sessions WHERE id LIKE ? ORDER BY started_at DESC",
                                    (session_id.replace("%", "") + "%",)).fetchall()
    exact = [row for row in rows if row["id"] == session_id]
    if exact:
        return dict(exact[0])
    return dict(rows[0]) if len(rows) == 1 else None


# -- receipts ------------------------------------------------------------------------------


def start_receipt(store: Store, *, receipt_id: str, goal_id: str, session_id: str, workspace: str,
                  contract_digest: str | None, check_id: str, held_out: bool, command: str) -> None:
    with store.transaction() as db:
        if store.dialect == "sqlite":  # a pid is only judged on its own host (a shared store spans hosts)
            faults.close_left_open(db, now=now_iso())  # `axpipe verify` alone starts no run
        db.execute("INSERT INTO receipts (id, goal_id, session_id, workspace, contract_digest, check_id, held_out, "
                   "command, status, started_at, pid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?)",
                   (receipt_id, goal_id, session_id, workspace, contract_digest, check_id, int(held_out),
                    command, now_iso(), os.getpid()))


def finish_receipt(store: Store, receipt_id: str, *, status: str, exit_code: int | None, summary: str,
                   fingerprint: str | None, fingerprint_reason: str | None, output_tail: str,
                   artifacts: list[str]) -> None:
    with store.transaction() as db:
        db.execute("UPDATE receipts SET status = ?, exit_code = ?, summary = ?, fingerprint = ?, "
                   "fingerprint_reason = ?, output_tail = ?, artifacts = ?, finished_at = ? WHERE id = ?",
                   (status, exit_code, summary, fingerprint, fingerprint_reason, output_tail,
                    json.dumps(artifacts), now_iso(), receipt_id))


def get_receipt(store: Store, receipt_id: str) -> dict[str, Any] | None:
    return _row(store.connection.execute("SELECT * FROM receipts WHERE id = ?", (receipt_id,)).fetchone())


def latest_receipt(store: Store, goal_id: str, check_id: str, session_id: str | None = None) -> dict[str, Any] | None:
    """The newest receipt of a check in a goal (in one session when ``session_id`` is given)."""
    if session_id is None:
        row = store.connection.execute(
            "SELECT * FROM receipts WHERE goal_id = ? AND check_id = ? ORDER BY started_at DESC, rowid DESC LIMIT 1",
            (goal_id, check_id)).fetchone()
    else:
        row = store.connection.execute(
            "SELECT * FROM receipts WHERE goal_id = ? AND check_id = ? AND session_id = ? "
            "ORDER BY started_at DESC, rowid DESC LIMIT 1", (goal_id, check_id, session_id)).fetchone()
    return _row(row)


def passed_before(store: Store, *, goal_id: str, check_id: str, fingerprint: str, contract_digest: str | None,
                  other_than: str) -> bool:
    """Whether check ``check_id`` of the goal already passed on this source fingerprint under
    this contract, in a receipt other than ``other_than``."""
    return store.connection.execute(
        "SELECT 1 FROM receipts WHERE goal_id = ? AND check_id = ? AND status = 'passed' "
        "AND fingerprint = ? AND id != ? "
        "AND (contract_digest = ? OR (contract_digest IS NULL AND CAST(? AS TEXT) IS NULL)) LIMIT 1",
        (goal_id, check_id, fingerprint, other_than, contract_digest, contract_digest)).fetchone() is not None


def receipts_of_session(store: Store, session_id: str) -> list[dict[str, Any]]:
    rows = store.connection.execute("SELECT * FROM receipts WHERE session_id = ? ORDER BY started_at, rowid",
                                    (session_id,)).fetchall()
    return [dict(row) for row in rows]


# -- edited files --------------------------------------------------------------------------


def record_edits(store: Store, goal_id: str, paths: list[str]) -> None:
    if not paths:
        return
    now = now_iso()
    with store.transaction() as db:
        db.executemany("INSERT INTO edited_files (goal_id, path, edited_at) VALUES (?, ?, ?) "
                       "ON CONFLICT (goal_id, path) DO UPDATE SET edited_at = excluded.edited_at",
                       [(goal_id, path, now) for path in paths])  # names: see store/names.py
        db.execute("UPDATE goals SET last_edit_at = ?, updated_at = ? WHERE id = ?", (now, now, goal_id))


def edited_files(store: Store, goal_id: str) -> list[str]:
    rows = store.connection.execute("SELECT path FROM edited_files WHERE goal_id = ? ORDER BY path",
                                    (goal_id,)).fetchall()
    return [row[0] for row in rows]
