"""Cross-field rules of a recipe, checked after every value has its type.

Each rule reports through ``add(path, message)`` so that all problems surface together.
Plugin kinds are looked up here (unknown kind, plugin that fails to load) and their
parameters validated against the plugin's ``params_schema``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from axpipe import samples, workspace
from axpipe.deliver.task import template_problem
from axpipe.errors import PluginError, not_found_message
from axpipe.goal.fingerprint import covering_source
from axpipe.goal.plan import agent_program_problem, check_plan
from axpipe.goal.private import inside_workspace
from axpipe.plugin import registry
from axpipe.recipe import roles, schema
from axpipe.recipe.typed import load_plugin_params
from axpipe.repair.engine import EMPTY_TARGET, NOT_A_REPOSITORY, runs_no_target
from axpipe.schedule.entries import check_entries
from axpipe.schedule.targets import Validator
from axpipe.schedule.timing import DAILY_PATTERN, WEEKLY_PATTERN
from axpipe.unit.scope import pattern_problem

Add = Callable[[str, str], None]
Loader = Callable[[str, str], Any]

ID_PATTERN = re.compile(r"[A-Za-z0-9][\w.-]*")
"""What check ids and ``goal.id`` may be: each becomes one folder or file name under
``.axpipe/`` (a leading letter or digit and no ``/`` keep it there)."""
ID_CHARACTERS = "a letter or digit, then letters, digits, '.', '_', '-'"

CONDITION_ALIASES = {"exit": "command"}
"""Repair success kinds that are other names for check kinds (``exit`` is exit code 0)."""


def check_recipe(recipe: schema.Recipe, add: Add, loader: Loader | None, root: Path | None = None, *,
                 starts_agents: bool = True, validate_target: Validator | None = None) -> None:
    """Apply every cross-field rule to ``recipe``, the plan rules (DESIGN §5) included; those
    that look at the workspace (commands on PATH or in the project, git remotes) need ``root``.
    ``starts_agents``: whether the caller may start the recipe's agents (a run does; ``gate``
    and ``review`` judge without them, so a missing agent program is no reason to refuse).
    ``validate_target``: what validates a scheduled task's recipe (see
    :func:`axpipe.schedule.entries.check_entries`)."""
    load = loader or _default_loader
    roles.adopt_implementer(recipe, add)  # `roles.implementer` is `agent:`: every agent rule below applies
    programs = root if starts_agents else None  # where agents' programs are looked up, if at all
    if recipe.goal is not None:
        _goal(recipe.goal, add, load)
        _recipe_defaults(recipe, add, load)
        _kind_rules(recipe.goal, add, load)
        check_plan(recipe.goal, root, add)
        if root is not None:
            _private_folder(recipe.goal, root, add)
            _receipts_outside_source(recipe, recipe.goal, root, add)
    if recipe.agent is not None:
        _agent(recipe.agent, add, load, cost_budget=recipe.goal is not None and recipe.goal.budget.cost is not None)
        if programs is not None and _runs_the_agent(recipe):
            _agent_program(recipe.agent, "agent", programs, add)
    if recipe.work is not None and recipe.agent is None:
        add("work", "a work prompt needs an agent: declare `agent:` (kind and its command)")
    if recipe.loop is not None:
        _loop(recipe, add)
    for path, repair in repairs_of(recipe):
        _repair(repair, path, add, load, has_agent=recipe.agent is not None)
        if programs is not None and repair.agent is not None:
            _agent_program(repair.agent, f"{path}.agent", programs, add)
    if root is not None and recipe.repair and not recipe.workspace.sample:
        _repair_workspace(root, add)
    if recipe.gate is not None and recipe.gate.command is None and not recipe.gate.phases:
        add("gate", "declare `command` or `phases`")
    if recipe.scope is not None:
        _scope(recipe.scope, "scope", add)
    _schedule(recipe.schedule, add)
    _schedule_tasks(recipe, add, root, validate_target)
    _reviewers(recipe, add, load)
    roles.check(recipe, add, load, _params, _plugin, root)  # after the reviewers: roles.qa/judge join them typed
    if recipe.workspace.sample is not None:
        _sample(recipe.workspace.sample, add)
    if recipe.receipts is not None:
        _plugin(load, "axpipe.receipt_verifiers", recipe.receipts.verifier, "receipts.verifier", add)
    if recipe.deliver is not None:
        _deliver(recipe, recipe.deliver, add, load)


def _private_folder(goal: schema.Goal, root: Path, add: Add) -> None:
    """Held-out checks need a private folder outside the workspace; say so before anything runs."""
    held_out = next((index for index, check in enumerate(goal.checks) if check is not None and check.held_out), None)
    if held_out is not None:
        problem = inside_workspace(root)
        if problem is not None:
            add(f"goal.checks[{held_out}].held_out", problem)


def _receipts_outside_source(recipe: schema.Recipe, goal: schema.Goal, root: Path, add: Add) -> None:
    """The review rounds of a run are written under ``receipts.root``: inside the goal's
    source they would change the files the checks are verified on, and the goal could never
    complete. Say so before anything runs."""
    if recipe.receipts is None or not recipe.reviewers or not isinstance(recipe.receipts.root, str):
        return
    folder = (root / recipe.receipts.root).resolve()
    source = covering_source(root, goal.source_paths, folder / "round-1" / "receipt.json")
    if source is not None:
        add("receipts.root", f"{recipe.receipts.root} is inside the goal's source (source path {source!r}): the "
                             "review rounds written there would change the files the checks are verified on, so the "
                             "goal could never complete; keep it under .axpipe/ (the default), in a folder git "
                             "ignores, or narrow goal.source_paths")


def _sample(name: str, add: Add) -> None:
    known = samples.available()
    if name not in known:
        add("workspace.sample", not_found_message("sample project", name, known))


def _default_loader(namespace: str, name: str) -> Any:
    return registry.load(namespace, name)


def _plugin(load: Loader, namespace: str, name: str, path: str, add: Add) -> Any:
    try:
        return load(namespace, name)
    except PluginError as error:
        add(path, error.message)
        return None


def _params(kind_object: Any, params: dict[str, Any], path: str, add: Add) -> Any:
    typed, problems = load_plugin_params(kind_object, params, path, None)
    for problem in problems:
        add(problem.path, problem.message)
    return typed


def _goal(goal: schema.Goal, add: Add, load: Loader) -> None:
    _protect(goal.protect, goal.allow_test_edits, "goal", add)
    if goal.id is not None and not ID_PATTERN.fullmatch(goal.id):
        # The id names the goal's folders (.axpipe/goals/<id>, artifacts, logs) and what
        # `goal clear` removes: a path there would write, and delete, outside .axpipe/.
        add("goal.id", f"{goal.id!r} is not a valid id ({ID_CHARACTERS}): it names the goal's folder under "
                       ".axpipe/goals/")
    seen: dict[str, int] = {}
    for index, check in enumerate(goal.checks):
        path = f"goal.checks[{index}]"
        if check is None or check.id is None:
            continue
        if not ID_PATTERN.fullmatch(check.id):
            add(f"{path}.id", f"{check.id!r} is not a valid id (letters, digits, '.', '_', '-')")
        if check.id in seen:
            add(f"{path}.id", f"duplicate check id {check.id!r} (also goal.checks[{seen[check.id]}])")
        seen[check.id] = index
        for position, acceptance_id in enumerate(check.acceptance):
            if acceptance_id not in goal.acceptance:
                add(f"{path}.acceptance[{position}]",
                    f"unknown acceptance id {acceptance_id!r}; declared: {', '.join(goal.acceptance) or 'none'}")
        kind = _plugin(load, "axpipe.checks", check.kind, f"{path}.kind", add)
        if kind is None:
            continue
        check.params = _params(kind, check.params, path, add)
        if getattr(kind, "needs_command", True) and check.command is None:
            add(f"{path}.command", f"a {check.kind} check needs a command")
    for acceptance_id, criterion in goal.acceptance.items():
        if criterion is None:
            continue
        path = f"goal.acceptance.{acceptance_id}"
        if criterion.check is not None and criterion.check not in seen:
            add(f"{path}.check", f"no check has id {criterion.check!r}; checks: {', '.join(seen) or 'none'}")


def _recipe_defaults(recipe: schema.Recipe, add: Add, load: Loader) -> None:
    """Fill check params a kind takes from the recipe when the check leaves them out
    (``recipe_defaults = {"scope": "scope"}``: git-scope's ``scope`` defaults to the recipe's
    ``scope:``). Done here, before the contract is frozen, so the contract holds the values."""
    assert recipe.goal is not None
    for index, check in enumerate(recipe.goal.checks):
        if check is None or check.kind is None or not hasattr(check.params, "__dataclass_fields__"):
            continue
        try:
            defaults = getattr(load("axpipe.checks", check.kind), "recipe_defaults", None) or {}
        except PluginError:
            continue
        for param, key in defaults.items():
            if getattr(check.params, param, None) is None:
                setattr(check.params, param, getattr(recipe, key, None))
            value = getattr(check.params, param, None)
            if value is None:
                add(f"goal.checks[{index}].{param}", f"a {check.kind} check needs `{param}` (here, or the recipe's "
                                                     f"`{key}:`)")
            elif param == "scope":
                _scope(value, f"goal.checks[{index}].scope", add)


def _kind_rules(goal: schema.Goal, add: Add, load: Loader) -> None:
    """A check kind's own rules for its typed params (``param_problems``, optional; see
    axpipe.interfaces.checks): a browser check's malformed steps are refused here, before
    anything runs, rather than when the check first runs."""
    for index, check in enumerate(goal.checks):
        if check is None or check.kind is None or not hasattr(check.params, "__dataclass_fields__"):
            continue
        try:
            rules = getattr(load("axpipe.checks", check.kind), "param_problems", None)
        except PluginError:
            continue
        if not callable(rules):
            continue
        try:
            found = [(str(where), str(message)) for where, message in rules(check.params)]
        except Exception as error:  # a plugin's bug must not crash validation: it refuses the recipe instead
            add(f"goal.checks[{index}].kind", f"check kind {check.kind!r} failed to check its params: "
                                               f"{type(error).__name__}: {error}")
            continue
        for where, message in found:
            add(f"goal.checks[{index}].params.{where}", message)


def _scope(patterns: list[str], path: str, add: Add) -> None:
    for position, pattern in enumerate(patterns):
        problem = pattern_problem(pattern)
        if problem is not None:
            add(f"{path}[{position}]", problem)


def _agent(agent: schema.AgentSpec, add: Add, load: Loader, *, cost_budget: bool = False) -> None:
    kind = _plugin(load, "axpipe.agents", agent.kind, "agent.kind", add)
    if kind is not None:
        agent.params = _params(kind, agent.params, "agent", add)
        # A preset knows what its program needs (aider: a model) and whether it reports cost.
        check = getattr(kind, "config_problems", None)
        for where, problem in check(agent.params, agent.model) if callable(check) else []:
            add(f"agent.{where}", problem)
        if cost_budget and getattr(kind, "reports_cost", None) is False:
            add("goal.budget.cost", f"the '{agent.kind}' agent's program reports no cost (tokens only), so a cost "
                                    "budget could not be kept: use goal.budget.tokens, or an agent that reports cost")


def _runs_the_agent(recipe: schema.Recipe) -> bool:
    """Will a run of ``recipe`` start its top-level agent: for the goal's turns, or for a
    repair that declares no agent of its own? An agent nothing starts is not looked up:
    ``loop.command`` replaces the agent's turn and the repairs (:mod:`axpipe.loop.run`)."""
    if recipe.loop is not None and recipe.loop.command is not None:
        return False
    return recipe.goal is not None or any(repair.agent is None for _, repair in repairs_of(recipe))


