"""What the coding CLIs report about a turn: usage (tokens, cost), usage limits, failures.

Each reader takes the turn's output as axpipe saw it through the pty (CR line ends, ANSI
colour, banners between the JSON lines) and returns an :class:`AgentReport`. The shapes
are the ones the pinned programs print (docs/agents.md; the fixtures under
``tests/agent_outputs/`` name where each came from):

- claude-code ``--output-format stream-json``: the last ``result`` object's ``modelUsage``
  and ``total_cost_usd``; ``api_error == "usage_limit_reached"`` with ``resetsAt`` (epoch s)
  in a ``rate_limit_event`` or an assistant message's ``api_error_params``; any 429.
- codex ``exec --json``: ``turn.completed.usage`` (tokens only: codex reports no cost);
  ``You've hit your usage limit … try again at <local time>`` in ``error`` / ``turn.failed``.
- gemini-cli ``--output-format stream-json``: the ``result`` object's ``stats`` (tokens only);
  a quota message in ``result.error.message``, ``Suggested retry after Ns`` when it says so.
- aider: ``message_send`` events of its ``--analytics-log`` (tokens and cost); a
  ``litellm.RateLimitError`` as the last error (aider exits 0 after it) and no reset time.

Usage that cannot be read is None, never zero: the budget then knows it was not told.
"""

from __future__ import annotations

import json
import re
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from axpipe.interfaces import Usage
from axpipe.records import record

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")


@record
class AgentReport:
    """What a turn's output said beyond its exit code."""

    usage: Usage | None = None
    limit: str | None = None  # the usage-limit message, when the program hit its limit
    resets: str | None = None  # when it resets, as the program said it
    resets_at: float | None = None  # ... as epoch seconds, when that could be read
    failure: str | None = None  # an error the program reported while exiting 0 (aider)


