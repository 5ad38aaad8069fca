"""The clock of a loop: a firing at start, then one every ``interval``.

A firing that comes while the loop's previous tick still runs is a **busy-skip**: counted,
never queued, so a slow tick cannot pile up work behind it. The ticker runs in a thread of
its own and never touches the store or the events (the loop's thread reads its counters);
the tick itself runs on the caller's thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class Ticker:
    """Fires at start, then every ``interval``; a firing while a tick is running is a busy-skip."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.start = time.monotonic()
        self.fired = 0
        self.busy_skips = 0
        self.firing = 0  # the number of the firing that started the latest tick
        self._busy = False
        self._pending = False
        self._closed = False
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="axpipe-loop-ticker", daemon=True)

    def begin(self) -> None:
        self.start = time.monotonic()
        self._thread.start()

    def _run(self) -> None:
        with self._cond:
            while not self._closed:
                left = self.start + self.fired * self.interval - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                # Every firing that has come: several at once after a suspended machine.
                due = max(self.fired + 1, int((time.monotonic() - self.start) // self.interval) + 1)
                while self.fired < due:
                    self.fired += 1
                    if self._busy:
                        self.busy_skips += 1
                    else:
                        self._busy = self._pending = True
                        self.firing = self.fired
                self._cond.notify_all()

    def next_firing(self, stopping: Callable[[], bool]) -> bool:
        """Wait for a firing: True to run a tick (the ticker is busy until :meth:`done`),
        False when ``stopping()`` says so first."""
        with self._cond:
            while not self._pending:
                if stopping() or self._closed:
                    return False
                self._cond.wait(0.05)
            self._pending = False
            return not stopping()

    def counts(self) -> tuple[int, int]:
        """``(firings so far, busy-skips so far)``, read together."""
        with self._cond:
            return self.fired, self.busy_skips

    def done(self) -> None:
        with self._cond:
            self._busy = False

    def seconds_to_next(self) -> float:
        with self._cond:
            return self.start + self.fired * self.interval - time.monotonic()

    def wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout=1.0)
