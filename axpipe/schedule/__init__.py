"""Durable scheduled tasks (DESIGN §7): their schedules, the sweep that claims them, and
the controls behind ``axpipe schedule``. The backend that fires them is :mod:`axpipe.runtime`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from axpipe import clock
from axpipe.recipe.schema import Recipe
from axpipe.schedule.tasks import check_recipe, register_recipe
from axpipe.store import Store

if TYPE_CHECKING:
    from datetime import datetime

def check_recipe_tasks(store: Store | None, recipe: Recipe, recipe_name: str, root: Path,
                       now: datetime | None = None) -> datetime:
    """Refuse ``recipe``'s ``schedule:`` as :func:`register_recipe_tasks` would, writing
    nothing (``store`` None: no store yet). Returns the time it checked at.

    Raises ConfigError (exit 2) listing every problem with its config path. Called before a
    run starts and again by the plan before it plans the goal, so a refusal has no side
    effects: no goal session, no run row, no probe.
    """
    moment = clock.now() if now is None else now
    check_recipe(store, recipe, recipe_name, root, moment)
    return moment


def register_recipe_tasks(store: Store, recipe: Recipe, recipe_name: str, root: Path,
                          now: datetime | None = None) -> list[tuple[str, str]]:
    """Upsert ``recipe``'s ``schedule:`` tasks by id (the plan phase of ``axpipe run``), as
    checked at ``now`` (the time :func:`check_recipe_tasks` returned).

    Returns ``(task id, "created" | "updated" | "unchanged")`` per task; raises ConfigError
    (exit 2, nothing written) listing every problem with its config path.
    """
    return register_recipe(store, recipe, recipe_name, root, now)


def describe_changes(changes: list[tuple[str, str]]) -> str:
    """``schedule: 1 created, 2 unchanged`` for the plan phase's summary."""
    counts: dict[str, int] = {}
    for _, change in changes:
        counts[change] = counts.get(change, 0) + 1
    return "schedule: " + ", ".join(f"{count} {change}" for change, count in counts.items())
