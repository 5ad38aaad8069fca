"""When a scheduled task fires: one-shot ``at``, ``daily``, ``weekly`` and 5-field ``cron``,
each read in an IANA time zone, with daylight-saving transitions handled one documented way.

``daily HH:MM`` and ``weekly DAY@HH:MM`` are cron expressions underneath, so the three
recurring kinds share one engine (croniter over ``zoneinfo``). The DST rules:

* **Gap** (clocks jump forward, the local time does not exist): the occurrence fires once,
  at the instant the gap ends (02:30 on a day New York jumps 02:00→03:00 fires at 03:00).
* **Repeat** (clocks go back, the local time happens twice): an expression for fixed
  hours fires once, at the first of the two (a daily 01:30 runs once, not twice). An
  expression whose hour field is ``*`` follows real time and fires in both passes (an
  every-30-minutes task keeps its rhythm through the extra hour).

A one-shot ``at`` without an offset is read in the zone; a local time that does not exist
or exists twice there is refused, because guessing which instant was meant is unsafe.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from functools import cached_property, lru_cache
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from axpipe.records import record

KINDS = ("at", "daily", "weekly", "cron")
DAYS = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")
_HHMM = r"([01]\d|2[0-3]):([0-5]\d)"
# The one place for the two shapes (recipe rules check entries with them too)
DAILY_PATTERN = re.compile(rf"^{_HHMM}$")
WEEKLY_PATTERN = re.compile(rf"^({'|'.join(DAYS)})@{_HHMM}$", re.IGNORECASE)


class ScheduleError(ValueError):
    """A schedule that cannot be used; the message says why. ``field`` is ``tz`` or
    ``expression``, so the caller can name the flag or recipe key at fault."""

    def __init__(self, message: str, *, field: str = "expression") -> None:
        super().__init__(message)
        self.field = field


def local_zone_name() -> str:
    """The IANA name of this machine's zone (``TZ``, then ``/etc/localtime``), else ``UTC``."""
    candidates = [os.environ.get("TZ", "").lstrip(":")]
    try:
        target = os.readlink("/etc/localtime")
        candidates.append(target.split("zoneinfo/", 1)[1] if "zoneinfo/" in target else "")
    except OSError:
        pass
    for name in candidates:
        if name and _zone_or_none(name) is not None:
            return name
    return "UTC"


def _zone_or_none(name: str) -> ZoneInfo | None:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


def zone(name: str) -> ZoneInfo:
    """The zone called ``name``, or ScheduleError."""
    found = _zone_or_none(name) if name else None
    if found is None:
        raise ScheduleError(f"unknown IANA time zone {name!r} (for example Europe/Lisbon, America/New_York, UTC)",
                            field="tz")
    return found


@record(frozen=True)
class Schedule:
    """A validated schedule. ``expression`` is normalised (``MON@09:00``, an ``at`` with its offset)."""

    kind: str
    expression: str
    tz: str

    def describe(self) -> str:
        return f"{self.kind} {self.expression}"

    @cached_property
    def zone(self) -> ZoneInfo:
        return zone(self.tz)

    @cached_property
    def cron(self) -> str:
        """The cron expression behind a recurring kind."""
        if self.kind == "daily":
            hours, minutes = self.expression.split(":")
            return f"{int(minutes)} {int(hours)} * * *"
        if self.kind == "weekly":
            day, clock = self.expression.split("@")
            hours, minutes = clock.split(":")
            return f"{int(minutes)} {int(hours)} * * {DAYS.index(day.upper())}"
        return self.expression

    @cached_property
    def _iterator(self) -> Any:
        # Building a croniter parses the expression (most of its cost); one per schedule is
        # reused by moving its current time (set_current), which is all get_next reads.
        from croniter import croniter

        return croniter(self.cron, datetime.now(self.zone))

    @cached_property
    def _every_hour(self) -> bool:
        hours: list[Any] = self._iterator.expanded[1]
        return hours == ["*"] or len(set(hours)) == 24

    def next_after(self, instant: datetime) -> datetime | None:
        """The first occurrence strictly after ``instant`` (UTC), or None when there is none."""
        if self.kind == "at":
            at = datetime.fromisoformat(self.expression).astimezone(UTC)
            return at if at > instant else None
        after = instant.astimezone(UTC)
        iterator = self._iterator
        iterator.set_current(after.astimezone(self.zone), force=True)
        for _ in range(10_000):  # croniter may step back into a repeated hour; never loop forever
            candidate: datetime = iterator.get_next(datetime)
            moment = candidate.astimezone(UTC)
            if moment <= after:
                continue
            if not self._every_hour and _second_pass(candidate, self.zone):
                continue
            return moment
        raise ScheduleError(f"{self.describe()}: no next occurrence found after {after.isoformat()}")

    def due(self, first: datetime, now: datetime, limit: int) -> tuple[list[datetime], bool, datetime | None]:
        """Occurrences from ``first`` (a due one) up to ``now``, at most ``limit`` of them.

        Returns the occurrences, whether the limit cut the list, and the next occurrence
        after ``now``.
        """
        found = [first]
        following = self.next_after(first)
        while following is not None and following <= now:
            if len(found) >= limit:
                return found, True, self.next_after(now)
            found.append(following)
            following = self.next_after(following)
        return found, False, following