def _agent_program(agent: schema.AgentSpec, path: str, root: Path, add: Add) -> None:
    """The agent's program exists, as a check's must (DESIGN §5): a missing one is refused
    with every other problem, before the run takes the checkout or registers a goal, rather
    than found at the first turn after the goal and its session were created."""
    problem = agent_program_problem(agent.params, root)
    if problem is not None:
        if agent.kind != "command":  # a preset's command the recipe may never have written out
            problem += f" (the '{agent.kind}' agent runs it: install it, or set {path}.command)"
        add(f"{path}.command", problem)


def _loop(recipe: schema.Recipe, add: Add) -> None:
    loop = recipe.loop
    assert loop is not None
    if loop.prompt is not None and loop.command is not None:
        add("loop", "declare `prompt` or `command`, not both")
    if loop.prompt is not None and recipe.agent is None:
        add("loop.prompt", "a loop prompt needs an agent: declare `agent:`")
    if loop.prompt is not None and recipe.goal is None:
        # A tick's prompt goes to the goal's agent turn (budgets, checks, completion gate).
        add("loop.prompt", "a loop prompt is sent to the goal's agent each tick: declare `goal:` "
                           "(or repeat a command with `loop.command`)")
    if loop.prompt is None and loop.command is None and recipe.goal is None:
        add("loop", "nothing to repeat: declare `loop.command`, or a `goal` for the loop to drive")


