"""Pacing: units of one agent spaced across every run, loop and backend sharing the store
(``agent.pacing``, DESIGN §18).

Two limits, each a slot in the store (:mod:`axpipe.store.pacing`): ``requests_per_minute``
spaces unit starts evenly (60/rpm seconds apart); ``tokens_per_minute`` lets a turn start
while the tokens the agent's turns reported so far are within a minute's worth, and a
turn that used more pushes the next start back by the time they take to pay back. A unit
that must wait sleeps until its slot (no polling), saying so in the events and the
progress output. A person can shorten the pacing minute for tests with
``AXPIPE_PACING_MINUTE`` (seconds; default 60).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from axpipe.recipe import schema
from axpipe.run.events import EventLog
from axpipe.store import Store
from axpipe.store import pacing as sql
from axpipe.workspace import ensure_state_dir

MINUTE_ENV = "AXPIPE_PACING_MINUTE"
HEARTBEAT = 30.0  # a long wait still emits an event this often (goal resume's idle timeout watches them)


def minute() -> float:
    try:
        value = float(os.environ.get(MINUTE_ENV, "60"))
    except ValueError:
        return 60.0
    return value if value > 0 else 60.0


def key_of(spec: schema.AgentSpec) -> str:
    """What shares a pace: ``agent.pacing.key``, else the agent kind and its model."""
    return spec.pacing.key or (f"{spec.kind}:{spec.model}" if spec.model else spec.kind)


def paced(spec: schema.AgentSpec) -> bool:
    return spec.pacing.requests_per_minute is not None or spec.pacing.tokens_per_minute is not None


def start_unit(spec: schema.AgentSpec, root: Path, events: EventLog, started: Callable[[float], dict[str, Any]],
               *, phase: str, on_output: Callable[[bytes], None] | None = None) -> None:
    """Start a unit of ``spec``'s agent: wait for its slot when it is paced, then call
    ``started(waited)``, which emits the unit's start event and returns it. Paced by
    requests, that call happens while the store is locked, at least 60/rpm seconds after
    the previous start event of the same key, in whichever process it was."""
    if not paced(spec):
        started(0.0)
        return
    pacing, unit = spec.pacing, minute()
    spacing = unit / pacing.requests_per_minute if pacing.requests_per_minute else 0.0
    key = key_of(spec)
    began = time.time()
    with Store(ensure_state_dir(root) / "state.db") as store:
        slot = sql.reserve(store, key, now=began, spacing=spacing, token_burst=unit)
        _sleep_until(slot, spec, key, events, phase, on_output)
        if not spacing:
            started(time.time() - began)
            return

        def start() -> float:
            event = started(time.time() - began)
            return datetime.fromisoformat(str(event["ts"]).replace("Z", "+00:00")).timestamp()

        while (left := sql.claim(store, key, spacing=spacing, start=start)) > 0:
            _sleep_until(time.time() + left, spec, key, events, phase, on_output)


def _sleep_until(moment: float, spec: schema.AgentSpec, key: str, events: EventLog, phase: str,
                 on_output: Callable[[bytes], None] | None) -> None:
    wait = moment - time.time()
    if wait <= 0:
        return
    starts_at = datetime.fromtimestamp(moment, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    events.emit("agent.pacing", phase=phase, agent=spec.kind, key=key, wait=round(wait, 3), starts_at=starts_at)
    if on_output is not None:
        on_output(f"axpipe: pacing {key}: waiting {wait:.0f} s for its next slot ({starts_at})\r\n".encode())
    while (left := moment - time.time()) > 0:
        time.sleep(min(left, HEARTBEAT))
        if moment - time.time() > 0:  # a long wait still shows it is alive
            events.emit("agent.pacing", phase=phase, agent=spec.kind, key=key, wait=round(moment - time.time(), 3),
                        starts_at=starts_at)


def charge(spec: schema.AgentSpec, root: Path, tokens: int) -> None:
    """Count a turn's reported tokens against the agent's tokens per minute."""
    per_minute = spec.pacing.tokens_per_minute
    if not per_minute or tokens <= 0:
        return
    with Store(ensure_state_dir(root) / "state.db") as store:
        sql.charge_tokens(store, key_of(spec), now=time.time(), seconds=tokens * minute() / per_minute)
