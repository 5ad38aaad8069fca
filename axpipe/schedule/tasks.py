"""Scheduled tasks as people declare them: ``axpipe schedule add`` flags, or a recipe's
``schedule:`` list (registered, upserted by id, in the plan phase of ``axpipe run``).

Everything is validated before the store is touched; a refused task writes nothing.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from axpipe import clock, workspace
from axpipe.duration import DurationError, format_duration, parse_duration
from axpipe.errors import ConfigError, InputError, Problem
from axpipe.recipe import libraries as recipes
from axpipe.recipe import schema
from axpipe.records import record
from axpipe.schedule.timing import Schedule, ScheduleError, parse, refuse_past
from axpipe.store import Store
from axpipe.store import schedule as queries

ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
CATCH_UP = ("run_once", "skip")
GRACE_MAX = 24 * 3600.0
RUN_DURATION = (1.0, 72 * 3600.0)
_OVERRIDE = re.compile(r"^(\+\+|\+|~)?([A-Za-z_][\w.\-/@]*)(=.*)?$", re.DOTALL)
_DEFINITION = ("title", "kind", "expression", "tz", "recipe", "overrides", "catch_up", "grace",
               "max_run_duration", "source")


@record
class TaskSpec:
    """A validated task definition (no state: next run, status and failures live in the store)."""

    id: str
    title: str
    schedule: Schedule
    recipe: str
    overrides: list[str]
    catch_up: str
    grace: float
    max_run_duration: float
    source: str

    def row(self, now: datetime) -> dict[str, Any]:
        """The store row of this task registered at ``now``."""
        following = self.schedule.next_after(now)
        return {"id": self.id, "title": self.title, "kind": self.schedule.kind,
                "expression": self.schedule.expression, "tz": self.schedule.tz, "recipe": self.recipe,
                "overrides": json.dumps(self.overrides), "catch_up": self.catch_up, "grace": self.grace,
                "max_run_duration": self.max_run_duration, "source": self.source,
                "status": "active" if following else "done",
                "next_run": clock.iso(following) if following else None,
                "created_at": clock.iso(now), "updated_at": clock.iso(now)}


def override_problem(override: str) -> str | None:
    """Why ``override`` cannot be given to a scheduled run, or None when it can."""
    if override.startswith("-"):
        return f"{override!r} is a flag; a scheduled run takes Hydra overrides only (KEY=VALUE)"
    match = _OVERRIDE.match(override)
    if match is None or (match.group(3) is None and match.group(1) != "~"):
        return f"{override!r} is not an override: expected KEY=VALUE, +KEY=VALUE or ~KEY"
    key = match.group(2)
    if key == "recipe":
        return f"{override!r}: a task's recipe is chosen with --recipe (or the entry's `recipe:`), not by an override"
    if key.startswith(("hydra.run.", "hydra.sweep.")):
        return (f"{override!r} sets {key}, which axpipe sets for scheduled runs "
                "(their folder is .axpipe/runs/schedule/...)")
    return None


def check_id(task_id: str) -> str | None:
    if ID_PATTERN.match(task_id):
        return None
    return f"{task_id!r} is not a valid task id (1-64 letters, digits, '.', '_', '-'; starting with a letter or digit)"


def from_flags(*, kind: str, expression: str, tz: str | None, recipe: str, overrides: list[str],
               title: str | None, catch_up: str, grace: str, max_run_duration: str, task_id: str | None,
               now: datetime) -> TaskSpec:
    """A task from ``axpipe schedule add`` flags; InputError names the flag at fault."""
    try:
        schedule = parse(kind, expression, tz, now=now)
    except ScheduleError as error:
        flag = "--tz" if error.field == "tz" else f"--{kind}"
        raise InputError(f"{flag}: {error}; nothing was written") from None
    for override in overrides:
        problem = override_problem(override)
        if problem:
            raise InputError(f"{problem}; nothing was written")
    if task_id is not None and (problem := check_id(task_id)):
        raise InputError(f"--id: {problem}; nothing was written")
    return TaskSpec(id=task_id or "", title=title or "", schedule=schedule, recipe=recipe,
                    overrides=list(overrides), catch_up=catch_up,
                    grace=_duration("--grace", grace, 0.0, GRACE_MAX),
                    max_run_duration=_duration("--max-run-duration", max_run_duration, *RUN_DURATION),
                    source="schedule add")


def _duration(flag: str, text: str, low: float, high: float) -> float:
    try:
        seconds = parse_duration(text)
    except DurationError as error:
        raise InputError(f"{flag}: {error}; nothing was written") from None
    if seconds < low:
        raise InputError(f"{flag}: {text} is below the minimum {format_duration(low)}; nothing was written")
    if seconds > high:
        raise InputError(f"{flag}: {text} is above the maximum {format_duration(high)}; nothing was written")
    return seconds


def add(store: Store, spec: TaskSpec, now: datetime) -> dict[str, Any]:
    """Store a new task; InputError when its id is taken. Without an id, the recipe's name
    (then ``NAME-2``, ``NAME-3`` …) is used."""
    if spec.id:
        row = spec.row(now)
        if not queries.add_task(store, row):
            raise InputError(f"--id: a task {spec.id!r} already exists; choose another id or "
                             f"`axpipe schedule delete {spec.id}` first. Nothing was written.")
        return row
    base = re.sub(r"[^A-Za-z0-9_.-]", "-", spec.recipe).strip("-.")[:56] or "task"
    for number in range(1, 10_000):
        spec.id = base if number == 1 else f"{base}-{number}"
        row = spec.row(now)
        if queries.add_task(store, row):
            return row
    raise InputError(f"no free task id based on {base!r}; give one with --id")


def from_recipe(recipe: schema.Recipe, root: Path, now: datetime,
                stored_zones: dict[str, str] | None = None) -> list[TaskSpec]:
    """The tasks of ``recipe.schedule``; ConfigError listing every problem with its path.

    An entry without ``tz`` takes its zone from ``stored_zones`` (task id to the zone
    stored with the task) when it is there, else this machine's zone."""
    problems: list[Problem] = []
    specs: list[TaskSpec] = []
    known: set[str] | None = None
    for index, entry in enumerate(recipe.schedule):
        path = f"schedule[{index}]"
        if (problem := check_id(entry.id)) is not None:
            problems.append(Problem(f"{path}.id", problem))
        kind = next((key for key in ("at", "daily", "weekly", "cron") if getattr(entry, key) is not None), "")
        try:
            zone = entry.tz if entry.tz is not None else (stored_zones or {}).get(entry.id)
            schedule = parse(kind, getattr(entry, kind), zone, now=now, check_past=False)
        except ScheduleError as error:
            key = "tz" if error.field == "tz" else kind
            problems.append(Problem(f"{path}.{key}", str(error)))
            continue
        for position, override in enumerate(entry.overrides):
            if (problem := override_problem(str(override))) is not None:
                problems.append(Problem(f"{path}.overrides[{position}]", problem))
        if known is None:
            known = {item.name for item in recipes.discover(workspace.load_project(root))}
        if entry.recipe not in known:
            problems.append(Problem(f"{path}.recipe", f"unknown recipe {entry.recipe!r} on the search path of {root}"))
        specs.append(TaskSpec(id=entry.id, title=entry.title, schedule=schedule, recipe=entry.recipe,
                              overrides=[str(item) for item in entry.overrides], catch_up=entry.catch_up,
                              grace=float(entry.grace), max_run_duration=float(entry.max_run_duration),
                              source=f"recipe {recipe.name}"))
    if problems:
        raise ConfigError(problems, recipe=recipe.name)
    return specs


