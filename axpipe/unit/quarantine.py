"""Hard stops: move what a unit changed into a named git stash, restore the tree, block the goal.

A hard stop (a scope violation, a failing gate, a write by a read-only phase, the unit
timeout, an agent turn that failed: :func:`failed_turn`) ends the unit with its evidence kept:

- everything the unit changed (its commits, dirty files, new untracked files, deletions)
  becomes one stash entry ``axpipe quarantine: <goal> unit <n>``. The stash's base is the
  tree as it was before the unit (a commit of the starting snapshot on top of the starting
  HEAD), so ``git stash show -p`` shows exactly the unit's change and ``git stash apply``
  brings it back. Commits the unit made stay reachable from
  ``refs/axpipe/quarantine/<goal>/unit-<n>``;
- the branch goes back to the starting HEAD and the working tree and index to their
  starting state (files that were dirty or untracked before the unit are kept as they were,
  and only the paths the unit changed are touched: :func:`axpipe.change.revert.restore`);
- the goal is blocked with the kind, the reason, what a person must do, and the evidence.

A unit whose work is no evidence either way (the agent reached its usage limit, the time
budget stopped its turn) is set aside the same way without blocking the goal
(:func:`set_aside`): the goal is paused or budget limited instead.

Files git ignores are neither quarantined nor removed. Neither is a submodule's content (it
is another repository): a unit that changed a submodule's checkout or files gets a note
saying so, in the hard stop's reason and ``hard-stop.json``, never a clean restore.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from axpipe import git, workspace
from axpipe.change import revert
from axpipe.duration import format_duration
from axpipe.errors import ExitCode
from axpipe.goal import goals
from axpipe.goal.turn import Turn
from axpipe.interfaces import AgentStatus
from axpipe.names import printable
from axpipe.records import record
from axpipe.run.phases import PhaseResult, Step, phase_result
from axpipe.store import goals as goal_sql
from axpipe.unit import units
from axpipe.unit.units import Driving

# A git step of the quarantine failed (the message says which): the revert's error.
QuarantineError = revert.RevertError


def _git(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """git's output as text whose file names keep their bytes: a name that is not valid UTF-8
    decodes with surrogate escapes (as in :mod:`axpipe.goal.fingerprint`), so ``root / name`` is
    the file on disk and encoding it back gives git the same name."""
    completed = git.run(root, *args, env=env)
    if completed.returncode != 0:
        detail = completed.stderr.decode(errors="replace").strip().splitlines()
        raise QuarantineError(f"git {' '.join(args[:2])} failed: {detail[-1] if detail else completed.returncode}")
    return git.decode(completed.stdout).strip()


def stash_message(goal_id: str, number: int) -> str:
    return f"axpipe quarantine: {goal_id} unit {number}"


def _commit(root: Path, tree: str, parent: str | None, message: str) -> str:
    return _git(root, "commit-tree", tree, *(["-p", parent] if parent else []), "-m", message)


def stash_unit(root: Path, unit: units.Unit, end_tree: str, end_head: str | None) -> str:
    """Store the unit's change as a stash entry; return the stash commit."""
    assert unit.start_tree is not None
    message = stash_message(unit.goal_id, unit.number)
    name = f"{unit.goal_id} unit {unit.number}"
    base = _commit(root, unit.start_tree, unit.start_head, f"axpipe: the tree before {name}")
    index = _commit(root, unit.start_tree, unit.start_head, f"axpipe: the index before {name}")
    stash = _git(root, "commit-tree", end_tree, "-p", base, "-p", index, "-m", message)
    _git(root, "stash", "store", "-m", message, stash)
    if end_head and end_head != unit.start_head:
        _git(root, "update-ref", quarantine_ref(unit), end_head)
    return stash


def quarantine_ref(unit: units.Unit) -> str:
    safe = re.sub(r"[^A-Za-z0-9_-]+", "-", unit.goal_id).strip("-") or "goal"
    return f"refs/axpipe/quarantine/{safe}/unit-{unit.number}"


TIMEOUT_CHANGE = ("a person looks at the quarantined work and the logs, then splits the work into smaller units "
                  "or raises limits.unit_timeout, and resumes the goal")


def unit_timeout_reason(unit: units.Unit, phase: str) -> str:
    """Why a unit that ran past its timeout stopped, ``phase`` being the one it was in (work)
    or about to start."""
    where = "during its work phase" if phase == "work" else f"before its {phase} phase"
    return f"unit {unit.number} ran longer than limits.unit_timeout ({format_duration(unit.timeout)}); stopped {where}"


