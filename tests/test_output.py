"""The terminal display: plain lines off a terminal, a live status line on one."""

from __future__ import annotations

import io

from axpipe.output import Display


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


EVENTS = [
    {"type": "run.started", "recipe": "demo", "run": "r1", "workspace": "/w", "run_dir": "/w/.axpipe/runs/r1"},
    {"type": "phase.started", "phase": "probe", "detail": "python3 -c pass"},
    {"type": "phase.finished", "phase": "probe", "status": "passed", "summary": "environment ready", "duration": 0.5},
    {"type": "phase.skipped", "phase": "gate", "status": "not-declared", "summary": "no gate declared"},
    {"type": "check.started", "check": "lint", "command": "ruff check ."},
    {"type": "check.finished", "check": "lint", "status": "failed", "summary": "exit code 1", "duration": 0.25,
     "output_tail": "a.py:1:1: F401 unused import\nFound 1 error.\n"},
    {"type": "run.finished", "status": "failed", "summary": "not done", "exit_code": 1,
     "outputs": {"events": "/w/events.jsonl"}},
]


def test_plain_display_prints_one_line_per_outcome_and_nothing_that_redraws() -> None:
    stream = io.StringIO()
    display = Display(stream)
    assert not display.live
    for event in EVENTS:
        display.handle(event)
        display.output(b"progress...\n")
    text = stream.getvalue()
    assert "\x1b" not in text and "\r" not in text
    assert text.splitlines() == [
        "axpipe run demo  (run r1)",
        "  workspace:  /w",
        "  run folder: /w/.axpipe/runs/r1",
        "  [   ok] probe   environment ready  (0.50 s)",
        "  [    -] gate    no gate declared",
        "          [ FAIL] lint: exit code 1  (0.25 s)",
        "                  | a.py:1:1: F401 unused import",
        "                  | Found 1 error.",
        "Run failed: not done (exit 1)",
        "  events: /w/events.jsonl",
    ]


def test_live_display_on_a_terminal_keeps_the_permanent_lines() -> None:
    stream = FakeTerminal()
    display = Display(stream)
    assert display.live
    for event in EVENTS:
        display.handle(event)
        display.output(b"still working on it\n")
    display.close()
    text = stream.getvalue()
    assert "[   ok] probe   environment ready" in text
    assert "Run failed: not done (exit 1)" in text