def repairs_of(recipe: schema.Recipe) -> list[tuple[str, schema.Repair]]:
    """The recipe's repair targets with their config paths (``repair`` or ``repair[i]``)."""
    section = recipe.repair
    if section is None:
        return []
    if isinstance(section, list):
        return [(f"repair[{index}]", item) for index, item in enumerate(section) if item is not None]
    return [("repair", section)]


def _repair_workspace(root: Path, add: Add) -> None:
    """Repairs judge each iteration's diff: outside a git repository they cannot start (a
    sample workspace is a fresh repository the run makes, so it is not looked at here)."""
    if not workspace.is_git_repository(root):
        add("repair", NOT_A_REPOSITORY)


def _repair(repair: schema.Repair, path: str, add: Add, load: Loader, *, has_agent: bool) -> None:
    if isinstance(repair.target, str) and not repair.target.strip():
        add(f"{path}.target", EMPTY_TARGET)
    if repair.agent is not None:
        kind = _plugin(load, "axpipe.agents", repair.agent.kind, f"{path}.agent.kind", add)
        if kind is not None:
            repair.agent.params = _params(kind, repair.agent.params, f"{path}.agent", add)
    elif not has_agent:
        add(f"{path}.agent", "a repair needs an agent to make its fixes: declare `agent:` (here or at the top)")
    _repair_guards(repair.guards, f"{path}.guards", add, load)
    _protect(repair.protect, repair.allow_test_edits, path, add)
    success = repair.success
    if success is None or success.kind is None:
        return
    kind_name = CONDITION_ALIASES.get(success.kind, success.kind)
    kind = _plugin(load, "axpipe.checks", kind_name, f"{path}.success.kind", add)
    if kind is not None:
        success.params = _params(kind, success.params, f"{path}.success", add)
        if not getattr(kind, "needs_command", True):  # it would judge something other than the target
            add(f"{path}.success.kind", runs_no_target(kind_name))


