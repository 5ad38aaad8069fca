"""Schedules in time zones: daily, weekly, cron and one-shot, across DST gaps and repeats
in Europe/Lisbon and America/New_York (2026: Lisbon 29 March / 25 October at 01:00 UTC;
New York 8 March / 1 November at 02:00 local)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from axpipe.schedule.timing import Schedule, ScheduleError, local_zone_name, parse

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def following(schedule: Schedule, start: str, count: int) -> list[str]:
    """The next ``count`` occurrences after ``start`` (UTC), as local ISO times of the zone."""
    found, moment = [], utc(start)
    for _ in range(count):
        nxt = schedule.next_after(moment)
        assert nxt is not None
        found.append(nxt.astimezone(schedule.zone).isoformat())
        moment = nxt
    return found


# -- daily ------------------------------------------------------------------------------


def test_daily_in_the_lisbon_spring_gap_fires_once_when_the_gap_ends() -> None:
    daily = parse("daily", "01:30", "Europe/Lisbon", now=NOW)
    assert following(daily, "2026-03-28T12:00", 3) == [
        "2026-03-29T02:00:00+01:00",  # 01:30 does not exist: 01:00 WET jumps to 02:00 WEST
        "2026-03-30T01:30:00+01:00",
        "2026-03-31T01:30:00+01:00",
    ]


def test_daily_in_the_lisbon_autumn_repeat_fires_once_at_the_first_pass() -> None:
    daily = parse("daily", "01:30", "Europe/Lisbon", now=NOW)
    assert following(daily, "2026-10-24T12:00", 3) == [
        "2026-10-25T01:30:00+01:00",  # 01:30 WEST; 01:30 WET an hour later is the same wall time: not again
        "2026-10-26T01:30:00+00:00",
        "2026-10-27T01:30:00+00:00",
    ]


def test_daily_in_the_new_york_spring_gap_fires_at_three() -> None:
    daily = parse("daily", "02:30", "America/New_York", now=NOW)
    assert following(daily, "2026-03-07T12:00", 3) == [
        "2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00", "2026-03-10T02:30:00-04:00"]


def test_daily_in_the_new_york_autumn_repeat_fires_once() -> None:
    daily = parse("daily", "01:30", "America/New_York", now=NOW)
    assert following(daily, "2026-10-31T12:00", 3) == [
        "2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00", "2026-11-03T01:30:00-05:00"]


def test_daily_keeps_local_time_across_the_change_so_utc_shifts() -> None:
    daily = parse("daily", "09:00", "America/New_York", now=NOW)
    before, after = daily.next_after(utc("2026-03-07T00:00")), daily.next_after(utc("2026-03-09T00:00"))
    assert (before, after) == (utc("2026-03-07T14:00"), utc("2026-03-09T13:00"))


def test_daily_starting_inside_the_repeated_hour_does_not_fire_the_second_pass() -> None:
    daily = parse("daily", "01:30", "America/New_York", now=NOW)
    # 05:40 UTC is 01:40 EDT, between the two passes of 01:30.
    assert daily.next_after(utc("2026-11-01T05:40")) == utc("2026-11-02T06:30")


# -- cron -------------------------------------------------------------------------------


def test_cron_with_every_hour_follows_real_time_through_the_lisbon_repeat() -> None:
    every_half_hour = parse("cron", "*/30 * * * *", "Europe/Lisbon", now=NOW)
    assert following(every_half_hour, "2026-10-24T23:50", 6) == [
        "2026-10-25T01:00:00+01:00", "2026-10-25T01:30:00+01:00",
        "2026-10-25T01:00:00+00:00", "2026-10-25T01:30:00+00:00",  # the repeated hour, in real time
        "2026-10-25T02:00:00+00:00", "2026-10-25T02:30:00+00:00"]


def test_cron_with_every_hour_skips_nothing_real_in_the_lisbon_gap() -> None:
    every_half_hour = parse("cron", "*/30 * * * *", "Europe/Lisbon", now=NOW)
    # 00:30 WET, then 02:00 WEST is 30 real minutes later: the nonexistent 01:xx collapse.
    assert following(every_half_hour, "2026-03-29T00:10", 3) == [
        "2026-03-29T00:30:00+00:00", "2026-03-29T02:00:00+01:00", "2026-03-29T02:30:00+01:00"]


def test_cron_for_fixed_hours_fires_each_wall_time_once_in_the_new_york_repeat() -> None:
    at_one = parse("cron", "*/20 1 * * *", "America/New_York", now=NOW)
    assert following(at_one, "2026-11-01T04:00", 4) == [
        "2026-11-01T01:00:00-04:00", "2026-11-01T01:20:00-04:00", "2026-11-01T01:40:00-04:00",
        "2026-11-02T01:00:00-05:00"]


def test_cron_for_fixed_hours_in_the_new_york_gap_fires_once_at_the_end_of_it() -> None:
    at_two = parse("cron", "15,45 2 * * *", "America/New_York", now=NOW)
    assert following(at_two, "2026-03-08T06:00", 3) == [
        "2026-03-08T03:00:00-04:00", "2026-03-09T02:15:00-04:00", "2026-03-09T02:45:00-04:00"]


def test_cron_every_half_hour_in_new_york_through_both_changes() -> None:
    every = parse("cron", "*/30 * * * *", "America/New_York", now=NOW)
    assert following(every, "2026-03-08T06:10", 3) == [
        "2026-03-08T01:30:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-08T03:30:00-04:00"]
    assert following(every, "2026-11-01T05:10", 4) == [
        "2026-11-01T01:30:00-04:00", "2026-11-01T01:00:00-05:00", "2026-11-01T01:30:00-05:00",
        "2026-11-01T02:00:00-05:00"]


def test_weekly_is_a_day_and_a_local_time() -> None:
    weekly = parse("weekly", "sun@01:30", "America/New_York", now=NOW)
    assert weekly.expression == "SUN@01:30"
    assert following(weekly, "2026-10-25T12:00", 2) == ["2026-11-01T01:30:00-04:00", "2026-11-08T01:30:00-05:00"]


def test_due_lists_every_occurrence_up_to_now_and_the_next_one() -> None:
    hourly = parse("cron", "0 * * * *", "UTC", now=NOW)
    found, capped, nxt = hourly.due(utc("2026-05-01T10:00"), utc("2026-05-01T13:30"), limit=100)
    assert [moment.hour for moment in found] == [10, 11, 12, 13]
    assert (capped, nxt) == (False, utc("2026-05-01T14:00"))


def test_due_stops_at_the_limit_and_still_finds_the_next_one() -> None:
    minutely = parse("cron", "* * * * *", "UTC", now=NOW)
    found, capped, nxt = minutely.due(utc("2026-05-01T00:00"), utc("2026-05-08T00:00:30"), limit=50)
    assert (len(found), capped, nxt) == (50, True, utc("2026-05-08T00:01"))


# -- one-shot ---------------------------------------------------------------------------


def test_at_without_offset_is_read_in_the_zone() -> None:
    once = parse("at", "2026-07-01T09:00", "Europe/Lisbon", now=NOW)
    assert once.expression == "2026-07-01T09:00:00+01:00"
    assert once.next_after(NOW) == utc("2026-07-01T08:00")
    assert once.next_after(utc("2026-07-01T08:00")) is None


def test_at_with_an_offset_keeps_its_instant_whatever_the_zone() -> None:
    once = parse("at", "2026-07-01T09:00+00:00", "America/New_York", now=NOW)
    assert once.next_after(NOW) == utc("2026-07-01T09:00")


@pytest.mark.parametrize(("kind", "expression", "tz", "message"), [
    ("cron", "0 0 31 2 *", "UTC", "'0 0 31 2 *' can never fire (no date matches it)"),
    ("cron", "0 0 30 2 *", "UTC", "'0 0 30 2 *' can never fire (no date matches it)"),
    ("cron", "* * * *", "UTC", "expected 5 fields (minute hour day-of-month month day-of-week), got 4 in '* * * *'"),
    ("cron", "0 0 * * * *", "UTC", "expected 5 fields (minute hour day-of-month month day-of-week), got 6 in "
                                   "'0 0 * * * *'"),
    ("cron", "@daily", "UTC", "expected 5 fields (minute hour day-of-month month day-of-week), got 1 in '@daily'"),
    ("cron", "61 * * * *", "UTC", "'61 * * * *' is not a valid cron expression: [61 * * * *] is not acceptable, "
                                  "out of range"),
    ("daily", "9:00", "UTC", "expected HH:MM (24-hour, two digits each), got '9:00'"),
    ("daily", "24:00", "UTC", "expected HH:MM (24-hour, two digits each), got '24:00'"),
    ("weekly", "MOX@09:00", "UTC", "expected DAY@HH:MM such as MON@09:00 (days: SUN, MON, TUE, WED, THU, FRI, "
                                   "SAT), got 'MOX@09:00'"),
    ("at", "2025-12-31T23:59", "UTC", "2025-12-31T23:59:00+00:00 is in the past (now is 2026-01-01T00:00:00+00:00 "
                                      "in UTC); a one-shot time must be in the future"),
    ("at", "next tuesday", "UTC", "expected an ISO date-time such as 2026-12-01T09:00 or 2026-12-01T09:00+01:00, "
                                  "got 'next tuesday'"),
    ("at", "2026-03-29T01:30", "Europe/Lisbon", "2026-03-29T01:30 does not exist in Europe/Lisbon (the clocks jump "
                                                "forward over it); give a time outside the gap or an explicit offset"),
    ("at", "2026-11-01T01:30", "America/New_York", "2026-11-01T01:30 happens twice in America/New_York (the clocks "
                                                   "go back); add an offset to say which one is meant"),
    ("daily", "09:00", "Mars/Olympus", "unknown IANA time zone 'Mars/Olympus' (for example Europe/Lisbon, "
                                       "America/New_York, UTC)"),
    ("daily", "09:00", "../etc/passwd", "unknown IANA time zone '../etc/passwd' (for example Europe/Lisbon, "
                                        "America/New_York, UTC)"),
])
def test_bad_schedules_are_refused_with_the_reason(kind: str, expression: str, tz: str, message: str) -> None:
    with pytest.raises(ScheduleError) as raised:
        parse(kind, expression, tz, now=NOW)
    assert str(raised.value) == message
    assert raised.value.field == ("tz" if "IANA" in message else "expression")


def test_the_local_zone_comes_from_tz(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "America/New_York")
    assert local_zone_name() == "America/New_York"
    assert parse("daily", "09:00", None, now=NOW).tz == "America/New_York"
    monkeypatch.setenv("TZ", "Not/AZone")
    assert local_zone_name() != "Not/AZone"
