"""A recipe's ``schedule:`` entries checked with the rest of the recipe, at composition.

DESIGN §2: every problem of a recipe is listed at once, each with its config path and the
file it came from. The entries' own shape (exactly one kind, ``HH:MM``, a known zone,
unique ids) is checked by :mod:`axpipe.recipe.rules`; this adds what needs the schedule engine,
the search path or the store, read-only:

* a cron that is malformed or can never fire, a one-shot time that cannot be read;
* an override that is not ``KEY=VALUE``, ``+KEY=VALUE`` or ``~KEY``, or that axpipe sets;
* an unknown ``recipe``, and the recipe composed with the overrides
  (:mod:`axpipe.schedule.targets`);
* a one-shot ``at`` in the past that is new or moved (one already stored with that time
  has fired, or will: re-running the recipe is fine). The stored tasks are read, never
  written; a store this axpipe cannot read without migrating it is left to the plan phase.

The plan phase checks the entries again against the store under the run lock
(:func:`axpipe.schedule.check_recipe_tasks`): time passes between the two.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from axpipe import clock, workspace
from axpipe.errors import AxpipeError, did_you_mean
from axpipe.recipe import libraries as recipes
from axpipe.recipe import schema
from axpipe.schedule import targets
from axpipe.schedule.tasks import check_id, override_problem
from axpipe.schedule.timing import ScheduleError, parse, refuse_past, zone
from axpipe.store import Store, StoreError, current_schema
from axpipe.store import schedule as queries

Add = Callable[[str, str], None]


def check_entries(recipe: schema.Recipe, add: Add, root: Path | None,
                  validate: targets.Validator | None = None) -> None:
    """Report every problem of ``recipe.schedule`` through ``add(path, message)``. Those
    that depend on the workspace (the search path, the store) need ``root``; a target's
    recipe is composed with its overrides and checked only with ``validate``, what
    validates a composed recipe (:func:`axpipe.recipe.resolve.compose` hands in itself)."""
    now = clock.now()
    stored = stored_tasks(recipe, root) if root is not None else None
    known: set[str] | None = None
    looked_up = False
    for index, entry in enumerate(recipe.schedule):
        if entry is None:
            continue
        path = f"schedule[{index}]"
        if (problem := check_id(entry.id)) is not None:
            add(f"{path}.id", problem)
        _timing(entry, path, add, now, stored)
        shaped = True
        for position, override in enumerate(entry.overrides):
            problem = override_problem(str(override))
            if problem is not None:
                add(f"{path}.overrides[{position}]", problem)
                shaped = False
        if root is None:
            continue
        if not looked_up:
            known, looked_up = _recipe_names(root), True
        if known is None:
            continue
        if entry.recipe not in known:
            add(f"{path}.recipe", f"unknown recipe {entry.recipe!r}{did_you_mean(entry.recipe, known)} on the "
                                  f"search path of {root}")
            continue
        if shaped and validate is not None and targets.composable_here(root):
            for position_or_none, message in targets.problems(root, entry.recipe, [str(o) for o in entry.overrides],
                                                              validate):
                where = f"overrides[{position_or_none}]" if position_or_none is not None else "recipe"
                add(f"{path}.{where}", message)


def _timing(entry: schema.ScheduleSpec, path: str, add: Add, now: Any,
            stored: dict[str, dict[str, Any]] | None) -> None:
    """A cron or one-shot time the schedule engine refuses; a new or moved one-shot in the
    past. ``stored`` None: whether a task is stored is unknown, so the past is not judged."""
    kinds = [kind for kind in ("at", "daily", "weekly", "cron") if getattr(entry, kind) is not None]
    if len(kinds) != 1 or kinds[0] not in ("at", "cron"):
        return  # rules: exactly one kind, and the HH:MM shapes
    kind = kinds[0]
    existing = (stored or {}).get(entry.id)
    name = entry.tz if entry.tz is not None else existing["tz"] if existing else None
    if name is not None:
        try:
            zone(name)
        except ScheduleError:
            return  # an unknown zone is reported at schedule[i].tz
    try:
        schedule = parse(kind, getattr(entry, kind), name, now=now, check_past=False)
    except ScheduleError as error:
        add(f"{path}.{kind}", str(error))
        return
    if stored is None or kind != "at":
        return
    if existing is not None and (existing["kind"], existing["expression"], existing["tz"]) == (
            schedule.kind, schedule.expression, schedule.tz):
        return
    try:
        refuse_past(schedule, now)
    except ScheduleError as error:
        add(f"{path}.at", str(error))


def stored_tasks(recipe: schema.Recipe, root: Path) -> dict[str, dict[str, Any]] | None:
    """The stored tasks of ``recipe``'s entries, by id, from the store the plan phase will
    register them in; ``{}`` when there is none yet, None when it cannot be read as it is."""
    where = root
    if recipe.workspace.sample:
        if not recipe.workspace.persist:
            return {}  # a fresh copy of the sample: nothing stored there yet
        where = workspace.state_dir(workspace.find_root()) / "workspaces" / recipe.workspace.sample
    path = workspace.store_path(where)
    if not path.is_file():
        return {}
    if not current_schema(path):
        return None  # migrated under the run lock, where the plan phase checks again
    try:
        with Store(path) as store:
            return {entry.id: dict(row) for entry in recipe.schedule
                    if entry is not None and (row := queries.get_task(store, entry.id)) is not None}
    except StoreError:
        return None  # the lock phase opens it and says what is wrong


def _recipe_names(root: Path) -> set[str] | None:
    try:
        return {item.name for item in recipes.discover(workspace.load_project(root))}
    except AxpipeError:
        return None  # a broken axpipe.yaml is reported where the project is loaded
