"""Receipt verifiers (``axpipe.receipt_verifiers``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from axpipe.interfaces.test_adapters import NamedTestResult
from axpipe.records import record

# -- receipt verifiers (axpipe.receipt_verifiers) ---------------------------------------


@record
class ReceiptRequest:
    """Verify the receipts under ``root`` against the repository at ``workspace``."""

    root: Path
    workspace: Path
    """The project folder: the top of a git work tree or, in a monorepo, a subfolder of it.
    Regression files are named from it and their tests run in it, as the reviewers did."""
    reviewers: list[str] | None = None
    """Required reviewers; None: every reviewer folder of the final round (at least one)."""
    test_dir: str = "tests"
    test_adapter: str | None = None
    """Test adapter name; None: chosen per regression file by its suffix."""
    timeout: float = 600.0
    artifacts_dir: Path | None = None
    on_output: Callable[[bytes], None] | None = None
    python: str | None = None
    """The interpreter that runs Python regression tests (``--python``, ``receipts.python``);
    None: the project's own (:func:`axpipe.evidence.interpreter.find`)."""


@record
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


@record
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