def _protect(patterns: list[str] | None, allowed: bool, path: str, add: Add) -> None:
    """``protect`` globs (axpipe.guard.protect): each a valid glob, at least one, and not beside
    ``allow_test_edits: true``, which turns them off."""
    if patterns is None:
        return
    if allowed:
        add(f"{path}.protect", "has no effect with `allow_test_edits: true`, which lets the agent edit every test: "
                               "keep one of the two")
        return
    if not patterns:
        add(f"{path}.protect", "name at least one glob, or leave `protect` out to protect the project's tests "
                               "(tests/**, **/test_*.py, **/*.test.*, ...), or set `allow_test_edits: true`")
    _scope(patterns, f"{path}.protect", add)


def _repair_guards(guards: list[str] | None, path: str, add: Add, load: Loader) -> None:
    """A guard a recipe names must load, here before anything runs (DESIGN §10); without a
    list every installed guard judges and one that fails to load is reported by the repair
    (:func:`axpipe.guard.run.select_guards`), never refused here."""
    if guards is None:
        return
    if not guards:
        add(path, "name at least one guard, or leave `guards` out for every installed one; available: "
                  + ", ".join(sorted(set(registry.names("axpipe.guards")))))
    for position, guard in enumerate(guards):
        _plugin(load, "axpipe.guards", guard, f"{path}[{position}]", add)