def check_recipe(store: Store | None, recipe: schema.Recipe, recipe_name: str, root: Path,
                 now: datetime) -> list[TaskSpec]:
    """Validate ``recipe``'s tasks as :func:`register_recipe` will register them at ``now``,
    reading the stored ones (``store`` None: nothing is stored yet) and writing nothing.

    Every problem is a ConfigError naming its config path, raised before anything of the
    run exists (a goal session, a run row, a probe): a one-shot ``at`` in the past is
    refused unless the task is already stored with that same time."""
    stored = {entry.id: row for entry in recipe.schedule
              if store is not None and (row := queries.get_task(store, entry.id)) is not None}
    # A task keeps the zone stored with it when its entry names none: the zone of whichever
    # process ran the recipe last (a shell with TZ set, a supervisor without) must not move it.
    zones = {entry.id: stored[entry.id]["tz"] for entry in recipe.schedule
             if entry.tz is None and entry.id in stored}
    specs = from_recipe(recipe, root, now, zones)
    for index, spec in enumerate(specs):
        existing = stored.get(spec.id)
        if existing is None or _moved(existing, spec.row(now)):
            _refuse_past(spec, index, recipe_name, now)
    return specs


def _refuse_past(spec: TaskSpec, index: int, recipe_name: str, now: datetime) -> None:
    try:
        refuse_past(spec.schedule, now)
    except ScheduleError as error:
        raise ConfigError([Problem(f"schedule[{index}].at", str(error))], recipe=recipe_name) from None


def _moved(existing: dict[str, Any], new: dict[str, Any]) -> bool:
    return any(existing[key] != new[key] for key in ("kind", "expression", "tz"))


def register_recipe(store: Store, recipe: schema.Recipe, recipe_name: str, root: Path,
                    now: datetime | None = None) -> list[tuple[str, str]]:
    """Upsert ``recipe``'s tasks by id in one transaction; returns ``(id, change)`` per task.

    An unchanged task keeps its state (next run, pause, failures). A changed schedule gets
    a new next run (a paused task stays paused). Refused as :func:`check_recipe` refuses;
    ``now`` is the time a caller already checked the recipe at (the plan phase checks
    before it plans the goal, so a refusal leaves no session behind).
    """
    now = clock.now() if now is None else now
    specs = check_recipe(store, recipe, recipe_name, root, now)
    index = {spec.id: position for position, spec in enumerate(specs)}

    def merge(existing: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any] | None:
        changed = new if existing is None else {key: new[key] for key in _DEFINITION if existing[key] != new[key]}
        if not changed:
            return None
        moved = existing is None or _moved(existing, new)
        if moved:  # again inside the transaction: the stored task may have changed since the check
            _refuse_past(specs[index[new["id"]]], index[new["id"]], recipe_name, now)
        if existing is None:
            return new
        if moved and existing["status"] != "paused":
            changed.update(next_run=new["next_run"], status=new["status"])
        changed["updated_at"] = new["updated_at"]
        return changed

    return queries.register_tasks(store, [spec.row(now) for spec in specs], merge)
