"""The gate report: per phase, every attempt (here and at the baseline) and every finding,
each marked blamed or pre-existing with the reason. Data first; Markdown and JSON from it."""

from __future__ import annotations

import json
from dataclasses import asdict, field
from pathlib import Path
from typing import Any

from axpipe.names import printable
from axpipe.records import record

BLAMED = "blamed"
PRE_EXISTING = "pre-existing"
TAIL_LINES = 30


@record
class Attempt:
    """One run of a phase's command: in the workspace, or at the baseline in a worktree."""

    where: str  # workspace | baseline
    command: str
    result: str  # "exit code 1", "timed out after 5 s", ...
    exit_code: int | None
    duration: float
    log: str
    output_tail: str
    junit: str | None = None


@record
class Item:
    """One finding or failing test, and the gate's judgement of it."""

    verdict: str  # blamed | pre-existing
    why: str
    subject: str  # "src/x.py:3:1" or a test's identity
    message: str = ""
    code: str | None = None
    counts: bool = True  # False for notes: listed, never failing

    def describe(self) -> str:
        code = f"{self.code} " if self.code else ""
        message = f" {code}{self.message}".rstrip() if (self.message or code) else ""
        return f"{self.verdict}: {self.subject}{':' if message else ''}{message} ({self.why})"


@record
class PhaseReport:
    """One gate phase: lint, typecheck, test, or the single ``command``."""

    name: str
    command: str
    status: str  # passed | failed | error
    summary: str
    attempts: list[Attempt] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)

    @property
    def blamed(self) -> list[Item]:
        return [item for item in self.items if item.verdict == BLAMED and item.counts]

    @property
    def pre_existing(self) -> list[Item]:
        return [item for item in self.items if item.verdict == PRE_EXISTING]


@record
class GateReport:
    """The whole gate: where it narrowed to, each phase, and where the evidence is."""

    baseline: str
    baseline_given: str
    head: str | None
    narrow: bool
    changed_files: int
    changed_lines: int
    folder: str
    phases: list[PhaseReport] = field(default_factory=list)
    worktree: str | None = None
    worktree_removed: bool = True

    @property
    def ok(self) -> bool:
        return all(phase.status == "passed" for phase in self.phases)

    @property
    def status(self) -> str:
        return "passed" if self.ok else "failed"

    def summary(self) -> str:
        if not self.phases:
            return "no gate phases declared"
        parts = []
        for phase in self.phases:
            extra = ""
            if phase.blamed:
                extra = f" ({len(phase.blamed)} blamed)"
            elif phase.pre_existing:
                extra = f" ({len(phase.pre_existing)} pre-existing)"
            parts.append(f"{phase.name} {phase.status}{extra}")
        return f"gate {self.status}: " + ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["status"] = self.status
        data["summary"] = self.summary()
        return data

    def write(self) -> tuple[Path, Path]:
        """``report.md`` and ``report.json`` in the report's folder."""
        folder = Path(self.folder)
        folder.mkdir(parents=True, exist_ok=True)
        markdown, data = folder / "report.md", folder / "report.json"
        markdown.write_text(printable(render(self)), encoding="utf-8")  # a name that is not UTF-8 shown as \xe9
        data.write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")
        return markdown, data


def _tail(text: str) -> str:
    lines = text.rstrip().splitlines()
    cut = lines[-TAIL_LINES:]
    prefix = [f"[... {len(lines) - len(cut)} earlier line(s) in the log]"] if len(lines) > len(cut) else []
    return "\n".join(prefix + cut)


def render(report: GateReport) -> str:
    """The report as a person reads it."""
    verdict = "passed" if report.ok else "FAILED"
    narrowed = (f"yes: {report.changed_files} changed file(s), {report.changed_lines} changed line(s) in files "
                "that existed at the baseline" if report.narrow else "no (`narrow: false`): every finding counts")
    lines = [f"# Gate {verdict}", "",
             f"- Baseline: {report.baseline} ({report.baseline_given})",
             f"- Compared: the working tree at HEAD {report.head or '(none)'}, uncommitted and untracked files "
             "included",
             f"- Narrowed: {narrowed}",
             f"- Result: {report.summary()}"]
    if report.worktree:
        state = "removed" if report.worktree_removed else "NOT removed"
        lines.append(f"- Baseline worktree: {report.worktree} ({state})")
    for phase in report.phases:
        lines += ["", f"## {phase.name}: {phase.status}", "", f"Command: `{phase.command}`", "", phase.summary]
        for number, attempt in enumerate(phase.attempts, start=1):
            where = "the workspace" if attempt.where == "workspace" else f"the baseline {report.baseline[:12]}"
            junit = f"; JUnit XML: {attempt.junit}" if attempt.junit else ""
            lines += ["", f"### Attempt {number}: {where}", "",
                      f"- Result: {attempt.result} after {attempt.duration:.1f} s",
                      f"- Output: {attempt.log}{junit}"]
            if attempt.output_tail.strip():
                lines += ["", "```", _tail(attempt.output_tail), "```"]
        if phase.items:
            lines += ["", "### Findings" if phase.name != "test" else "### Failing tests", ""]
            lines += [f"- {item.describe()}" for item in phase.items]
    return "\n".join(lines) + "\n"
