"""Reading the one final verdict of a reviewer's output (text and JSONL event streams)."""

from __future__ import annotations

import json

import pytest

from axpipe import templates
from axpipe.review.verdicts import Verdict, VerdictProblem, parse_jsonl, parse_line, parse_text


def jsonl(*events: dict) -> str:
    return "".join(json.dumps(event) + "\n" for event in events)


def text_event(text: str) -> dict:
    return {"type": "text", "text": text}


@pytest.mark.parametrize(("output", "findings"), [
    ("Looked at 3 files.\nVERDICT: no findings\n", ()),
    ("F1: off by one in loop\nF2: unchecked None\n\nVERDICT: findings F1, F2\n\n", ("F1", "F2")),
    ("VERDICT: findings bug-1.a\n", ("bug-1.a",)),
    ("  VERDICT: no findings  ", ()),
])
def test_a_final_verdict_line_is_read(output: str, findings: tuple[str, ...]) -> None:
    verdict = parse_text(output)
    assert verdict.findings == findings
    assert verdict.has_findings is bool(findings)


@pytest.mark.parametrize(("output", "message"), [
    ("", "the output is empty; expected it to end with `VERDICT: no findings` or "
         "`VERDICT: findings <id>[, <id>...]`"),
    ("warning: rate limited, retrying\nwarning: model overloaded\n",
     "no verdict line; the output must end with `VERDICT: no findings` or `VERDICT: findings <id>[, <id>...]`"),
    ("Let me look at the diff. First, the loop in calc.py\n",
     "no verdict line; the output must end with `VERDICT: no findings` or `VERDICT: findings <id>[, <id>...]`"),
    ("VERDICT: no findings\nActually, wait: line 12 looks wrong.\n",
     "the verdict on line 1 is not the last line: the output goes on to line 2 (continued or partial reasoning)"),
    ("VERDICT: findings F1\nVERDICT: no findings\n",
     "2 verdict lines (line 1, line 2); exactly one final verdict is allowed"),
    ("**Verdict:** looks good\nVERDICT: no findings\n",
     "2 verdict lines (line 1, line 2); exactly one final verdict is allowed"),
    ("VERDICT: no findings.\n",
     "malformed verdict line 'VERDICT: no findings.'; expected `VERDICT: no findings` or "
     "`VERDICT: findings <id>[, <id>...]`"),
    ("Verdict: no findings\n",
     "malformed verdict line 'Verdict: no findings'; expected `VERDICT: no findings` or "
     "`VERDICT: findings <id>[, <id>...]`"),
    ("VERDICT: findings\n",
     "malformed verdict line 'VERDICT: findings'; expected `VERDICT: no findings` or "
     "`VERDICT: findings <id>[, <id>...]`"),
    ("VERDICT: findings F1,, F2\n",
     "malformed finding id(s) '' in 'VERDICT: findings F1,, F2' (ids are letters, digits, '.', '_', '-')"),
    ("VERDICT: findings F1, F1\n", "finding id(s) listed twice in 'VERDICT: findings F1, F1': F1"),
])
def test_anything_but_one_final_verdict_fails(output: str, message: str) -> None:
    with pytest.raises(VerdictProblem) as caught:
        parse_text(output)
    assert caught.value.message == message


def test_mentioning_the_word_verdict_mid_sentence_is_not_a_verdict() -> None:
    assert parse_text("The final verdict: see below.\nVERDICT: no findings\n").findings == ()


def test_parse_line_is_exact() -> None:
    assert parse_line("VERDICT: findings A, b_2") == Verdict(("A", "b_2"), "VERDICT: findings A, b_2")
    with pytest.raises(VerdictProblem):
        parse_line("VERDICT: findings F1 F2")