def timed_out(driver: Driving, unit: units.Unit, phase: str) -> PhaseResult:
    """The hard stop of a unit that ran past its timeout (called at each phase boundary)."""
    return phase_result(hard_stop(driver, unit, kind="unit-timeout", reason=unit_timeout_reason(unit, phase),
                                  external_change=TIMEOUT_CHANGE))


def hard_stop(driver: Driving, unit: units.Unit, *, kind: str, reason: str, external_change: str,
              evidence: list[str] | None = None, details: dict[str, Any] | None = None) -> Step:
    """End ``unit`` as a hard stop: quarantine its change, restore the tree, block the goal (exit 3)."""
    unit.close()
    reason = printable(reason)
    if driver.interrupted is not None:  # the processes were ended from outside: keep the work, judge nothing
        return _interrupted(driver, unit, kind)
    aside = _set_aside(driver, unit, kind=kind, reason=reason, details=details, name="hard-stop.json")
    blocked = {"kind": kind, "reason": reason, "external_change": external_change,
               "evidence": [*aside.kept, *(evidence or []), str(aside.record)], "no_independent_work": True}
    goals.set_status(driver.store, driver.goal, "blocked", reason, driver.events, blocked=blocked)
    units.end(driver, unit, "quarantined", reason, stash=aside.stash)
    driver.events.emit("unit.quarantined", unit=unit.number, kind=kind, reason=reason, stash=aside.stash,
                       stash_message=aside.message if aside.stash else None, notes=aside.notes)
    return Step("failed", f"hard stop ({kind}): {reason}; {aside.where}{aside.extra}", stop=ExitCode.BLOCKED)


def set_aside(driver: Driving, unit: units.Unit, *, kind: str, reason: str, status: str,
              stop: ExitCode) -> Step:
    """End ``unit`` whose work is no evidence either way (the agent reached its usage limit, or
    the time budget cut its turn): its change goes into the quarantine stash and the tree back
    as it was, like a hard stop's, but the goal becomes ``status`` (paused, budget_limited),
    not blocked: nothing is wrong with the work a person must look at first."""
    unit.close()
    reason = printable(reason)
    if driver.interrupted is not None:
        return _interrupted(driver, unit, kind)
    aside = _set_aside(driver, unit, kind=kind, reason=reason, details=None, name=f"{kind}.json")
    goals.set_status(driver.store, driver.goal, status, f"{reason}; {aside.where}", driver.events)
    units.end(driver, unit, "set-aside", reason, stash=aside.stash)
    driver.events.emit("unit.set_aside", unit=unit.number, kind=kind, reason=reason, stash=aside.stash,
                       stash_message=aside.message if aside.stash else None, notes=aside.notes, status=status)
    return Step("stopped", f"{status.replace('_', ' ')}: {reason}; {aside.where}{aside.extra}", stop=stop)


def failed_turn(driver: Driving, turn: Turn) -> Step | None:
    """What an agent turn whose work cannot stand does to its unit (DESIGN §14), or None for
    any other turn: a usage limit sets the unit's change aside and pauses the goal (exit 4);
    a turn the time budget stopped at its deadline sets it aside and the goal is budget
    limited (exit 4); the unit timeout, a non-zero exit, a crash or the agent's own timeout
    are hard stops (quarantine, exit 3)."""
    outcome = turn.outcome
    unit = units.current(driver)
    if unit is None or outcome.status not in (AgentStatus.FAILED, AgentStatus.TIMED_OUT, AgentStatus.USAGE_LIMIT):
        return None
    if outcome.status is AgentStatus.USAGE_LIMIT:
        resumes_at = None
        if outcome.resets_at is not None:
            resumes_at = datetime.fromtimestamp(outcome.resets_at, UTC).isoformat(timespec="seconds")
            resumes_at = resumes_at.replace("+00:00", "Z")
        resets = f"; it resets {outcome.resets}" if outcome.resets else ""
        resets += f" ({resumes_at})" if resumes_at and outcome.resets and resumes_at not in outcome.resets else \
            f"; it resets {resumes_at}" if resumes_at and not outcome.resets else ""
        step = set_aside(driver, unit, kind="usage-limit", status="paused", stop=ExitCode.BUDGET_LIMITED,
                         reason=f"the agent reached its usage limit ({outcome.summary}){resets}; resume the goal "
                                "once it has reset")
        if resumes_at is not None:  # `goal resume` and `axpipe run` wait for it (goals.refuse_before_reset)
            goal_sql.update_goal(driver.store, driver.goal.id, resumes_at=resumes_at)
            driver.goal.resumes_at = resumes_at
        return step
    if unit.overdue():
        return hard_stop(driver, unit, kind="unit-timeout", reason=unit_timeout_reason(unit, "work"),
                         external_change=TIMEOUT_CHANGE)
    if turn.cut:
        spent = driver.exhausted(driver.tick_elapsed()) or "time budget"
        return set_aside(driver, unit, kind="time-budget", status="budget_limited", stop=ExitCode.BUDGET_LIMITED,
                         reason=f"{spent} spent: the agent's turn was stopped at the deadline ({outcome.summary}) "
                                "and its partial edit set aside")
    what = "timed out" if outcome.status is AgentStatus.TIMED_OUT else "failed"
    return hard_stop(
        driver, unit, kind="agent", reason=f"the agent's turn {what}: {outcome.summary}",
        external_change="a person reads the agent's output (the turn's events and its prompt file), fixes what "
                        "made it fail, and resumes the goal; the quarantined change can be applied if it is right",
        evidence=[str(turn.prompt_file)] if turn.prompt_file else None,
        details={"exit_code": outcome.exit_code, "output_tail": outcome.output_tail[-2000:]})


