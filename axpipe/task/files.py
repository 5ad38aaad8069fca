"""Where a goal's task file is, and the file a recipe starts it with (DESIGN §14).

The task file is ``goal.task_file`` (a project path) or ``.axpipe/tasks/<goal>.md``. A path
that leaves the project (``..``, an absolute path, a symlink pointing out) is a config error
(exit 2) naming ``goal.task_file``, before anything runs. A missing file is created from the
recipe: its ``Goal`` section holds the objective and ``Scope`` the recipe's scope patterns.
The recipe's own acceptance criteria stay in the recipe (the task file's criteria are added
to them, never copies of them); ``Acceptance criteria`` starts empty, for the planner or a
person.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from axpipe.errors import ConfigError, InputError, Problem
from axpipe.recipe import schema
from axpipe.recipe.roles import task_driven, task_file_problem
from axpipe.task import criteria, taskfile
from axpipe.task.taskfile import TaskFile
from axpipe.workspace import STATE_DIR


def location(root: Path, recipe: schema.Recipe, goal_id: str) -> tuple[Path, str]:
    """The task file's path and how a person names it (relative to the project)."""
    assert recipe.goal is not None
    shown = recipe.goal.task_file or f"{STATE_DIR}/tasks/{goal_id}.md"
    problem = task_file_problem(shown)
    if problem:
        raise ConfigError([Problem("goal.task_file", problem)])
    real_root = root.resolve()
    resolved = (root / shown).resolve()
    if real_root not in resolved.parents:
        raise ConfigError([Problem("goal.task_file", f"{shown!r} leads outside the project (to {resolved}): a task "
                                                     "file is a project path")])
    return root / shown, shown


def initial_text(recipe: schema.Recipe, goal_id: str) -> str:
    """The task file a recipe starts with."""
    goal = recipe.goal
    assert goal is not None
    scope = "\n".join(f"- `{pattern}`" for pattern in recipe.scope or [])
    return taskfile.new_text(goal_id, goal.objective, {"Goal": goal.objective, "Scope": scope})


def ensure(root: Path, recipe: schema.Recipe, goal_id: str) -> tuple[Path, str, TaskFile, bool]:
    """The task file (created from the recipe when missing): its path, its name, the parsed
    file and whether it was just created. A file that does not parse is a config error."""
    path, shown = location(root, recipe, goal_id)
    created = False
    if not path.exists() and not path.is_symlink():
        path.parent.mkdir(parents=True, exist_ok=True)
        text = initial_text(recipe, goal_id)
        temporary = path.with_name(f".{path.name}.axpipe-{os.getpid()}")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
        created = True
    return path, shown, taskfile.read(path, shown), created


def needs_plan(recipe: schema.Recipe, task: TaskFile) -> bool:
    """Does the goal have no acceptance criteria at all, neither the recipe's nor the task
    file's (not even a line that tries to be one)? Then the planner writes them."""
    assert recipe.goal is not None
    return not recipe.goal.acceptance and not task.sections.get("Acceptance criteria", "").strip()


def with_criteria(root: Path, recipe: schema.Recipe, goal_id: str) -> None:
    """Add the task file's criteria to ``recipe``'s goal (in place) when the goal works
    through a task file that exists: what a run's plan froze, so the preflight and ``goal
    resume`` compare the same contract. A task file that does not parse is a config error."""
    if not task_driven(recipe) or recipe.goal is None:
        return
    path, shown = location(root, recipe, goal_id)
    if not path.exists():
        return
    task = taskfile.read(path, shown)
    found, _ = criteria.parse(task.sections.get(criteria.SECTION, ""))
    recipe.goal = criteria.merged_goal(recipe.goal, found)
    if recipe.scope is None:
        recipe.scope = criteria.scope_patterns(task.sections.get("Scope", "")) or None
    task_file_in_scope(recipe, shown)


def index_path(root: Path) -> Path:
    return root / STATE_DIR / "tasks" / "index.json"


def remember(root: Path, goal_id: str, task_id: str, shown: str) -> None:
    """Record where the goal's task file is, under the goal's id and the file's own ``id``,
    so ``axpipe task`` finds it without composing the recipe."""
    path = index_path(root)
    try:
        known = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    if not isinstance(known, dict):
        known = {}
    entry = {"goal": goal_id, "path": shown}
    if known.get(goal_id) == entry and known.get(task_id) == entry:
        return
    known[goal_id] = known[task_id] = entry
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".index.json.axpipe-{os.getpid()}")
    temporary.write_text(json.dumps(known, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(temporary, path)


def find(root: Path, task: str) -> tuple[str | None, Path, str]:
    """The goal id (None when unknown), path and name of the task file ``task`` names: a
    task or goal id a run recorded, or the file's project path."""
    try:
        known = json.loads(index_path(root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    entry = known.get(task) if isinstance(known, dict) else None
    if isinstance(entry, dict) and isinstance(entry.get("path"), str):
        return str(entry.get("goal")), root / entry["path"], entry["path"]
    candidate = root / task
    if task.endswith(".md") and candidate.is_file() and task_file_problem(task) is None:
        return None, candidate, task
    ids = sorted(name for name in known) if isinstance(known, dict) else []
    raise InputError(f"no task {task!r}: give a task or goal id a run recorded ({', '.join(ids) or 'none yet'}) "
                     "or the task file's project path")


def record_bounces(root: Path, recipe: schema.Recipe, goal_id: str, count: int) -> None:
    """Write the goal's bounce counter into its task file's front matter (``bounces``), when
    it works through one. axpipe writes it between units, so no unit's comparison sees it."""
    if not task_driven(recipe):
        return
    path, shown = location(root, recipe, goal_id)
    try:
        task = taskfile.read(path, shown)
    except taskfile.TaskFileError:
        return  # the next unit's guard says what is wrong with the file
    if task.front.get("bounces") != count:
        temporary = path.with_name(f".{path.name}.axpipe-{os.getpid()}")
        temporary.write_text(task.with_front(bounces=count), encoding="utf-8")
        os.replace(temporary, path)


def task_file_in_scope(recipe: schema.Recipe, shown: str) -> None:
    """Add a task file kept in the project's tree to the recipe's scope (in place): the
    implementer may write its section there, and the task guard, not the scope contract,
    judges which part it wrote. A file under ``.axpipe/`` is outside git's view already."""
    if recipe.scope is not None and not shown.startswith(f"{STATE_DIR}/") and shown not in recipe.scope:
        recipe.scope = [*recipe.scope, shown]
