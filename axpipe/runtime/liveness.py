"""Which backends and launchers are alive, from their heartbeats in the store.

A process is alive while its heartbeat is fresher than ``stale_after`` and, when it runs on
this host, its pid still exists. The pid check makes a SIGKILLed backend on the same
machine count as dead at once instead of after the heartbeat goes stale.
"""

from __future__ import annotations

import os
import time
from typing import Any

from axpipe.clock import Timings, timings
from axpipe.process import pid_alive
from axpipe.store import Store
from axpipe.store import runtime as queries

HOST = os.uname().nodename  # socket.gethostname() without importing socket (~2 ms)


def fresh(heartbeat: float | None, now_real: float, limits: Timings) -> bool:
    return heartbeat is not None and now_real - heartbeat <= limits.stale_after


def backend_alive(row: dict[str, Any], now_real: float | None = None, limits: Timings | None = None) -> bool:
    """Whether the backend of ``row`` (a ``runtime_backends`` row) is alive."""
    moment = time.time() if now_real is None else now_real
    if not fresh(row["heartbeat_real"], moment, limits or timings()):
        return False
    return row["host"] != HOST or pid_alive(int(row["pid"]))


def launcher_alive(run: dict[str, Any], now_real: float | None = None, limits: Timings | None = None) -> bool:
    """Whether the launcher running ``run`` (a ``schedule_runs`` row) is alive."""
    moment = time.time() if now_real is None else now_real
    if not fresh(run["heartbeat_real"], moment, limits or timings()):
        return False
    return run["host"] != HOST or run["launcher_pid"] is None or pid_alive(int(run["launcher_pid"]))


def live_backends(store: Store) -> list[dict[str, Any]]:
    """Backends of this store that are alive now, oldest first."""
    now_real = time.time()
    limits = timings()
    return [row for row in queries.list_backends(store) if backend_alive(row, now_real, limits)]
