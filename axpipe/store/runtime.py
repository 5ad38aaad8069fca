"""SQL for runtime backends (their heartbeats) and the requests one-shot commands leave
for them (tables of migration ``0003_schedule.sql``). Liveness times are real Unix seconds."""

from __future__ import annotations

from typing import Any

from axpipe.store import Store

Row = dict[str, Any]


def register_backend(store: Store, backend: Row) -> None:
    with store.transaction() as db:
        columns = ", ".join(backend)
        db.execute(f"INSERT INTO runtime_backends ({columns}) VALUES ({', '.join('?' for _ in backend)})",
                   tuple(backend.values()))


def beat_backend(store: Store, backend_id: str, now_real: float) -> tuple[bool, str | None]:
    """Refresh a heartbeat: ``(row still there, stop request or None)``."""
    with store.transaction() as db:
        row = db.execute("UPDATE runtime_backends SET heartbeat_real = ? WHERE id = ? RETURNING stop_requested",
                         (now_real, backend_id)).fetchone()
    return (False, None) if row is None else (True, row[0])


def stop_request(store: Store, backend_id: str) -> str | None:
    """The reason ``runtime stop`` (or another command) left for this backend, or None."""
    row = store.connection.execute("SELECT stop_requested FROM runtime_backends WHERE id = ?",
                                   (backend_id,)).fetchone()
    return None if row is None else row[0]


def record_sweep(store: Store, backend_id: str, *, at: str, seconds: float, claimed: int) -> None:
    with store.transaction() as db:
        db.execute("UPDATE runtime_backends SET last_sweep_at = ?, last_sweep_seconds = ?, sweeps = sweeps + 1, "
                   "claimed = claimed + ? WHERE id = ?", (at, seconds, claimed, backend_id))


def remove_backend(store: Store, backend_id: str) -> None:
    with store.transaction() as db:
        db.execute("DELETE FROM runtime_backends WHERE id = ?", (backend_id,))


def list_backends(store: Store) -> list[Row]:
    return [dict(row) for row in store.connection.execute(
        "SELECT * FROM runtime_backends ORDER BY started_at, id").fetchall()]


def request_stop(store: Store, backend_ids: list[str], reason: str) -> None:
    with store.transaction() as db:
        db.executemany("UPDATE runtime_backends SET stop_requested = ? WHERE id = ?",
                       [(reason, backend_id) for backend_id in backend_ids])


def forget_backends(store: Store, backend_ids: list[str]) -> None:
    """Drop rows of backends known to be dead (their work has been recovered)."""
    with store.transaction() as db:
        db.executemany("DELETE FROM runtime_backends WHERE id = ?", [(backend_id,) for backend_id in backend_ids])


# -- requests ---------------------------------------------------------------------------


def add_request(store: Store, *, action: str, task_id: str, now_real: float) -> int:
    with store.transaction() as db:
        return int(db.execute("INSERT INTO runtime_requests (action, task_id, created_real) VALUES (?, ?, ?) "
                              "RETURNING id", (action, task_id, now_real)).fetchone()[0])


def claim_request(store: Store, backend_id: str) -> Row | None:
    """Take the oldest request nobody has taken (any live backend may answer any request)."""
    with store.transaction() as db:
        row = db.execute(
            "UPDATE runtime_requests SET claimed_by = ? WHERE id = (SELECT MIN(id) FROM runtime_requests "
            "WHERE claimed_by IS NULL AND done_real IS NULL) RETURNING *", (backend_id,)).fetchone()
    return dict(row) if row else None


def answer_request(store: Store, request_id: int, *, exit_code: int, message: str, now_real: float) -> None:
    with store.transaction() as db:
        db.execute("UPDATE runtime_requests SET exit_code = ?, message = ?, done_real = ? WHERE id = ?",
                   (exit_code, message, now_real, request_id))


def get_request(store: Store, request_id: int) -> Row | None:
    row = store.connection.execute("SELECT * FROM runtime_requests WHERE id = ?", (request_id,)).fetchone()
    return dict(row) if row else None


def withdraw_request(store: Store, request_id: int) -> bool:
    """Take back a request no backend has claimed; False when one already has."""
    with store.transaction() as db:
        return bool(db.execute("DELETE FROM runtime_requests WHERE id = ? AND claimed_by IS NULL",
                               (request_id,)).rowcount == 1)


def release_requests(store: Store, backend_ids: list[str]) -> None:
    """Hand requests claimed by dead backends, and never answered, back to the others."""
    with store.transaction() as db:
        db.executemany("UPDATE runtime_requests SET claimed_by = NULL WHERE claimed_by = ? AND done_real IS NULL",
                       [(backend_id,) for backend_id in backend_ids])