def json_lines(output: str) -> list[dict[str, Any]]:
    """Every JSON object printed on a line of its own, in order; other lines skipped."""
    found = []
    for line in _ANSI.sub("", output).replace("\r", "").splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                found.append(value)
    return found


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _cost(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else None


# -- claude-code ---------------------------------------------------------------------------

_CLAUDE_LIMIT_TEXT = re.compile(r"You[\u2019']ve hit your (?P<limit>[^·\n]+?) · resets (?P<resets>[^·\n\"]+)")


def claude_code(output: str) -> AgentReport:
    events = json_lines(output)
    results = [event for event in events if event.get("type") == "result"]
    usage = None
    if results:
        result = results[-1]
        models = result.get("modelUsage")
        if isinstance(models, dict) and models:
            # modelUsage, not usage: an error result (max budget) has a zeroed `usage`
            tokens_in = sum(_int(m.get(key)) for m in models.values() if isinstance(m, dict)
                            for key in ("inputTokens", "cacheReadInputTokens", "cacheCreationInputTokens"))
            tokens_out = sum(_int(m.get("outputTokens")) for m in models.values() if isinstance(m, dict))
        else:
            raw: dict[str, Any] = result["usage"] if isinstance(result.get("usage"), dict) else {}
            tokens_in = sum(_int(raw.get(key)) for key in ("input_tokens", "cache_read_input_tokens",
                                                            "cache_creation_input_tokens"))
            tokens_out = _int(raw.get("output_tokens"))
        usage = Usage(tokens_in, tokens_out, _cost(result.get("total_cost_usd")))
    limit = resets = None
    resets_at: float | None = None
    for event in events:
        info = event.get("rate_limit_info")
        params = event.get("api_error_params")
        if isinstance(params, dict) and isinstance(params.get("rate_limit_info"), dict):
            info = params["rate_limit_info"]
        if isinstance(info, dict) and info.get("status") == "rejected" and _int(info.get("resetsAt")):
            resets_at = float(info["resetsAt"])
    if results and (results[-1].get("api_error") == "usage_limit_reached"
                    or results[-1].get("api_error_status") == 429):
        limit = str(results[-1].get("result") or "usage limit reached")
    text = _CLAUDE_LIMIT_TEXT.search(output)
    if text is not None:
        limit, resets = limit or text.group(0), text.group("resets").strip()
    if limit is None:
        resets_at = None
    elif resets is None and resets_at is not None:
        resets = datetime.fromtimestamp(resets_at).astimezone().isoformat(timespec="minutes")
    failure = None
    if limit is None and results and results[-1].get("is_error") is True:  # it exits 1 then too
        failure = str(results[-1].get("result") or results[-1].get("subtype") or "claude reported an error")
    return AgentReport(usage=usage, limit=limit, resets=resets, resets_at=resets_at, failure=failure)


# -- codex ---------------------------------------------------------------------------------

_CODEX_LIMIT = re.compile(r"You[\u2019']ve hit your usage limit\.[^\n\"]*?(?:[Tt]ry again at (?P<resets>[^.\"]+)\.|"
                          r"[Tt]ry again later\.|$)")


def codex(output: str, zone: str = "UTC", now: float | None = None) -> AgentReport:
    """``zone``: the TZ codex ran with, in which it prints the reset time."""
    events = json_lines(output)
    turns = [event["usage"] for event in events
             if event.get("type") == "turn.completed" and isinstance(event.get("usage"), dict)]
    usage = None
    if turns:  # input_tokens holds the cached part; output_tokens the reasoning part
        usage = Usage(sum(_int(u.get("input_tokens")) for u in turns), sum(_int(u.get("output_tokens")) for u in turns))
    messages = [str(event.get("message") or (event.get("error") or {}).get("message") or "") for event in events
                if event.get("type") in ("error", "turn.failed")]
    for message in reversed(messages):
        match = _CODEX_LIMIT.search(message)
        if match:
            resets = match.group("resets")
            return AgentReport(usage=usage, limit=message.strip(), resets=resets,
                               resets_at=codex_reset_time(resets, zone, now) if resets else None)
    return AgentReport(usage=usage)


def codex_reset_time(text: str, zone: str, now: float | None = None) -> float | None:
    """``7:41 PM`` (the next such time) or ``Dec 10th, 2026 6:51 PM`` in ``zone``, as epoch s."""
    tz = ZoneInfo(zone)
    current = datetime.fromtimestamp(time.time() if now is None else now, tz)
    text = re.sub(r"(\d)(st|nd|rd|th),", r"\1,", text.strip())
    for pattern in ("%b %d, %Y %I:%M %p", "%I:%M %p"):
        try:
            parsed = datetime.strptime(text, pattern)
        except ValueError:
            continue
        if pattern == "%I:%M %p":
            moment = current.replace(hour=parsed.hour, minute=parsed.minute, second=0, microsecond=0)
            if moment < current:
                moment += timedelta(days=1)
        else:
            moment = parsed.replace(tzinfo=tz)
        return moment.timestamp()
    return None


# -- gemini-cli ----------------------------------------------------------------------------

_GEMINI_QUOTA = re.compile(r"exhausted your daily quota|Suggested retry after \d+s|RESOURCE_EXHAUSTED|"
                           r"exceeded your current quota|TerminalQuotaError")
_GEMINI_RETRY = re.compile(r"Suggested retry after (\d+)s")


def gemini_cli(output: str, now: float | None = None) -> AgentReport:
    results = [event for event in json_lines(output) if event.get("type") == "result"]
    if not results:
        return AgentReport()
    result = results[-1]
    stats = result.get("stats") if isinstance(result.get("stats"), dict) else None
    usage = None
    if stats is not None:  # total counts thinking tokens, billed as output; output_tokens does not
        tokens_in = _int(stats.get("input_tokens"))
        usage = Usage(tokens_in, max(_int(stats.get("total_tokens")) - tokens_in, _int(stats.get("output_tokens"))))
    error: dict[str, Any] = result["error"] if isinstance(result.get("error"), dict) else {}
    message = str(error.get("message") or "")
    if result.get("status") == "error" and _GEMINI_QUOTA.search(message):
        retry = _GEMINI_RETRY.search(message)
        resets_at = (time.time() if now is None else now) + int(retry.group(1)) if retry else None
        return AgentReport(usage=usage, limit=message.strip(), resets=f"in {retry.group(1)} s" if retry else None,
                           resets_at=resets_at)
    failure = message.strip() or None if result.get("status") == "error" else None
    return AgentReport(usage=usage, failure=failure)


# -- aider ---------------------------------------------------------------------------------

_AIDER_LIMIT = re.compile(r"litellm\.RateLimitError[^\n]*|The API provider has rate limited you[^\n]*")
_AIDER_ERROR = re.compile(r"litellm\.\w+Error[^\n]*")


def aider(output: str, analytics_log: Path) -> AgentReport:
    """Usage from aider's analytics log (``--analytics-log``), exact where its printed
    ``Tokens: 1.2k sent`` line is rounded; limits and errors from its text."""
    usage = None
    try:
        lines = analytics_log.read_text(encoding="utf-8").splitlines()
    except OSError:
        lines = []
    sends = [event.get("properties") or {} for event in json_lines("\n".join(lines))
             if event.get("event") == "message_send"]
    if lines:
        costs = [_cost(item.get("total_cost")) for item in sends]
        usage = Usage(sum(_int(item.get("prompt_tokens")) for item in sends),
                      sum(_int(item.get("completion_tokens")) for item in sends),
                      costs[-1] if costs and costs[-1] is not None else (0.0 if not sends else None))
    text = _ANSI.sub("", output).replace("\r", "")
    errors = list(_AIDER_ERROR.finditer(text))
    last = errors[-1] if errors else None
    if last is not None and last.group(0).startswith("litellm.RateLimitError"):
        return AgentReport(usage=usage, limit=last.group(0).strip())
    # aider exits 0 whatever the provider answered: its last error is the turn's failure
    # unless a reply came after it
    failure = last.group(0).strip() if last is not None and not _replied_after(text, last.end()) else None
    return AgentReport(usage=usage, failure=failure)


def _replied_after(text: str, position: int) -> bool:
    return re.search(r"^Tokens: [\d.k]+ sent", text[position:], re.MULTILINE) is not None
