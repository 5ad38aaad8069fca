"""The gate's test phase: failing tests identified from JUnit XML, re-run at the baseline.

A test failing at the baseline too is pre-existing; one that passes there, is skipped
there or does not exist there (a new test) is blamed. A run that fails without JUnit XML,
or whose XML records no failing test, fails closed. A run that exits 0 while its XML
records failures (``pytest || true``) is judged by what the tests did.
"""

from __future__ import annotations

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
