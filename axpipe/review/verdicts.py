"""Reading a reviewer's final verdict from its output (DESIGN §9, §13 "Reviews").

A review counts only when its output ends with exactly one verdict line:

    VERDICT: no findings
    VERDICT: findings F1, F2

``stdout.txt`` (plain text) must end with that line. ``stdout.jsonl`` (an event stream) is
read event by event, and the verdict must be the last line of the **last text event**.
Everything else fails, on purpose: an empty or warning-only log, reasoning cut off before a
verdict, a verdict followed by more reasoning, a malformed verdict, two verdicts, an event
stream that reports an error or was cut mid-line.

Text events recognised in ``stdout.jsonl`` (one JSON object per line):

- ``{"type": "text", "text": "..."}``: axpipe's own format, for any CLI or script;
- ``{"type": "assistant", "message": {"content": [{"type": "text", "text": "..."}]}}``:
  Claude Code's ``--output-format stream-json`` (each text block is one text event);
- ``{"type": "item.completed", "item": {"type": "agent_message", "text": "..."}}``: Codex's
  ``exec --json``.

Other events (tool calls, reasoning, usage, results) are not text events. An event of type
``error`` or ``turn.failed``, or a ``result`` with ``"is_error": true``, fails the review.
"""

from __future__ import annotations

import json
import re
from typing import Any

from axpipe.records import record

FORMAT_HINT = "`VERDICT: no findings` or `VERDICT: findings <id>[, <id>...]`"
_NO_FINDINGS = re.compile(r"VERDICT: no findings")
_FINDINGS = re.compile(r"VERDICT: findings (\S.*)")
FINDING_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
# A line that *tries* to be a verdict, decorated or not (`**Verdict:**`, `> VERDICT -`): each
# one counts, so a second or malformed verdict is caught rather than ignored.
_VERDICT_LIKE = re.compile(r"^[\s>*_`#-]*verdict\b[\s*_`]*[:\-]", re.IGNORECASE)


class VerdictProblem(Exception):
    """The output does not end with exactly one well-formed verdict; the message says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@record(frozen=True)
class Verdict:
    """One final verdict: the finding ids it lists (none for "no findings")."""

    findings: tuple[str, ...]
    line: str

    @property
    def has_findings(self) -> bool:
        return bool(self.findings)

    def describe(self) -> str:
        return f"findings {', '.join(self.findings)}" if self.findings else "no findings"


def _verdict_lines(text: str) -> list[tuple[int, str]]:
    return [(number, line) for number, line in enumerate(text.splitlines(), start=1)
            if _VERDICT_LIKE.match(line)]


def _last_content_line(text: str) -> int:
    lines = text.splitlines()
    for index in range(len(lines), 0, -1):
        if lines[index - 1].strip():
            return index
    return 0


def parse_line(line: str) -> Verdict:
    """Parse one verdict line exactly (surrounding blanks allowed, nothing else)."""
    stripped = line.strip()
    if _NO_FINDINGS.fullmatch(stripped):
        return Verdict((), stripped)
    match = _FINDINGS.fullmatch(stripped)
    if match is None:
        raise VerdictProblem(f"malformed verdict line {stripped!r}; expected {FORMAT_HINT}")
    ids = [part.strip() for part in match.group(1).split(",")]
    bad = [item for item in ids if not FINDING_ID.fullmatch(item)]
    if bad:
        raise VerdictProblem(f"malformed finding id(s) {', '.join(repr(item) for item in bad)} in {stripped!r} "
                             "(ids are letters, digits, '.', '_', '-')")
    repeated = sorted({item for item in ids if ids.count(item) > 1})
    if repeated:
        raise VerdictProblem(f"finding id(s) listed twice in {stripped!r}: {', '.join(repeated)}")
    return Verdict(tuple(ids), stripped)


def parse_text(text: str) -> Verdict:
    """The verdict of a plain-text output: its last non-blank line, and the only verdict."""
    if not text.strip():
        raise VerdictProblem(f"the output is empty; expected it to end with {FORMAT_HINT}")
    found = _verdict_lines(text)
    if not found:
        raise VerdictProblem(f"no verdict line; the output must end with {FORMAT_HINT}")
    if len(found) > 1:
        where = ", ".join(f"line {number}" for number, _ in found)
        raise VerdictProblem(f"{len(found)} verdict lines ({where}); exactly one final verdict is allowed")
    number, line = found[0]
    last = _last_content_line(text)
    if number != last:
        raise VerdictProblem(f"the verdict on line {number} is not the last line: the output goes on to "
                             f"line {last} (continued or partial reasoning)")
    return parse_line(line)


def text_events(text: str) -> list[tuple[int, str]]:
    """The text events of a JSONL stream as ``(line number, text)``; raises VerdictProblem for a
    line that is not a JSON object or an event that reports an error."""
    events: list[tuple[int, str]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            event = json.loads(raw)
        except ValueError:
            raise VerdictProblem(f"line {number} is not valid JSON (was the stream cut off?)") from None
        if not isinstance(event, dict):
            raise VerdictProblem(f"line {number} is not a JSON object")
        error = _error_in(event)
        if error is not None:
            raise VerdictProblem(f"the event stream reports an error on line {number}: {error}")
        events.extend((number, piece) for piece in _texts_of(event))
    return events


def _error_in(event: dict[str, Any]) -> str | None:
    kind = event.get("type")
    if kind in ("error", "turn.failed") or (kind == "result" and event.get("is_error") is True):
        detail = event.get("message") or event.get("error") or event.get("result") or event.get("subtype")
        if isinstance(detail, dict):
            detail = detail.get("message", detail)
        return f"{kind}: {detail}" if detail else str(kind)
    return None


def _texts_of(event: dict[str, Any]) -> list[str]:
    kind = event.get("type")
    if kind == "text" and isinstance(event.get("text"), str):
        return [event["text"]]
    if kind == "assistant" and isinstance(event.get("message"), dict):
        content = event["message"].get("content")
        if isinstance(content, list):
            return [block["text"] for block in content
                    if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)]
    if kind == "item.completed" and isinstance(event.get("item"), dict):
        item = event["item"]
        if item.get("type") == "agent_message" and isinstance(item.get("text"), str):
            return [item["text"]]
    return []


def parse_jsonl(text: str) -> Verdict:
    """The verdict of an event stream: in its last text event, and the only one in any event."""
    if not text.strip():
        raise VerdictProblem(f"the event stream is empty; expected its last text event to end with {FORMAT_HINT}")
    events = text_events(text)
    if not events:
        raise VerdictProblem("the event stream has no text event (see docs/reviews.md for the event shapes read)")
    holders = [(number, line) for number, piece in events for line in
               (found for _, found in _verdict_lines(piece))]
    if not holders:
        raise VerdictProblem(f"no verdict line in any text event; the last one must end with {FORMAT_HINT}")
    if len(holders) > 1:
        where = ", ".join(f"line {number}" for number, _ in holders)
        raise VerdictProblem(f"{len(holders)} verdict lines in text events ({where}); exactly one final "
                             "verdict is allowed")
    last_number, last_text = events[-1]
    if holders[0][0] != last_number or not _verdict_lines(last_text):
        raise VerdictProblem(f"the verdict is in the text event on line {holders[0][0]}, not in the last text "
                             f"event (line {last_number}): the reviewer went on after it")
    return parse_text(last_text)


def parse_output(text: str, *, jsonl: bool) -> Verdict:
    """The verdict of ``stdout.jsonl`` (``jsonl=True``) or ``stdout.txt``."""
    return parse_jsonl(text) if jsonl else parse_text(text)
