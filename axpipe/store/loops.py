"""SQL for loops (the ``loops`` table of migration ``0004_loops.sql``).

The process running a loop writes its row: once at start, at each tick's start and end, and
at every heartbeat (with the busy-skip count so far). Other processes read it and may leave
a stop request in it. Liveness times are real Unix seconds; other times ISO 8601 UTC text.
"""

from __future__ import annotations

from typing import Any

from axpipe.store import Store

Row = dict[str, Any]


def insert_loop(store: Store, row: Row) -> None:
    with store.transaction() as db:
        columns = ", ".join(row)
        db.execute(f"INSERT INTO loops ({columns}) VALUES ({', '.join('?' for _ in row)})", tuple(row.values()))


def get_loop(store: Store, loop_id: str) -> Row | None:
    row = store.connection.execute("SELECT * FROM loops WHERE id = ?", (loop_id,)).fetchone()
    return dict(row) if row else None


def list_loops(store: Store, *, limit: int = 20) -> list[Row]:
    """The newest loops first."""
    return [dict(row) for row in store.connection.execute(
        "SELECT * FROM loops ORDER BY started_at DESC, rowid DESC LIMIT ?", (limit,)).fetchall()]


def running_loops(store: Store) -> list[Row]:
    """Loops whose process has not recorded an end (alive, or died without saying so)."""
    return [dict(row) for row in store.connection.execute(
        "SELECT * FROM loops WHERE status = 'running' ORDER BY started_at DESC, rowid DESC").fetchall()]


def beat(store: Store, loop_id: str, *, now_real: float, busy_skips: int) -> tuple[bool, str | None, bool]:
    """Refresh the heartbeat: ``(row still there, stop request or None, stop now)``."""
    with store.transaction() as db:
        row = db.execute("UPDATE loops SET heartbeat_real = ?, busy_skips = ? WHERE id = ? "
                         "RETURNING stop_requested, stop_now", (now_real, busy_skips, loop_id)).fetchone()
    return (False, None, False) if row is None else (True, row[0], bool(row[1]))


def pending_stop(store: Store, loop_id: str) -> tuple[bool, str | None, bool]:
    """Read the stop request without beating: ``(row still there, stop request or None, stop now)``."""
    row = store.connection.execute("SELECT stop_requested, stop_now FROM loops WHERE id = ?", (loop_id,)).fetchone()
    return (False, None, False) if row is None else (True, row[0], bool(row[1]))


def tick_started(store: Store, loop_id: str, *, tick: int, at: str, busy_skips: int) -> None:
    with store.transaction() as db:
        db.execute("UPDATE loops SET tick = ?, tick_started_at = ?, next_tick_at = NULL, busy_skips = ? "
                   "WHERE id = ?", (tick, at, busy_skips, loop_id))


def tick_finished(store: Store, loop_id: str, *, tick: int, status: str, summary: str, at: str, runs: int,
                  busy_skips: int, next_tick_at: str | None) -> None:
    with store.transaction() as db:
        db.execute("UPDATE loops SET tick = NULL, tick_started_at = NULL, last_tick = ?, last_status = ?, "
                   "last_summary = ?, last_finished_at = ?, runs = ?, busy_skips = ?, next_tick_at = ? "
                   "WHERE id = ?", (tick, status, summary, at, runs, busy_skips, next_tick_at, loop_id))


def end_loop(store: Store, loop_id: str, *, at: str, reason: str, exit_code: int | None, runs: int,
             busy_skips: int) -> None:
    with store.transaction() as db:
        db.execute("UPDATE loops SET status = 'ended', ended_at = ?, end_reason = ?, exit_code = ?, runs = ?, "
                   "busy_skips = ?, tick = NULL, tick_started_at = NULL, next_tick_at = NULL WHERE id = ?",
                   (at, reason, exit_code, runs, busy_skips, loop_id))


def request_stop(store: Store, loop_id: str, reason: str, *, now: bool) -> bool:
    """Ask a running loop to stop (after its tick in progress, or ``now``); False when it has ended.

    A later request never weakens an earlier one: ``now`` stays set once set.
    """
    with store.transaction() as db:
        # CASE, not SQLite's two-argument MAX(): the same statement runs on PostgreSQL.
        row = db.execute("UPDATE loops SET stop_requested = COALESCE(stop_requested, ?), "
                         "stop_now = CASE WHEN stop_now > ? THEN stop_now ELSE ? END "
                         "WHERE id = ? AND status = 'running' RETURNING id",
                         (reason, int(now), int(now), loop_id)).fetchone()
    return row is not None


def set_goal(store: Store, loop_id: str, *, goal_id: str | None, session_id: str | None) -> None:
    """The goal and session the run's plan gave the loop (it registers before planning)."""
    with store.transaction() as db:
        db.execute("UPDATE loops SET goal_id = ?, session_id = ? WHERE id = ?", (goal_id, session_id, loop_id))
