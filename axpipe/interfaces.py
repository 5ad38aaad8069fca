"""The plugin interfaces, documented once (DESIGN §10, §13).

A plugin is any object an entry point names (a class is instantiated with no arguments).
Each kind of plugin satisfies one :class:`typing.Protocol` below. A plugin that takes
parameters declares ``params_schema``: a dataclass whose fields are validated exactly like
recipe keys (types, ``metadata={"doc", "min", "max", "choices"}``), so a typo in a
plugin's parameter is a config error naming its path before anything runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # plugin modules import this one; keep their import cheap
    from axpipe.process import CommandSpec, ProcessResult


class CheckStatus(StrEnum):
    """How a check ended."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"  # could not be run (missing program, bad input): no evidence either way


@dataclass
class CheckRequest:
    """Everything a check kind gets to run one check."""

    check_id: str
    command: CommandSpec | None
    params: Any
    cwd: Path
    timeout: float
    env: Mapping[str, str] = field(default_factory=dict)
    artifacts_dir: Path | None = None
    on_output: Callable[[bytes], None] | None = None
    fingerprint: Callable[[], str] | None = None
    """Fingerprint of the workspace now, for kinds that compare the tree (idempotent)."""


@dataclass
class CheckOutcome:
    """The result of one check: data, not an exception."""

    status: CheckStatus
    summary: str
    exit_code: int | None = None
    output_tail: str = ""
    output_bytes: int = 0
    duration: float = 0.0
    matched_line: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.status is CheckStatus.PASSED

    @classmethod
    def from_process(cls, status: CheckStatus, summary: str, result: ProcessResult,
                     **extra: Any) -> CheckOutcome:
        return cls(status=status, summary=summary, exit_code=result.exit_code,
                   output_tail=result.output, output_bytes=result.total_bytes,
                   duration=result.duration, **extra)


@runtime_checkable
class CheckKind(Protocol):
    """A kind of check (``axpipe.checks``); also usable as a repair's success condition."""

    params_schema: type | None
    """Dataclass of the kind's parameters, or None when it takes none."""

    needs_command: bool
    """Whether a check of this kind must have a ``command``."""

    def describe(self, params: Any) -> str:
        """The condition in words, as the repair report prints it before iteration 1."""
        ...

    def run(self, request: CheckRequest) -> CheckOutcome:
        """Run the check once and say whether it held. Must not raise for a failing check."""
        ...


# -- reviewers (axpipe.reviewers) --------------------------------------------------------


@dataclass
class ReviewRequest:
    """What a reviewer plugin needs to build the command of one review."""

    name: str
    """The reviewer's folder name in the round (``round-<n>/<name>/``)."""
    command: CommandSpec | None
    """The recipe's ``command``, or None to use the plugin's own (presets)."""
    model: str | None
    params: Any
    prompt: str
    """The rendered prompt."""
    prompt_file: Path
    """Where the rendered prompt is written (also in ``AXPIPE_PROMPT_FILE``)."""
    workspace: Path


@dataclass
class ReviewInvocation:
    """How to run one review: the round runner runs it and records what happened."""

    command: CommandSpec
    timeout: float
    stdin: bytes | None = None
    env: dict[str, str] = field(default_factory=dict)


@runtime_checkable
class Reviewer(Protocol):
    """A review CLI (``axpipe.reviewers``). The plugin only says how to call the CLI and in
    which format it answers; the round runner runs it, keeps its output, and reads the
    verdict itself (:mod:`axpipe.verdicts`), so a plugin cannot declare a review successful."""

    params_schema: type | None

    def output_format(self, params: Any) -> str:
        """``"text"`` (kept as ``stdout.txt``) or ``"jsonl"`` (an event stream, ``stdout.jsonl``)."""
        ...

    def prompt_template(self, params: Any) -> str:
        """The jinja2 source of the prompt (see docs/reviews.md for its variables)."""
        ...

    def invocation(self, request: ReviewRequest) -> ReviewInvocation:
        """The command (and stdin, environment, timeout) that runs the review."""
        ...


# -- test adapters (axpipe.test_adapters) -----------------------------------------------


@dataclass(frozen=True)
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


@dataclass
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


@dataclass
class TestRunRequest:
    """Run the files of ``tests`` once, with retries disabled, in ``workspace``."""

    __test__ = False  # not a pytest test class

    workspace: Path
    tests: list[NamedTest]
    timeout: float
    artifacts_dir: Path
    on_output: Callable[[bytes], None] | None = None


@dataclass
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


# -- receipt verifiers (axpipe.receipt_verifiers) ---------------------------------------


@dataclass
class ReceiptRequest:
    """Verify the receipts under ``root`` against the repository at ``workspace``."""

    root: Path
    workspace: Path
    reviewers: list[str] | None = None
    """Required reviewers; None: every reviewer folder of the final round (at least one)."""
    test_dir: str = "tests"
    test_adapter: str | None = None
    """Test adapter name; None: chosen per regression file by its suffix."""
    timeout: float = 600.0
    artifacts_dir: Path | None = None
    on_output: Callable[[bytes], None] | None = None


@dataclass
class ReceiptProblem:
    """One reason the receipts do not verify, with the round, reviewer and finding involved."""

    rule: str
    message: str
    round: int | None = None
    reviewer: str | None = None
    finding: str | None = None

    def where(self) -> str:
        parts = []
        if self.round is not None:
            parts.append(f"round-{self.round}" + (f"/{self.reviewer}" if self.reviewer else ""))
        elif self.reviewer:
            parts.append(self.reviewer)
        if self.finding:
            parts.append(f"finding {self.finding}")
        return " ".join(parts)

    def render(self) -> str:
        where = self.where()
        return f"[{self.rule}] {where + ': ' if where else ''}{self.message}"

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "round": self.round, "reviewer": self.reviewer, "finding": self.finding,
                "message": self.message}


@dataclass
class ReceiptReport:
    """The verifier's answer: every problem found (none means verified) and what it looked at."""

    problems: list[ReceiptProblem]
    head: str | None = None
    rounds: list[dict[str, Any]] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)
    tests: list[NamedTestResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


@runtime_checkable
class ReceiptVerifier(Protocol):
    """Checks a folder of review receipts (``axpipe.receipt_verifiers``)."""

    def verify(self, request: ReceiptRequest) -> ReceiptReport:
        """Every problem with the receipts; never raises for receipts that do not verify."""
        ...
