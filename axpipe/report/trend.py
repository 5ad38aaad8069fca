"""The trend of checks passed over time, drawn as inline SVG (no script, no network).

One column per day: the grey bar is every check that ran that day, the green bar inside it
the ones that passed. Each column carries a ``<title>`` with its numbers, so the figure is
readable without hovering, by a screen reader and in the HTML source.
"""

from __future__ import annotations

from html import escape
from typing import Any

WIDTH, HEIGHT, TOP, BOTTOM = 640, 160, 12, 24
MAX_BAR = 36.0  # a few days must not draw slabs


def svg(days: list[dict[str, Any]]) -> str:
    """The figure for ``days`` (``[{day, passed, total}]``, oldest first); a note when there are none."""
    if not days:
        return '<p class="muted">No check has run yet.</p>'
    peak = max(day["total"] for day in days) or 1
    step = WIDTH / len(days)
    bar = min(max(step * 0.7, 1.0), MAX_BAR)
    usable = HEIGHT - TOP - BOTTOM
    parts = [f'<svg class="trend" role="img" aria-labelledby="trend-title" viewBox="0 0 {WIDTH} {HEIGHT}" '
             f'width="{WIDTH}" height="{HEIGHT}" xmlns="http://www.w3.org/2000/svg">',
             '<title id="trend-title">Checks passed per day</title>']
    for index, day in enumerate(days):
        x = index * step + (step - bar) / 2
        total_h = usable * day["total"] / peak
        passed_h = usable * day["passed"] / peak
        base = HEIGHT - BOTTOM
        label = escape(f"{day['day']}: {day['passed']} of {day['total']} passed")
        parts.append(f'<g><title>{label}</title>'
                     f'<rect class="ran" x="{x:.1f}" y="{base - total_h:.1f}" width="{bar:.1f}" '
                     f'height="{total_h:.1f}"/>'
                     f'<rect class="passed" x="{x:.1f}" y="{base - passed_h:.1f}" width="{bar:.1f}" '
                     f'height="{passed_h:.1f}"/></g>')
    first, last = escape(days[0]["day"]), escape(days[-1]["day"])
    parts.append(f'<text x="0" y="{HEIGHT - 6}">{first}</text>')
    if len(days) > 1:
        parts.append(f'<text x="{WIDTH}" y="{HEIGHT - 6}" text-anchor="end">{last}</text>')
    parts.append("</svg>")
    return "".join(parts)
