"""The run lifecycle (DESIGN §3): ``lock → probe → plan → work → gate → verify → review → settle``.

The lifecycle is a list of phase functions. Each takes the :class:`RunContext` and returns a
:class:`PhaseResult`; a result with ``stop`` set ends the run with that exit code. Phases a
recipe does not declare report ``not-declared``; nothing is pretended. The orchestration
(:func:`execute`) can be tested with stand-in phases, the phases with real processes.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

from axpipe import process
from axpipe.error_handler import report
from axpipe.errors import AxpipeError, ExecutableNotFound, ExitCode
from axpipe.evidence import env as evidence_env
from axpipe.gate.phase import gate
from axpipe.goal import completion, coverage, goals
from axpipe.goal.driver import GoalDriver
from axpipe.process import command_text
from axpipe.repair.phase import run_repairs
from axpipe.review.phase import review
from axpipe.run.lock import RunLock
from axpipe.run.phases import Phase, PhaseResult, RunContext, Step
from axpipe.schedule import check_recipe_tasks, describe_changes, register_recipe_tasks
from axpipe.store import locate
from axpipe.unit import units
from axpipe.unit.bounces import settle
from axpipe.unit.units import head


def execute(context: RunContext, phases: Sequence[tuple[str, Phase]]) -> tuple[ExitCode, str]:
    """Run ``phases`` in order; return the exit code and a one-line summary."""
    last = PhaseResult("passed", "nothing ran")
    with context.resources:
        for name, phase in phases:
            last = run_phase(context, name, phase, detail=_phase_detail(context, name))
            if last.stop is not None:
                return last.stop, f"{name}: {last.summary}"
    return ExitCode.OK, last.summary


def run_phase(context: RunContext, name: str, phase: Phase, *, detail: str = "", **tags: Any) -> PhaseResult:
    """Run one phase with its ``phase.started`` and ``phase.finished`` (or ``phase.skipped``)
    events, ``tags`` added to both; an axpipe error ends the phase with its exit code as the stop."""
    events = context.events
    events.emit("phase.started", phase=name, **tags, detail=detail)
    started = time.monotonic()
    try:
        result = phase(context)
    except AxpipeError as error:
        result = PhaseResult("error", error.message, stop=error.exit_code)
    kind = "phase.skipped" if result.status == "not-declared" else "phase.finished"
    events.emit(kind, phase=name, **tags, status=result.status, summary=result.summary,
                duration=round(time.monotonic() - started, 4))
    return result


def _phase_detail(context: RunContext, name: str) -> str:
    if name == "probe" and context.recipe.probe is not None:
        return command_text(context.recipe.probe)  # type: ignore[arg-type]
    return ""


# -- phases -----------------------------------------------------------------------------


def lock_phase(context: RunContext) -> PhaseResult:
    lock = RunLock(context.state_dir, context.run_id)
    try:
        context.resources.enter_context(lock)
        context.store = locate.open_store(context.root)
    except AxpipeError as error:  # a held lock, an unusable store: an error like any other, on stderr
        report(error.message)
        raise
    if context.recipe.gate is not None:
        context.start_head = head(context.root)
    context.store.start_run(run_id=context.run_id, recipe=context.recipe.name, workspace=str(context.root),
                            run_dir=str(context.run_dir), pid=os.getpid())
    return PhaseResult("passed", f"holding {lock.path.relative_to(context.root)} (pid {os.getpid()})")


def probe_phase(context: RunContext) -> PhaseResult:
    recipe = context.recipe
    if recipe.probe is None:
        return PhaseResult("not-declared", "no probe declared")
    try:
        result = process.run(recipe.probe, cwd=context.root, timeout=recipe.probe_timeout,  # type: ignore[arg-type]
                             env=evidence_env.variables(context.root), on_output=context.on_output)
    except ExecutableNotFound as error:
        return PhaseResult("failed", f"environment not ready: {error.message}", stop=ExitCode.ENVIRONMENT)
    if result.ok:
        return PhaseResult("passed", f"environment ready ({result.describe()})")
    tail = result.output.strip().splitlines()[-3:]
    detail = f": {' / '.join(tail)}" if tail else ""
    return PhaseResult("failed", f"environment not ready: probe {result.describe()}{detail}",
                       stop=ExitCode.ENVIRONMENT)


def _register_schedule(context: RunContext, now: Any = None) -> str:
    """Register the recipe's ``schedule:`` tasks (as checked at ``now``); what changed, in
    words ("" without one)."""
    if not context.recipe.schedule:
        return ""
    changes = register_recipe_tasks(context.store, context.recipe, context.recipe_name, context.root, now)
    for task_id, change in changes:
        context.events.emit("schedule.registered", phase="plan", task=task_id, change=change)
    return describe_changes(changes)


def plan_phase(context: RunContext) -> PhaseResult:
    if context.recipe.goal is None:
        registered = _register_schedule(context)
        if registered:
            return PhaseResult("passed", registered)
        return PhaseResult("not-declared", "no goal declared")
    checked = None
    if context.recipe.schedule:  # a schedule the plan would refuse must not leave a new session behind
        checked = check_recipe_tasks(context.store, context.recipe, context.recipe_name, context.root)
    from axpipe import templates
    from axpipe.recipe.libraries import prompt_folders
    from axpipe.unit.planner import prepare
    from axpipe.workspace import load_project

    templates.use_library_prompts(prompt_folders(load_project(context.root)))  # a team's own prompts first

    parked = prepare(context)  # the task file, the planner, its criteria (DESIGN §14); a refused plan parks
    if parked is not None:
        return parked
    planned = goals.plan(context.store, context.root, context.recipe, recipe_name=context.recipe_name,
                         variables=context.variables, overrides=context.overrides, events=context.events)
    # Only a plan that was accepted registers its schedule: a refused one (a contract
    # mismatch) must leave the stored tasks as they were.
    registered = _register_schedule(context, checked)
    goal = planned.goal
    context.driver = GoalDriver(context.store, context.root, context.recipe, planned, events=context.events,
                                variables=context.variables, on_output=context.on_output)
    from axpipe.unit import prototype

    stopped = prototype.run(context)  # once per goal, before its first implementer unit (DESIGN §14)
    if stopped is not None and stopped.stop is not None:
        return stopped
    verb = "created" if planned.created else "complete; re-verifying it" if planned.already_complete \
        else "continued"
    frozen = f"contract {goal.contract_digest[:12]}" if goal.contract_digest else "no assurance contract"
    note = f"; {registered}" if registered else ""
    return PhaseResult("passed", f"goal {goal.id} {verb} in session {planned.session_id}; {frozen}, "
                                 f"baseline {(goal.baseline or 'none')[:12]}{note}")


def _driven(context: RunContext, part: str, undeclared: str) -> PhaseResult:
    if context.driver is None:
        return PhaseResult("not-declared", undeclared)
    step = getattr(context.driver, part)()
    return PhaseResult(step.status, step.summary, stop=step.stop)


def work_phase(context: RunContext) -> PhaseResult:
    """Repairs first (``repair:``), then the agent's turn on the goal.

    With a goal, the repairs are the tick's work like the agent's turn: the goal's status and
    budget are checked before them (a complete goal does no work, a spent budget repairs
    nothing), and what they use counts into its budget (DESIGN §4)."""
    if not context.recipe.repair:
        return _driven(context, "work", "no goal, agent or repair declared")
    driver = context.driver
    if driver is None:
        return run_repairs(context)
    previous = driver.unit
    started = driver.begin_work()
    if started is not None:
        step = driver.ended(started, previous)
        return PhaseResult(step.status, step.summary, stop=step.stop)
    repaired = run_repairs(context)
    if repaired.stop is not None:
        stopped = Step(repaired.status, repaired.summary, stop=repaired.stop)
        if repaired.stop is not ExitCode.INPUT_ERROR:  # a refused declaration ran no iteration
            driver.stopped_early(stopped)
        driver.ended(stopped, previous)
        return repaired
    turn = driver.ended(driver.take_turn(), previous)
    status = repaired.status if turn.status == "not-declared" else turn.status
    return PhaseResult(status, f"{repaired.summary}; {turn.summary}", stop=turn.stop)


def gate_phase(context: RunContext) -> PhaseResult:
    return gate(context)  # the unit's timeout and scope contract first, then the narrowed gate


def verify_phase(context: RunContext) -> PhaseResult:
    return _driven(context, "verify", "no checks declared")


def review_phase(context: RunContext) -> PhaseResult:
    result = review(context)
    if result.status != "not-declared" and context.driver is not None:
        context.driver.verified_source = None  # reviewers ran: settle fingerprints the source again
    return result


def settle_phase(context: RunContext) -> PhaseResult:
    if context.driver is None:
        return PhaseResult("passed", "nothing to settle: no goal declared")
    # Deferred: the delivery code costs ~100 ms of start-up, and only a goal that completes uses it
    from axpipe.deliver import stops as deliver_stops

    driver = context.driver
    driver.goal = goals.reload(driver.store, driver.goal)
    # One completion verdict for the whole phase: only axpipe's own records are written
    # between the QA report and the gate, so a second fingerprint would see the same tree.
    # For the same reason the source verify's last check left stands for the current one
    # when nothing ran after it (no reviewers).
    verdict = completion.evaluate(driver.store, context.root, driver.goal, driver.session_id,
                                  current=driver.verified_source)
    driver.verified_source = None
    unit = units.current(driver)
    if unit is not None and not unit.overdue():  # it passed scope and gate: with `deliver:`, the runner commits it
        stopped = deliver_stops.commit(driver, unit, driver.refs_before, verdict)
        if stopped is not None:
            return PhaseResult(stopped.status, stopped.summary, stop=stopped.stop)
    held = settle(context, verdict)  # qa-report.md, then the unit's timeout and verdicts (docs/gates.md)
    if held is not None:
        return held
    step = driver.settle(verdict)
    if context.recipe.coverage is not None:
        data = coverage.report(context.store, context.root, context.recipe_name, context.recipe.coverage)
        context.events.emit("goal.coverage", phase="settle", summary=coverage.describe(data), **data)
    if step.stop == ExitCode.OK:
        delivered = deliver_stops.complete(context)  # with `deliver:`: contract, push, pull request
        if delivered is not None:
            return delivered
    if step.stop is None:  # one pass of `axpipe run` leaves an unfinished goal active
        return PhaseResult(step.status, f"goal still active: {step.summary}", stop=ExitCode.NOT_TERMINAL)
    return PhaseResult(step.status, step.summary, stop=step.stop)


def settle_tick_phase(context: RunContext) -> PhaseResult:
    """``settle`` for a driver that ticks again (a loop, ``goal resume``): a goal that stays
    active is not a stop, the next tick goes on."""
    result = settle_phase(context)
    driver = context.driver
    if driver is not None and result.stop == ExitCode.NOT_TERMINAL and driver.goal.status == "active":
        return PhaseResult(result.status, result.summary)
    return result


# One unit of a goal that is already planned: what a loop's tick and `goal resume` repeat.
UNIT_PHASES: list[tuple[str, Phase]] = [
    ("work", work_phase),
    ("gate", gate_phase),
    ("verify", verify_phase),
    ("review", review_phase),
    ("settle", settle_tick_phase),
]

DEFAULT_PHASES: list[tuple[str, Phase]] = [
    ("lock", lock_phase),
    ("probe", probe_phase),
    ("plan", plan_phase),
    ("work", work_phase),
    ("gate", gate_phase),
    ("verify", verify_phase),
    ("review", review_phase),
    ("settle", settle_phase),
]

