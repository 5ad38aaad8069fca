"""The lifecycle's review phase (DESIGN §3, §9): a review round, then receipt verification.

A recipe's ``reviewers:`` run once on the workspace's HEAD into ``receipts.root`` (default
``.axpipe/review``); with ``receipts:`` the receipts there are then verified. A failed round
or receipts that do not verify stop the run with exit 1. A change whose checks did not pass
is not sent to reviewers: review CLIs cost time and money, and the run fails anyway.
"""

from __future__ import annotations

from pathlib import Path

from axpipe.errors import ExitCode
from axpipe.interfaces import ReceiptReport, ReceiptRequest
from axpipe.plugin import calls as plugin_calls
from axpipe.plugin import registry
from axpipe.review import receipts_text
from axpipe.review import round as review_round
from axpipe.run.phases import PhaseResult, RunContext
from axpipe.unit import units, verdict_units


def review(context: RunContext) -> PhaseResult:
    """Run the review phase of ``context``'s recipe: the round and receipts, then the QA and judge
    units (``qa: true``, ``judge: true``), all under the read-only contract (axpipe.unit.verdict_units)."""
    recipe = context.recipe
    if not recipe.reviewers and recipe.receipts is None and units.current(context.driver) is None:
        return _round_and_receipts(context)  # nothing declared, no unit to judge: the verdict machinery stays unloaded
    return verdict_units.review(context, _round_and_receipts)


def _round_and_receipts(context: RunContext) -> PhaseResult:
    recipe = context.recipe
    round_reviewers = [spec for spec in recipe.reviewers if spec is not None and not spec.judge and not spec.qa]
    if not recipe.reviewers and recipe.receipts is None:
        return PhaseResult("not-declared", "no reviewers or receipts declared")
    failing = context.driver.failed_checks() if context.driver is not None else []
    if failing:
        return PhaseResult("skipped", f"not reviewed: checks did not pass ({', '.join(failing)})")
    root = context.root / (recipe.receipts.root if recipe.receipts else review_round.DEFAULT_ROOT)
    said = ""
    if round_reviewers:
        planned = review_round.plan(round_reviewers, None)
        result = review_round.run_round(workspace=context.root, root=root, reviewers=planned,
                                        events=context.events, on_output=context.on_output)
        if not result.completed:
            reasons = result.problems + [f"{run.name}: {run.reason}" for run in result.reviewers if not run.passed]
            return PhaseResult("failed", f"review round {result.number} failed ({'; '.join(reasons)}); "
                                         f"the attempt is kept in {result.folder}", stop=ExitCode.FAILED)
        verdicts = ", ".join(f"{run.name}: {run.verdict.describe() if run.verdict else '?'}"
                             for run in result.reviewers)
        said = f"round {result.number} completed ({verdicts})"
    if recipe.receipts is None:
        return PhaseResult("passed", said) if said else PhaseResult("not-declared", "no review round declared")
    return _verify(context, root, said)


def _verify(context: RunContext, root: Path, said: str) -> PhaseResult:
    receipts = context.recipe.receipts
    assert receipts is not None
    verifier = registry.load("axpipe.receipt_verifiers", receipts.verifier)
    report = plugin_calls.call(verifier, "verify", ReceiptRequest(
        root=root, workspace=context.root, reviewers=receipts.reviewers, test_dir=receipts.test_dir,
        artifacts_dir=context.run_dir / "receipts", on_output=context.on_output, python=receipts.python),
        returns=ReceiptReport)
    context.events.emit("receipts.verified", phase="review", verifier=receipts.verifier, root=str(root),
                        ok=report.ok, problems=[problem.to_json() for problem in report.problems])
    summary = receipts_text.summary(report)
    prefix = f"{said}; " if said else ""
    if not report.ok:
        return PhaseResult("failed", prefix + summary, stop=ExitCode.FAILED)
    return PhaseResult("passed", prefix + summary)
