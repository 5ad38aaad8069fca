"""The gate narrowed to the change (DESIGN §8): the project's own lint, type-check and test
commands, judged only on what the change did.

- **lint**: a finding counts only on a line the change added or modified; findings on other
  lines are pre-existing.
- **typecheck**: a finding on a changed line counts; one on an unchanged line counts unless
  the baseline has the same finding (same file, code and message, a line number in the
  message followed back through the diff), because a type error travels: changing a
  signature breaks call sites the change never touched.
- **test**: failing tests are identified (the test adapters read pytest, unittest, vitest,
  jest and ``node --test`` commands as written; other runners give JUnit XML through
  ``{junit_xml}``), and the test command runs again at the baseline in a throwaway
  worktree, isolated from the workspace's code; a test failing there too is pre-existing.
- **command**: one command decided by its exit code (it has no lines or test ids to
  narrow to).

A phase fails closed: a failing command whose output names no finding, a test run without
JUnit XML, a baseline run that cannot be read, all count against the change. Every attempt's
output is kept (``<phase>-workspace.log``, ``<phase>-baseline.log``) beside the report.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from axpipe.gate import baselines, findings
from axpipe.gate.failing_tests import judge_tests
from axpipe.gate.report import BLAMED, PRE_EXISTING, GateReport, Item, PhaseReport
from axpipe.gate.runner import (
    DEFAULT_TIMEOUT,
    JUNIT_PLACEHOLDER,
    PHASE_ORDER,
    GateSettings,
    Runner,
    abnormal,
    declared_junit,
    error_phase,
    missing,
)
from axpipe.gate.worktrees import Throwaway
from axpipe.process import CommandSpec, ProcessResult, command_text
from axpipe.unit.units import git_text
from axpipe.workspace import git_prefix, git_top

__all__ = ["DEFAULT_TIMEOUT", "JUNIT_PLACEHOLDER", "PHASE_ORDER", "GateSettings", "declared_junit", "run_gate"]

def _findings_phase(runner: Runner, name: str, command: CommandSpec,
                    changed: baselines.ChangedLines) -> PhaseReport:
    attempt, result = runner.run(name, command, "workspace")
    if missing(result):
        return error_phase(name, command, attempt)
    assert result is not None
    phase = PhaseReport(name, command_text(command), "passed", "", [attempt])
    parsed = findings.read(runner.output(attempt), runner.root)
    found = parsed.found
    unchanged: list[tuple[findings.Finding, Item]] = []
    for finding in found:
        item = Item(BLAMED, "", finding.where(), finding.message, finding.code, finding.counts)
        if not runner.settings.narrow:
            item.why = "narrowing is off: every finding counts"
        elif changed.touched(finding.path, finding.line):
            item.why = f"line {finding.line} is one the change added or modified"
        elif finding.syntax and changed.has_file(finding.path):
            item.why = ("a syntax error in a file the change touched counts wherever it is reported: it is where "
                        "the tool stopped reading, not necessarily the line that broke the file")
        elif not (runner.root / finding.path).exists():
            # `cd web && ruff check .` prints `src/a.py`: read from the project's root it names
            # a file that is not there, so which lines the change touched in it is unknown.
            item.why = (f"{finding.path} is not a file under the project's root, so the finding cannot be "
                        "narrowed (does the command print paths from another folder? they must be from the "
                        "project's root, or absolute)")
        elif name == "typecheck" and finding.counts:
            unchanged.append((finding, item))
        elif changed.has_file(finding.path):
            item.verdict, item.why = PRE_EXISTING, f"line {finding.line} was not changed"
        else:
            item.verdict, item.why = PRE_EXISTING, "the change did not touch this file"
        phase.items.append(item)
    if unchanged and not result.ok:
        _compare_with_baseline(runner, name, command, phase, unchanged, changed)
    if found and not result.ok:
        _unread(phase, parsed.unread)
    _decide(phase, result, found)
    return phase


_UNREAD_LISTED = 20


def _unread(phase: PhaseReport, lines: list[str]) -> None:
    """A failing tool's line that looks like a place (``:12:``) but reads as no finding counts:
    it may be a finding in a format not understood, and dropping it could pass the gate."""
    why = "the line looks like a finding's place (`:N:`) but does not read as one, so it cannot be narrowed"
    for line in lines[:_UNREAD_LISTED]:
        phase.items.append(Item(BLAMED, why, "(unread output)", line[:300]))
    if len(lines) > _UNREAD_LISTED:
        phase.items.append(Item(BLAMED, why, "(unread output)",
                                f"{len(lines) - _UNREAD_LISTED} more such line(s): see the log"))


def _compare_with_baseline(runner: Runner, name: str, command: CommandSpec, phase: PhaseReport,
                           unchanged: list[tuple[findings.Finding, Item]], changed: baselines.ChangedLines) -> None:
    """An unchanged line's finding is pre-existing when the baseline reports the same finding
    (code and message) on that same line, followed back through the diff's line shifts."""
    attempt, result = runner.run(name, command, "baseline")
    phase.attempts.append(attempt)
    if missing(result) or result is None or abnormal(result):
        for _, item in unchanged:
            item.why = f"on an unchanged line, and the baseline could not be type-checked ({attempt.result})"
        return
    # A multiset: two identical findings on one line where the baseline has one are one old
    # finding and one the change caused.
    known = Counter((finding.path, finding.line, finding.code or "", finding.message)
                    for finding in findings.parse(runner.output(attempt), runner.cwd("baseline")))
    for finding, item in unchanged:
        then = changed.baseline_line(finding.path, finding.line) or (finding.path, finding.line)
        key = (*then, finding.code or "", _message_then(finding, changed))
        if known[key] > 0:
            known[key] -= 1
            item.verdict = PRE_EXISTING
            item.why = f"the baseline has the same finding on the same line ({then[0]}:{then[1]})"
        else:
            item.why = ("on a line the change did not touch, but the baseline does not have it: the change "
                        "caused it (type errors reach unchanged call sites)")


