"""Reading a QA or judge verdict from the last event of its trace only."""

from __future__ import annotations

import json

import pytest

from axpipe.unit.trace_verdicts import read


def jsonl(*events: dict) -> str:
    return "\n".join(json.dumps(event) for event in events) + "\n"


def assistant(text: str) -> dict:
    return {"type": "assistant", "message": {"content": [{"type": "text", "text": text}]}}


def tool_result(text: str) -> dict:
    return {"type": "user", "message": {"content": [{"type": "tool_result", "content": text}]}}


@pytest.mark.parametrize("trace, role, expected", [
    pytest.param("Checked the page.\nqa: PASS\n", "qa", "PASS", id="text"),
    pytest.param("Checked.\n\n**qa: FAIL**\n\n", "qa", "FAIL", id="text-with-emphasis"),
    pytest.param("judge: REJECTED", "judge", "REJECTED", id="judge"),
    pytest.param(jsonl(assistant("Looking."), tool_result("ran it"), assistant("All good.\nqa: CANNOT_VERIFY")),
                 "qa", "CANNOT_VERIFY", id="claude-assistant"),
    pytest.param(jsonl(assistant("thinking"), {"type": "result", "result": "Done.\njudge: CONFIRMED",
                                               "is_error": False}), "judge", "CONFIRMED", id="claude-result"),
    pytest.param(jsonl({"type": "item.completed", "item": {"type": "agent_message", "text": "qa: PASS"}}),
                 "qa", "PASS", id="codex"),
    pytest.param(jsonl({"type": "text", "text": "qa: FAIL"}, {"type": "usage", "tokens": 5}), "qa", "FAIL",
                 id="axpipe-text-then-usage"),
])
def test_the_verdict_of_the_last_event(trace: str, role: str, expected: str) -> None:
    assert read(trace, role=role, jsonl=trace.startswith("{")).value == expected


def test_a_verdict_quoted_inside_tool_output_does_not_count() -> None:
    trace = jsonl(assistant("Asking the specialist."), tool_result("specialist says:\nqa: PASS"),
                  assistant("The specialist finished. I did not check the page myself."))
    verdict = read(trace, role="qa", jsonl=True)
    assert verdict.value is None
    assert verdict.problem is not None and "does not end with" in verdict.problem
    overruled = jsonl(tool_result("judge: CONFIRMED"), assistant("The fix is wrong.\njudge: REJECTED"))
    assert read(overruled, role="judge", jsonl=True).value == "REJECTED"


def test_a_verdict_in_an_earlier_event_does_not_count() -> None:
    trace = jsonl(assistant("qa: PASS"), assistant("Wait, one more thing to look at."))
    assert read(trace, role="qa", jsonl=True).value is None


@pytest.mark.parametrize("trace, problem", [
    ("", "the output is empty"),
    ("qa: PASS\nand then some more thoughts\n", "is not the last line of the last event"),
    ("qa: MAYBE\n", "malformed verdict 'qa: MAYBE'"),
    ("judge: CONFIRMED\n", "does not end with `qa: PASS` or `qa: FAIL` or `qa: CANNOT_VERIFY`"),
    ("QA: pass\n", "malformed verdict"),
])
def test_missing_and_malformed_verdicts_say_why(trace: str, problem: str) -> None:
    verdict = read(trace, role="qa", jsonl=False)
    assert verdict.value is None
    assert verdict.problem is not None and problem in verdict.problem


def test_a_stream_without_the_units_own_words_has_no_verdict() -> None:
    verdict = read(jsonl(tool_result("qa: PASS"), {"type": "result", "result": "qa: PASS", "is_error": True}),
                   role="qa", jsonl=True)
    assert verdict.value is None and "no event in the unit's own words" in (verdict.problem or "")
