"""The repairs of a recipe's ``repair:`` section, run in the work phase before the agent's turn.

Each target runs as ``axpipe repair`` would: declared before iteration 1, judged by the
guards, reported in the exact shape of DESIGN §6 (``report.md`` and ``report.json`` in the
run folder, ``report-<n>.*`` when there are several targets) and printed. An input error
stops the run with exit 2 and an unresolved target with exit 4.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from axpipe.errors import ExitCode

if TYPE_CHECKING:
    from axpipe.lifecycle import PhaseResult, RunContext


def run_repairs(context: RunContext) -> PhaseResult:
    """Run every repair target in order; stop at the first that is refused or unresolved."""
    from axpipe.lifecycle import PhaseResult
    from axpipe.repair import Repair, RepairInputError, RepairReport
    from axpipe.rules import repairs_of
    from axpipe.work import changed_files, snapshot_files

    targets = repairs_of(context.recipe)
    resolved = []
    for index, (path, spec) in enumerate(targets, start=1):
        suffix = "" if len(targets) == 1 else f"-{index}"
        folder = context.run_dir / f"repair{suffix}"
        repairer = Repair(context.root, spec, spec.agent or context.recipe.agent, events=context.events,
                          folder=folder, on_output=context.on_output, path=path)
        before = snapshot_files(context.root)
        report: RepairReport
        try:
            repairer.prepare()
            report = repairer.run()
        except RepairInputError as error:
            _write(context, report=error.report, suffix=suffix)
            return PhaseResult("error", f"{path}: {error.message}", stop=ExitCode.INPUT_ERROR)
        finally:
            if context.driver is not None:  # a repair's edits join the goal's fingerprint scope
                from axpipe.store import goals as sql

                sql.record_edits(context.store, context.driver.goal.id,
                                 changed_files(context.root, before, snapshot_files(context.root)))
        _write(context, report=report, suffix=suffix)
        if report.status != "resolved":
            return PhaseResult("failed", f"{path} unresolved after {report.iterations_used}/{report.budget} "
                                         f"iterations: {report.last_failure}", stop=ExitCode.BUDGET_LIMITED)
        resolved.append(f"{report.command} in {report.iterations_used}/{report.budget}")
    return PhaseResult("passed", "repaired: " + "; ".join(resolved))


def _write(context: RunContext, *, report: object, suffix: str) -> None:
    from axpipe.repair import RepairReport

    assert isinstance(report, RepairReport)
    markdown = report.markdown()
    (context.run_dir / f"report{suffix}.md").write_text(markdown, encoding="utf-8")
    (context.run_dir / f"report{suffix}.json").write_text(json.dumps(report.to_json(), indent=2) + "\n",
                                                           encoding="utf-8")
    context.events.emit("repair.report", phase="work", status=report.status, markdown=markdown,
                        report=str(context.run_dir / f"report{suffix}.md"))
