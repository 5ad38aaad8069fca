"""SQL for agent pacing (migration 0008): one row per paced agent, the times its next unit
may start. Each call is one transaction, so runs and backends sharing the store take slots
one after another and never the same one. :func:`reserve` books a slot (so a waiting
unit sleeps instead of polling); :func:`claim` makes the start itself exact: the start
event is written inside the transaction that checks the spacing since the last one."""

from __future__ import annotations

import time
from collections.abc import Callable

from axpipe.store import Store, now_iso

# A millisecond over the spacing: event times are kept to the microsecond, the clock reads finer.
MARGIN = 0.001


def reserve(store: Store, key: str, *, now: float, spacing: float, token_burst: float) -> float:
    """Take ``key``'s next start slot: the time (epoch s) a unit may start, no earlier than
    ``now``. ``spacing``: seconds between two starts (0: no request limit); ``token_burst``:
    how far ahead the tokens already used may run before a start waits for them."""
    with store.transaction() as db:
        row = db.execute("SELECT next_request, next_tokens, last_started FROM agent_pacing WHERE key = ?",
                         (key,)).fetchone()
        next_request, next_tokens, last = (float(row[0]), float(row[1]), float(row[2])) if row else (0.0, 0.0, 0.0)
        start = max(now, next_request, last + spacing + MARGIN if spacing else 0.0, next_tokens - token_burst)
        db.execute("INSERT INTO agent_pacing (key, next_request, next_tokens, updated_at) VALUES (?, ?, ?, ?) "
                   "ON CONFLICT (key) DO UPDATE SET next_request = excluded.next_request, "
                   "updated_at = excluded.updated_at",
                   (key, start + spacing if spacing else next_request, next_tokens, now_iso()))
    return start


def charge_tokens(store: Store, key: str, *, now: float, seconds: float) -> None:
    """Push ``key``'s token slot ``seconds`` further (the time its last turn's tokens take to
    pay back at the agent's tokens per minute)."""
    with store.transaction() as db:
        db.execute("INSERT INTO agent_pacing (key, next_request, next_tokens, updated_at) VALUES (?, 0, ?, ?) "
                   "ON CONFLICT (key) DO UPDATE SET next_tokens = CASE WHEN agent_pacing.next_tokens > ? "
                   "THEN agent_pacing.next_tokens ELSE ? END + ?, "
                   "updated_at = excluded.updated_at",
                   (key, now + seconds, now_iso(), now, now, seconds))  # portable: no two-argument MAX


def claim(store: Store, key: str, *, spacing: float, start: Callable[[], float]) -> float:
    """Start a unit if ``spacing`` seconds have passed since ``key``'s last start: ``start()``
    runs inside the transaction (it emits the unit's start event and returns its time), so
    no other process starts one in between. Returns 0 when started, else the seconds to
    wait before trying again."""
    with store.transaction() as db:
        row = db.execute("SELECT last_started FROM agent_pacing WHERE key = ?", (key,)).fetchone()
        last = float(row[0]) if row else 0.0
        left = last + spacing + MARGIN - time.time()
        if left > 0:
            return left
        started = start()
        db.execute("INSERT INTO agent_pacing (key, last_started, updated_at) VALUES (?, ?, ?) "
                   "ON CONFLICT (key) DO UPDATE SET last_started = excluded.last_started, "
                   "updated_at = excluded.updated_at", (key, started, now_iso()))
    return 0.0
