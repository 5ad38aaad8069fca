"""A unit of work: one pass of work → gate → verify → review → settle on a goal.

:func:`begin` is called by :meth:`axpipe.goal.driver.GoalDriver.work` before the agent runs. It
records where the unit starts (HEAD, the branch, a snapshot of the whole working tree with
its untracked files, git's index, git's ignore rules, and the exact bytes of the files
that were dirty or untracked: :func:`axpipe.change.revert.mark`), so that a hard stop can move
exactly what the unit changed into a stash and put the tree back (:mod:`axpipe.unit.quarantine`).
Every later snapshot of the unit (:meth:`Unit.snapshot`) applies the ignore rules of its start
(:mod:`axpipe.change.ignore_rules`): what the agent does to ``.gitignore`` or ``info/exclude``
changes neither what counts as its work nor what a quarantine may remove.

It also arms the unit timeout (``limits.unit_timeout``): when the unit runs longer, every
process it started is killed and the unit is marked expired; the next phase boundary turns
that into a hard stop with the evidence kept. Plugin code (a check kind, an agent) still
running a grace after that is interrupted in the main thread (:mod:`axpipe.plugin.calls`):
its receipt or turn is an error, "timed out in plugin code".
"""

from __future__ import annotations

import threading
import time
from dataclasses import field
from pathlib import Path
from typing import Any, Protocol

from axpipe import git, process
from axpipe.change import from_git, revert
from axpipe.change.ignore_rules import IgnoreRules, restore_outside
from axpipe.goal.goals import Goal, folder_name
from axpipe.plugin import calls as plugin_calls
from axpipe.recipe.schema import Recipe
from axpipe.records import record
from axpipe.run.events import EventLog
from axpipe.store import Store
from axpipe.store import units as sql
from axpipe.task.files import record_bounces
from axpipe.workspace import state_dir


class Driving(Protocol):
    """What a unit needs of the goal's driver (:class:`axpipe.goal.driver.GoalDriver`, which
    begins and ends its units): the unit layer sits below the driver and names only this."""

    store: Store
    root: Path
    recipe: Recipe
    goal: Goal
    session_id: str
    events: EventLog
    interrupted: str | None

    def exhausted(self, running: float = 0.0) -> str | None: ...

    def tick_elapsed(self) -> float: ...


