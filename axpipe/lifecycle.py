"""The run lifecycle (DESIGN §3): ``lock → probe → plan → work → gate → verify → review → settle``.

The lifecycle is a list of phase functions. Each takes the :class:`RunContext` and returns a
:class:`PhaseResult`; a result with ``stop`` set ends the run with that exit code. Phases a
recipe does not declare report ``not-declared``; nothing is pretended. The orchestration
(:func:`execute`) can be tested with stand-in phases, the phases with real processes.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from axpipe import schema
from axpipe.errors import AxpipeError, ConfigError, ExitCode, Problem
from axpipe.events import EventLog
from axpipe.interfaces import CheckOutcome, CheckStatus

PHASES = ("lock", "probe", "plan", "work", "gate", "verify", "review", "settle")

# Sections this version of axpipe validates but cannot run yet. Declaring one is a config
# error rather than a silent no-op.
_UNSUPPORTED: dict[str, str] = {
    "agent": "agents (the work phase)",
    "work": "the work phase",
    "loop": "loops",
    "repair": "repair loops",
    "gate": "the gate phase",
    "scope": "scope contracts",
    "schedule": "scheduled tasks",
}


def unsupported_sections(recipe: schema.Recipe) -> list[Problem]:
    """Problems for declared sections whose phase this version does not run."""
    return [Problem(section, f"not supported by this version of axpipe ({what})")
            for section, what in _UNSUPPORTED.items() if getattr(recipe, section)]


@dataclass
class RunOptions:
    """Flags of ``axpipe run`` that are axpipe's, not Hydra's."""

    json: bool = False
    event_log: Path | None = None


@dataclass
class PhaseResult:
    """How a phase ended. ``stop`` ends the run with that exit code."""

    status: str  # passed | failed | error | not-declared | skipped
    summary: str
    stop: ExitCode | None = None


@dataclass
class RunContext:
    """Everything the phases of one run share."""

    recipe: schema.Recipe
    config: dict[str, Any]
    variables: dict[str, Any]
    root: Path
    run_dir: Path
    run_id: str
    events: EventLog
    on_output: Callable[[bytes], None] | None = None
    resources: ExitStack = field(default_factory=ExitStack)
    check_outcomes: dict[str, CheckOutcome] = field(default_factory=dict)
    store: Any = None

    @property
    def state_dir(self) -> Path:
        from axpipe.workspace import state_dir

        return state_dir(self.root)


Phase = Callable[[RunContext], PhaseResult]


def execute(context: RunContext, phases: Sequence[tuple[str, Phase]]) -> tuple[ExitCode, str]:
    """Run ``phases`` in order; return the exit code and a one-line summary."""
    events = context.events
    last = PhaseResult("passed", "nothing ran")
    with context.resources:
        for name, phase in phases:
            events.emit("phase.started", phase=name, detail=_phase_detail(context, name))
            started = time.monotonic()
            try:
                result = phase(context)
            except AxpipeError as error:
                result = PhaseResult("error", error.message, stop=error.exit_code)
            duration = round(time.monotonic() - started, 4)
            kind = "phase.skipped" if result.status == "not-declared" else "phase.finished"
            events.emit(kind, phase=name, status=result.status, summary=result.summary,
                        duration=duration)
            last = result
            if result.stop is not None:
                return result.stop, f"{name}: {result.summary}"
    return ExitCode.OK, last.summary


def _phase_detail(context: RunContext, name: str) -> str:
    if name == "probe" and context.recipe.probe is not None:
        from axpipe.process import command_text

        return command_text(context.recipe.probe)  # type: ignore[arg-type]
    return ""


# -- phases -----------------------------------------------------------------------------


def lock_phase(context: RunContext) -> PhaseResult:
    from axpipe.lock import RunLock

    lock = RunLock(context.state_dir, context.run_id)
    context.resources.enter_context(lock)
    from axpipe.store import Store

    context.store = Store(context.state_dir / "state.db")
    context.store.start_run(run_id=context.run_id, recipe=context.recipe.name, workspace=str(context.root),
                            run_dir=str(context.run_dir), pid=os.getpid())
    return PhaseResult("passed", f"holding {lock.path.relative_to(context.root)} (pid {os.getpid()})")


def probe_phase(context: RunContext) -> PhaseResult:
    recipe = context.recipe
    if recipe.probe is None:
        return PhaseResult("not-declared", "no probe declared")
    from axpipe import process
    from axpipe.errors import ExecutableNotFound

    try:
        result = process.run(recipe.probe, cwd=context.root, timeout=recipe.probe_timeout,  # type: ignore[arg-type]
                             on_output=context.on_output)
    except ExecutableNotFound as error:
        return PhaseResult("failed", f"environment not ready: {error.message}", stop=ExitCode.ENVIRONMENT)
    if result.ok:
        return PhaseResult("passed", f"environment ready ({result.describe()})")
    tail = result.output.strip().splitlines()[-3:]
    detail = f": {' / '.join(tail)}" if tail else ""
    return PhaseResult("failed", f"environment not ready: probe {result.describe()}{detail}",
                       stop=ExitCode.ENVIRONMENT)


def plan_phase(context: RunContext) -> PhaseResult:
    if context.recipe.goal is None:
        return PhaseResult("not-declared", "no goal declared")
    return PhaseResult("skipped", "plan validation and contracts are not implemented in this version")


def work_phase(context: RunContext) -> PhaseResult:
    return PhaseResult("not-declared", "no agent, work or repair declared")


def gate_phase(context: RunContext) -> PhaseResult:
    return PhaseResult("not-declared", "no gate declared")


def verify_phase(context: RunContext) -> PhaseResult:
    goal = context.recipe.goal
    if goal is None or not goal.checks:
        return PhaseResult("not-declared", "no checks declared")
    from axpipe.checking import run_check

    for check in goal.checks:
        outcome = run_check(check, root=context.root, events=context.events,
                            log_dir=context.run_dir / "checks", on_output=context.on_output)
        context.check_outcomes[check.id] = outcome
    failed = [check_id for check_id, outcome in context.check_outcomes.items() if not outcome.passed]
    total = len(context.check_outcomes)
    if failed:
        return PhaseResult("failed", f"{len(failed)} of {total} checks did not pass: {', '.join(failed)}")
    return PhaseResult("passed", f"{total} of {total} checks passed")


def review_phase(context: RunContext) -> PhaseResult:
    from axpipe.review_phase import review

    return review(context)


def settle_phase(context: RunContext) -> PhaseResult:
    outcomes = context.check_outcomes
    if not outcomes:
        return PhaseResult("passed", "nothing to settle: no checks ran")
    failed = [check_id for check_id, outcome in outcomes.items() if not outcome.passed]
    errors = [check_id for check_id, outcome in outcomes.items() if outcome.status is CheckStatus.ERROR]
    if errors:
        return PhaseResult("failed", f"checks could not run: {', '.join(errors)}", stop=ExitCode.ENVIRONMENT)
    if failed:
        return PhaseResult("failed", f"not done: {', '.join(failed)} did not pass", stop=ExitCode.FAILED)
    return PhaseResult("passed", f"all {len(outcomes)} checks passed")


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


def check_supported(recipe: schema.Recipe, recipe_name: str | None) -> None:
    """Raise a config error for sections this version cannot run."""
    problems = unsupported_sections(recipe)
    if problems:
        raise ConfigError(problems, recipe=recipe_name)
