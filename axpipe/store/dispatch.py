"""SQL for the life of a scheduled run after its claim: dispatch to a launcher, the
launcher's own claim and heartbeat, the recorded outcome, and recovery of runs whose
backend or launcher died (tables of migration ``0003_schedule.sql``).

Every state change is a conditional ``UPDATE`` (on the current state and the dispatch
token), so a launcher and a recovering backend can never both move the same run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from axpipe.store import Store
from axpipe.store.rows import Row, one, rows, update


def dispatch_next(store: Store, *, backend: str, host: str, token: str, now_real: float) -> Row | None:
    """Mark the oldest queued run ``starting`` for this backend, unless a scheduled run is
    already starting or running in this backend's checkout (runs in one checkout share its
    run lock, so they go one at a time there; backends on other hosts or in other checkouts
    sharing a PostgreSQL store run theirs side by side) or the backend has been asked to
    stop: a stop request written at any moment before this claim keeps the queue for the
    next backend. A busy run whose dispatching backend is unknown counts as this checkout's:
    when in doubt, wait."""
    with store.transaction() as db:
        return one(db.execute(
            "UPDATE schedule_runs SET status = 'starting', backend = ?, host = ?, dispatch_token = ?, "
            "dispatched_real = ? WHERE id = (SELECT MIN(id) FROM schedule_runs WHERE status = 'queued') "
            "AND NOT EXISTS (SELECT 1 FROM schedule_runs busy LEFT JOIN runtime_backends other "
            "ON other.id = busy.backend WHERE busy.status IN ('starting', 'running') AND (other.id IS NULL OR "
            "(other.host = ? AND other.root = (SELECT root FROM runtime_backends WHERE id = ?)))) "
            "AND NOT EXISTS (SELECT 1 FROM runtime_backends WHERE id = ? AND stop_requested IS NOT NULL) "
            "RETURNING *",
            (backend, host, token, now_real, host, backend, backend)))


def start_run(store: Store, run_id: int, *, token: str, pid: int, started_at: str, now_real: float,
              run_dir: str, log: str) -> Row | None:
    """The launcher's claim: ``starting`` → ``running`` only with the dispatch token it was
    given. None means another launcher has it, or it was cancelled or re-queued."""
    with store.transaction() as db:
        return one(db.execute(
            "UPDATE schedule_runs SET status = 'running', launcher_pid = ?, started_at = ?, heartbeat_real = ?, "
            "run_dir = ?, log = ? WHERE id = ? AND status = 'starting' AND dispatch_token = ? RETURNING *",
            (pid, started_at, now_real, run_dir, log, run_id, token)))


def record_child(store: Store, run_id: int, *, token: str, pid: int) -> None:
    """The pid of the ``axpipe run`` the launcher started: recovery ends it if the launcher dies."""
    with store.transaction() as db:
        db.execute("UPDATE schedule_runs SET child_pid = ? WHERE id = ? AND dispatch_token = ?", (pid, run_id, token))


def beat_run(store: Store, run_id: int, *, pid: int, now_real: float) -> bool:
    """A running launcher's heartbeat; False when the run is no longer its own (the task was
    deleted, or recovery gave the run up for dead)."""
    with store.transaction() as db:
        return bool(db.execute(
            "UPDATE schedule_runs SET heartbeat_real = ? WHERE id = ? AND status = 'running' AND launcher_pid = ?",
            (now_real, run_id, pid)).rowcount == 1)


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
        run = one(db.execute(
            f"UPDATE schedule_runs SET status = ?, reason = CASE WHEN reason IS NULL THEN ? "
            f"ELSE reason || '; ' || ? END, exit_code = ?, finished_at = ? "
            f"WHERE id = ? AND status IN ({states}){token_clause} RETURNING *",
            (status, reason, reason, exit_code, finished_at, run_id, *expect, *([token] if token else []))))
        if run is None:
            return None
        task = one(db.execute("SELECT * FROM schedule_tasks WHERE id = ?", (run["task_id"],)))
        if task is not None:
            changes, note = policy(task, status)
            if changes:
                update(db, "schedule_tasks", task["id"], {**changes, "updated_at": finished_at})
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
        return rows(db.execute(
            f"UPDATE schedule_runs SET status = 'queued', dispatch_token = NULL WHERE status = 'starting' "
            f"AND (backend IN ({marks}) OR dispatched_real < ?) RETURNING *", (*dead_backends, dispatched_before)))


def child_record(store: Store, run_dir: str) -> Row | None:
    """The ``runs`` row the ``axpipe run`` of a scheduled run wrote (by its folder), if any."""
    return one(store.connection.execute("SELECT * FROM runs WHERE run_dir = ? ORDER BY started_at DESC LIMIT 1",
                                        (run_dir,)))


def child_summary(store: Store, run_dir: str) -> str | None:
    """The summary the ``axpipe run`` of a scheduled run recorded in ``runs`` (by its folder)."""
    row = store.connection.execute("SELECT summary FROM runs WHERE run_dir = ? ORDER BY started_at DESC LIMIT 1",
                                   (run_dir,)).fetchone()
    return row[0] if row and row[0] else None
