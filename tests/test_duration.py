from __future__ import annotations

import pytest

from axpipe.duration import DurationError, format_duration, parse_duration


@pytest.mark.parametrize(("text", "seconds"), [
    ("30s", 30), ("5m", 300), ("2h", 7200), ("1h30m", 5400), ("1d", 86400), ("90", 90),
    (45, 45), (1.5, 1.5), ("250ms", 0.25), (" 10M ", 600), ("1h0m5s", 3605),
])
def test_parses_durations(text: object, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "xx", "5 minutes", "m5", "5m1h", "1h1h", "-5", True, None, [1], "5x"])
def test_refuses_what_is_not_a_duration(text: object) -> None:
    with pytest.raises(DurationError):
        parse_duration(text)


def test_negative_numbers_are_refused() -> None:
    with pytest.raises(DurationError, match="negative"):
        parse_duration(-1)


@pytest.mark.parametrize(("seconds", "text"), [(30, "30s"), (90, "1m30s"), (86400, "1d"), (0, "0s"), (0.25, "250ms")])
def test_formats_durations(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text