_LINE_IN_MESSAGE = re.compile(r"\b(line )(\d+)\b")


def _message_then(finding: findings.Finding, changed: baselines.ChangedLines) -> str:
    """The finding's message as the baseline would word it: a line number inside it (mypy's
    ``Name "f" already defined on line 4``) names a line of the same file, followed back
    through the diff like the finding's own line. A line the change touched stays as it is,
    so the message matches nothing at the baseline and the finding counts."""

    def then(match: re.Match[str]) -> str:
        before = changed.baseline_line(finding.path, int(match[2]))
        return f"{match[1]}{before[1]}" if before is not None else match[0]

    return _LINE_IN_MESSAGE.sub(then, finding.message)


def _decide(phase: PhaseReport, result: ProcessResult, found: list[findings.Finding]) -> None:
    if result.ok:
        counted = [item for item in phase.items if item.counts]
        phase.summary = f"{result.describe()}" + (f"; {len(counted)} finding(s) reported, none fails a command "
                                                  "that exits 0" if counted else "")
        return
    if abnormal(result):
        phase.status, phase.summary = "failed", f"{result.describe()}: a phase that did not finish counts"
        phase.items.append(Item(BLAMED, "the command did not finish", "(the command)", result.describe()))
        return
    if not found:
        phase.status = "failed"
        phase.summary = (f"{result.describe()}, and no finding in its output reads as `path:line: message` (or "
                         "ruff/eslint/flake8/mypy JSON): the failure cannot be narrowed, so it counts")
        phase.items.append(Item(BLAMED, "the failure names no line to narrow to", "(the command)", result.describe()))
        return
    blamed, old = len(phase.blamed), len(phase.pre_existing)
    if blamed:
        phase.status, phase.summary = "failed", f"{result.describe()}: {blamed} blamed, {old} pre-existing finding(s)"
    else:
        phase.summary = f"{result.describe()}, but all {old} finding(s) are pre-existing"


def _command_phase(runner: Runner, command: CommandSpec) -> PhaseReport:
    attempt, result = runner.run("command", command, "workspace")
    if missing(result):
        return error_phase("command", command, attempt)
    assert result is not None
    if result.ok:
        return PhaseReport("command", command_text(command), "passed", result.describe(), [attempt])
    return PhaseReport("command", command_text(command), "failed", f"{result.describe()}", [attempt],
                       [Item(BLAMED, "one gate command has no lines or test ids to narrow to (use `phases`)",
                             "(the command)", result.describe())])


def run_gate(root: Path, settings: GateSettings, *, baseline: str, baseline_given: str, folder: Path,
             remaining: Callable[[], float] | None = None,
             on_output: Callable[[bytes], None] | None = None) -> GateReport:
    """Run every declared phase against ``baseline`` and write the report into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    changed = baselines.changed_lines(root, baseline) if settings.narrow else baselines.ChangedLines()
    report = GateReport(baseline=baseline, baseline_given=baseline_given, head=git_text(root, "rev-parse", "HEAD"),
                        narrow=settings.narrow, changed_files=changed.files, changed_lines=changed.line_count,
                        folder=str(folder))
    used: list[Path] = []
    top = git_top(root)
    with Throwaway(root, baseline) as tree:
        runner = Runner(root, settings, folder, tree, remaining, on_output,
                        prefix=git_prefix(root, top) if top is not None else "")
        for name, command in settings.commands():
            if name == "test":
                report.phases.append(judge_tests(runner, command, changed))
            elif name == "command":
                report.phases.append(_command_phase(runner, command))
            else:
                report.phases.append(_findings_phase(runner, name, command, changed))
            # Gone before the next phase runs in the workspace, so no tool sees a second copy.
            discarded = tree.discard()
            if discarded is not None:
                used.append(discarded)
    if used:
        report.worktree = str(used[-1])
        report.worktree_removed = not any(path.exists() for path in used)
    report.write()
    return report