@pytest.mark.parametrize("events", [
    # axpipe's own text events
    [{"type": "status", "message": "reading"}, text_event("Checked the loop."),
     text_event("F1: off by one\nVERDICT: findings F1")],
    # Claude Code stream-json: assistant messages with text blocks; tool use and results are not text
    [{"type": "system", "subtype": "init"},
     {"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "Read", "input": {}}]}},
     {"type": "user", "message": {"content": [{"type": "tool_result", "content": "VERDICT: no findings"}]}},
     {"type": "assistant", "message": {"content": [{"type": "text", "text": "F1: off by one\nVERDICT: findings F1"}]}},
     {"type": "result", "subtype": "success", "is_error": False, "result": "F1: off by one\nVERDICT: findings F1"}],
    # Codex exec --json: agent_message items; reasoning and commands are not text
    [{"type": "thread.started", "thread_id": "t"}, {"type": "turn.started"},
     {"type": "item.completed", "item": {"type": "reasoning", "text": "VERDICT: maybe"}},
     {"type": "item.completed", "item": {"type": "command_execution", "command": "cat calc.py"}},
     {"type": "item.completed", "item": {"type": "agent_message", "text": "F1: off by one\nVERDICT: findings F1"}},
     {"type": "turn.completed", "usage": {"output_tokens": 9}}],
])
def test_the_last_text_event_of_a_stream_holds_the_verdict(events: list[dict]) -> None:
    assert parse_jsonl(jsonl(*events)).findings == ("F1",)


@pytest.mark.parametrize(("stream", "message"), [
    ("", "the event stream is empty; expected its last text event to end with `VERDICT: no findings` or "
         "`VERDICT: findings <id>[, <id>...]`"),
    (jsonl({"type": "status", "message": "warning: slow"}),
     "the event stream has no text event (see docs/reviews.md for the event shapes read)"),
    (jsonl(text_event("I will look at calc.py next")),
     "no verdict line in any text event; the last one must end with `VERDICT: no findings` or "
     "`VERDICT: findings <id>[, <id>...]`"),
    (jsonl(text_event("VERDICT: no findings"), text_event("Hmm, one more thing about calc.py")),
     "the verdict is in the text event on line 1, not in the last text event (line 2): the reviewer went on "
     "after it"),
    (jsonl(text_event("VERDICT: findings F1"), text_event("VERDICT: no findings")),
     "2 verdict lines in text events (line 1, line 2); exactly one final verdict is allowed"),
    (jsonl(text_event("thinking")) + '{"type": "text", "text": "VERDICT: no fi',
     "line 2 is not valid JSON (was the stream cut off?)"),
    ("[1, 2]\n", "line 1 is not a JSON object"),
    (jsonl(text_event("VERDICT: no findings"), {"type": "turn.failed", "error": {"message": "usage limit"}}),
     "the event stream reports an error on line 2: turn.failed: usage limit"),
    (jsonl(text_event("VERDICT: no findings"), {"type": "result", "is_error": True, "subtype": "error_max_turns"}),
     "the event stream reports an error on line 2: result: error_max_turns"),
    (jsonl({"type": "error", "message": "rate limited"}, text_event("VERDICT: no findings")),
     "the event stream reports an error on line 1: error: rate limited"),
])
def test_a_stream_without_one_final_verdict_fails(stream: str, message: str) -> None:
    with pytest.raises(VerdictProblem) as caught:
        parse_jsonl(stream)
    assert caught.value.message == message


def test_two_text_blocks_in_the_last_message_need_the_verdict_in_the_last_block() -> None:
    event = {"type": "assistant", "message": {"content": [{"type": "text", "text": "VERDICT: no findings"},
                                                          {"type": "text", "text": "and one more remark"}]}}
    with pytest.raises(VerdictProblem, match="not in the last text event"):
        parse_jsonl(jsonl(event))


def test_templates_are_strict_about_undefined_variables() -> None:
    assert templates.render("Review {{ revision }} of {{ files | join(', ') }}\n",
                            {"revision": "abc", "files": ["a.py", "b.py"]}, name="t") == "Review abc of a.py, b.py\n"
    with pytest.raises(templates.TemplateError) as caught:
        templates.render("{{ revison }}", {"revision": "abc"}, name="reviewers[0].prompt")
    assert caught.value.message == ("reviewers[0].prompt: 'revison' is undefined; variables available: revision")
    assert caught.value.exit_code == 2
    with pytest.raises(templates.TemplateError) as syntax:
        templates.render("line\n{% for x in %}", {}, name="p")
    assert syntax.value.message.startswith("p: template syntax error on line 2: ")
