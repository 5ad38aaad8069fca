"""The completion gate (DESIGN §4): when a goal may be called complete, and why not.

An **assured** goal completes only when every declared check's latest receipt passed with
the same goal, session, workspace, contract digest and a fingerprint equal to the current
one. Each check is reported as passed, failed, stale, running or missing, with the reason.

An **unassured** goal has no contract: it completes on a passing verification made after
the agent's last edit, and says "no assurance contract" wherever it is shown.
"""

from __future__ import annotations

from dataclasses import asdict, field
from pathlib import Path
from typing import Any

from axpipe.goal import fingerprint
from axpipe.goal.goals import Goal
from axpipe.goal.receipts import freshness, source_fingerprint
from axpipe.records import record
from axpipe.store import Store
from axpipe.store import goals as sql

NO_CONTRACT = "no assurance contract"


@record
class CheckState:
    """One check as the gate sees it."""

    id: str
    status: str  # passed | failed | stale | running | missing
    receipt: str | None
    reason: str
    held_out: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@record
class Completion:
    """The gate's verdict for a goal in a session."""

    complete: bool
    checks: list[CheckState]
    fingerprint: fingerprint.Fingerprint
    bad_success: bool = False
    notes: list[str] = field(default_factory=list)

    def blocking(self) -> list[CheckState]:
        return [check for check in self.checks if check.status != "passed"]

    def summary(self) -> str:
        blocking = self.blocking()
        if self.complete and not blocking:
            return f"every check passed on the current source ({len(self.checks)} of {len(self.checks)})"
        if not blocking:
            return "no check declared" if not self.checks else "not complete"
        return "; ".join(f"{check.id} {check.status}: {check.reason}" for check in blocking)


def evaluate(store: Store, root: Path, goal: Goal, session_id: str, *,
             current: fingerprint.Fingerprint | None = None) -> Completion:
    """Judge ``goal`` in ``session_id`` against the current source.

    ``current`` is the source's fingerprint when the caller took it with nothing run since
    (the last check's :attr:`axpipe.goal.receipts.Receipt.source`); without it the source is
    fingerprinted here."""
    if current is None:
        current = source_fingerprint(store, root, goal)  # as receipts take it: the recipe's limits
    states = [_state(store, root, goal, session_id, check, current) for check in goal.checks]
    visible = [state for state in states if not state.held_out]
    hidden = [state for state in states if state.held_out]
    bad_success = bool(hidden) and all(state.status == "passed" for state in visible) and any(
        state.status == "failed" for state in hidden)
    notes = [] if goal.assured else [NO_CONTRACT]
    if goal.assured and not current.fresh:
        notes.append(current.describe())
    # Every declared check must hold (DESIGN §4), a `found` criterion's checker included.
    # What `closes` changes is *how* a failure counts inside a unit (axpipe.unit.closing,
    # axpipe.unit.bounces): a failing closing check means "not done yet", a failing checker once
    # the closing checks pass is a QA FAIL (a bounce). Outside a unit (a re-verify,
    # `goal status`, `goal resume`'s first look) no bounce can hold the goal open, so the
    # gate itself must refuse a failing, stale or missing checker.
    complete = bool(states) and all(state.status == "passed" for state in states)
    return Completion(complete, states, current, bad_success, notes)


def _state(store: Store, root: Path, goal: Goal, session_id: str, check: dict[str, Any],
           current: fingerprint.Fingerprint) -> CheckState:
    check_id = check["id"]
    held_out = bool(check.get("held_out"))
    latest = sql.latest_receipt(store, goal.id, check_id, session_id)
    if latest is None:
        anywhere = sql.latest_receipt(store, goal.id, check_id)
        reason = ("no receipt in this session (the latest is from session "
                  f"{anywhere['session_id']})" if anywhere else "never verified")
        return CheckState(check_id, "missing", None, reason, held_out)
    receipt = latest["id"]
    if latest["status"] == "running":
        return CheckState(check_id, "running", receipt, f"started {latest['started_at']}", held_out)
    if goal.assured and latest["contract_digest"] != goal.contract_digest:
        return CheckState(check_id, "missing", receipt,
                          f"the latest receipt was made under contract {str(latest['contract_digest'])[:12]}, "
                          f"not the current {str(goal.contract_digest)[:12]}", held_out)
    if latest["status"] != "passed":
        detail = latest["summary"] or f"exit code {latest['exit_code']}"
        return CheckState(check_id, "failed", receipt, detail, held_out)
    if latest["workspace"] != str(root):
        return CheckState(check_id, "stale", receipt, f"verified in another workspace ({latest['workspace']})",
                          held_out)
    if not goal.assured:
        if goal.last_edit_at and (latest["finished_at"] or "") < goal.last_edit_at:
            return CheckState(check_id, "stale", receipt, "the agent edited files after this verification", held_out)
        return CheckState(check_id, "passed", receipt, "passed after the last edit", held_out)
    if latest["fingerprint"] is None:
        return CheckState(check_id, "stale", receipt, latest["fingerprint_reason"] or "no fresh evidence", held_out)
    if not current.fresh:
        return CheckState(check_id, "stale", receipt, current.describe(), held_out)
    stale = freshness(latest["fingerprint"], current, root)  # the source, and HEAD for history-bound checks
    if stale is not None:
        return CheckState(check_id, "stale", receipt, stale, held_out)
    return CheckState(check_id, "passed", receipt, "passed on the current source", held_out)
