"""Driving a goal: one tick is work → verify → settle, with budgets and progress.

``axpipe run`` makes one tick; ``axpipe goal resume`` repeats ticks until the goal settles.
Budgets (DESIGN §4): when tokens, time or steps are spent, the agent gets one wrap-up turn
and the goal becomes ``budget_limited``. Progress: ``no_progress_limit`` ticks in a row
without new passing evidence add recovery guidance to the next prompt; one more such tick
pauses the goal. New passing evidence is a check passing on a source it had not passed on.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from axpipe.change import revert
from axpipe.deliver import hooks as deliver_hooks
from axpipe.errors import ExitCode
from axpipe.evidence import bytecode
from axpipe.goal import completion, fingerprint, goals, receipts
from axpipe.goal import turn as work
from axpipe.goal.goals import Goal, Planned
from axpipe.goal.turn import STEPS_WARNING
from axpipe.guard import protect
from axpipe.interfaces import AgentStatus
from axpipe.recipe import roles, schema
from axpipe.run.events import EventLog
from axpipe.run.phases import Step
from axpipe.store import Store
from axpipe.store import goals as sql
from axpipe.store import units as unit_rows
from axpipe.task import files, guard, standing
from axpipe.task.taskfile import TaskFileError
from axpipe.unit import told, units
from axpipe.unit.quarantine import failed_turn
from axpipe.workspace import git_prefix, git_top


class GoalDriver:
    """Drives one goal in one session."""

    def __init__(self, store: Store, root: Path, recipe: schema.Recipe, planned: Planned, *, events: EventLog,
                 variables: dict[str, Any], on_output: Callable[[bytes], None] | None = None) -> None:
        self.store = store
        self.root = root
        self.recipe = recipe
        self.goal = planned.goal
        self.session_id = planned.session_id
        self.events = events
        self.variables = variables
        self.on_output = on_output
        self._tick_started = time.monotonic()
        self._receipts: list[receipts.Receipt] = []
        self._wrapped_up: str | None = None
        self._last_work = "the wrap-up turn"  # what ran after a budget was spent, for settle's reason
        # A loop's prompt (``loop.prompt``), sent before the rendered work prompt each turn.
        self.prompt_prefix: str | None = None
        self.unit: units.Unit | None = None  # the unit of work in progress (axpipe.unit.units)
        # Set when the unit's processes were ended from outside (goal resume's idle timeout):
        # what they left is no evidence against the unit, so no hard stop may come of it.
        self.interrupted: str | None = None
        # The source as the last check of this tick's verify left it, while nothing else
        # has run since: settle judges on it instead of fingerprinting the same tree again.
        self.verified_source: fingerprint.Fingerprint | None = None
        # With `deliver:`, HEAD and the refs as the unit began: only the runner may move them (DESIGN §16).
        self.refs_before: dict[str, str] | None = None

    @property
    def spec(self) -> schema.Goal:
        assert self.recipe.goal is not None
        return self.recipe.goal

    def exhausted(self, running: float = 0.0) -> str | None:
        """Which budget that ends in a wrap-up turn (tokens, time) is spent, in words, or None.
        ``running``: seconds of the tick in progress, not yet counted into the goal's time.
        The step cap is not one of them: reaching it pauses the goal (:meth:`capped`)."""
        budget, goal = self.spec.budget, self.goal
        if budget.tokens is not None and goal.tokens_used >= budget.tokens:
            return f"tokens budget ({goal.tokens_used} of {budget.tokens} tokens)"
        if budget.cost is not None and goal.unpriced_turns:  # fail closed: an unknown cost may be any cost
            return (f"cost budget (${goal.cost_used:.4f} of ${budget.cost:g} known, and {goal.unpriced_turns} "
                    f"agent turn(s) reported no cost)")
        if budget.cost is not None and goal.cost_used >= budget.cost:
            return f"cost budget (${goal.cost_used:.4f} of ${budget.cost:g})"
        used = goal.time_used + running
        if budget.time is not None and used >= budget.time:
            return f"time budget ({used:.0f} of {budget.time:.0f} s)"
        return None

    def capped(self) -> str | None:
        """The step cap (``goal.budget.steps``), in words, once the goal's steps reached it."""
        cap, used = self.spec.budget.steps, self.goal.steps_used
        return f"step cap ({used} of {cap} steps)" if used >= cap else None

    def steps_warning(self) -> str | None:
        """The warning the agent and the events get from the turn that brings the goal's steps
        to 90 % of the cap on (with a small cap, at least its last turn)."""
        cap, used = self.spec.budget.steps, self.goal.steps_used
        if used < cap and (used + 1) * 10 >= cap * 9:
            return STEPS_WARNING.format(used=used, cap=cap)
        return None

    def time_left(self) -> float | None:
        """Seconds left on the goal's time budget (the tick in progress counted), or None
        without one: the deadline of the agent's turn."""
        budget = self.spec.budget.time
        if budget is None:
            return None
        return budget - self.goal.time_used - (time.monotonic() - self._tick_started)

    def account(self, *, tokens: int = 0, steps: int = 0, cost: float | None = 0.0) -> str | None:
        """Count work done inside the tick before the agent's turn (a repair's tokens, cost
        and iterations; cost None: an agent turn that reported none) into the goal's budget;
        which budget is spent now (the tick's running time included), or None."""
        if tokens or steps or cost != 0.0:
            sql.add_usage(self.store, self.goal.id, tokens=tokens, steps=steps, cost=cost or 0.0,
                          unpriced=int(cost is None))
        self.goal = goals.reload(self.store, self.goal)
        return self.capped() or self.exhausted(time.monotonic() - self._tick_started)

    # -- the parts of a tick ----------------------------------------------------------

    def work(self) -> Step:
        previous = self.unit
        step = self.begin_work() or self.take_turn()
        return self.ended(step, previous)

    def ended(self, step: Step, previous: units.Unit | None) -> Step:
        """``step`` of the work phase; a step that stops the run ends the unit it began."""
        if step.stop is not None and self.unit is not None and self.unit is not previous:
            units.end(self, self.unit, step.status, step.summary)  # the unit ended in its work phase
        return step

    def stopped_early(self, step: Step) -> Step:
        """The tick ends in its work phase before the agent's turn (a repair stopped the run):
        count its time and step now, as no settle will."""
        sql.add_usage(self.store, self.goal.id, seconds=time.monotonic() - self._tick_started, steps=1)
        return step

    def begin_work(self) -> Step | None:
        """The start of a tick's work, before any repair or agent runs: a complete goal does
        no work, an inactive one or one whose budget is spent stops here (Step); otherwise
        the unit starts and None is returned."""
        self._tick_started = time.monotonic()
        self._receipts = []
        self.verified_source = None
        self._wrapped_up = None
        self.goal = goals.reload(self.store, self.goal)
        if self.goal.status == "complete":
            return Step("skipped", "goal is complete: no work, its checks run again")
        if self.goal.status != "active":
            return Step("failed", f"goal is {self.goal.status}: {self.goal.status_reason or 'not active'}",
                        stop=goals.EXIT_CODES[self.goal.status])
        capped = self.pause_at_cap()
        if capped is not None:
            return capped
        drifted = standing.drift(self.recipe, self.root)  # DESIGN §15: no unit runs on stale standing rules
        if drifted:
            return Step("error", f"standing rules out of sync: {'; '.join(drifted)}", stop=ExitCode.INPUT_ERROR)
        on_branch = deliver_hooks.prepare(self)  # with `deliver:`, the unit works on the task branch
        if on_branch is not None:
            return on_branch
        self.unit = units.begin(self)  # a unit starts here: HEAD and a snapshot are recorded before the agent runs
        self.refs_before = deliver_hooks.watch(self)
        spent = self.exhausted()
        if spent is not None and (self.recipe.agent is None or self.goal.wrap_up_done):
            goals.set_status(self.store, self.goal, "budget_limited", f"{spent} spent", self.events)
            return Step("failed", f"budget limited: {spent} spent", stop=ExitCode.BUDGET_LIMITED)
        return None

    def take_turn(self) -> Step:
        """The agent's turn in a tick :meth:`begin_work` began: a wrap-up turn when a budget
        is spent (also by the repairs that ran since)."""
        self.goal = goals.reload(self.store, self.goal)  # repairs may have used budget since begin_work
        capped = self.pause_at_cap()
        if capped is not None:
            return capped
        spent = self.exhausted()
        if spent is not None and self.recipe.agent is None:
            # Spent by this tick's repairs: their result is still verified and settled, and
            # the goal is budget limited unless that completes it.
            self._wrapped_up, self._last_work = spent, "this tick's repairs"
            return Step("not-declared", f"no agent declared; the {spent} is spent: the checks run on the source as "
                                        "the repairs left it")
        if spent is not None and self.goal.wrap_up_done:
            goals.set_status(self.store, self.goal, "budget_limited", f"{spent} spent", self.events)
            return Step("failed", f"budget limited: {spent} spent", stop=ExitCode.BUDGET_LIMITED)
        if self.recipe.agent is None:
            return Step("not-declared", "no agent declared: the checks run on the source as it is")

        if spent is not None:
            self._wrapped_up, self._last_work = spent, "the wrap-up turn"
            sql.update_goal(self.store, self.goal.id, wrap_up_done=1)
            return self._turn(wrap_up=work.WRAP_UP.format(budget=spent.split(" (")[0]))
        guidance = None
        if self.goal.no_progress >= self.spec.no_progress_limit:
            guidance = work.RECOVERY_GUIDANCE.format(count=self.goal.no_progress)
            sql.update_goal(self.store, self.goal.id, guidance_given=1)
            self.events.emit("goal.guidance", phase="work", turns_without_progress=self.goal.no_progress)
        return self._turn(guidance=guidance)

    def pause_at_cap(self) -> Step | None:
        """Pause the goal when its steps reached the cap (resumable with a raised
        ``goal.budget.steps``); None while below it. A unit begun this tick ends unjudged: the
        agent did not run in it."""
        capped = self.capped()
        if capped is None:
            return None
        reason = f"{capped} reached; raise goal.budget.steps to resume"
        goals.set_status(self.store, self.goal, "paused", reason, self.events)
        return Step("stopped", f"paused: {reason}", stop=ExitCode.NOT_TERMINAL)

    def _turn(self, *, guidance: str | None = None, wrap_up: str | None = None) -> Step:
        state = completion.evaluate(self.store, self.root, self.goal, self.session_id)
        iteration = self.goal.steps_used + 1
        steps_warning = self.steps_warning()
        if steps_warning is not None:
            self.events.emit("goal.steps_warning", phase="work", steps_used=self.goal.steps_used,
                             cap=self.spec.budget.steps, warning=steps_warning)
        context = work.prompt_context(self.goal, state.checks, variables=self.variables, iteration=iteration,
                                      guidance=guidance, wrap_up=wrap_up, steps_warning=steps_warning)
        located = self.task_location()
        context.update(told.context(self, "implementer", located[1] if located else None))
        prompt = work.render_prompt(self.recipe, context, self._failures())
        try:  # the task file as the unit found it: what the implementer writes there is checked after
            task_guard = guard.start(self.root, *located) if located else None
        except TaskFileError as error:
            return self._task_file_refused(error)
        if self.prompt_prefix:
            prompt = f"{self.prompt_prefix.rstrip()}\n\n---\n\n{prompt}"
        guarded = protect.patterns(self.spec.protect, self.spec.allow_test_edits)
        before = revert.mark(self.root, keep_rules=False) if guarded else None  # protected files before the turn
        entries = protect.staged(git_top(self.root) or self.root) if guarded else None
        # A wrap-up turn comes after the time budget is spent: only the unit timeout bounds it.
        deadline = None if wrap_up else self.time_left()
        turn = work.agent_turn(self.store, self.root, self.recipe, self.goal, iteration=iteration, prompt=prompt,
                               events=self.events, on_output=self.on_output, deadline=deadline,
                               extra_env={"AXPIPE_TASK_FILE": str(located[0])} if located else None)
        if turn.tokens or turn.cost or turn.cost is None:
            sql.add_usage(self.store, self.goal.id, tokens=turn.tokens, cost=turn.cost or 0.0,
                          unpriced=int(turn.cost is None))
        ended = failed_turn(self, turn)  # a hard stop, or the unit set aside (DESIGN §14)
        if ended is not None:
            return ended
        if task_guard is not None:
            from axpipe.unit.implementer import task_contract

            ended = task_contract(self, task_guard, turn)
            if ended is not None:
                return ended
        reverted = self._unprotected(turn.edited, before, guarded, entries) if before is not None else []
        return self._turn_step(turn, wrap_up, reverted)

    def task_location(self) -> tuple[Path, str] | None:
        """The goal's task file and its name, when the goal works through one (DESIGN §14)."""
        return files.location(self.root, self.recipe, self.goal.id) if roles.task_driven(self.recipe) else None

    def _task_file_refused(self, error: TaskFileError) -> Step:
        """The task file does not parse before the implementer's unit: nothing runs (exit 2)."""
        if self.unit is not None:
            units.end(self, self.unit, "error", error.message)
        return Step("error", error.message, stop=ExitCode.INPUT_ERROR)

    def tick_elapsed(self) -> float:
        """Seconds since the tick in progress began (not yet counted into the goal's time)."""
        return time.monotonic() - self._tick_started

    def _turn_step(self, turn: Any, wrap_up: str | None, reverted: list[str] | None = None) -> Step:
        outcome = turn.outcome
        if outcome.status in (AgentStatus.STOPPED, AgentStatus.ERROR) or turn.blocked is not None:
            # The tick ends here, without verify and settle: count what it used now.
            sql.add_usage(self.store, self.goal.id, seconds=time.monotonic() - self._tick_started, steps=1)
        if outcome.status is AgentStatus.STOPPED:
            reason = f"the agent stopped at a permission prompt: {outcome.prompt!r}"
            goals.set_status(self.store, self.goal, "paused", reason, self.events)
            return Step("stopped", reason, stop=ExitCode.NOT_TERMINAL)
        if outcome.status is AgentStatus.ERROR:
            return Step("error", f"the agent could not run: {outcome.summary}", stop=ExitCode.ENVIRONMENT)
        if turn.blocked is not None:
            goals.set_status(self.store, self.goal, "blocked", turn.blocked["reason"], self.events,
                             blocked=turn.blocked)
            return Step("stopped", f"blocked ({turn.blocked['kind']}): {turn.blocked['reason']}",
                        stop=ExitCode.BLOCKED)
        edited = f"; edited {len(turn.edited)} file(s)" if turn.edited else "; edited nothing"
        if reverted:
            edited += f"; reverted its edits to protected files ({protect.GUARD}: {', '.join(reverted)})"
        status = "passed" if outcome.status is AgentStatus.DONE else "failed"
        label = "wrap-up turn" if wrap_up else "agent turn"
        return Step(status, f"{label}: {outcome.summary}{edited}")

    def _unprotected(self, edited: list[str], before: revert.Point, globs: tuple[str, ...],
                     entries: dict[str, bytes] | None) -> list[str]:
        """Undo the turn's edits to protected files (goal.protect), before anything judges
        the unit: put back exactly those files as they were before the agent ran."""
        paths = protect.matching(edited, globs)
        if not paths:
            return []
        top = git_top(self.root) or self.root
        protect.restore(top, before, [git_prefix(self.root, top) + path for path in paths], entries)
        bytecode.forget(self.root, paths)  # restored within seconds of the agent's edit
        self.events.emit("goal.protected_path", phase="work", guard=protect.GUARD, paths=paths,
                         reason="the agent edited protected files (goal.protect); the edits were reverted")
        return paths

    def _failures(self) -> list[dict[str, Any]]:
        found = []
        for check in work.visible_checks(self.goal):
            latest = sql.latest_receipt(self.store, self.goal.id, check["id"], self.session_id) or \
                sql.latest_receipt(self.store, self.goal.id, check["id"])
            if latest is not None and latest["status"] in ("failed", "error") and not latest["held_out"]:
                found.append({"id": check["id"], "summary": latest["summary"] or "",
                              "output": latest["output_tail"][-3000:]})
        return found

    def verify(self) -> Step:
        self.goal = goals.reload(self.store, self.goal)
        source = None  # each check starts from the source the previous one left (receipts.verify)
        for check in self.goal.checks:
            receipt = receipts.verify(self.store, self.root, self.goal, self.session_id, check["id"],
                                      events=self.events, on_output=self.on_output, before=source)
            self._receipts.append(receipt)
            source = receipt.source
        self.verified_source = source
        passed = sum(receipt.status == "passed" for receipt in self._receipts)
        total = len(self._receipts)
        status = "passed" if passed == total else "failed"
        return Step(status, f"{passed} of {total} checks passed")

    def failed_checks(self) -> list[str]:
        """Checks whose receipt in this tick did not pass."""
        return [receipt.check_id for receipt in self._receipts if receipt.status != "passed"]

    def settle(self, verdict: completion.Completion | None = None) -> Step:
        """Apply the completion gate and account for the tick; stop unless the goal stays active.

        ``verdict`` is the gate's verdict when the caller has just taken it on the current
        source; without one the gate is evaluated here."""
        elapsed = time.monotonic() - self._tick_started
        sql.add_usage(self.store, self.goal.id, seconds=elapsed, steps=1)
        self.goal = goals.reload(self.store, self.goal)
        if verdict is None:
            verdict = completion.evaluate(self.store, self.root, self.goal, self.session_id)
        self.events.emit("goal.checks", phase="settle", session=self.session_id,
                         checks=[state.to_json() for state in verdict.checks], fingerprint=verdict.fingerprint.digest,
                         notes=verdict.notes)
        if verdict.bad_success and not self.goal.bad_success:
            sql.update_goal(self.store, self.goal.id, bad_success=1)
            self.events.emit("goal.bad_success", phase="settle",
                             summary="the visible checks pass but a held-out check fails: the work is not done")
        if verdict.complete:
            goals.set_status(self.store, self.goal, "complete", verdict.summary(), self.events)
            return Step("passed", f"complete: {verdict.summary()}", stop=ExitCode.OK)
        if self.goal.status == "complete":  # re-verified, and no longer holds: the goal reopens
            reason = f"reopened: {verdict.summary()}"
            goals.set_status(self.store, self.goal, "active", reason, self.events)
            return Step("failed", reason, stop=ExitCode.NOT_TERMINAL)
        if self.goal.status != "active":
            return Step("failed", f"goal is {self.goal.status}", stop=goals.EXIT_CODES[self.goal.status])
        if self._wrapped_up is not None:
            reason = f"{self._wrapped_up} spent; {self._last_work} did not complete the goal"
            goals.set_status(self.store, self.goal, "budget_limited", reason, self.events)
            return Step("failed", f"budget limited: {reason}", stop=ExitCode.BUDGET_LIMITED)
        return self._account_progress(verdict)

    def _account_progress(self, verdict: completion.Completion) -> Step:
        if self._new_evidence():
            sql.update_goal(self.store, self.goal.id, no_progress=0, guidance_given=0)
            return Step("failed", f"not complete, progress made: {verdict.summary()}")
        count = self.goal.no_progress + 1
        sql.update_goal(self.store, self.goal.id, no_progress=count)
        limit = self.spec.no_progress_limit
        if count > limit and self.goal.guidance_given:
            reason = f"no new passing evidence in {count} ticks; recovery guidance did not help"
            goals.set_status(self.store, self.goal, "paused", reason, self.events)
            return Step("failed", f"paused: {reason}", stop=ExitCode.NOT_TERMINAL)
        if count > limit and self.recipe.agent is None:
            reason = f"no new passing evidence in {count} ticks (no agent to guide)"
            goals.set_status(self.store, self.goal, "paused", reason, self.events)
            return Step("failed", f"paused: {reason}", stop=ExitCode.NOT_TERMINAL)
        return Step("failed", f"not complete ({count} tick(s) without new passing evidence): {verdict.summary()}")

    def _new_evidence(self) -> bool:
        """Did a check pass on a source it had not passed on before in this goal and contract?"""
        for receipt in self._receipts:
            if receipt.status != "passed" or receipt.fingerprint is None:
                continue
            if not sql.passed_before(self.store, goal_id=self.goal.id, check_id=receipt.check_id,
                                     fingerprint=receipt.fingerprint, contract_digest=self.goal.contract_digest,
                                     other_than=receipt.id):
                return True
        return False

    def tick(self) -> ExitCode | None:
        """One full tick; the exit code when the goal settled (or stopped), else None."""
        for step in (self.work, self.verify, self.settle):
            result = step()
            if result.stop is not None:
                return result.stop
        return None


