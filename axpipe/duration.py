"""Durations as recipes write them: ``30s``, ``5m``, ``2h``, ``1h30m``, ``1d`` or integer seconds."""

from __future__ import annotations

import re

_UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1, "ms": 0.001}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|d|h|m|s)")


class DurationError(ValueError):
    """A value that is not a duration; the message says what forms are accepted."""


def parse_duration(value: object) -> float:
    """Return the duration in seconds, or raise :class:`DurationError`.

    Integers (and integer strings) are seconds. Strings are one or more ``<number><unit>``
    parts in decreasing order, with units ``d``, ``h``, ``m``, ``s`` and ``ms``.
    """
    if isinstance(value, bool):
        raise DurationError(f"expected a duration such as 30s, 5m or 1h30m, got {value!r}")
    if isinstance(value, (int, float)):
        if value < 0:
            raise DurationError(f"a duration cannot be negative, got {value!r}")
        return float(value)
    if not isinstance(value, str):
        raise DurationError(f"expected a duration such as 30s, 5m or 1h30m, got {value!r}")
    text = value.strip().lower()
    if re.fullmatch(r"\d+", text):
        return float(text)
    position = 0
    total = 0.0
    last_unit_size = float("inf")
    for match in _PART.finditer(text):
        if match.start() != position:
            break
        size = _UNITS[match.group(2)]
        if size >= last_unit_size:
            raise DurationError(f"units must go from largest to smallest in {value!r}")
        last_unit_size = size
        total += float(match.group(1)) * size
        position = match.end()
    if position != len(text) or not text:
        raise DurationError(
            f"expected a duration such as 30s, 5m, 2h, 1h30m or integer seconds, got {value!r}"
        )
    return total


def format_duration(seconds: float) -> str:
    """Render seconds the way a recipe would write them (``90`` → ``1m30s``)."""
    if seconds < 1 and seconds > 0:
        return f"{round(seconds * 1000)}ms"
    remaining = round(seconds)
    if remaining == 0:
        return "0s"
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        count, remaining = divmod(remaining, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)
