"""Goals: planning (freezing the contract), sessions, and the states a goal moves through.

``planning → active → complete | blocked | budget_limited | paused``; ``paused → active`` on
resume; ``clear`` removes the goal. A goal's id is stable across runs of the same recipe
with the same variables, so running a recipe again continues its goal in a new session
(receipts are bound to sessions), and a recipe whose frozen requirements changed is a
contract mismatch rather than a silent new goal.
"""

from __future__ import annotations

import json
import re
import secrets
import shutil
from dataclasses import field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from axpipe.errors import AxpipeError, ExitCode, InputError, not_found_message
from axpipe.goal import contract, frozen, private
from axpipe.goal.plan import exact_size_needed, missing_source_paths, render, size_warning
from axpipe.goal.record import Goal as Goal  # re-exported: callers name goals.Goal
from axpipe.goal.record import folder_name as folder_name  # re-exported: callers name goals.folder_name
from axpipe.goal.record import goal_dir as goal_dir  # re-exported: callers name goals.goal_dir
from axpipe.recipe import schema
from axpipe.records import record
from axpipe.run.events import EventLog
from axpipe.store import Store
from axpipe.store import goals as sql

STATUSES = ("planning", "active", "complete", "blocked", "budget_limited", "paused")
RESUMABLE = ("active", "paused", "blocked", "planning")
EXIT_CODES = {"complete": ExitCode.OK, "blocked": ExitCode.BLOCKED, "budget_limited": ExitCode.BUDGET_LIMITED,
              "paused": ExitCode.NOT_TERMINAL, "active": ExitCode.NOT_TERMINAL, "planning": ExitCode.NOT_TERMINAL}


class SessionError(AxpipeError):
    """The goal or session asked for cannot be used (exit 1, the headless contract)."""

    exit_code = ExitCode.FAILED


def load(store: Store, goal_id: str) -> Goal | None:
    row = sql.get_goal(store, goal_id)
    return Goal.from_row(row) if row else None


def reload(store: Store, goal: Goal) -> Goal:
    fresh = load(store, goal.id)
    if fresh is None:
        raise SessionError(f"goal '{goal.id}' was cleared while it was being driven")
    return fresh


def goal_id_for(recipe: schema.Recipe, recipe_name: str, variables: dict[str, Any]) -> str:
    """``goal.id`` when set; else the recipe's name followed by its variables' values."""
    assert recipe.goal is not None
    if recipe.goal.id:
        return recipe.goal.id
    parts = [recipe_name, *(str(variables[name]) for name in sorted(variables))]
    return "-".join(re.sub(r"[^A-Za-z0-9_.]+", "-", part).strip("-") or "x" for part in parts)


def new_session_id() -> str:
    return f"s-{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


def _budget_json(spec: schema.Goal, limits: schema.Limits) -> str:
    budget = spec.budget
    # The fingerprint limits ride along: `axpipe verify` and `goal status` judge the source
    # under the latest run's limits without composing the recipe (axpipe.goal.receipts.source_fingerprint).
    return json.dumps({"tokens": budget.tokens, "cost": budget.cost, "time": budget.time, "steps": budget.steps,
                       "no_progress_limit": spec.no_progress_limit, "fingerprint_entries": limits.fingerprint_entries,
                       "fingerprint_bytes": limits.fingerprint_bytes})


def _plan_json(canonical: dict[str, Any]) -> str:
    """What a goal keeps to run its checks: the contract's (held-out ones as stubs)."""
    return json.dumps({"checks": canonical["checks"], "source_paths": canonical["source_paths"],
                       "acceptance": canonical["acceptance"]}, sort_keys=True)


@record
class Planned:
    """The outcome of the plan phase."""

    goal: Goal
    session_id: str
    created: bool
    already_complete: bool = False
    warnings: list[str] = field(default_factory=list)