def status_json(store: Store, root: Path, goal: Goal, session_id: str) -> dict[str, Any]:
    """``axpipe goal status --json`` (DESIGN §13), with documented additions."""
    verdict = completion.evaluate(store, root, goal, session_id)
    return {
        "goal": {"id": goal.id, "objective": goal.objective, "status": goal.status, "assured": goal.assured,
                 "contract_digest": goal.contract_digest, "baseline": goal.baseline,
                 "contract": None if goal.assured else completion.NO_CONTRACT, "session": session_id,
                 "recipe": goal.recipe, "reason": goal.status_reason, "blocked": goal.blocked,
                 "resumes_at": goal.resumes_at,
                 "bad_success": goal.bad_success, "bounces": unit_rows.bounces(store, goal.id)},
        "checks": [{"id": state.id, "status": state.status, "receipt": state.receipt, "reason": state.reason,
                    "held_out": state.held_out} for state in verdict.checks],
        "budget": {"tokens": goal.budget.get("tokens"), "tokens_used": goal.tokens_used,
                   "cost": goal.budget.get("cost"), "cost_used": round(goal.cost_used, 6),
                   "unpriced_turns": goal.unpriced_turns,
                   "time": goal.budget.get("time"), "time_used": round(goal.time_used, 3),
                   "steps": goal.budget.get("steps"), "steps_used": goal.steps_used,
                   "no_progress": goal.no_progress, "no_progress_limit": goal.budget.get("no_progress_limit")},
        "fingerprint": {"digest": verdict.fingerprint.digest, "reasons": verdict.fingerprint.reasons},
        "complete": verdict.complete,
        "delivery": deliver_hooks.status(root, goal.id),
    }


def dump(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=False)
