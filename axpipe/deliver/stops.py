"""Delivery's part in a unit after its work (DESIGN §16); nothing without ``deliver:``.

- :func:`check_refs`, in the gate phase before scope and gate, and again before the commit:
  a commit or ref the runner did not make is a hard stop (the unit is quarantined, the goal
  blocked, exit 3);
- :func:`commit`, in the settle phase once the unit passed scope and gate and its checks ran:
  the runner's commit of the unit, its trailer naming the receipts the completion gate judges;
- :func:`complete`, when the goal completed: contract, upstream, push, pull request
  (:mod:`axpipe.deliver.push`).
"""

from __future__ import annotations

from typing import Any

from axpipe.deliver import commits, push, record, refs
from axpipe.deliver.repo import DeliverError
from axpipe.errors import ExitCode
from axpipe.goal import completion, goals
from axpipe.run.phases import PhaseResult, Step
from axpipe.store import goals as goal_sql
from axpipe.unit import units
from axpipe.unit.quarantine import hard_stop
from axpipe.workspace import git_top

ONLY_THE_RUNNER = ("a person looks at the quarantined unit; with `deliver:` agents must not commit, push or move "
                   "refs (the runner commits each unit): fix the agent's configuration, then resume the goal")


def check_refs(driver: Any, unit: units.Unit, before: dict[str, str] | None) -> Step | None:
    """The hard stop of a unit during which something other than the runner committed or moved a ref."""
    if driver.recipe.deliver is None or before is None:
        return None
    moved = refs.moved(before, refs.snapshot(driver.root))
    if not moved:
        return None
    driver.events.emit("deliver.refs_moved", unit=unit.number, moved=moved)
    return hard_stop(driver, unit, kind="deliver-refs",
                     reason=f"deliver: only the runner commits; during unit {unit.number}: {'; '.join(moved)}",
                     external_change=ONLY_THE_RUNNER, details={"moved": moved})


def commit(driver: Any, unit: units.Unit, before: dict[str, str] | None,
           verdict: completion.Completion) -> Step | None:
    """The runner's commit of ``unit``; a Step when it is a hard stop instead."""
    if driver.recipe.deliver is None:
        return None
    stopped = check_refs(driver, unit, before)
    if stopped is not None:
        return stopped
    delivery = record.load(driver.root, driver.goal.id)
    try:
        if delivery is None or unit.start_tree is None:
            raise DeliverError("the unit began without a task branch or a snapshot of the tree")
        receipts = []
        for state in verdict.checks:
            row = goal_sql.get_receipt(driver.store, state.receipt) if state.receipt else None
            if row is not None:
                receipts.append(("held-out" if state.held_out else state.id, state.status,
                                 commits.receipt_digest(row)))
        top = git_top(driver.root) or driver.root
        made = commits.commit_unit(driver.root, top, delivery, start_head=unit.start_head,
                                   start_tree=unit.start_tree, end_tree=unit.snapshot(driver.root),
                                   unit=unit.number, contract=driver.goal.contract_digest, receipts=receipts)
    except DeliverError as error:
        return hard_stop(driver, unit, kind="deliver-commit",
                         reason=f"deliver: commit of unit {unit.number}: {error.message}",
                         external_change="a person looks at the quarantined unit and the task branch, then resumes "
                                         "the goal")
    driver.events.emit("deliver.committed", phase="settle", unit=unit.number, commit=made,
                       branch=delivery.branch, summary="no change to commit" if made is None else None)
    return None


def complete(context: Any) -> PhaseResult | None:
    """Deliver a goal that just completed; None without ``deliver:``."""
    driver = context.driver
    if context.recipe.deliver is None or driver is None or driver.goal.status != "complete":
        return None
    delivery = commits.refreshed(context.root, context.recipe.deliver, driver.goal.id)
    if delivery is not None:
        record.save(context.root, delivery)  # this run's `deliver:` (a corrected deliver.pr) is what is used
    outcome = push.deliver(context.root, driver.store, driver.goal, driver.session_id, events=context.events)
    context.events.emit("deliver.finished", phase="settle", status=outcome.status, summary=outcome.message,
                        tip=outcome.tip)
    driver.goal = goals.reload(driver.store, driver.goal)
    status = "passed" if outcome.exit_code == ExitCode.OK else "failed"
    return PhaseResult(status, f"complete; {outcome.message}", stop=outcome.exit_code)
