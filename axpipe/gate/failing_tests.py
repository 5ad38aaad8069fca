"""The gate's test phase: failing tests identified, re-run at the baseline (DESIGN §8).

The command runs through the test adapter that knows its runner (pytest, ``python -m
unittest``, vitest, jest, ``node --test``; :mod:`axpipe.gate.test_runs`): the gate learns
which tests failed without report flags from the user, and the run goes to its end (no
``-x``, ``--maxfail``, ``--bail``). Another runner gives its identities through
``{junit_xml}``.

A test failing at the baseline too, in the same way (the same kind of failure and
exception type, the same first line of the message), is pre-existing; one that fails there
differently (a file the worktree lacks: ``FileNotFoundError`` there, an assertion here),
passes there, is skipped there or does not exist there (a new test) is blamed. What the gate
cannot prove stays blamed: a run without test results, or whose results record no failing
test (a crash, a collection error, a coverage threshold); a run that stopped before its end
(its later tests never ran); errors outside any test; and a baseline run that did not run
the baseline's code (:mod:`axpipe.gate.isolation`): it read the change's own files, or its
Python never loaded the isolation. A run that exits 0 while its XML records failures
(``pytest || true``) is judged by what the tests did.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from axpipe.gate import junit
from axpipe.gate.baselines import ChangedLines
from axpipe.gate.isolation import Isolation, workspace_files
from axpipe.gate.report import BLAMED, PRE_EXISTING, Item, PhaseReport
from axpipe.gate.runner import JUNIT_PLACEHOLDER, Runner, abnormal, error_phase, missing
from axpipe.gate.test_runs import Adapter, TestAttempt, choose, run_tests
from axpipe.gate.worktrees import WorktreeError
from axpipe.interfaces.test_adapters import GateTestEnding
from axpipe.process import CommandSpec, command_text
from axpipe.workspace import git_top, state_dir

RUNNERS = "pytest, python -m unittest, vitest, jest and node --test"
_SHOWN = 300  # a message's length in the report; the comparison reads it whole (junit.MESSAGE_LIMIT)


def judge_tests(runner: Runner, command: CommandSpec, changed: ChangedLines) -> PhaseReport:
    adapter = choose(runner, command)
    here = run_tests(runner, adapter, command, "workspace")
    attempt, result = here.attempt, here.result
    if missing(result):
        return error_phase("test", command, attempt)
    assert result is not None
    phase = PhaseReport("test", command_text(command), "passed", result.describe(), [attempt])
    how = _how(here)
    cases, ending = here.cases, here.ending
    failing = junit.failing(cases) if cases else []
    if result.ok and not failing and not ending.stopped_early and not ending.outside_tests:
        phase.summary = f"{result.describe()}" + (f"; {len(cases)} test(s) in the JUnit XML" if cases else "") + how
        return phase
    phase.status = "failed"
    if abnormal(result):
        phase.summary = f"{result.describe()}: a test run that did not finish counts"
        phase.items.append(Item(BLAMED, "the run did not finish", "(the test run)", result.describe()))
        return phase
    if cases is None:
        phase.summary = (f"{result.describe()} and {here.problem}; without test identities the failure cannot be "
                         f"narrowed ({RUNNERS} commands are read as they are; for another runner put "
                         f"{JUNIT_PLACEHOLDER} in the test command, e.g. `mytool --junit={JUNIT_PLACEHOLDER}`)"
                         + _ended(ending) + how)
        phase.items.append(Item(BLAMED, "no JUnit XML to tell which test failed", "(the test run)", here.problem or ""))
        return phase
    _unproven(phase, ending)
    if not failing:
        if phase.items:
            phase.summary = f"{result.describe()}: " + "; ".join(item.message for item in phase.items) + how
            return phase
        phase.summary = (f"{result.describe()} but the JUnit XML records no failing test (a crash, a collection "
                         "error or a threshold): not narrowed, it counts" + how)
        phase.items.append(Item(BLAMED, "the run failed outside any test case", "(the test run)", result.describe()))
        return phase
    for case in failing:
        phase.items.append(Item(BLAMED, "narrowing is off: every failing test counts", case.id, case.message[:_SHOWN]))
    if runner.settings.narrow and failing:
        _rerun_at_baseline(runner, adapter, command, phase, failing, changed)
    blamed, old = len(phase.blamed), len(phase.pre_existing)
    if blamed:
        unproven = "".join(f"; {item.message}" for item in phase.items if item.subject == "(the test run)")
        phase.summary = f"{len(failing)} failing test(s): {blamed} blamed, {old} pre-existing" + unproven + how
    else:
        phase.status = "passed"
        phase.summary = f"{len(failing)} failing test(s), each failing at the baseline too: all pre-existing" + how
    return phase


def _how(here: TestAttempt) -> str:
    """The fail-fast options the run left out, for the summary."""
    if here.run is None or not here.run.removed:
        return ""
    return (f" (ran without {' '.join(here.run.removed)}: a {here.run.runner} run that stops early proves nothing "
            "about the tests it skips)")


def _ended(ending: GateTestEnding) -> str:
    return f"; {ending.stopped_early}" if ending.stopped_early else ""


def _unproven(phase: PhaseReport, ending: GateTestEnding) -> None:
    """What a run showed that no failing test accounts for: both count against the change."""
    stopped, outside = ending.stopped_early, ending.outside_tests
    if stopped:
        phase.items.append(Item(BLAMED, "the run stopped before its end, so the tests after that point never ran "
                                        "and the change is not shown to pass them", "(the test run)", stopped))
    if outside:
        phase.items.append(Item(BLAMED, "errors outside any test have no test to narrow to", "(the test run)",
                                outside))


def _rerun_at_baseline(runner: Runner, adapter: Adapter, command: CommandSpec, phase: PhaseReport,
                       failing: list[junit.TestCase], changed: ChangedLines) -> None:
    try:
        tree = runner.tree.path()
    except WorktreeError:
        tree = None  # the run below reports why there is no baseline
    if tree is None:
        there = run_tests(runner, adapter, command, "baseline")
        tainted: list[str] = []
        unisolated = False
    else:
        top = git_top(runner.root) or runner.root
        with Isolation(top, tree, [state_dir(runner.root)]) as isolation:
            there = run_tests(runner, adapter, command, "baseline", environment=isolation.environment)
            texts = [runner.output(there.attempt)]
            if there.attempt.junit is not None:
                texts.append(Path(there.attempt.junit).read_text(encoding="utf-8", errors="replace"))
            cwd = tree / runner.prefix
            tainted = workspace_files(isolation, runner.root, cwd, changed.paths, texts) if there.result else []
            unisolated = (there.result is not None and there.run is not None and there.run.language == "python"
                          and not isolation.python_ran)
    phase.attempts.append(there.attempt)
    now = {case.id: case for case in failing}
    for item in phase.items:
        if item.subject not in now:
            continue  # about the run, not a test
        item.why = _verdict(runner, item, now[item.subject], there, tainted, unisolated)
        if item.why == _PRE_EXISTING:
            item.verdict = PRE_EXISTING


_PRE_EXISTING = "it fails at the baseline too"


def _verdict(runner: Runner, item: Item, now: junit.TestCase, there: TestAttempt, tainted: list[str],
             unisolated: bool) -> str:
    if there.cases is None:
        return f"the baseline run gave no test results ({there.problem}), so it is not known to fail there"
    if tainted:
        shown = ", ".join(tainted[:3]) + (f" and {len(tainted) - 3} more" if len(tainted) > 3 else "")
        return (f"the baseline run read the change's own file(s) ({shown}) from the workspace instead of the "
                "baseline's, so its failures may be the change's: not known to fail at the baseline")
    if unisolated:
        return ("the baseline run's Python never loaded axpipe's isolation (run with -I or -E, or through a tool "
                "that drops PYTHONPATH?), so it may have imported the workspace's code: not known to fail at the "
                "baseline")
    before = there.cases.get(item.subject)
    if before is None:
        whole = _file_failure(there.cases, item.subject)
        if whole is not None:
            return f"its file failed as a whole at the baseline ({_describe(whole)}), so it never ran there"
        if there.ending.stopped_early:
            return f"the baseline run stopped before its end ({there.ending.stopped_early}) without it failing there"
        if there.run is not None and not there.run.lists_every_test:
            return (f"it does not fail at the baseline ({there.run.runner}'s output names only the tests that fail, "
                    "so it passed there or did not exist)")
        return "not in the baseline's results: a new (or renamed) test"
    if before.status == "failed" and _same_failure(runner, now, before):
        return _PRE_EXISTING
    if before.status == "failed":
        return (f"it fails at the baseline too, but differently (there: {_describe(before)}; here: "
                f"{_describe(now)}), so this failure is not known to be old")
    if before.status == "skipped":
        return "skipped at the baseline, so it is not known to have failed before"
    return "it passes at the baseline"


def _file_failure(cases: dict[str, junit.TestCase], test: str) -> junit.TestCase | None:
    """The failure of the file ``test`` is in, when the whole file failed (it did not load):
    vitest, jest and ``node --test`` name it ``<file>::<file>``, pytest's collection error
    ``<module>``."""
    file = test.split("::", 1)[0]
    for name in (f"{file}::{file}", file):
        case = cases.get(name)
        if case is not None and case.status == "failed" and name != test:
            return case
    return None


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
    text = text if len(text) <= _SHOWN else text[:_SHOWN] + "..."
    return f"an error: {text}" if tag == "error" else text or "failed"
