"""The task file in the plan phase, and the planner unit (DESIGN §14).

For a goal that works through a task file (the recipe declares ``roles:`` or
``goal.task_file``), :func:`prepare` runs in the plan phase before the contract is frozen:

1. the task file is created from the recipe when missing (:mod:`axpipe.task.files`);
2. when the goal has no acceptance criteria (neither the recipe nor the task file) or a
   person asked for a new plan (``axpipe task replan``: front matter ``status: replan``),
   the ``roles.planner`` agent runs as a unit of its own. It may write the task file's
   ``Plan``, ``Scope`` and ``Acceptance criteria`` and nothing else: a write elsewhere, an
   unparseable file or a failed turn is a hard stop (quarantine, exit 3);
3. the task file's criteria are read (:mod:`axpipe.task.criteria`), added to the recipe's
   goal and validated like a recipe's plan (DESIGN §5); when the recipe declares no
   ``scope:``, the task file's ``Scope`` bullets are the scope contract. A refused plan is **parked**: the goal
   is blocked (exit 3) with every problem listed, before any code unit. Criteria a person
   wrote (no planner declared) are refused like a recipe's (exit 2, nothing ran).

Until its contract is frozen the goal's row is *provisional* (``plan.provisional``): the
planner's unit, its tokens and time, and a parked plan are recorded on it; the plan phase that
gets a valid plan starts the goal afresh (:func:`axpipe.goal.goals.plan`), keeping that use
and the units' numbers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from axpipe import templates
from axpipe.errors import ConfigError, ExitCode, InputError, Problem
from axpipe.goal import contract, goals, turn
from axpipe.goal.driver import GoalDriver
from axpipe.goal.goals import Planned
from axpipe.goal.plan import check_plan, find_credentials
from axpipe.interfaces import AgentStatus
from axpipe.plugin import registry
from axpipe.recipe import roles, schema
from axpipe.recipe.typed import load_plugin_params
from axpipe.store import goals as sql
from axpipe.task import criteria, files, guard, ownership, standing, taskfile
from axpipe.unit import told, units
from axpipe.unit.quarantine import hard_stop
from axpipe.unit.scope import pattern_problem

if TYPE_CHECKING:
    from axpipe.goal.turn import Invocation
    from axpipe.run.phases import PhaseResult, RunContext

REPLAN = "replan"
AGENT_FAILED = ("a person reads the planner's output (the unit's events and prompt file), fixes what made it fail, "
                "and runs the goal again")


def prepare(context: RunContext) -> PhaseResult | None:
    """The task file's part of the plan phase; a result stops the run (a parked plan, a
    hard stop), None lets the plan phase freeze the goal with the task file's criteria."""
    recipe = context.recipe
    if not roles.task_driven(recipe):
        return None
    assert recipe.goal is not None
    goal_id = goals.goal_id_for(recipe, context.recipe_name, context.variables)
    context.events.goal = goal_id
    path, shown, task, created = files.ensure(context.root, recipe, goal_id)
    if created:
        context.events.emit("task.created", phase="plan", task_file=shown)
    files.remember(context.root, goal_id, task.id, shown)
    existing = goals.load(context.store, goal_id)
    provisional = existing is not None and bool(existing.plan.get("provisional"))
    planner = recipe.roles.planner if recipe.roles is not None else None
    wants_plan = files.needs_plan(recipe, task) or task.front.get("status") == REPLAN
    planned_now = False
    if planner is not None and wants_plan and (existing is None or provisional):
        drifted = standing.drift(recipe, context.root)  # DESIGN §15: checked before every unit
        if drifted:
            raise InputError(f"standing rules out of sync: {'; '.join(drifted)}")
        driver = _provisional(context, goal_id)
        stopped = _run_planner(context, driver, planner, path, shown)
        if stopped is not None:
            return stopped
        task = taskfile.read(path, shown)
        planned_now = True
    found, problems = criteria.parse(task.sections.get(criteria.SECTION, ""))
    for name in ("Plan", "Scope"):  # the plan's text, as a recipe's (DESIGN §5): never a credential
        kinds = find_credentials(task.sections.get(name, ""))
        if kinds:
            problems.append(f"section '{name}' contains a credential ({', '.join(kinds)}): keep secrets out of the "
                            "plan")
    merged = criteria.merged_goal(recipe.goal, found)
    problems += _validate(context, merged, found)
    scope = criteria.scope_patterns(task.sections.get("Scope", "")) if recipe.scope is None else None
    for pattern in scope or []:
        problem = pattern_problem(pattern)
        if problem is not None:
            problems.append(f"scope {pattern!r}: {problem}")
    if problems:
        if planner is None:
            raise ConfigError([Problem(f"task file {shown}", problem) for problem in problems])
        return _park(context, goal_id, shown, problems, planned_now)
    recipe.goal = merged
    if scope:  # the recipe declares none: the planner's Scope section is the unit's scope contract
        recipe.scope = scope
    files.task_file_in_scope(recipe, shown)
    return None  # the plan holds: goals.plan starts the goal afresh with its contract, the planner's use kept


