"""The lifecycle's gate phase: the unit's contracts first, then the gate narrowed to the change.

In a goal's unit, in this order:

1. **unit timeout**: a unit that ran past ``limits.unit_timeout`` is a hard stop;
2. **ignore files**: git's ignore files outside the work tree (``info/exclude``, the
   ``core.excludesFile``) go back as they were at the unit's start
   (:func:`axpipe.unit.units.restore_ignore_files`), before anything reads the tree;
3. **scope** (when the recipe declares ``scope:``): every path committed since the goal's
   baseline and every path the unit made dirty or created must be in scope, and the unit
   must not have changed those ignore files (no scope can allow them); a violation is a
   hard stop;
4. **gate** (when the recipe declares ``gate:``): the project's checks narrowed to the
   change against ``gate.baseline``, else the commit the unit started from. A failing gate
   is a hard stop too: the unit's change is quarantined and the goal waits for a person.

A hard stop moves the unit's change into the stash ``axpipe quarantine: <goal> unit <n>``,
restores the tree and blocks the goal (exit 3); see :mod:`axpipe.unit.quarantine`. Without a
goal (a recipe that repairs and gates, or only gates), a failing gate ends the run with exit
1, and the baseline is ``gate.baseline`` or the commit HEAD named when the run started
(:attr:`RunContext.start_head`).
"""

from __future__ import annotations

from pathlib import Path

from axpipe.deliver import stops as deliver_stops
from axpipe.errors import ExitCode, InputError
from axpipe.gate import baselines
from axpipe.gate.baselines import BaselineError
from axpipe.gate.narrowing import GateSettings, run_gate
from axpipe.run.phases import PhaseResult, RunContext, phase_result
from axpipe.unit import units
from axpipe.unit.quarantine import hard_stop, timed_out
from axpipe.unit.scope import Scope, check_contract


def gate(context: RunContext) -> PhaseResult:
    """Run the gate phase of ``context``."""
    recipe, driver = context.recipe, context.driver
    unit = units.current(driver)
    said: list[str] = []
    if unit is not None:
        if unit.overdue():
            return timed_out(driver, unit, "gate")
        # with `deliver:`, only the runner commits: a commit or ref it did not make is a hard stop
        committed = deliver_stops.check_refs(driver, unit, driver.refs_before)
        if committed is not None:
            return phase_result(committed)
        restored = [_shown(context.root, name) for name in units.restore_ignore_files(driver, unit, "gate")]
        if recipe.scope is not None:
            stopped = _scope(context, unit, said, restored)
            if stopped is not None:
                return stopped
        elif restored:
            said.append(f"put back git's ignore file(s) the unit changed: {', '.join(restored)}")
    if recipe.gate is None:
        if said:
            return PhaseResult("passed", "; ".join(said))
        return PhaseResult("not-declared", "no gate declared")
    return _gate(context, unit, said)


def _shown(root: Path, name: str) -> str:
    """An ignore file's path as a person reads it: from the project's folder when inside it."""
    import os

    relative = os.path.relpath(name, root)
    return relative if not relative.startswith("..") else name


def _scope(context: RunContext, unit: units.Unit, said: list[str], restored: list[str]) -> PhaseResult | None:
    driver, recipe = context.driver, context.recipe
    assert recipe.scope is not None
    scope = Scope(recipe.scope)
    try:
        # under the ignore rules the unit started with: a .gitignore edit hides and exposes nothing
        end_tree = unit.snapshot(context.root) if unit.start_tree is not None else None
        report = check_contract(context.root, scope, baseline=driver.goal.baseline, start_tree=unit.start_tree,
                                end_tree=end_tree)
    except InputError as error:  # an unanswerable contract (no repository, no baseline) fails closed
        message = error.message
        return phase_result(hard_stop(driver, unit, kind="scope",
                                      reason=f"scope contract could not be checked: {message}",
                                      external_change="a person makes the scope contract answerable (a git "
                                                      "repository with the goal's baseline) and resumes the goal"))
    context.events.emit("scope.checked", phase="gate", ok=report.ok, outside=report.outside,
                        committed=report.committed, dirty=report.dirty, scope=list(scope.patterns))
    if report.ok and not restored:
        said.append(report.summary())
        return None
    reasons = [] if report.ok else [report.summary()]
    if restored:  # outside the work tree: no scope allows it, and the next unit would start with it
        reasons.append(f"git's ignore rules outside the work tree changed: {', '.join(restored)} (put back as they "
                       "were; the unit's version is kept beside hard-stop.json)")
    return phase_result(hard_stop(
        driver, unit, kind="scope", reason=f"scope: {'; '.join(reasons)}",
        external_change="a person reviews the quarantined change; if the paths belong to the work, widen the "
                        "recipe's `scope:`; then resume the goal",
        details={"outside": [*report.outside, *restored], "scope": list(scope.patterns)}))


