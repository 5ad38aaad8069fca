"""The gate narrowed to the change (DESIGN §8): the project's own lint, type-check and test
commands, judged only on what the change did.

- **lint**: a finding counts only on a line the change added or modified; findings on other
  lines are pre-existing.
- **typecheck**: a finding on a changed line counts; one on an unchanged line counts unless
  the baseline has the same finding (same file, code and message), because a type error
  travels: changing a signature breaks call sites the change never touched.
- **test**: failing tests are identified from JUnit XML, and the test command runs again at
  the baseline in a throwaway worktree; a test failing there too is pre-existing.
- **command**: one command decided by its exit code (it has no lines or test ids to
  narrow to).

A phase fails closed: a failing command whose output names no finding, a test run without
JUnit XML, a baseline run that cannot be read, all count against the change. Every attempt's
output is kept (``<phase>-workspace.log``, ``<phase>-baseline.log``) beside the report.
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from axpipe import baselines, findings, junit
from axpipe.errors import ExecutableNotFound
from axpipe.gate_report import BLAMED, PRE_EXISTING, Attempt, GateReport, Item, PhaseReport
from axpipe.process import CommandSpec, ProcessResult, command_text
from axpipe.worktrees import Throwaway, WorktreeError

PHASE_ORDER = ("lint", "typecheck", "test", "command")
JUNIT_PLACEHOLDER = "{junit_xml}"
DEFAULT_TIMEOUT = 30 * 60.0
_LOG_LIMIT = 16 * 1024 * 1024


@dataclass
class GateSettings:
    """What to run: ``phases`` (lint/typecheck/test → command) and/or one ``command``."""

    phases: dict[str, str] = field(default_factory=dict)
    command: CommandSpec | None = None
    narrow: bool = True
    timeout: float = DEFAULT_TIMEOUT

    def commands(self) -> list[tuple[str, CommandSpec]]:
        listed: list[tuple[str, CommandSpec]] = [(name, self.phases[name]) for name in PHASE_ORDER
                                                 if name in self.phases]
        if self.command is not None:
            listed.append(("command", self.command))
        return listed


def declared_junit(command: CommandSpec) -> str | None:
    """The JUnit path a pytest-style command names (``--junitxml=PATH``, ``--junit-xml PATH``)."""
    try:
        words = shlex.split(command) if isinstance(command, str) else list(command)
    except ValueError:
        return None
    for index, word in enumerate(words):
        for flag in ("--junitxml", "--junit-xml"):
            if word.startswith(flag + "="):
                return word.split("=", 1)[1]
            if word == flag and index + 1 < len(words):
                return words[index + 1]
    return None


class _Runner:
    """Runs one gate's commands, here and (on demand) in the baseline worktree."""

    def __init__(self, root: Path, settings: GateSettings, folder: Path, tree: Throwaway,
                 remaining: Callable[[], float] | None, on_output: Callable[[bytes], None] | None) -> None:
        self.root, self.settings, self.folder, self.tree = root, settings, folder, tree
        self.remaining, self.on_output = remaining, on_output

    def run(self, name: str, command: CommandSpec, where: str) -> tuple[Attempt, ProcessResult | None]:
        from axpipe import process

        try:
            cwd = self.root if where == "workspace" else self.tree.path()
        except WorktreeError as error:
            return Attempt(where, command_text(command), error.message, None, 0.0, "-", ""), None
        ours = self.folder / f"{name}-{where}-junit.xml"
        if isinstance(command, str):
            command = command.replace(JUNIT_PLACEHOLDER, shlex.quote(str(ours)))
        else:
            command = [part.replace(JUNIT_PLACEHOLDER, str(ours)) for part in command]
        named = declared_junit(command)
        theirs = (cwd / named) if named and not os.path.isabs(named) else Path(named) if named else None
        for stale in (ours, theirs):
            if stale is not None and stale.is_file():
                stale.unlink()  # never read a previous run's results as this run's
        log_path = self.folder / f"{name}-{where}.log"
        env = {"AXPIPE_JUNIT_XML": str(ours), "AXPIPE_GATE_PHASE": name, "AXPIPE_GATE_WHERE": where}
        timeout = self.settings.timeout if self.remaining is None else min(self.settings.timeout, self.remaining())
        with log_path.open("wb") as log:
            written = [0]

            def tee(chunk: bytes) -> None:
                if written[0] < _LOG_LIMIT:
                    log.write(chunk[:_LOG_LIMIT - written[0]])
                    written[0] += len(chunk)
                if self.on_output is not None:
                    self.on_output(chunk)

            try:
                result = process.run(command, cwd=cwd, env=env, timeout=timeout, on_output=tee)
            except ExecutableNotFound as error:
                return Attempt(where, command_text(command), error.message, None, 0.0, str(log_path), ""), None
        report_file = ours if ours.is_file() else theirs if theirs is not None and theirs.is_file() else None
        kept = None
        if report_file is not None:
            if report_file != ours:
                shutil.copyfile(report_file, ours)  # the worktree goes away; the evidence stays
            kept = str(ours)
        attempt = Attempt(where, result.command, result.describe(), result.exit_code, round(result.duration, 3),
                          str(log_path), result.output[-8000:], kept)
        return attempt, result

    def output(self, attempt: Attempt) -> str:
        try:
            return Path(attempt.log).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return attempt.output_tail