def _schedule(entries: list[schema.ScheduleSpec], add: Add) -> None:
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        if entry is None:
            continue
        path = f"schedule[{index}]"
        if entry.id in seen:
            add(f"{path}.id", f"duplicate schedule id {entry.id!r}")
        seen.add(entry.id)
        given = [key for key in ("at", "daily", "weekly", "cron") if getattr(entry, key) is not None]
        if len(given) != 1:
            add(path, "declare exactly one of at, daily, weekly, cron"
                      + (f" (got {', '.join(given)})" if given else ""))
        if entry.daily is not None and not DAILY_PATTERN.match(entry.daily):
            add(f"{path}.daily", f"expected HH:MM (24-hour), got {entry.daily!r}")
        if entry.weekly is not None and not WEEKLY_PATTERN.match(entry.weekly):
            add(f"{path}.weekly", f"expected DAY@HH:MM such as MON@09:00, got {entry.weekly!r}")
        if entry.tz is not None:
            _time_zone(entry.tz, f"{path}.tz", add)


def _schedule_tasks(recipe: schema.Recipe, add: Add, root: Path | None, validate: Validator | None) -> None:
    """The ``schedule:`` entries as the plan will register them, reported with every other
    problem (DESIGN §2): a cron that never fires, a bad override, an unknown recipe or one
    its overrides break, a new one-shot in the past (see :mod:`axpipe.schedule.entries`)."""
    if recipe.schedule:
        check_entries(recipe, add, root, validate)


def _time_zone(name: str, path: str, add: Add) -> None:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        add(path, f"unknown IANA time zone {name!r} (for example Europe/Lisbon)")


def _reviewers(recipe: schema.Recipe, add: Add, load: Loader) -> None:
    names: set[str] = set()
    for index, reviewer in enumerate(recipe.reviewers):
        if reviewer is None:
            continue
        path = f"reviewers[{index}]"
        if reviewer.name in names:
            add(f"{path}.name", f"duplicate reviewer name {reviewer.name!r}")
        names.add(reviewer.name)
        kind = _plugin(load, "axpipe.reviewers", reviewer.kind, f"{path}.kind", add)
        if kind is not None:
            reviewer.params = _params(kind, reviewer.params, path, add)
        agent_model = recipe.agent.model if recipe.agent is not None else None
        if reviewer.judge and agent_model is not None and reviewer.model == agent_model:
            add(f"{path}.model", f"the judge uses the agent's model {agent_model!r}; "
                                 "a judge must use a different model")
        if reviewer.qa and agent_model is not None and reviewer.model == agent_model:
            add(f"{path}.model", f"QA uses the agent's model {agent_model!r}; a role that grades another's work "
                                 "must use a different model")
        if reviewer.judge and reviewer.qa:
            add(path, "a reviewer is a judge or QA, not both")
        testers = {other.model for other in recipe.reviewers if other is not None and other.qa and other.model}
        if reviewer.judge and reviewer.model is not None and reviewer.model in testers:
            add(f"{path}.model", f"the judge uses the QA reviewer's model {reviewer.model!r}; a judge must use a "
                                 "model of its own")


def _deliver(recipe: schema.Recipe, deliver: schema.Deliver, add: Add, load: Loader) -> None:
    """``deliver:`` (DESIGN §16): its templates fill in, its pattern compiles, its plugin loads."""
    if recipe.goal is None:
        add("deliver", "delivery commits a goal's units: declare `goal:` (or remove `deliver:`)")
    for key in ("branch", "subject"):
        problem = template_problem(getattr(deliver, key), key)
        if problem is not None:
            add(f"deliver.{key}", problem)
    if deliver.subject_pattern is not None:
        try:
            re.compile(deliver.subject_pattern)
        except re.error as error:
            add("deliver.subject_pattern", f"{deliver.subject_pattern!r} is not a regex ({error})")
    if deliver.author is not None and not re.fullmatch(r"\s*[^<>]+?\s*<[^<>\s]+>\s*", deliver.author):
        add("deliver.author", f"{deliver.author!r} is not `Name <email>`")
    if not deliver.remote.strip() or deliver.remote.startswith("-"):
        add("deliver.remote", f"{deliver.remote!r} is not a remote name or URL")
    if deliver.pr is None:
        if deliver.params:
            add("deliver.params", f"{', '.join(sorted(deliver.params))}: given without deliver.pr (a deliverer "
                                  "in axpipe.deliverers), or not a key of deliver:")
        return
    plugin = _plugin(load, "axpipe.deliverers", deliver.pr, "deliver.pr", add)
    if plugin is not None:
        deliver.params = _params(plugin, deliver.params, "deliver", add)