def _validate(context: RunContext, goal: schema.Goal, found: list[criteria.Criterion]) -> list[str]:
    """Plan validation of the goal with the task file's criteria (DESIGN §5); each problem
    names the criterion it is about."""
    problems: list[str] = []
    command_kind = registry.load("axpipe.checks", "command")
    names = {item.check_id: f"criterion {item.number}" for item in found if item.check_id}
    for check in goal.checks:
        if check.id in names and isinstance(check.params, dict):
            check.params, typed = load_plugin_params(command_kind, check.params, check.id, None)
            problems += [f"{names[check.id]}: {problem.message}" for problem in typed]

    def add(path: str, message: str) -> None:
        named = next((label for check_id, label in names.items() if f"'{check_id}'" in message or
                      path.startswith(_check_path(goal, check_id))), None)
        problems.append(f"{named}: {message}" if named else f"{path}: {message}")

    check_plan(goal, context.root, add)
    return problems


def _check_path(goal: schema.Goal, check_id: str) -> str:
    index = next((i for i, check in enumerate(goal.checks) if check.id == check_id), -1)
    return f"goal.checks[{index}]"


def _provisional(context: RunContext, goal_id: str) -> GoalDriver:
    """A driver on the goal's provisional row (created when missing), in a new session."""
    recipe = context.recipe
    assert recipe.goal is not None
    goal = goals.load(context.store, goal_id)
    if goal is None:
        canonical, _ = contract.build(recipe.goal, None)
        sql.insert_goal(context.store, goal_id, recipe=context.recipe_name, overrides=json.dumps(context.overrides),
                        variables=json.dumps(context.variables, sort_keys=True, default=str),
                        objective=recipe.goal.objective, assured=int(recipe.goal.assure), status="planning",
                        contract_digest=None, baseline=contract.head_sha(context.root), workspace=str(context.root),
                        plan=json.dumps({"checks": canonical["checks"], "source_paths": canonical["source_paths"],
                                         "acceptance": canonical["acceptance"], "provisional": True}),
                        budget=json.dumps({}))
        goal = goals.load(context.store, goal_id)
        assert goal is not None
    elif goal.status != "planning":
        goals.set_status(context.store, goal, "planning", None, context.events, note="planning again")
        goal = goals.reload(context.store, goal)
    session = goals.start_session(context.store, goal, context.root)
    return GoalDriver(context.store, context.root, recipe, Planned(goal, session, created=True),
                      events=context.events, variables=context.variables, on_output=context.on_output)