def plan(store: Store, root: Path, recipe: schema.Recipe, *, recipe_name: str, variables: dict[str, Any],
         overrides: list[str], events: EventLog) -> Planned:
    """Create the recipe's goal (freezing its contract) or continue it in a new session."""
    spec = recipe.goal
    assert spec is not None
    goal_id = goal_id_for(recipe, recipe_name, variables)
    events.goal = goal_id
    existing = load(store, goal_id)
    carried: Goal | None = None
    if existing is not None and existing.plan.get("provisional"):
        # Planned through its task file (axpipe.unit.planner): the row held the planner's unit
        # until the plan held. The goal starts afresh with its contract; the planner's use stays counted.
        carried, existing = existing, None
        sql.delete_goal(store, goal_id)
    baseline = existing.baseline if existing is not None else contract.head_sha(root)
    if baseline is None and contract.uses_baseline(spec):
        raise InputError("the plan uses {BASELINE} but the workspace has no commit to take it from "
                         "(commit first, or leave {BASELINE} out of the checks)")
    canonical, held_out = contract.build(spec, baseline)
    digest = contract.digest_of(canonical) if spec.assure else None
    warnings = []
    if exact_size_needed(spec):
        warnings = [text for text in [size_warning(render(spec, goal_id=goal_id, baseline=baseline))] if text]
    warnings += [f"goal.source_paths[{index}]: {source!r} exists neither in the work tree nor in git, so the "
                 "fingerprint covers no file there until one appears (a typo leaves the files you meant unchecked)"
                 for index, source in missing_source_paths(root, list(spec.source_paths))]
    if existing is None:
        sql.insert_goal(store, goal_id, recipe=recipe_name, overrides=json.dumps(overrides),
                        variables=json.dumps(variables, sort_keys=True, default=str), objective=spec.objective,
                        assured=int(spec.assure), status="active", contract_digest=digest, baseline=baseline,
                        workspace=str(root), plan=_plan_json(canonical), budget=_budget_json(spec, recipe.limits))
        if carried is not None:
            sql.add_usage(store, goal_id, tokens=carried.tokens_used, seconds=carried.time_used,
                          steps=carried.steps_used)
        goal = load(store, goal_id)
        assert goal is not None
        _freeze(store, root, goal, canonical, held_out, revises=None, correction=None)
        warnings += _failing_when_frozen(store, root, goal, recipe, events)
        created = True
    else:
        goal = existing
        restored = frozen.restore_file(store, root, goal)
        if restored is not None:
            warnings.append(restored)
        if goal.status == "complete":
            # An edited recipe is not "already complete"; nor is one that turned assurance
            # off (or on): `assure: false` must not lift a frozen contract silently.
            refuse_mismatch(store, goal, recipe)
            if goal.assured:
                keep_held_out(root, goal, held_out)
            sql.update_goal(store, goal_id, budget=_budget_json(spec, recipe.limits))  # re-verified under these
            goal = reload(store, goal)
            # Running a complete goal's recipe again re-verifies it (a nightly parity run):
            # a new session, no work, and the gate decides whether it is still complete.
            session_id = start_session(store, goal, root)
            events.emit("goal.planned", phase="plan", session=session_id, created=False, assured=goal.assured,
                        contract_digest=goal.contract_digest, baseline=goal.baseline, status=goal.status)
            for warning in warnings:
                events.emit("goal.warning", phase="plan", warning=warning)
            return Planned(goal, session_id, created=False, already_complete=True, warnings=warnings)
        refuse_spent(goal)
        refuse_before_reset(goal)
        refuse_mismatch(store, goal, recipe)
        if spec.assure:
            keep_held_out(root, goal, held_out)
        else:
            # An unassured goal has no frozen contract: its plan follows the recipe.
            sql.update_goal(store, goal_id, plan=_plan_json(canonical), objective=spec.objective)
            private.save_held_out(root, f"plan-{goal_id}", held_out)
        sql.update_goal(store, goal_id, overrides=json.dumps(overrides), budget=_budget_json(spec, recipe.limits))
        if goal.status in ("paused", "blocked", "planning"):
            set_status(store, goal, "active", None, events, note="resumed by a new run")
        goal = reload(store, goal)
        created = False
    session_id = start_session(store, goal, root)
    events.emit("goal.planned", phase="plan", session=session_id, created=created, assured=goal.assured,
                contract_digest=goal.contract_digest, baseline=goal.baseline, status=goal.status)
    for warning in warnings:
        events.emit("goal.warning", phase="plan", warning=warning)
    return Planned(goal, session_id, created=created, warnings=warnings)


def refuse_spent(goal: Goal) -> None:
    """Raise (exit 4) when ``goal``'s budget is exhausted: no run can continue it."""
    if goal.status == "budget_limited":
        raise AxpipeError(f"goal '{goal.id}' is budget_limited: an exhausted budget needs a new goal "
                          f"(axpipe goal clear --goal {goal.id}, then run again)",
                          exit_code=ExitCode.BUDGET_LIMITED)


def refuse_before_reset(goal: Goal, now: datetime | None = None) -> None:
    """Raise (exit 6) while ``goal`` is paused by its agent's usage limit and the limit has
    not reset yet (DESIGN §14): a turn now would hit the same limit. A pause whose reset
    the agent did not say can be resumed at any time."""
    if goal.status != "paused" or not goal.resumes_at:
        return
    resets = datetime.fromisoformat(goal.resumes_at.replace("Z", "+00:00"))
    left = (resets - (now or datetime.now(UTC))).total_seconds()
    if left > 0:
        raise AxpipeError(f"goal '{goal.id}' is paused by its agent's usage limit until {goal.resumes_at} "
                          f"({left / 60:.0f} min from now): resume it after that", exit_code=ExitCode.NOT_TERMINAL)


