"""The runtime backend behind ``axpipe runtime start``: one loop running periodic *duties*.

The loop itself knows nothing about schedules. Each duty has a name, an interval and a
``run(backend)``; the loop runs every duty once at start, then each again when its
interval has passed, and a duty's failure is logged without stopping the others. The
built-in duties (:mod:`axpipe.runtime.duties`) heartbeat, answer requests, sweep the
schedule, dispatch queued runs and recover work of dead processes. Other periodic work —
driving loops and goals — joins by appending a duty to :func:`axpipe.runtime.duties.default_duties`' list (or
``Backend.duties``) and needs no change here.

The backend stops on SIGTERM (exit 0), SIGINT (exit 130) or ``axpipe runtime stop``
(exit 0), and with exit 1 when the store turns out to be damaged: no round could succeed,
and a supervisor must see it fail rather than read an error logged every second.
Stopping never kills runs in progress: their launchers finish and record them, and queued
runs wait for the next backend.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from dataclasses import field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol, TextIO

from axpipe import clock
from axpipe.errors import ExitCode
from axpipe.records import record
from axpipe.runtime.liveness import HOST
from axpipe.store import Store, StoreCorrupt, StoreError
from axpipe.store import runtime as queries
from axpipe.store.postgres import StoreUnavailable, StoreUnreachable


class Duty(Protocol):
    """Periodic work of the backend. ``run`` must return quickly; long work belongs in a
    process of its own (as runs are, through launchers)."""

    name: str

    def interval(self, backend: Backend) -> float:
        """Seconds between two runs of this duty."""
        ...

    def run(self, backend: Backend) -> None:
        """Do one round of the duty."""
        ...


@record
class Child:
    """A launcher this backend started, kept so it can be reaped and its early death noticed."""

    process: subprocess.Popen[bytes]
    run_id: int
    token: str
    log: Path


@record
class Backend:
    """One backend process on one project store."""

    store: Store
    root: Path
    sweep_interval: float
    out: TextIO = sys.stdout
    duties: list[Duty] = field(default_factory=list)
    id: str = field(default_factory=lambda: f"{HOST}-{os.getpid()}-{secrets.token_hex(2)}")
    children: dict[int, Child] = field(default_factory=dict)
    timings: clock.Timings = field(default_factory=clock.timings)
    _stop: threading.Event = field(default_factory=threading.Event)
    _exit_code: int = 0
    _stop_reason: str = ""
    _due: dict[str, float] = field(default_factory=dict)

    def log(self, message: str) -> None:
        """One timestamped line on the backend's output (what a supervisor's journal keeps)."""
        stamp = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        self.out.write(f"{stamp} {message}\n")
        self.out.flush()

    def stop(self, reason: str, exit_code: int = 0) -> None:
        """End the loop after the current duty. Safe from a signal handler: it only sets
        fields and an event (the reason is logged by the loop, not here)."""
        if not self._stop.is_set():
            self._exit_code = exit_code
            self._stop_reason = reason
        self._stop.set()

    def poke(self, name: str) -> None:
        """Run duty ``name`` at the next turn of the loop rather than at its interval."""
        self._due[name] = 0.0

    def serve(self) -> int:
        """Register, run the duties until stopped, deregister; returns the exit code."""
        self._install_signals()
        switches = clock.testing_switches()
        queries.register_backend(self.store, {
            "id": self.id, "pid": os.getpid(), "host": HOST, "root": str(self.root),
            "started_at": clock.iso(datetime.now(UTC)), "heartbeat_real": time.time(),
            "sweep_interval": self.sweep_interval, "testing": " ".join(switches) or None})
        self.log(f"backend {self.id} started (pid {os.getpid()}); store {self.store.display}; "
                 f"sweep every {self.sweep_interval:g} s")
        for switch in switches:
            self.log(f"warning: testing switch {switch} is on; never use it in production")
        try:
            self._loop()
            self.log(f"stopping: {self._stop_reason}")
        finally:
            try:
                queries.remove_backend(self.store, self.id)
            except StoreCorrupt:  # said above; nothing more is written into it
                self.log("not deregistered: the store is damaged")
            except StoreError as error:  # a full or read-only store: the row goes stale, recovery copes
                self.log(f"could not deregister: {error}")
            except StoreUnavailable as error:  # the others will judge this backend by its heartbeat
                self.log(f"could not remove this backend's row: {error}")
            self.log(f"backend {self.id} stopped")
        return self._exit_code

    def _loop(self) -> None:
        self._due = {duty.name: 0.0 for duty in self.duties}  # every duty runs once at start
        while not self._stopping():
            for duty in self.duties:
                if time.monotonic() < self._due.get(duty.name, 0.0):
                    continue
                if self._stopping():
                    break
                try:
                    duty.run(self)
                except StoreCorrupt as error:  # no round can succeed now: stop where a supervisor sees it
                    self.log(f"{duty.name}: {error}")
                    self.stop("the store is damaged", int(ExitCode.FAILED))
                    break
                except StoreUnreachable as error:  # retried with back-off already: say so and leave (exit 5)
                    self.log(f"{duty.name}: {error}")
                    self.stop(f"the store is unreachable: {error}", int(ExitCode.ENVIRONMENT))
                    break
                except Exception as error:  # one failing round must not end the backend
                    self.log(f"{duty.name}: {type(error).__name__}: {error}")
                self._due[duty.name] = time.monotonic() + duty.interval(self)
            wait = min(self._due.values(), default=time.monotonic() + 0.5) - time.monotonic()
            self._stop.wait(min(max(wait, 0.005), 0.5))

    def _stopping(self) -> bool:
        """Whether to end the loop. ``runtime stop`` is read from the store before every
        duty that is due, not only by the heartbeat duty: between two beats, sweep and dispatch would
        otherwise go on claiming and starting work the user asked the backend to leave."""
        if not self._stop.is_set():
            try:
                reason = queries.stop_request(self.store, self.id)
            except StoreCorrupt as error:
                self.log(f"reading stop requests: {error}")
                self.stop("the store is damaged", int(ExitCode.FAILED))
                return True
            except Exception as error:  # as a failing duty: logged, and the heartbeat still beats
                self.log(f"reading stop requests: {type(error).__name__}: {error}")
                reason = None
            if reason is not None:
                self.stop(reason)
        return self._stop.is_set()

    def _install_signals(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # tests may serve from a thread; signals then stay with the main thread
        signal.signal(signal.SIGTERM, lambda *_: self.stop("SIGTERM"))
        signal.signal(signal.SIGINT, lambda *_: self.stop("SIGINT", int(ExitCode.INTERRUPTED)))
