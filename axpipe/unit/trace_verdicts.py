"""Reading the verdict a QA or judge unit must end with, from its trace (DESIGN §8).

A QA unit ends with ``qa: PASS``, ``qa: FAIL`` or ``qa: CANNOT_VERIFY``; a judge with
``judge: CONFIRMED`` or ``judge: REJECTED``. The verdict is read from the **last event**
of the unit's trace only, and must be that event's last non-blank line:

- ``*.txt`` traces: the output itself is the one event;
- ``*.jsonl`` traces: the last event that carries the unit's own words. Those are
  ``{"type": "text", "text": ...}`` (axpipe's format, for any script), Claude Code's
  assistant text blocks and its final ``{"type": "result", "result": ...}``, and Codex's
  ``agent_message`` items. Tool calls and tool results never count, so a verdict a
  specialist printed and the coordinator merely quoted (inside a tool result) is not the
  unit's verdict; neither is a verdict in an earlier message.

A missing or malformed verdict is reported with the reason; the caller treats it as no
progress. Surrounding Markdown emphasis (``**qa: PASS**``) is tolerated, nothing else.
"""

from __future__ import annotations

import json
import re
from typing import Any

from axpipe.records import record

VALUES = {"qa": ("PASS", "FAIL", "CANNOT_VERIFY"), "judge": ("CONFIRMED", "REJECTED")}
_DECORATION = "*_` \t"


@record(frozen=True)
class TraceVerdict:
    """A unit's verdict (``value``), or why there is none (``problem``)."""

    role: str
    value: str | None
    line: str | None = None
    problem: str | None = None

    def describe(self) -> str:
        return f"{self.role}: {self.value}" if self.value else f"no verdict ({self.problem})"


def format_hint(role: str) -> str:
    return " or ".join(f"`{role}: {value}`" for value in VALUES[role])


def _own_words(event: dict[str, Any]) -> str | None:
    """The text an event holds in the unit's own voice, or None (tool calls, results, usage)."""
    kind = event.get("type")
    if kind == "text" and isinstance(event.get("text"), str):
        return str(event["text"])
    if kind == "result" and isinstance(event.get("result"), str) and event.get("is_error") is not True:
        return str(event["result"])
    if kind == "assistant" and isinstance(event.get("message"), dict):
        content = event["message"].get("content")
        if isinstance(content, list):
            texts = [block["text"] for block in content if isinstance(block, dict) and block.get("type") == "text"
                     and isinstance(block.get("text"), str)]
            return "\n".join(texts) if texts else None
    if kind == "item.completed" and isinstance(event.get("item"), dict):
        item = event["item"]
        if item.get("type") == "agent_message" and isinstance(item.get("text"), str):
            return str(item["text"])
    return None


def last_event_text(trace: str, *, jsonl: bool) -> str | None:
    """The text of the trace's last event in the unit's own voice (the whole output for text)."""
    if not jsonl:
        return trace
    last = None
    for raw in trace.splitlines():
        if not raw.strip():
            continue
        try:
            event = json.loads(raw)
        except ValueError:
            continue  # a line that is not an event cannot be the unit's last word
        if isinstance(event, dict):
            words = _own_words(event)
            if words is not None:
                last = words
    return last


def read(trace: str, *, role: str, jsonl: bool) -> TraceVerdict:
    """The verdict a ``role`` unit's trace ends with."""
    hint = format_hint(role)
    text = last_event_text(trace, jsonl=jsonl)
    if text is None or not text.strip():
        where = "the trace has no event in the unit's own words" if jsonl else "the output is empty"
        return TraceVerdict(role, None, problem=f"{where}; it must end with {hint}")
    pattern = re.compile(rf"{re.escape(role)}\s*:\s*(\S+)", re.IGNORECASE)
    lines = [line.strip().strip(_DECORATION) for line in text.splitlines() if line.strip()]
    last = lines[-1]
    match = pattern.fullmatch(last)
    if match is None:
        earlier = [line for line in lines[:-1] if pattern.fullmatch(line)]
        if earlier:
            return TraceVerdict(role, None, problem=f"the verdict {earlier[-1]!r} is not the last line of the last "
                                                    f"event: the unit went on after it")
        return TraceVerdict(role, None, problem=f"the last event does not end with {hint} (it ends {last[:120]!r})")
    value = match.group(1)
    if value not in VALUES[role] or not last.startswith(role):
        return TraceVerdict(role, None, last, problem=f"malformed verdict {last!r}; expected {hint}")
    return TraceVerdict(role, value, last)
