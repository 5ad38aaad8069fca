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
    environment (:mod:`axpipe.evidence_env`), so the run leaves the checkout as it was."""
    python: str | None = None
    """The interpreter a Python runner uses, as the user named it (``--python``,
    ``receipts.python``); None: the project's own (:func:`axpipe.interpreter.find`)."""


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
