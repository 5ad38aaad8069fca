"""Test adapters (``axpipe.test_adapters``): run named tests exactly once."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from axpipe.records import record

# -- test adapters (axpipe.test_adapters) -----------------------------------------------


@record(frozen=True)
class NamedTest:
    """A test named by a regression: the repository file and the runner's exact full name."""

    file: str
    full_name: str


class NamedTestStatus(StrEnum):
    """What happened to a named test in one run."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    MISSING = "missing"


@record
class NamedTestResult:
    """One named test's result: its status and how many times it was executed (exactly 1 is
    what a regression needs; more means the name is ambiguous)."""

    test: NamedTest
    status: NamedTestStatus
    executions: int
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"file": self.test.file, "fullName": self.test.full_name, "status": self.status.value,
                "executions": self.executions, "note": self.note}


@record
class TestRunRequest:
    """Run the files of ``tests`` once, with retries disabled, in ``workspace``."""

    __test__ = False  # not a pytest test class

    workspace: Path
    tests: list[NamedTest]
    timeout: float
    artifacts_dir: Path
    on_output: Callable[[bytes], None] | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    """Variables to run the tests with, on top of the inherited ones: the evidence
    environment (:mod:`axpipe.evidence.env`), so the run leaves the checkout as it was."""
    python: str | None = None
    """The interpreter a Python runner uses, as the user named it (``--python``,
    ``receipts.python``); None: the project's own (:func:`axpipe.evidence.interpreter.find`)."""


@record
class TestRunReport:
    """Per named test, what happened; ``error`` when the runner could not run at all."""

    __test__ = False

    results: list[NamedTestResult]
    commands: list[str] = field(default_factory=list)
    error: str | None = None
    output_tail: str = ""


@runtime_checkable
class TestAdapter(Protocol):
    """Runs named tests exactly once (``axpipe.test_adapters``): no retries, no reruns, no
    random order, and matches full names exactly (never by prefix)."""

    suffixes: tuple[str, ...]
    """File suffixes this adapter runs (``.py``); picks the adapter for a regression file."""

    def run(self, request: TestRunRequest) -> TestRunReport:
        """Run the named tests' files once and report every named test (never raises for a
        failing test; ``error`` for a runner that cannot start)."""
        ...


# -- the gate's test phase (optional methods of a test adapter) ---------------------------


@record
class GateTestRun:
    """How an adapter runs a gate's test command so the gate learns which tests failed
    (DESIGN §8, "test identities without report flags"), returned by ``gate_command``.

    ``command`` is what runs, here and at the baseline: the command as written with the
    adapter's report option added (``added``) and its fail-fast options taken out
    (``removed``: a run that stops early proves nothing about the tests it skips), plus the
    runner's own "never stop early" setting where it has one, so a configuration file's
    ``-x`` or ``bail`` loses too."""

    runner: str
    """The runner's name as a person knows it (``pytest``, ``vitest``, ``node --test``)."""
    command: str | list[str]
    removed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    language: str = ""
    """``python`` or ``node`` when the runner is one of theirs: the gate then isolates the
    baseline's run the way that language resolves code, and for ``python`` requires proof
    that it did (DESIGN §8, "the baseline run must run the baseline's code")."""
    report: str | None = None
    """A file the runner writes that ``gate_finish`` reads (deleted before each run)."""
    lists_every_test: bool = True
    """False when the results name only failing tests (a runner's text output): a test absent
    from them did not fail, which is not the same as "does not exist"."""


@record
class GateTestEnding:
    """What ``gate_finish`` learned from a run besides the JUnit XML it left."""

    stopped_early: str = ""
    """Why the run is known to have ended before running every test (an interruption, a
    crash, a configuration the command cannot override): tests after that point did not run."""
    outside_tests: str = ""
    """Errors the runner reported outside any test (vitest's unhandled errors): they fail the
    run without a test to narrow to."""


@runtime_checkable
class GateTestAdapter(Protocol):
    """The optional half of a test adapter that narrows the gate's test phase.

    ``gate_command`` returns None when ``command`` is not this adapter's runner; otherwise how
    to run it so that JUnit XML ends up at ``junit`` (the runner's own report option, or
    ``gate_finish`` writing it from the runner's JSON report or its output). Both are pure
    apart from ``gate_finish`` writing ``junit``; neither runs anything."""

    def gate_command(self, command: str | list[str], junit: Path) -> GateTestRun | None:
        ...

    def gate_finish(self, run: GateTestRun, junit: Path, output: str, exit_code: int | None,
                    cwd: Path) -> GateTestEnding:
        """After a run of ``run.command`` in ``cwd`` that printed ``output`` and ended with
        ``exit_code`` (None: killed): JUnit XML at ``junit`` if the runner did not write it
        itself, and what else the run showed."""
        ...