def _baseline(context: RunContext, unit: units.Unit | None) -> tuple[str | None, str]:
    """The revision to narrow against, and where that choice came from (DESIGN §8): the
    unit's starting commit in a goal, so a commit the user made before the unit is not the
    unit's change; HEAD when a goal-less run started, so the user's last commit is not the
    run's; ``gate.baseline`` when the recipe names one."""
    gate_spec = context.recipe.gate
    assert gate_spec is not None
    if gate_spec.baseline:
        return gate_spec.baseline, f"gate.baseline {gate_spec.baseline}"
    if unit is not None:
        if unit.start_head is None:
            raise BaselineError("the unit started before the repository's first commit, so it has no starting "
                                "commit to narrow against; set gate.baseline")
        return unit.start_head, f"the commit unit {unit.number} started from"
    if context.driver is not None:  # no open unit: a complete goal being verified again
        baseline = context.driver.goal.baseline
        if baseline is None:
            raise BaselineError("the goal was planned before the repository's first commit, so it has no baseline "
                                "to narrow against; set gate.baseline")
        return baseline, "the goal's frozen baseline"
    if context.start_head is None:
        raise BaselineError("HEAD named no commit when the run started, so the run's change has no baseline to "
                            "narrow against; commit first or set gate.baseline")
    return context.start_head, "HEAD when the run started"


def _gate(context: RunContext, unit: units.Unit | None, said: list[str]) -> PhaseResult:
    gate_spec = context.recipe.gate
    assert gate_spec is not None
    driver = context.driver
    try:
        given, origin = _baseline(context, unit)
        baseline = baselines.resolve(context.root, given, what="gate.baseline")
    except baselines.BaselineError as error:
        reason = f"gate: {error.message}"
        if unit is not None:
            return phase_result(hard_stop(driver, unit, kind="gate", reason=reason,
                                     external_change="a person makes the baseline available (or sets gate.baseline) "
                                                     "and resumes the goal"))
        return PhaseResult("failed", reason, stop=ExitCode.FAILED)
    if unit is not None:
        folder = units.artifacts_dir(context.root, unit.goal_id) / "gate" / f"unit-{unit.number}"
    elif driver is not None:
        folder = units.artifacts_dir(context.root, driver.goal.id) / "gate" / f"run-{context.run_id}"
    else:
        folder = Path(context.run_dir) / "gate"
    settings = GateSettings(phases=dict(gate_spec.phases), command=gate_spec.command,  # type: ignore[arg-type]
                            narrow=gate_spec.narrow, timeout=gate_spec.timeout)
    report = run_gate(context.root, settings, baseline=baseline, baseline_given=origin, folder=folder,
                      remaining=unit.remaining if unit is not None else None, on_output=context.on_output)
    context.events.emit("gate.finished", phase="gate", status=report.status, summary=report.summary(),
                        report=str(folder / "report.md"), baseline=baseline,
                        phases=[{"name": phase.name, "status": phase.status, "blamed": len(phase.blamed),
                                 "pre_existing": len(phase.pre_existing)} for phase in report.phases])
    if unit is not None and unit.overdue():
        return timed_out(driver, unit, "verify")
    summary = "; ".join([*said, f"{report.summary()} (report: {folder / 'report.md'})"])
    if report.ok:
        return PhaseResult("passed", summary)
    if unit is not None:
        return phase_result(hard_stop(driver, unit, kind="gate", reason=report.summary(),
                                 external_change="a person reads the gate report, and fixes or accepts the blamed "
                                                 "findings before resuming the goal",
                                 evidence=[str(folder / "report.md")]))
    return PhaseResult("failed", summary, stop=ExitCode.FAILED)
