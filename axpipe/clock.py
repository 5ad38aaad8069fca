"""Schedule time, liveness timings and the two documented testing switches.

Schedule time ("when is an occurrence due") comes from :func:`now`. Liveness (heartbeats,
how long a backend may stay silent) always uses the real wall clock, because it is about
processes, not schedules.

Testing switches, never on by default (docs/schedules.md):

* ``AXPIPE_TESTING_CLOCK=FILE``: every axpipe process reads the current schedule time
  from ``FILE`` (one ISO 8601 instant with an offset). Tests move time by rewriting the
  file, so DST transitions, downtime and back-off can be crossed in seconds while the
  processes, the store and the claims stay real.
* ``AXPIPE_TESTING_FAST=1``: short liveness timings and sweep intervals below one second.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import NamedTuple

CLOCK_ENV = "AXPIPE_TESTING_CLOCK"
FAST_ENV = "AXPIPE_TESTING_FAST"


class ClockError(ValueError):
    """The testing clock file is missing or does not hold an instant."""


def now() -> datetime:
    """The current schedule time, timezone-aware in UTC."""
    path = os.environ.get(CLOCK_ENV)
    if not path:
        return datetime.now(UTC)
    try:
        text = open(path, encoding="utf-8").read().strip()  # noqa: SIM115 - tiny file, read once
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (OSError, ValueError) as error:
        raise ClockError(f"{CLOCK_ENV}={path}: cannot read an ISO instant ({error})") from error
    if value.tzinfo is None:
        raise ClockError(f"{CLOCK_ENV}={path}: the instant {text!r} needs an offset (Z or +HH:MM)")
    return value.astimezone(UTC)


def iso(value: datetime) -> str:
    """The fixed-width UTC text the store keeps (``2026-03-29T01:30:00.000000Z``)."""
    return value.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def short_iso(value: datetime) -> str:
    """UTC to the second, as ``--json`` output shows it (``2026-03-29T01:30:00Z``)."""
    return value.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def parse_iso(text: str) -> datetime:
    """Read back a value written by :func:`iso`."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def fast() -> bool:
    """Whether ``AXPIPE_TESTING_FAST`` is on."""
    return os.environ.get(FAST_ENV, "") not in ("", "0")


def testing_switches() -> list[str]:
    """The testing switches that are on, as ``NAME=value`` (shown by the backend)."""
    return [f"{name}={os.environ[name]}" for name in (CLOCK_ENV, FAST_ENV)
            if os.environ.get(name, "") not in ("", "0")]


class Timings(NamedTuple):
    """How often the backend and launchers report, and when silence means death (seconds).

    A NamedTuple rather than a dataclass: ``loop status`` and ``runtime status`` read it,
    and ``dataclasses`` (with the ``inspect`` it imports) is ~8 ms of their start-up."""

    heartbeat: float
    stale_after: float
    start_timeout: float
    request_poll: float
    min_sweep_interval: float


NORMAL = Timings(heartbeat=2.0, stale_after=15.0, start_timeout=60.0, request_poll=0.25,
                 min_sweep_interval=1.0)
FAST = Timings(heartbeat=0.1, stale_after=1.5, start_timeout=5.0, request_poll=0.05,
               min_sweep_interval=0.05)


def timings() -> Timings:
    return FAST if fast() else NORMAL
