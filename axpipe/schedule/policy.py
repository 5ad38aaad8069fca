"""What a finished run does to its task: failures in a row back off, then pause the task.

After the *n*-th consecutive failure the task does not fire again before
``60 s * 2^(n-1)`` (capped at one hour) has passed; occurrences inside that window are
recorded as skipped with the reason. The fifth failure in a row pauses the task, and the
run that caused it says so. A success resets the count; a cancelled run changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from axpipe.clock import iso, short_iso
from axpipe.duration import format_duration

BACKOFF_START = 60.0
BACKOFF_MAX = 3600.0
PAUSE_AFTER = 5


def backoff_seconds(failures: int) -> float:
    """How long the task waits after ``failures`` consecutive failures (60 s doubling to 1 h)."""
    return float(min(BACKOFF_START * 2 ** max(failures - 1, 0), BACKOFF_MAX))


def after_run(now: datetime) -> Callable[[dict[str, Any], str], tuple[dict[str, Any], str]]:
    """A :data:`axpipe.store.schedule.TaskPolicy` for a run that ended at ``now``."""

    def policy(task: dict[str, Any], status: str) -> tuple[dict[str, Any], str]:
        if status == "succeeded":
            return {"consecutive_failures": 0, "backoff_until": None}, ""
        if status != "failed":
            return {}, ""
        failures = int(task["consecutive_failures"]) + 1
        if failures >= PAUSE_AFTER and task["status"] == "active":
            reason = f"paused after {failures} consecutive failures"
            return ({"consecutive_failures": failures, "backoff_until": None, "status": "paused",
                     "status_reason": reason, "next_run": None},
                    f"{failures} consecutive failures: task paused (`axpipe schedule resume {task['id']}` "
                    "to start it again)")
        wait = backoff_seconds(failures)
        until = now + timedelta(seconds=wait)
        noun = "failure" if failures == 1 else "failures"
        return ({"consecutive_failures": failures, "backoff_until": iso(until)},
                f"{failures} consecutive {noun}: backing off {format_duration(wait)}, "
                f"until {short_iso(until)}")

    return policy
