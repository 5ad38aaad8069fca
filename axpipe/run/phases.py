"""What the phases of a run share: the run's context, a phase's result, the phase type.

Below every phase (:mod:`axpipe.run.lifecycle` imports the phases to run them; each phase
imports only these types), so no phase needs the lifecycle and the lifecycle is not a
phase's dependency.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import field
from pathlib import Path
from typing import Any

from axpipe.errors import ExitCode
from axpipe.recipe import schema
from axpipe.records import record
from axpipe.run.events import EventLog
from axpipe.workspace import state_dir

PHASES = ("lock", "probe", "plan", "work", "gate", "verify", "review", "settle")


@record
class RunOptions:
    """Flags of ``axpipe run`` that are axpipe's, not Hydra's."""

    json: bool = False
    event_log: Path | None = None
    resume: str | None = None  # --resume SWEEP: run only the jobs of that sweep that did not finish


@record
class PhaseResult:
    """How a phase ended. ``stop`` ends the run with that exit code."""

    status: str  # passed | failed | error | not-declared | skipped
    summary: str
    stop: ExitCode | None = None


@record
class Step:
    """How a part of a goal's tick ended (the driver's work, verify or settle; a unit's hard stop);
    ``stop`` ends the run (or the resume) with that code."""

    status: str
    summary: str
    stop: ExitCode | None = None


@record
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
    store: Any = None
    recipe_name: str = ""
    overrides: list[str] = field(default_factory=list)
    driver: Any = None  # axpipe.goal.driver.GoalDriver once the plan phase made one
    start_head: str | None = None  # HEAD when the run took its lock: a goal-less gate's baseline (DESIGN §8)

    @property
    def state_dir(self) -> Path:
        return state_dir(self.root)


Phase = Callable[[RunContext], PhaseResult]


def phase_result(step: Step) -> PhaseResult:
    """A step of the goal's driver as the phase that ran it ends."""
    return PhaseResult(step.status, step.summary, stop=step.stop)