def refuse_mismatch(store: Store, goal: Goal, recipe: schema.Recipe) -> None:
    """Raise ContractMismatch when ``recipe`` cannot continue ``goal``: its frozen requirements
    changed, or its ``assure`` no longer says what the goal was planned with. Reads only."""
    spec = recipe.goal
    if spec is not None and goal.assured != spec.assure:
        new = contract.digest_of(contract.build(spec, goal.baseline)[0]) if spec.assure else "none"
        change = f"assure changed from {str(goal.assured).lower()} to {str(spec.assure).lower()}"
        if goal.assured:
            change += " (turning assurance off does not lift a frozen contract)"
        raise contract.ContractMismatch(goal.id, goal.contract_digest or "none", new, [change],
                                        revisable=goal.status != "complete" and spec.assure)
    check_contract(store, goal, recipe)


def preflight(store: Store, recipe: schema.Recipe, *, recipe_name: str, variables: dict[str, Any],
              spent_too: bool = False) -> None:
    """The plan's contract refusal, made before anything runs (DESIGN §11, exit 2: nothing
    ran, nothing changed): raise ContractMismatch when the recipe's goal exists and the
    recipe no longer matches it. Reads only; :func:`plan` checks again under the run lock.

    A budget-limited goal is refused by the plan (exit 4, recorded as the run's outcome);
    ``spent_too`` refuses it here already, for a caller about to stop a running loop."""
    if recipe.goal is None:
        return
    goal = load(store, goal_id_for(recipe, recipe_name, variables))
    if goal is None or goal.plan.get("provisional"):  # no contract yet: the plan phase plans it (axpipe.unit.planner)
        return
    if goal.status == "budget_limited":
        if spent_too:
            refuse_spent(goal)
        return
    refuse_mismatch(store, goal, recipe)


def check_contract(store: Store, goal: Goal, recipe: schema.Recipe) -> None:
    """Raise ContractMismatch when ``recipe`` no longer matches the goal's frozen contract."""
    spec = recipe.goal
    if spec is None:
        raise contract.ContractMismatch(goal.id, goal.contract_digest or "none", "none",
                                        ["the recipe no longer declares a goal"])
    if not goal.assured:
        return
    canonical, _ = contract.build(spec, goal.baseline)
    digest = contract.digest_of(canonical)
    if digest != goal.contract_digest:
        stored = sql.get_contract(store, goal.contract_digest or "")
        raise contract.ContractMismatch(goal.id, goal.contract_digest or "", digest,
                                        contract.differences(stored["canonical"] if stored else {}, canonical),
                                        revisable=goal.status not in ("complete", "budget_limited"))


def keep_held_out(root: Path, goal: Goal, held_out: dict[str, dict[str, Any]]) -> None:
    """Write the held-out descriptions of ``goal``'s contract again when the private folder
    lacks them or holds a damaged or edited copy: it is keyed by the workspace's path, so a
    moved checkout (or a cleared ``$XDG_STATE_HOME``) starts with an empty one. Call it only
    after the recipe matched the frozen contract, whose digest covers each description."""
    if held_out and not private.holds(root, goal.private_key, held_out):  # missing, unreadable or edited
        private.save_held_out(root, goal.private_key, held_out)


def _freeze(store: Store, root: Path, goal: Goal, canonical: dict[str, Any], held_out: dict[str, dict[str, Any]],
            *, revises: str | None, correction: str | None) -> None:
    if goal.contract_digest is not None:
        sql.insert_contract(store, digest=goal.contract_digest, goal_id=goal.id, canonical=canonical,
                            revises=revises, correction=correction)
        contract.write_file(goal_dir(root, goal.id) / "contract.json", canonical, goal.contract_digest,
                            revises, correction)
    private.save_held_out(root, goal.private_key, held_out)


def start_session(store: Store, goal: Goal, root: Path, forked_from: str | None = None) -> str:
    session_id = new_session_id()
    sql.insert_session(store, session_id=session_id, goal_id=goal.id, contract_digest=goal.contract_digest,
                       workspace=str(root), forked_from=forked_from)
    return session_id


def set_status(store: Store, goal: Goal, status: str, reason: str | None, events: EventLog | None,
               *, blocked: dict[str, Any] | None = None, note: str | None = None) -> None:
    """Move a goal to ``status`` and say so in the events."""
    assert status in STATUSES, status
    sql.update_goal(store, goal.id, status=status, status_reason=reason,
                    blocked=json.dumps(blocked) if blocked else None,
                    **({"resumes_at": None} if goal.resumes_at and status != goal.status else {}))
    if goal.resumes_at and status != goal.status:
        goal.resumes_at = None  # a usage limit's reset holds only for the pause it caused
    if events is not None and (status != goal.status or reason != goal.status_reason):
        events.emit("goal.status", goal_status=status, previous=goal.status, reason=reason, note=note,
                    blocked=blocked)
    goal.status, goal.status_reason, goal.blocked = status, reason, blocked


