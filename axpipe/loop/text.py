"""``axpipe loop status`` for a person: the running loop, or how the last one ended."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from axpipe.duration import format_duration

LIVES_IN_ITS_PROCESS = ("A loop lives only in the process that runs it: it ends with that process and is not "
                        "restarted. Durable schedules are scheduled tasks (axpipe schedule).")


def _what(loop: dict[str, Any]) -> str:
    if loop["command"] is not None:
        command = loop["command"]
        return "command `" + (" ".join(command) if isinstance(command, list) else str(command)) + "`"
    if loop["prompt"]:
        return f"prompt: {loop['prompt']}"
    return "the goal's work prompt"


def _counts(loop: dict[str, Any]) -> str:
    return f"runs {loop['runs']}/{loop['max_runs']}, busy-skips {loop['busy_skips']}"


def _drives(loop: dict[str, Any]) -> str:
    if loop["goal"]:
        return f"goal {loop['goal']} (session {loop['session']}), recipe {loop['recipe']}"
    return f"recipe {loop['recipe']} (no goal)"


def render_status(root: Path, current: dict[str, Any] | None, last: dict[str, Any] | None) -> str:
    """The text of ``loop status``."""
    lines: list[str] = []
    if current is not None:
        lines += [f"Loop {current['id']}: {current['state']}, pid {current['pid']} on {current['host']} "
                  f"since {current['started_at']}",
                  f"  every:     {format_duration(current['interval'])}",
                  f"  each tick: {_what(current)}",
                  f"  drives:    {_drives(current)}",
                  f"  counts:    {_counts(current)}"]
        if current["tick"] is not None:
            lines.append(f"  now:       tick {current['tick']['n']} running since {current['tick']['started_at']}")
        elif current["next_tick_at"]:
            lines.append(f"  next tick: {current['next_tick_at']}")
        elif current["last_tick"] is None:
            lines.append("  now:       starting: its run's probe and plan come before tick 1")
        if current["last_tick"] is not None:
            tick = current["last_tick"]
            lines.append(f"  last tick: {tick['n']} {tick['status']} at {tick['finished_at']}: {tick['summary']}")
        if current["stop_requested"]:
            lines.append(f"  stopping:  {current['stop_requested']}")
        lines.append(f"  {LIVES_IN_ITS_PROCESS}")
    else:
        lines.append(f"No loop is running in {root}.")
        if last is not None:
            when = f" at {last['ended_at']}" if last["ended_at"] else ""
            lines.append(f"  last loop {last['id']} {last['state']}{when}: {last['end_reason']} ({_counts(last)}; "
                         f"{_what(last)})")
        lines.append("  Start one with `axpipe loop start INTERVAL PROMPT` (or --command CMD).")
    return "\n".join(lines) + "\n"
