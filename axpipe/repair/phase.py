"""The repairs of a recipe's ``repair:`` section, run in the work phase before the agent's turn.

Each target runs as ``axpipe repair`` would: declared before iteration 1, judged by the
guards, reported in the exact shape of DESIGN §6 (``report.md`` and ``report.json`` in the
run folder, ``report-<n>.*`` when there are several targets) and printed. Every target is
declared (and so validated) before the first one runs, so an input error (exit 2) stops
the run before any repair has changed the code; an unresolved target stops it with exit 4.

In a goal's tick the repairs are work of that tick: their tokens and iterations count into
the goal's budget (:meth:`axpipe.goal.driver.GoalDriver.account`), and a repair stops before its
next fix once that budget is spent, leaving the goal's driver to wrap up.
"""

from __future__ import annotations

import json

from axpipe.errors import ExitCode
from axpipe.goal.turn import changed_files, snapshot_files
from axpipe.recipe import schema
from axpipe.recipe.rules import repairs_of
from axpipe.repair.engine import Repair, RepairInputError, RepairReport
from axpipe.run.phases import PhaseResult, RunContext
from axpipe.store import goals as sql


def run_repairs(context: RunContext) -> PhaseResult:
    """Declare every repair target, then run them in order; stop at the first that is
    unresolved (or stopped by the goal's budget: ``stop`` is then None, the driver decides)."""
    targets = repairs_of(context.recipe)
    suffixes = ["" if len(targets) == 1 else f"-{index}" for index in range(1, len(targets) + 1)]
    repairers = [_repairer(context, path, spec, suffix) for (path, spec), suffix in zip(targets, suffixes, strict=True)]
    for (path, _), suffix, repairer in zip(targets, suffixes, repairers, strict=True):
        try:
            repairer.prepare()  # a derivation's edit is refused and reverted by prepare itself
        except RepairInputError as error:
            _write(context, report=error.report, suffix=suffix)
            return PhaseResult("error", f"{path}: {error.message}", stop=ExitCode.INPUT_ERROR)
    resolved = []
    for (path, _), suffix, repairer in zip(targets, suffixes, repairers, strict=True):
        before = snapshot_files(context.root)
        try:
            report = repairer.run()
        finally:
            if context.driver is not None:  # a repair's edits join the goal's fingerprint scope
                sql.record_edits(context.store, context.driver.goal.id,
                                 changed_files(context.root, before, snapshot_files(context.root)))
        _write(context, report=report, suffix=suffix)
        if report.status != "resolved" and repairer.goal_spent is not None:
            return PhaseResult("failed", f"{path} stopped after {report.iterations_used}/{report.budget} iterations: "
                                         f"the goal's {repairer.goal_spent} is spent")
        if report.status != "resolved":
            return PhaseResult("failed", f"{path} unresolved after {report.iterations_used}/{report.budget} "
                                         f"iterations: {report.last_failure}", stop=ExitCode.BUDGET_LIMITED)
        resolved.append(f"{report.command} in {report.iterations_used}/{report.budget}")
    return PhaseResult("passed", "repaired: " + "; ".join(resolved))


def _repairer(context: RunContext, path: str, spec: schema.Repair, suffix: str) -> Repair:
    driver = context.driver
    account = None
    if driver is not None:
        def account(tokens: int, steps: int, cost: float | None) -> str | None:
            spent: str | None = driver.account(tokens=tokens, steps=steps, cost=cost)
            return spent

    return Repair(context.root, spec, spec.agent or context.recipe.agent, events=context.events,
                  folder=context.run_dir / f"repair{suffix}", on_output=context.on_output, path=path,
                  agent_source=f"{path}.agent.command" if spec.agent is not None else "agent.command",
                  account=account)


def _write(context: RunContext, *, report: object, suffix: str) -> None:
    assert isinstance(report, RepairReport)
    markdown = report.markdown()
    (context.run_dir / f"report{suffix}.md").write_text(markdown, encoding="utf-8")
    (context.run_dir / f"report{suffix}.json").write_text(json.dumps(report.to_json(), indent=2) + "\n",
                                                           encoding="utf-8")
    context.events.emit("repair.report", phase="work", status=report.status, markdown=markdown,
                        report=str(context.run_dir / f"report{suffix}.md"))
