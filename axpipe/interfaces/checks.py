"""Check kinds (``axpipe.checks``): run one check and say whether it held."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from axpipe.process import CommandSpec, ProcessResult
from axpipe.records import record


class CheckStatus(StrEnum):
    """How a check ended."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"  # could not be run (missing program, bad input): no evidence either way


@record
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
    fingerprint: Callable[[], str | None] | None = None
    """Fingerprint of the workspace now, for kinds that compare the tree (idempotent); the
    callable returns None when the workspace has no fresh fingerprint (a symlink, a file
    changing while hashed, ...): a kind must then report an error, never a match."""


@record
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
    missing_program: str | None = None
    """With ``ERROR``: the program the check runs is not there (not on PATH, or a shell's
    "command not found"). The environment is not ready, so ``axpipe verify`` exits 5 (DESIGN
    §11); any other error (a plugin fault, an unreadable report) exits 1."""

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


# -- what a check kind may declare about the recipe around it (optional attributes) ------
#
# A CheckKind gets only its params. Optional class attributes let a kind take part in
# the recipe it is used in (see docs/plugins.md and docs/gates.md):
#
#     recipe_defaults: ClassVar[dict[str, str]] = {"scope": "scope"}
#         param -> top-level recipe key. When a check leaves the param out (None), the
#         recipe's value fills it as the recipe is validated, before the contract is
#         frozen; a param still None afterwards is a config error. (git-scope)
#
#     medium: ClassVar[str] = "browser"
#         the kind checks the running application in a browser; a `found` criterion whose
#         checker has this kind is reported as `browser` in qa-report.md.
#
#     def param_problems(self, params) -> list[tuple[str, str]]
#         the kind's own rules for its typed params, run when the recipe is validated:
#         each (path under the check's `params`, message) is a config problem (exit 2,
#         nothing runs). (browser: malformed steps)
#
#     depends_on_history: ClassVar[bool] = True
#         the verdict reads git history (commits, their messages, HEAD), not only the
#         files: the same tree can pass at one HEAD and fail at another. A goal's receipt
#         of such a check binds the HEAD commit next to the source fingerprint, and a
#         different HEAD makes it stale (axpipe.goal.receipts.freshness). (git-scope, receipts)
#
# QA and judge units are reviewers (axpipe.interfaces.reviewers.Reviewer) declared with
# `qa: true` or `judge: true`; their verdict is read by axpipe.unit.trace_verdicts from their
# output's last event, never taken from the plugin.