@lru_cache(maxsize=4096)
def schedule_of(kind: str, expression: str, tz: str) -> Schedule:
    """A stored schedule, shared per process so its parsed cron expression is reused.

    Not for threads: a schedule's iterator is moved by each ``next_after``.
    """
    return Schedule(kind, expression, tz)


def _second_pass(candidate: datetime, where: ZoneInfo) -> bool:
    """Whether ``candidate`` is the later of two instants sharing its local wall time."""
    wall = candidate.replace(tzinfo=None)
    first = wall.replace(tzinfo=where, fold=0).astimezone(UTC)
    second = wall.replace(tzinfo=where, fold=1).astimezone(UTC)
    if first == second or not _exists(wall, where):
        return False
    return candidate.astimezone(UTC) == max(first, second)


def _exists(wall: datetime, where: ZoneInfo) -> bool:
    """Whether the local wall time happens at all (it does not inside a DST gap)."""
    return wall.replace(tzinfo=where).astimezone(UTC).astimezone(where).replace(tzinfo=None) == wall


def parse(kind: str, expression: str, tz: str | None, *, now: datetime, check_past: bool = True) -> Schedule:
    """Validate a schedule as a person wrote it; raise ScheduleError saying what is wrong.

    ``tz`` None means this machine's zone. ``now`` decides whether an ``at`` is in the past
    (unless ``check_past`` is false: a recipe re-registering a task that already fired).
    """
    if kind not in KINDS:
        raise ScheduleError(f"unknown schedule kind {kind!r}; use one of {', '.join(KINDS)}")
    zone_name = tz if tz is not None else local_zone_name()
    where = zone(zone_name)
    text = expression.strip() if isinstance(expression, str) else expression
    if not isinstance(text, str) or not text:
        raise ScheduleError(f"expected a {kind} value, got {expression!r}")
    if kind == "daily":
        if not DAILY_PATTERN.match(text):
            raise ScheduleError(f"expected HH:MM (24-hour, two digits each), got {expression!r}")
        return Schedule(kind, text, zone_name)
    if kind == "weekly":
        if not WEEKLY_PATTERN.match(text):
            raise ScheduleError(f"expected DAY@HH:MM such as MON@09:00 (days: {', '.join(DAYS)}), "
                                f"got {expression!r}")
        return Schedule(kind, text.upper(), zone_name)
    if kind == "cron":
        return Schedule(kind, _cron(text, where, now), zone_name)
    schedule = Schedule(kind, _at(text, where, zone_name), zone_name)
    if check_past:
        refuse_past(schedule, now)
    return schedule


def refuse_past(schedule: Schedule, now: datetime) -> None:
    """ScheduleError when a one-shot ``at`` is not in the future."""
    if schedule.kind == "at" and schedule.next_after(now) is None:
        shown = now.astimezone(schedule.zone).isoformat(timespec="seconds")
        raise ScheduleError(f"{schedule.expression} is in the past (now is {shown} in {schedule.tz}); "
                            "a one-shot time must be in the future")


def _cron(text: str, where: ZoneInfo, now: datetime) -> str:
    from croniter import CroniterBadDateError, CroniterError, croniter

    fields = text.split()
    if len(fields) != 5:
        raise ScheduleError(f"expected 5 fields (minute hour day-of-month month day-of-week), got "
                            f"{len(fields)} in {text!r}")
    normalised = " ".join(fields)
    try:
        iterator = croniter(normalised, now.astimezone(where))
    except (CroniterError, ValueError, KeyError) as error:
        raise ScheduleError(f"{text!r} is not a valid cron expression: {error}") from None
    try:
        iterator.get_next(datetime)
    except CroniterBadDateError:
        raise ScheduleError(f"{text!r} can never fire (no date matches it)") from None
    return normalised


def _at(text: str, where: ZoneInfo, zone_name: str) -> str:
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise ScheduleError(f"expected an ISO date-time such as 2026-12-01T09:00 or "
                            f"2026-12-01T09:00+01:00, got {text!r}") from None
    if value.tzinfo is None:
        if not _exists(value, where):
            raise ScheduleError(f"{text} does not exist in {zone_name} (the clocks jump forward over it); "
                                "give a time outside the gap or an explicit offset")
        first = value.replace(tzinfo=where, fold=0)
        if first.utcoffset() != value.replace(tzinfo=where, fold=1).utcoffset():
            raise ScheduleError(f"{text} happens twice in {zone_name} (the clocks go back); "
                                "add an offset to say which one is meant")
        value = first
    return value.astimezone(where).isoformat()
