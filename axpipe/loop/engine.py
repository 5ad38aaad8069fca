"""Loops (DESIGN §7): a tick at start, then one every ``interval``, until something stops them.

The engine knows nothing of goals; a tick is any ``Callable[[int], TickOutcome]`` (what a
tick does inside ``axpipe run`` is :mod:`axpipe.loop.run`). Its rules:

* A firing that comes while the previous tick still runs is a **busy-skip**: counted, never
  queued. A :class:`~axpipe.loop.ticker.Ticker` thread keeps time; ticks run on the calling thread.
* After ``max_runs`` ticks (at most :data:`HARD_CAP`) the loop stops with a warning.
* A loop lives only in the process that runs it. Its row in the store (heartbeat, pid,
  counters) is how other processes see it and leave it a stop request; :class:`Watch`
  beats and reads requests, and the loop reads its row itself before and after each tick
  (a beat may be late on a busy machine). A stop request ends the loop after its tick in
  progress; one marked *now* (``loop stop --now``, SIGTERM) also ends the tick's processes.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import sqlite3
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from axpipe import process
from axpipe.errors import ExitCode
from axpipe.loop.ticker import Ticker
from axpipe.records import record
from axpipe.run.events import EventLog
from axpipe.runtime.liveness import HOST
from axpipe.store import Store, now_iso
from axpipe.store import loops as queries
from axpipe.store.postgres import StoreUnavailable

HARD_CAP = 500


@record
class TickOutcome:
    """How one tick ended; ``stop`` ends the loop with that exit code."""

    status: str  # passed | failed | error | stopped | environment-not-ready | interrupted
    summary: str
    stop: ExitCode | None = None


@record
class LoopEnd:
    """Why a loop ended. ``stop`` is set when a tick ended it (the goal settled, say)."""

    reason: str
    runs: int
    busy_skips: int
    stop: ExitCode | None = None
    last: TickOutcome | None = None
    capped: bool = False
    requested: bool = False


def interrupted(interrupt: KeyboardInterrupt, runs: int, busy_skips: int) -> LoopEnd:
    """The end of a loop that ``interrupt`` ended, naming the signal.

    Ctrl-C raises a bare KeyboardInterrupt; axpipe's own handlers (SIGHUP and SIGTERM in
    pipeline.sigterm_interrupts) say which signal: "received SIGHUP"."""
    name = str(interrupt).removeprefix("received ") or "SIGINT"
    return LoopEnd(f"interrupted ({name})", runs, busy_skips, stop=ExitCode.INTERRUPTED)


def new_loop_id() -> str:
    return f"loop-{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def iso_in(seconds: float) -> str:
    """The wall-clock time ``seconds`` from now, as the store writes times."""
    moment = datetime.fromtimestamp(time.time() + max(seconds, 0.0), UTC)
    return moment.isoformat(timespec="microseconds").replace("+00:00", "Z")


class Watch(threading.Thread):
    """Beats for the loop and passes on stop requests, on a store connection of its own."""

    def __init__(self, store_path: Path | str, loop_id: str, runner: LoopRunner, every: float) -> None:
        super().__init__(name="axpipe-loop-watch", daemon=True)
        self.store_path, self.loop_id, self.runner, self.every = store_path, loop_id, runner, every
        self.done = threading.Event()

    def run(self) -> None:
        with Store(self.store_path) as store:
            while not self.done.wait(self.every):
                try:
                    present, reason, now = queries.beat(store, self.loop_id, now_real=time.time(),
                                                        busy_skips=self.runner.ticker.busy_skips)
                except (sqlite3.Error, StoreUnavailable):  # a long write lock, a lost server: beat next round
                    continue
                self.runner.take_request(present, reason, now)
                if self.runner.stop_now:  # a phase may start another process before it sees the stop
                    _terminate_children()


class LoopRunner:
    """Runs ``tick`` once per firing until it stops the loop, a stop is requested, or the cap."""

    def __init__(self, *, store: Store, events: EventLog, interval: float, max_runs: int,
                 tick: Callable[[int], TickOutcome], record: dict[str, Any], heartbeat: float) -> None:
        if not 1 <= max_runs <= HARD_CAP:
            raise ValueError(f"max_runs must be 1..{HARD_CAP}, got {max_runs}")
        if interval <= 0:
            raise ValueError(f"interval must be positive, got {interval}")
        self.store, self.events, self.max_runs, self.tick = store, events, max_runs, tick
        self.id = new_loop_id()
        self.ticker = Ticker(interval)
        self.record = record
        self.heartbeat = heartbeat
        self.runs = 0
        self.stop_reason: str | None = None
        self.stop_now = False
        self.ended: LoopEnd | None = None
        # Told the reason when a stop ends the tick's processes: what they leave is no failure
        # of the work (a goal's driver then judges nothing; axpipe.loop.run).
        self.on_stop_now: Callable[[str], None] | None = None
        self._watch: Watch | None = None
        self._restore: Callable[[], None] = lambda: None

    def request_stop(self, reason: str, *, now: bool = False) -> None:
        """Stop after the tick in progress (``now``: end its processes too). Safe from a
        signal handler: it sets fields and signals process groups, and takes no lock."""
        if self.stop_reason is None:
            self.stop_reason = reason
        if now and not self.stop_now:
            self.stop_now = True
            if self.on_stop_now is not None:
                self.on_stop_now(self.stop_reason or reason)
            _terminate_children()

    def take_request(self, present: bool, reason: str | None, now: bool) -> None:
        """Act on what the loop's row says (see :func:`axpipe.store.loops.beat`)."""
        if not present:
            self.request_stop("its record was removed from the store", now=True)
        elif reason:
            self.request_stop(reason, now=now)

    def _stop_recorded(self) -> bool:
        """Whether a stop is requested, reading the store now rather than waiting for the
        watch's next beat: a request recorded before a tick ends must stop the loop after
        that tick, however soon it ends."""
        try:
            self.take_request(*queries.pending_stop(self.store, self.id))
        except (sqlite3.Error, StoreUnavailable):  # a long write lock, a lost server: the watch passes it on
            pass
        return self.stop_reason is not None

    def register(self) -> None:
        """Make the loop visible and stoppable: its row, its heartbeat, SIGTERM as a stop.

        A loop run calls this as soon as it holds the checkout, before its probe and plan,
        so ``loop status`` shows it and ``loop stop`` (or a replacing ``loop start``) reaches
        it while they run; :meth:`run` honours a request left then before its first tick."""
        if self._watch is not None:
            return
        command = self.record.get("command")
        queries.insert_loop(self.store, {
            "id": self.id, **self.record, "command": None if command is None else json.dumps(command),
            "interval": self.ticker.interval, "max_runs": self.max_runs, "pid": os.getpid(), "host": _host(),
            "started_at": now_iso(), "heartbeat_real": time.time()})
        self._restore = self._on_sigterm()
        self._watch = Watch(self.store.path, self.id, self, self.heartbeat)
        self._watch.start()

    def stop_requested(self) -> bool:
        """Whether a stop is requested (read from the store now, not at the next beat)."""
        return self._stop_recorded()

    def run(self) -> LoopEnd:
        """Register (unless done), tick until stopped, record the end; a KeyboardInterrupt ends it too."""
        self.register()
        command = self.record.get("command")
        self.events.emit("loop.started", loop=self.id, interval=self.ticker.interval,
                         prompt=self.record.get("prompt"), command=command, max_runs=self.max_runs, pid=os.getpid(),
                         session=self.record.get("session_id"))
        end = LoopEnd("", 0, 0)
        try:
            self.ticker.begin()
            end = self._ticks()
        except KeyboardInterrupt as interrupt:
            end = interrupted(interrupt, self.runs, self.ticker.busy_skips)
            raise
        except BaseException as error:
            end = LoopEnd(f"ended by an error: {error}", self.runs, self.ticker.busy_skips, stop=ExitCode.FAILED)
            raise
        finally:
            self.finish(end)
        return end

    def finish(self, end: LoopEnd) -> None:
        """Record the loop's end (once): stop the ticker and the watch, give SIGTERM back."""
        if self.ended is not None:
            return
        self.ended = end
        self.ticker.close()
        if self._watch is not None:
            self._watch.done.set()
            self._watch.join(timeout=5.0)
        self._restore()
        queries.end_loop(self.store, self.id, at=now_iso(), reason=end.reason,
                         exit_code=None if end.stop is None else int(end.stop), runs=end.runs,
                         busy_skips=end.busy_skips)
        self.events.emit("loop.stopped", loop=self.id, reason=end.reason, runs=end.runs,
                         busy_skips=end.busy_skips, capped=end.capped)

    def _ticks(self) -> LoopEnd:
        last: TickOutcome | None = None
        while self.ticker.next_firing(lambda: self.stop_reason is not None):
            if self._stop_recorded():
                break
            number = self.runs + 1
            # The duration spans what the busy-skips are counted over (this read to done()),
            # not the store write and event after it, so the two figures agree.
            started = time.monotonic()
            skipped_before = self.ticker.busy_skips
            queries.tick_started(self.store, self.id, tick=number, at=now_iso(), busy_skips=skipped_before)
            self.events.emit("loop.tick_started", loop=self.id, tick=number, max_runs=self.max_runs,
                             busy_skips=skipped_before, firing=self.ticker.firing)
            last = self.tick(number)
            if self.stop_now:
                last = TickOutcome("interrupted", f"interrupted: {self.stop_reason}", last.stop)
            self.ticker.done()
            duration = time.monotonic() - started
            self.runs = number
            skips = self.ticker.busy_skips
            queries.tick_finished(self.store, self.id, tick=number, status=last.status, summary=last.summary,
                                  at=now_iso(), runs=self.runs, busy_skips=skips,
                                  next_tick_at=iso_in(self.ticker.seconds_to_next()))
            self.events.emit("loop.tick_finished", loop=self.id, tick=number, status=last.status,
                             summary=last.summary, duration=round(duration, 4), runs=self.runs,
                             busy_skips=skips, skipped_during=skips - skipped_before)
            if last.stop is not None and not self.stop_now:
                return LoopEnd(f"tick {number} ended the loop: {last.summary}", self.runs, skips, last.stop, last)
            if self._stop_recorded():
                break
            if self.runs >= self.max_runs:
                warning = (f"the loop reached its cap of {self.max_runs} runs and stopped"
                           + (f" (the hard cap is {HARD_CAP})" if self.max_runs == HARD_CAP else ""))
                self.events.emit("loop.cap_reached", loop=self.id, runs=self.runs, max_runs=self.max_runs,
                                 warning=warning)
                return LoopEnd(warning, self.runs, skips, last=last, capped=True)
        return LoopEnd(f"stopped: {self.stop_reason}", self.runs, self.ticker.busy_skips, last=last, requested=True)

    def _on_sigterm(self) -> Callable[[], None]:
        """SIGTERM (a supervisor stopping us) stops the loop now; returns how to undo that."""
        if threading.current_thread() is not threading.main_thread():
            return lambda: None
        previous = signal.signal(signal.SIGTERM, lambda *_: self.request_stop("SIGTERM", now=True))

        def restore() -> None:
            signal.signal(signal.SIGTERM, previous)

        return restore


def _terminate_children() -> None:
    """End every process group the tick started (from the watch thread or a signal handler)."""
    for _ in range(3):
        try:
            process.terminate_all()
            return
        except RuntimeError:  # the set of groups changed while it was read: read it again
            continue


def _host() -> str:
    return HOST