def revise(store: Store, root: Path, goal: Goal, recipe: schema.Recipe, correction: str,
           events: EventLog) -> tuple[Goal, str]:
    """A new contract from the (edited) recipe, linked to the old digest; budgets carry over."""
    spec = recipe.goal
    assert spec is not None
    if goal.status in ("complete", "budget_limited"):
        raise InputError(f"goal '{goal.id}' is {goal.status}: finished work and exhausted budgets need a new goal, "
                         "not a revision")
    if not spec.assure:
        raise InputError(f"goal '{goal.id}' is not assured: there is no frozen contract to revise")
    canonical, held_out = contract.build(spec, goal.baseline)
    digest = contract.digest_of(canonical)
    if digest == goal.contract_digest:
        raise InputError(f"the recipe's requirements for goal '{goal.id}' are unchanged: nothing to revise "
                         "(edit the recipe's goal section first)")
    old = goal.contract_digest
    sql.update_goal(store, goal.id, contract_digest=digest, plan=_plan_json(canonical), objective=spec.objective)
    revised = reload(store, goal)
    _freeze(store, root, revised, canonical, held_out, revises=old, correction=correction)
    if revised.status != "active":
        set_status(store, revised, "active", None, events, note="revised")
    session_id = start_session(store, revised, root)
    events.emit("goal.revised", previous_digest=old, contract_digest=digest, correction=correction,
                session=session_id)
    for warning in _failing_when_frozen(store, root, revised, recipe, events):
        events.emit("goal.warning", warning=warning)
    return revised, session_id


def _failing_when_frozen(store: Store, root: Path, goal: Goal, recipe: schema.Recipe, events: EventLog) -> list[str]:
    """The warnings for checks that already fail as an assured goal's contract is frozen.
    Only a goal that works (an agent, a repair) is tried: one that only verifies learns the
    same from its verify phase at once, and its checks (some with effects outside the tree:
    a deployment probe, a counter) should not run twice."""
    if not goal.assured or (recipe.agent is None and not recipe.repair):
        return []
    return frozen.failing_when_frozen(store, root, goal, events)


def clear(store: Store, root: Path, goal: Goal) -> None:
    """Remove a goal, its contracts, sessions and receipts (DESIGN §4: clear removes the goal)."""
    folder = goal_dir(root, goal.id)  # refuses, before anything is removed, an id that is no folder name
    sql.delete_goal(store, goal.id)
    shutil.rmtree(folder, ignore_errors=True)


def choose(store: Store, goal_id: str | None = None, session_id: str | None = None, *,
           latest: bool = False) -> tuple[Goal, dict[str, Any]]:
    """The goal and session a command acts on.

    ``--session`` picks a session (and so its goal); ``--goal`` a goal (its latest session);
    both: they must agree; an id that names nothing is an input error (exit 2). Neither: the
    project's only resumable goal, and an error when that is ambiguous; with ``latest`` (a
    command that only reads, ``goal status``) the goal updated last when none is resumable.
    """
    if session_id is not None:
        session = sql.find_session(store, session_id)
        if session is None:
            raise InputError(f"no session '{session_id}' in this project (`axpipe goal status --goal ID` names a "
                             "goal's latest session)")
        if goal_id is not None and session["goal_id"] != goal_id:
            raise InputError(f"--session {session_id} belongs to goal '{session['goal_id']}', not to --goal "
                             f"{goal_id}: give the goal's own session, or only one of the two")
        goal = load(store, session["goal_id"])
        assert goal is not None
        return goal, session
    if goal_id is not None:
        goal = load(store, goal_id)
        if goal is None:
            raise InputError(not_found_message("goal", goal_id, [row["id"] for row in sql.list_goals(store)]))
    else:
        goals = [Goal.from_row(row) for row in sql.list_goals(store)]
        resumable = [item for item in goals if item.status in RESUMABLE]
        if len(resumable) == 1:
            goal = resumable[0]
        elif not resumable:
            if len(goals) == 1 or (latest and goals):
                goal = goals[0]  # the goal updated last: list_goals is newest first
            else:
                known = ", ".join(f"{item.id} ({item.status})" for item in goals) or "none"
                raise SessionError(f"no resumable goal in this project (goals: {known}); "
                                   "start one with `axpipe run recipe=NAME`")
        else:
            listed = ", ".join(f"{item.id} ({item.status})" for item in resumable)
            raise SessionError(f"several resumable goals: {listed}; choose one with --goal ID or --session ID")
    session = sql.latest_session(store, goal.id)
    if session is None:
        raise SessionError(f"goal '{goal.id}' has no session")
    return goal, session