@record
class Unit:
    """One unit of a goal, and what is known about where it started."""

    goal_id: str
    number: int
    session_id: str
    start_head: str | None
    start_ref: str | None
    start_tree: str | None
    index: bytes | None
    timeout: float
    started: float = field(default_factory=time.monotonic)
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    expired: bool = False
    closed: bool = False
    _timer: threading.Timer | None = None
    _over: threading.Event = field(default_factory=threading.Event)
    rules: IgnoreRules | None = None  # git's ignore rules when the unit started
    raw_blobs: dict[str, str] = field(default_factory=dict)  # dirty or untracked file -> its bytes, unconverted
    sparse_absent: frozenset[str] = frozenset()  # skip-worktree entries not on disk
    submodules: dict[str, str] = field(default_factory=dict)  # checked-out submodule -> its HEAD and files

    @property
    def point(self) -> revert.Point:
        """Where the unit started, as :func:`axpipe.change.revert.restore` takes it."""
        return revert.Point(self.start_head, self.start_ref, self.start_tree, self.index, self.rules,
                            self.raw_blobs, self.sparse_absent, self.submodules)

    def snapshot(self, root: Path) -> str:
        """A snapshot of the working tree now, under the ignore rules the unit started with."""
        return from_git.snapshot(root, self.rules)

    def remaining(self) -> float:
        """Seconds left before the unit timeout (never below a small floor, so a command
        started at the last moment still gets a timeout rather than none)."""
        return max(0.5, self.timeout - (time.monotonic() - self.started))

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def overdue(self) -> bool:
        """Past the unit timeout: the timer fired, or is about to (a command timed out with it)."""
        return self.expired or self.elapsed() >= self.timeout

    def arm(self) -> None:
        self._timer = threading.Timer(self.timeout, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def _expire(self) -> None:
        if self.closed:
            return
        self.expired = True
        process.terminate_all()  # the agent, a gate command, a check or a reviewer of this unit
        # Killing processes ends the work a plugin started, not a plugin's own code (a check
        # kind that loops or sleeps in-process): while the unit stays open, plugin code still
        # running a grace later is interrupted (axpipe.plugin.calls), and so is any started after.
        watchdog = threading.Thread(target=self._interrupt_plugins, name="axpipe-unit-expiry", daemon=True)
        watchdog.start()

    def _interrupt_plugins(self) -> None:
        grace = plugin_calls.UNIT_GRACE_SECONDS
        reason = (f"the unit timeout (limits.unit_timeout, {self.timeout:g} s) passed and it was still running "
                  f"{grace:g} s after the unit's processes were stopped")
        while not self._over.wait(grace):
            plugin_calls.interrupt_running(reason)

    def close(self) -> None:
        """The unit is over: the timeout no longer applies."""
        self.closed = True
        self._over.set()
        if self._timer is not None:
            self._timer.cancel()


def git_text(root: Path, *args: str) -> str | None:
    """A git command's stripped output, or None when it fails or prints nothing."""
    return git.output(root, *args)  # a path in the answer keeps its bytes


def head(root: Path) -> str | None:
    return git_text(root, "rev-parse", "--verify", "-q", "HEAD^{commit}")


# Where a unit starts: what a hard stop puts back (axpipe.change.revert).
Start = revert.Point
starting_point = revert.mark


def begin(driver: Driving) -> Unit:
    """Start a unit of ``driver``'s goal: record its starting point, arm its timeout.

    A goal that was blocked for its bounces and is being driven again was reopened by a
    person, so its bounce counter starts over.
    """
    previous = getattr(driver, "unit", None)
    if isinstance(previous, Unit) and not previous.closed:  # its pass stopped before the settle phase
        end(driver, previous, "settled", "its pass ended before the settle phase")
    store, goal = driver.store, driver.goal
    limit = driver.recipe.limits.bounces
    if sql.bounces(store, goal.id) >= limit:
        sql.reset_bounces(store, goal.id)
        record_bounces(driver.root, driver.recipe, goal.id, 0)
        driver.events.emit("goal.bounces_reset", phase="work", limit=limit,
                           reason="the goal was reopened after reaching its bounce limit")
    at = starting_point(driver.root)
    number = sql.start_unit(store, goal_id=goal.id, session_id=driver.session_id, start_head=at.head,
                            start_ref=at.ref, start_tree=at.tree)
    unit = Unit(goal.id, number, driver.session_id, at.head, at.ref, at.tree, at.index,
                driver.recipe.limits.unit_timeout, rules=at.rules, raw_blobs=at.raw_blobs,
                sparse_absent=at.sparse_absent, submodules=at.submodules)
    unit.arm()
    driver.events.emit("unit.started", phase="work", unit=number, head=at.head, tree=at.tree,
                       timeout=driver.recipe.limits.unit_timeout)
    return unit


def current(driver: Any) -> Unit | None:
    """The driver's open unit, or None (no goal, a complete goal being re-verified)."""
    unit = getattr(driver, "unit", None) if driver is not None else None
    return unit if isinstance(unit, Unit) and not unit.closed else None


def restore_ignore_files(driver: Driving, unit: Unit, phase: str | None = None) -> list[str]:
    """Put git's ignore files outside the work tree (``info/exclude``, ``core.excludesFile``)
    back as they were when ``unit`` started, so a rule the unit added there hides nothing from
    the goal's later units and fingerprints. What the unit wrote is kept in
    ``.axpipe/artifacts/<goal>/unit-<n>/ignore-files/`` and the event says which changed."""
    if unit.rules is None:
        return []
    keep = artifacts_dir(driver.root, unit.goal_id) / f"unit-{unit.number}" / "ignore-files"
    changed = restore_outside(unit.rules, keep)
    if changed:
        driver.events.emit("unit.ignore_files_restored", **({"phase": phase} if phase else {}), unit=unit.number,
                           files=changed, kept=str(keep))
    return changed


def end(driver: Driving, unit: Unit, status: str, reason: str | None, *, stash: str | None = None) -> None:
    """Close ``unit`` with how it ended (``passed``, ``bounced``, ``quarantined``, ...); git's
    ignore files outside the work tree go back as they were at its start."""
    unit.close()
    restore_ignore_files(driver, unit)
    sql.finish_unit(driver.store, unit.goal_id, unit.number, status=status, reason=reason, stash=stash)
    if unit.verdicts:
        sql.record_verdicts(driver.store, unit.goal_id, unit.number, unit.verdicts)
    driver.events.emit("unit.finished", unit=unit.number, status=status, reason=reason, stash=stash,
                       duration=round(unit.elapsed(), 4))


def artifacts_dir(root: Path, goal_id: str) -> Path:
    """``.axpipe/artifacts/<goal>/``: the one place read-only phases (review, QA) may write,
    and where a goal's gate reports, traces and ``qa-report.md`` go."""
    return state_dir(root) / "artifacts" / folder_name(goal_id)
