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


class AgentStatus(StrEnum):
    """How an agent's turn ended."""

    DONE = "done"  # exited 0
    FAILED = "failed"  # exited non-zero or was killed
    STOPPED = "stopped"  # a non-autonomous agent reached a permission prompt
    TIMED_OUT = "timed-out"
    ERROR = "error"  # could not be started (missing program)


@dataclass
class AgentRequest:
    """One turn of an agent: the rendered prompt and where and how to run.

    ``env`` already holds the pinned variables (DESIGN §13): ``AXPIPE_PROMPT_FILE``,
    ``AXPIPE_GOAL_ID``, ``AXPIPE_ITERATION``, ``AXPIPE_USAGE_FILE``, and in a repair
    ``AXPIPE_FAILURE_FILE``; plus ``AXPIPE_BLOCKED_FILE`` (see docs/goals.md).
    """

    prompt: str
    prompt_file: Path
    cwd: Path
    env: Mapping[str, str]
    timeout: float
    autonomous: bool
    params: Any
    model: str | None = None
    on_output: Callable[[bytes], None] | None = None


@dataclass
class AgentOutcome:
    """The result of an agent's turn: data, not an exception."""

    status: AgentStatus
    summary: str
    exit_code: int | None = None
    output_tail: str = ""
    duration: float = 0.0
    prompt: str | None = None  # the permission prompt that stopped a non-autonomous agent


@runtime_checkable
class Agent(Protocol):
    """A program that does work or repairs (``axpipe.agents``): a coding CLI, a codemod, a fixer."""

    params_schema: type | None

    def run(self, request: AgentRequest) -> AgentOutcome:
        """Make one turn of changes in ``request.cwd``. Must not raise for a failing turn."""
        ...
