"""The one module that writes progress to the terminal.

:class:`Display` renders run events for a person. On a terminal it keeps one live line
(rich) showing what is running and the last line of its output; elsewhere (CI logs, pipes)
it prints plain lines and nothing that redraws.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from axpipe.duration import format_duration

_MARKS = {"passed": "ok", "failed": "FAIL", "error": "ERROR", "skipped": "skip",
          "not-declared": "-", "stopped": "STOP"}


def _seconds(value: Any) -> str:
    try:
        return f"{float(value):.2f} s"
    except (TypeError, ValueError):
        return ""


class Display:
    """Renders events; ``live`` turns on the redrawing status line."""

    def __init__(self, stream: TextIO | None = None, *, live: bool | None = None) -> None:
        self.stream = stream or sys.stdout
        self.live = self.stream.isatty() if live is None else live
        self._status: Any = None
        self._label = ""
        self._last_line = ""
        self._last_draw = 0.0
        self._console: Any = None
        if self.live:
            from rich.console import Console

            self._console = Console(file=self.stream, highlight=False, soft_wrap=True)

    # -- live status ------------------------------------------------------------------

    def _start(self, label: str) -> None:
        self._label = label
        self._last_line = ""
        if self._console is None:
            return
        self._stop()
        self._status = self._console.status(label, spinner="dots")
        self._status.start()

    def _stop(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def output(self, chunk: bytes) -> None:
        """Feed output of the running command; the live line shows its last line."""
        if self._status is None:
            return
        text = chunk.decode("utf-8", errors="replace").strip().splitlines()
        if text:
            self._last_line = text[-1][:120]
        now = time.monotonic()
        if now - self._last_draw > 0.1:
            self._last_draw = now
            suffix = f"  {self._last_line}" if self._last_line else ""
            self._status.update(f"{self._label}{suffix}")

    # -- lines ------------------------------------------------------------------------

    def line(self, text: str = "") -> None:
        """Print one permanent line."""
        if self._console is not None:
            was_running = self._status is not None
            self._stop()
            self._console.print(text, markup=False)
            if was_running:
                self._start(self._label)
        else:
            self.stream.write(text + "\n")
            self.stream.flush()

    def close(self) -> None:
        self._stop()

    # -- events -----------------------------------------------------------------------

    def handle(self, event: dict[str, Any]) -> None:
        """Render one event (see :mod:`axpipe.run.events`)."""
        kind = event["type"]
        renderer = getattr(self, "_on_" + kind.replace(".", "_"), None)
        if renderer is not None:
            renderer(event)

    def _on_run_started(self, event: dict[str, Any]) -> None:
        self.line(f"axpipe run {event['recipe']}  (run {event['run']})")
        self.line(f"  workspace:  {event['workspace']}")
        self.line(f"  run folder: {event['run_dir']}")

    def _on_workspace_prepared(self, event: dict[str, Any]) -> None:
        self.line(f"  {event['summary']}")

    def _on_phase_started(self, event: dict[str, Any]) -> None:
        detail = f": {event['detail']}" if event.get("detail") else ""
        self._start(f"{event['phase']}{detail}")

    def _on_phase_finished(self, event: dict[str, Any]) -> None:
        self._stop()
        mark = _MARKS.get(event["status"], event["status"])
        timing = f"  ({_seconds(event['duration'])})" if event.get("duration") is not None else ""
        self.line(f"  [{mark:>5}] {event['phase']:<7} {event['summary']}{timing}")

    def _on_phase_skipped(self, event: dict[str, Any]) -> None:
        self._stop()
        if event.get("tick", 1) > 1:  # a loop's undeclared phases were shown at its first tick
            return
        self.line(f"  [{'-':>5}] {event['phase']:<7} {event['summary']}")

    def _on_check_started(self, event: dict[str, Any]) -> None:
        self._start(f"check {event['check']}: {event.get('command', '')}")

    def _on_check_finished(self, event: dict[str, Any]) -> None:
        self._stop()
        mark = _MARKS.get(event["status"], event["status"])
        self.line(f"          [{mark:>5}] {event['check']}: {event['summary']}"
                  f"  ({_seconds(event.get('duration'))})")
        if event["status"] != "passed" and event.get("output_tail"):
            for text in event["output_tail"].rstrip().splitlines()[-8:]:
                self.line(f"                  | {text}")

    def _on_goal_planned(self, event: dict[str, Any]) -> None:
        self.line(f"  goal {event['goal']}: session {event['session']}")

    def _on_goal_warning(self, event: dict[str, Any]) -> None:
        self.line(f"  warning: {event['warning']}")

    def _on_agent_started(self, event: dict[str, Any]) -> None:
        self._start(f"agent {event['agent']} (turn {event['iteration']})")

    def _on_agent_finished(self, event: dict[str, Any]) -> None:
        self._stop()
        edited = ", ".join(event.get("edited") or []) or "nothing"
        role = f" ({event['role']})" if event.get("role") and event["role"] != "implementer" else ""
        self.line(f"          [{event['status']:>5}] agent {event['agent']}{role}: {event['summary']}; edited {edited}"
                  f"  ({_seconds(event.get('duration'))})")

    def _on_goal_block_refused(self, event: dict[str, Any]) -> None:
        self.line(f"          block refused: {event['reason']}")

    def _on_goal_guidance(self, event: dict[str, Any]) -> None:
        self.line(f"          recovery guidance added ({event['turns_without_progress']} turns without progress)")

    def _on_goal_checks(self, event: dict[str, Any]) -> None:
        for check in event["checks"]:
            if check["status"] != "passed":
                self.line(f"          {check['id']}: {check['status']}: {check['reason']}")
        for note in event.get("notes") or []:
            self.line(f"          {note}")

    def _on_repair_started(self, event: dict[str, Any]) -> None:
        self.line(f"replx: {event['target']}")
        if event.get("derived"):
            self.line(f"  verifying command (derived by the agent): {event['command']}")
        self.line(f"  success condition: {event['condition']}")
        self.line(f"  budget: {event['budget']} iterations")

    def _on_repair_guard_unavailable(self, event: dict[str, Any]) -> None:
        self.line(f"  warning: {event['warning']}")

    def _on_repair_iteration(self, event: dict[str, Any]) -> None:
        self._stop()
        phase = f" [{event['repair_phase']}]" if event.get("repair_phase") else ""
        self.line(f"  iteration {event['n']}{phase}: `{event['command']}`: {event['result']}")
        if event.get("fix") and event["fix"] != "none needed":
            self.line(f"      fix: {event['fix']}")

    def _on_repair_final_run(self, event: dict[str, Any]) -> None:
        self._stop()
        verdict = "holds" if event["passed"] else "does not hold"
        self.line(f"  final run `{event['command']}`: {event['result']}: the condition {verdict}")

    def _on_repair_report(self, event: dict[str, Any]) -> None:
        self._stop()
        for text in event["markdown"].rstrip().splitlines():
            self.line(f"    {text}" if text else "")

    def _on_repair_finished(self, event: dict[str, Any]) -> None:
        self._stop()
        self.line(f"  repair {event['status']} in {event['iterations_used']}/{event['budget']} iterations; "
                  f"final diff: {event['final_diff']}")

    def _on_goal_coverage(self, event: dict[str, Any]) -> None:
        self.line(f"  coverage: {event['summary']}")

    def _on_goal_bad_success(self, event: dict[str, Any]) -> None:
        self.line(f"  bad success: {event['summary']}")

    def _on_goal_status(self, event: dict[str, Any]) -> None:
        reason = f": {event['reason']}" if event.get("reason") else ""
        self.line(f"  goal is now {event['goal_status']}{reason}")

    def _on_loop_started(self, event: dict[str, Any]) -> None:
        command = event.get("command")
        if command is not None:
            what = "command `" + (" ".join(command) if isinstance(command, list) else str(command)) + "`"
        else:
            what = f"prompt {event['prompt']!r}" if event.get("prompt") else "the goal's work prompt"
        self.line(f"  loop {event['loop']}: every {format_duration(event['interval'])}, at most "
                  f"{event['max_runs']} runs, {what}; it lives only in this process (pid {event['pid']})")

    def _on_loop_tick_started(self, event: dict[str, Any]) -> None:
        self.line(f"  tick {event['tick']} (of at most {event['max_runs']})")

    def _on_loop_tick_finished(self, event: dict[str, Any]) -> None:
        self._stop()
        busy = event.get("skipped_during") or 0
        skipped = f"; {busy} tick(s) skipped while it ran" if busy else ""
        self.line(f"  tick {event['tick']} {event['status']}: {event['summary']}{skipped}")

    def _on_loop_cap_reached(self, event: dict[str, Any]) -> None:
        self.line(f"  warning: {event['warning']}")

    def _on_loop_stopped(self, event: dict[str, Any]) -> None:
        self._stop()
        self.line(f"  loop {event['loop']} ended: {event['reason']}; {event['runs']} run(s), "
                  f"{event['busy_skips']} busy-skip(s)")

    def _on_run_finished(self, event: dict[str, Any]) -> None:
        self._stop()
        self.line(f"Run {event['status']}: {event['summary']} (exit {event['exit_code']})")
        for where, path in event.get("outputs", {}).items():
            self.line(f"  {where}: {path}")
