"""The gate's test phase: failing tests identified from JUnit XML, re-run at the baseline.

A test failing at the baseline too, in the same way (the same kind of failure and
exception type, the same first line of the message), is pre-existing; one that fails there
differently (a file the worktree lacks: ``FileNotFoundError`` there, an assertion here),
passes there, is skipped there or does not exist there (a new test) is blamed. A run that
fails without JUnit XML, or whose XML records no failing test, fails closed. A run that exits 0 while its XML
records failures (``pytest || true``) is judged by what the tests did.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from axpipe import junit
from axpipe.gate_report import BLAMED, PRE_EXISTING, Attempt, Item, PhaseReport
from axpipe.gate_runner import JUNIT_PLACEHOLDER, Runner, abnormal, error_phase, missing
from axpipe.process import CommandSpec, command_text


def judge_tests(runner: Runner, command: CommandSpec) -> PhaseReport:
    attempt, result = runner.run("test", command, "workspace")
    if missing(result):
        return error_phase("test", command, attempt)
    assert result is not None
    phase = PhaseReport("test", command_text(command), "passed", result.describe(), [attempt])
    cases, problem = _cases(attempt)
    if result.ok and not (cases and junit.failing(cases)):
        phase.summary = f"{result.describe()}" + (f"; {len(cases)} test(s) in the JUnit XML" if cases else "")
        return phase
    # A run that exits 0 while its JUnit XML records failures (`pytest || true`) is judged
    # by what the tests did, not by what the command said.
    phase.status = "failed"
    if abnormal(result):
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


def _rerun_at_baseline(runner: Runner, command: CommandSpec, phase: PhaseReport,
                       failing: list[junit.TestCase]) -> None:
    attempt, result = runner.run("test", command, "baseline")
    phase.attempts.append(attempt)
    now = {case.id: case for case in failing}
    cases, problem = _cases(attempt) if result is not None else (None, attempt.result)
    for item in phase.items:
        if cases is None:
            item.why = f"the baseline run gave no test results ({problem}), so it is not known to fail there"
            continue
        before = cases.get(item.subject)
        if before is None:
            item.why = "not in the baseline's results: a new (or renamed) test"
        elif before.status == "failed" and _same_failure(runner, now[item.subject], before):
            item.verdict, item.why = PRE_EXISTING, "it fails at the baseline too"
        elif before.status == "failed":
            item.why = (f"it fails at the baseline too, but differently (there: {_describe(before)}; here: "
                        f"{_describe(now[item.subject])}), so this failure is not known to be old")
        elif before.status == "skipped":
            item.why = "skipped at the baseline, so it is not known to have failed before"
        else:
            item.why = "it passes at the baseline"


_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]+\b")


def _same_failure(runner: Runner, now: junit.TestCase, before: junit.TestCase) -> bool:
    """The same failure: the same kind (failure or error, and the exception's type) and the
    same first line of the message, once what differs between any two runs is evened out:
    the checkout's path (the worktree's, not the project's) and object addresses."""
    def even(message: str, checkout: Path | None) -> str:
        if checkout is not None:
            for spelling in dict.fromkeys([str(checkout), os.path.realpath(checkout)]):
                message = message.replace(spelling, "<checkout>")
        return _ADDRESS.sub("0x?", message)

    there = runner.tree.created / runner.prefix if runner.tree.created is not None else None
    return now.kind == before.kind and even(now.message, runner.root) == even(before.message, there)


def _describe(case: junit.TestCase) -> str:
    """``FileNotFoundError: [Errno 2] ...``, ``AssertionError: assert 41 == 42``; ``an error:``
    first for an error (pytest: in a fixture's setup or teardown) rather than a failure."""
    tag, _, exception = case.kind.partition(" ")
    text = case.message if not exception or case.message.startswith(exception) else (
        f"{exception}: {case.message}" if case.message else exception)
    return f"an error: {text}" if tag == "error" else text or "failed"