def _missing(result: ProcessResult | None) -> bool:
    return result is None or (result.exit_code == 127 and "not found" in result.output)


def _abnormal(result: ProcessResult) -> bool:
    return result.timed_out or result.signal is not None


def _error_phase(name: str, command: CommandSpec, attempt: Attempt) -> PhaseReport:
    return PhaseReport(name, command_text(command), "error", f"could not run: {attempt.result}", [attempt],
                       [Item(BLAMED, "the command could not run, so nothing shows the change is clean",
                             "(the command)", attempt.result)])


def _findings_phase(runner: _Runner, name: str, command: CommandSpec,
                    changed: baselines.ChangedLines) -> PhaseReport:
    attempt, result = runner.run(name, command, "workspace")
    if _missing(result):
        return _error_phase(name, command, attempt)
    assert result is not None
    phase = PhaseReport(name, command_text(command), "passed", "", [attempt])
    found = findings.parse(runner.output(attempt), runner.root)
    unchanged: list[tuple[findings.Finding, Item]] = []
    for finding in found:
        item = Item(BLAMED, "", finding.where(), finding.message, finding.code, finding.counts)
        if not runner.settings.narrow:
            item.why = "narrowing is off: every finding counts"
        elif changed.touched(finding.path, finding.line):
            item.why = f"line {finding.line} is one the change added or modified"
        elif name == "typecheck" and finding.counts:
            unchanged.append((finding, item))
        elif changed.has_file(finding.path):
            item.verdict, item.why = PRE_EXISTING, f"line {finding.line} was not changed"
        else:
            item.verdict, item.why = PRE_EXISTING, "the change did not touch this file"
        phase.items.append(item)
    if unchanged and not result.ok:
        _compare_with_baseline(runner, name, command, phase, unchanged, changed)
    _decide(phase, result, found)
    return phase


def _compare_with_baseline(runner: _Runner, name: str, command: CommandSpec, phase: PhaseReport,
                           unchanged: list[tuple[findings.Finding, Item]], changed: baselines.ChangedLines) -> None:
    """An unchanged line's finding is pre-existing when the baseline reports the same finding
    (code and message) on that same line, followed back through the diff's line shifts."""
    attempt, result = runner.run(name, command, "baseline")
    phase.attempts.append(attempt)
    if _missing(result) or result is None or _abnormal(result):
        for _, item in unchanged:
            item.why = f"on an unchanged line, and the baseline could not be type-checked ({attempt.result})"
        return
    known = {(finding.path, finding.line, finding.code or "", finding.message)
             for finding in findings.parse(runner.output(attempt), runner.tree.path())}
    for finding, item in unchanged:
        then = changed.baseline_line(finding.path, finding.line) or (finding.path, finding.line)
        if (*then, finding.code or "", finding.message) in known:
            item.verdict = PRE_EXISTING
            item.why = f"the baseline has the same finding on the same line ({then[0]}:{then[1]})"
        else:
            item.why = ("on a line the change did not touch, but the baseline does not have it: the change "
                        "caused it (type errors reach unchanged call sites)")


def _decide(phase: PhaseReport, result: ProcessResult, found: list[findings.Finding]) -> None:
    if result.ok:
        counted = [item for item in phase.items if item.counts]
        phase.summary = f"{result.describe()}" + (f"; {len(counted)} finding(s) reported, none fails a command "
                                                  "that exits 0" if counted else "")
        return
    if _abnormal(result):
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