def _run_planner(context: RunContext, driver: GoalDriver, spec: schema.AgentSpec, path: Path,
                 shown: str) -> PhaseResult | None:
    """One planner unit; a result when it ended in a hard stop."""
    from axpipe.run.phases import PhaseResult

    unit = units.begin(driver)
    driver.unit = unit
    try:
        before_guard = guard.start(context.root, path, shown)
        before = turn.snapshot_files(context.root)
        prompt = templates.render_file("planner.md.j2", **told.context(driver, "planner", shown))
        run = turn.invoke(spec, root=context.root, prompt=prompt, iteration=unit.number,
                          folder=goals.goal_dir(context.root, driver.goal.id) / "planner", events=context.events,
                          phase="plan", goal_id=driver.goal.id, path="roles.planner",
                          extra_env={"AXPIPE_ROLE": "planner", "AXPIPE_TASK_FILE": str(path)},
                          on_output=context.on_output)
        edited = turn.changed_files(context.root, before, turn.snapshot_files(context.root))
        parts = before_guard.written()  # the task file may be under .axpipe/, which the snapshots leave out
        finished(context, spec, "planner", unit.number, run,
                 sorted({*edited, *([f"{shown} ({', '.join(parts)})"] if parts else [])}))
        if run.outcome.status is not AgentStatus.DONE:
            step = hard_stop(driver, unit, kind="agent", reason=f"the planner's turn {run.outcome.status.value}: "
                                                                   f"{run.outcome.summary}",
                             external_change=AGENT_FAILED, evidence=[str(run.prompt_file)])
            return PhaseResult(step.status, step.summary, stop=step.stop)
        edited = [name for name in edited if (context.root / name).resolve() != path.resolve()]
        problem = (f"the planner wrote outside the task file: {', '.join(edited)} (a planner writes only the "
                   f"task file's {', '.join(ownership.may_write('planner'))})") if edited else \
            before_guard.problem("planner")
        if problem is not None:
            step = hard_stop(driver, unit, kind="task-file", reason=problem,
                             external_change="a person looks at the quarantined change, fixes the planner's prompt or "
                                             "the task file, and runs the goal again")
            note = before_guard.put_back(guard.kept_version(units.artifacts_dir(context.root, driver.goal.id),
                                                            unit.number))
            return PhaseResult(step.status, f"{step.summary}; {note}", stop=step.stop)
        if before_guard.before.front.get("status") == REPLAN:
            _write_status(path, shown, "open")
        sql.add_usage(context.store, driver.goal.id, tokens=run.tokens, seconds=unit.elapsed(), steps=1)
        units.end(driver, unit, "passed", f"planned: wrote {', '.join(before_guard.written()) or 'nothing'}")
        return None
    finally:
        unit.close()


def finished(context: RunContext, spec: schema.AgentSpec, role: str, number: int, run: Invocation,
             edited: list[str]) -> None:
    """The ``agent.finished`` event of a planner's or prototype's turn (as a work turn's)."""
    outcome = run.outcome
    context.events.emit("agent.finished", phase="plan", agent=spec.kind, role=role, iteration=number,
                        status=outcome.status.value, summary=outcome.summary, exit_code=outcome.exit_code,
                        duration=round(outcome.duration, 4), tokens=run.tokens, edited=edited, prompt=outcome.prompt,
                        output_tail=outcome.output_tail[-2000:])


def _write_status(path: Path, shown: str, status: str) -> None:
    path.write_text(taskfile.read(path, shown).with_front(status=status), encoding="utf-8")


def _park(context: RunContext, goal_id: str, shown: str, problems: list[str], planned_now: bool) -> PhaseResult:
    """Block the provisional goal with the refused plan's problems (exit 3)."""
    from axpipe.run.phases import PhaseResult

    goal = goals.load(context.store, goal_id)
    if goal is None or not goal.plan.get("provisional"):
        goal = _provisional(context, goal_id).goal
    listed = "; ".join(problems)
    reason = f"plan refused ({len(problems)} problem(s) in task file {shown}): {listed}"
    goals.set_status(context.store, goal, "blocked", reason, context.events,
                     blocked={"kind": "plan", "reason": reason, "problems": problems,
                              "external_change": f"a person fixes the plan in {shown} (or runs `axpipe task replan "
                                                 f"{goal_id}`) and runs the goal again",
                              "evidence": [shown], "no_independent_work": True})
    context.events.emit("task.plan_refused", phase="plan", task_file=shown, problems=problems,
                        planner_ran=planned_now)
    return PhaseResult("failed", f"plan parked: {reason}", stop=ExitCode.BLOCKED)