def _interrupted(driver: Driving, unit: units.Unit, kind: str) -> Step:
    units.end(driver, unit, "interrupted", f"{kind} not judged: {driver.interrupted}")
    return Step("interrupted", f"{kind} not judged: {driver.interrupted}", stop=ExitCode.INTERRUPTED)


@record
class _Aside:
    """Where a unit's change went: the stash (None when it changed nothing), what could not be
    put back, and the record written beside it."""

    stash: str | None
    message: str
    notes: list[str]
    record: Path

    @property
    def kept(self) -> list[str]:
        return [f"stash {self.stash} ({self.message})"] if self.stash else []

    @property
    def where(self) -> str:
        return f"{self.message} (git stash list)" if self.stash else "nothing to quarantine: the unit changed no file"

    @property
    def extra(self) -> str:
        return printable(f"; {'; '.join(self.notes)}") if self.notes else ""


def _set_aside(driver: Driving, unit: units.Unit, *, kind: str, reason: str, details: dict[str, Any] | None,
               name: str) -> _Aside:
    """Stash what ``unit`` changed, restore the tree, write ``name`` in the unit's artifacts and
    count the unit's time and step."""
    root = driver.root
    # The snapshots cover the whole work tree, so the restore does too: in a monorepo the
    # unit may have changed files outside the project's folder.
    tree = workspace.git_top(root) or root
    stash: str | None = None
    notes: list[str] = []
    if unit.start_tree is not None:
        end_tree = unit.snapshot(tree)
        end_head = units.head(tree)
        if end_tree != unit.start_tree or end_head != unit.start_head:
            try:
                stash = stash_unit(tree, unit, end_tree, end_head)
                revert.restore(tree, unit.point, end_tree)  # only what the unit changed (axpipe.change.revert)
                after = unit.snapshot(tree)
                if after != unit.start_tree:
                    notes.append("the tree could not be restored exactly; compare it with " + unit.start_tree)
            except QuarantineError as error:
                notes.append(f"quarantine incomplete: {error}")
        # A submodule is another repository: its commits and files are neither stashed nor put
        # back, so a change there is said, never passed over as a clean restore.
        submodules = revert.changed_submodules(tree, unit.submodules)
        if submodules:
            notes.append(f"not restored: the unit changed submodule(s) {', '.join(submodules)} (their HEAD or "
                         "files); a submodule is another repository, so neither its commits nor its files are in "
                         "the stash: look at them with `git -C <path> status` and `git -C <path> log`")
    else:
        notes.append("not a git repository: nothing could be quarantined")
    message = stash_message(unit.goal_id, unit.number)
    said = {"kind": kind, "reason": reason, "unit": unit.number, "stash": stash,
            "stash_message": message if stash else None, "start_head": unit.start_head,
            "start_tree": unit.start_tree, "notes": notes, **(details or {})}
    folder = units.artifacts_dir(root, unit.goal_id) / f"unit-{unit.number}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(said, indent=2) + "\n", encoding="utf-8")
    goal_sql.add_usage(driver.store, driver.goal.id, seconds=unit.elapsed(), steps=1)
    return _Aside(stash, message, notes, folder / name)