def _test_phase(runner: _Runner, command: CommandSpec) -> PhaseReport:
    attempt, result = runner.run("test", command, "workspace")
    if _missing(result):
        return _error_phase("test", command, attempt)
    assert result is not None
    phase = PhaseReport("test", command_text(command), "passed", result.describe(), [attempt])
    cases, problem = _cases(attempt)
    if result.ok and not (cases and junit.failing(cases)):
        phase.summary = f"{result.describe()}" + (f"; {len(cases)} test(s) in the JUnit XML" if cases else "")
        return phase
    # A run that exits 0 while its JUnit XML records failures (`pytest || true`) is judged
    # by what the tests did, not by what the command said.
    phase.status = "failed"
    if _abnormal(result):
        phase.summary = f"{result.describe()}: a test run that did not finish counts"
        phase.items.append(Item(BLAMED, "the run did not finish", "(the test run)", result.describe()))
        return phase
    if cases is None:
        phase.summary = (f"{result.describe()} and {problem}; without test identities the failure cannot be "
                         f"narrowed (put {JUNIT_PLACEHOLDER} in the test command, e.g. "
                         f"`pytest --junitxml={JUNIT_PLACEHOLDER}`)")
        phase.items.append(Item(BLAMED, "no JUnit XML to tell which test failed", "(the test run)", problem or ""))
        return phase
    failing = junit.failing(cases)
    if not failing:
        phase.summary = (f"{result.describe()} but the JUnit XML records no failing test (a crash, a collection "
                         "error or a threshold): not narrowed, it counts")
        phase.items.append(Item(BLAMED, "the run failed outside any test case", "(the test run)", result.describe()))
        return phase
    for case in failing:
        phase.items.append(Item(BLAMED, "narrowing is off: every failing test counts", case.id, case.message))
    if runner.settings.narrow:
        _rerun_at_baseline(runner, command, phase, failing)
    blamed, old = len(phase.blamed), len(phase.pre_existing)
    if blamed:
        phase.summary = f"{len(failing)} failing test(s): {blamed} blamed, {old} pre-existing"
    else:
        phase.status = "passed"
        phase.summary = f"{len(failing)} failing test(s), each failing at the baseline too: all pre-existing"
    return phase


def _cases(attempt: Attempt) -> tuple[dict[str, junit.TestCase] | None, str | None]:
    if attempt.junit is None:
        return None, "it left no JUnit XML"
    try:
        return junit.read(Path(attempt.junit)), None
    except junit.JUnitError as error:
        return None, str(error)


def _rerun_at_baseline(runner: _Runner, command: CommandSpec, phase: PhaseReport,
                       failing: list[junit.TestCase]) -> None:
    attempt, result = runner.run("test", command, "baseline")
    phase.attempts.append(attempt)
    cases, problem = _cases(attempt) if result is not None else (None, attempt.result)
    for item in phase.items:
        if cases is None:
            item.why = f"the baseline run gave no test results ({problem}), so it is not known to fail there"
            continue
        before = cases.get(item.subject)
        if before is None:
            item.why = "not in the baseline's results: a new (or renamed) test"
        elif before.status == "failed":
            item.verdict, item.why = PRE_EXISTING, "it fails at the baseline too"
        elif before.status == "skipped":
            item.why = "skipped at the baseline, so it is not known to have failed before"
        else:
            item.why = "it passes at the baseline"


def _command_phase(runner: _Runner, command: CommandSpec) -> PhaseReport:
    attempt, result = runner.run("command", command, "workspace")
    if _missing(result):
        return _error_phase("command", command, attempt)
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
    from axpipe.units import git_text

    folder.mkdir(parents=True, exist_ok=True)
    changed = baselines.changed_lines(root, baseline) if settings.narrow else baselines.ChangedLines()
    report = GateReport(baseline=baseline, baseline_given=baseline_given, head=git_text(root, "rev-parse", "HEAD"),
                        narrow=settings.narrow, changed_files=changed.files, changed_lines=changed.line_count,
                        folder=str(folder))
    used: list[Path] = []
    with Throwaway(root, baseline) as tree:
        runner = _Runner(root, settings, folder, tree, remaining, on_output)
        for name, command in settings.commands():
            if name == "test":
                report.phases.append(_test_phase(runner, command))
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
