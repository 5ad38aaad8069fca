"""The ``roles:`` section (DESIGN §14): one agent per role, and the one shape each role ends up in.

``roles.implementer`` and ``agent:`` are the same thing (``agent:`` is its shorthand); a
recipe declares one of them. ``roles.qa`` and ``roles.judge`` are the same as a
``reviewers`` entry with ``qa: true`` / ``judge: true``, named ``qa`` / ``judge``: after
:func:`apply` the rest of axpipe sees only ``recipe.agent`` and ``recipe.reviewers``, so QA and
judge units, bounces and the model split work as they always did. ``roles.planner`` and
``roles.prototype`` are agents of their own (:mod:`axpipe.unit.planner`, :mod:`axpipe.unit.prototype`).

The model split covers every role that grades another's work: QA and the judge must not use
the implementer's model, and the judge not QA's (exit 2, naming ``roles.<role>.model``).
A ``goal.task_file`` must be a project path: relative, inside the project, not under ``.git``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from axpipe.recipe import schema
from axpipe.task import standing, taskfile

Add = Callable[[str, str], None]
Loader = Callable[[str, str], Any]


def check(recipe: schema.Recipe, add: Add, load: Loader, params: Callable[[Any, dict[str, Any], str, Add], Any],
          plugin: Callable[[Loader, str, str, str, Add], Any], root: Path | None = None) -> None:
    """Validate ``roles:`` and ``goal.task_file`` (problems through ``add``; with ``root``, the
    file itself: inside the project, and parsing when it exists), then :func:`apply`."""
    if recipe.goal is not None and recipe.goal.task_file is not None:
        problem = task_file_problem(recipe.goal.task_file)
        if problem is None and root is not None:
            problem = task_file_on_disk(root, recipe.goal.task_file)
        if problem:
            add("goal.task_file", problem)
    if root is not None:
        for path, problem in standing.problems(recipe, root):
            add(path, problem)
    roles = recipe.roles
    if roles is None:
        return
    for name in ("planner", "prototype"):
        spec: schema.AgentSpec | None = getattr(roles, name)
        if spec is None:
            continue
        kind = plugin(load, "axpipe.agents", spec.kind, f"roles.{name}.kind", add)
        if kind is not None:
            spec.params = params(kind, spec.params, f"roles.{name}", add)
    for name in ("qa", "judge"):
        review: schema.ReviewRole | None = getattr(roles, name)
        if review is None:
            continue
        kind = plugin(load, "axpipe.reviewers", review.kind, f"roles.{name}.kind", add)
        if kind is not None:
            review.params = params(kind, review.params, f"roles.{name}", add)
    if recipe.goal is None and (roles.planner is not None or roles.prototype is not None):
        add("roles", "the planner and prototype roles work on a goal's task file: declare `goal:`")
    implementer = roles.implementer or recipe.agent
    graded = implementer.model if implementer is not None else None
    testers = {reviewer.model for reviewer in recipe.reviewers if reviewer is not None and reviewer.qa}
    if roles.qa is not None and graded is not None and roles.qa.model == graded:
        add("roles.qa.model", f"QA uses the implementer's model {graded!r}; a role that grades another's work "
                              "must use a different model")
    if roles.judge is not None and roles.judge.model is not None:
        if roles.judge.model == graded:
            add("roles.judge.model", f"the judge uses the implementer's model {graded!r}; a judge must use a "
                                     "different model")
        elif roles.judge.model in testers | {roles.qa.model if roles.qa else None}:
            add("roles.judge.model", f"the judge uses QA's model {roles.judge.model!r}; a judge must use a model of "
                                     "its own")
    apply(recipe)


def adopt_implementer(recipe: schema.Recipe, add: Add) -> None:
    """``roles.implementer`` becomes ``recipe.agent`` (declaring both is a problem)."""
    roles = recipe.roles
    if roles is None or roles.implementer is None:
        return
    if recipe.agent is not None and recipe.agent is not roles.implementer:
        add("roles.implementer", "declare the implementer once: `agent:` is its shorthand, so give either "
                                 "`agent:` or `roles.implementer`")
        return
    recipe.agent = roles.implementer


def apply(recipe: schema.Recipe) -> None:
    """Make ``roles.implementer`` the recipe's ``agent`` and ``roles.qa`` / ``roles.judge``
    reviewers (in place; idempotent)."""
    roles = recipe.roles
    if roles is None:
        return
    if roles.implementer is not None and recipe.agent is None:
        recipe.agent = roles.implementer
    names = {reviewer.name for reviewer in recipe.reviewers if reviewer is not None}
    for name in ("qa", "judge"):
        review: schema.ReviewRole | None = getattr(roles, name)
        if review is None or name in names:
            continue
        recipe.reviewers.append(schema.ReviewerSpec(name=name, kind=review.kind, command=review.command,
                                                    model=review.model, params=review.params,
                                                    qa=name == "qa", judge=name == "judge"))


def task_driven(recipe: schema.Recipe) -> bool:
    """Does the recipe's goal work through a task file (it declares ``roles:`` or ``goal.task_file``)?"""
    return recipe.goal is not None and (recipe.roles is not None or recipe.goal.task_file is not None)


def task_file_on_disk(root: Path, shown: str) -> str | None:
    """Why the task file at project path ``shown`` cannot be used: it leads outside the
    project (a symlink), or it exists and does not parse."""
    real_root = root.resolve()
    resolved = (root / shown).resolve()
    if real_root not in resolved.parents:
        return f"{shown!r} leads outside the project (to {resolved}): a task file is a project path"
    if not resolved.exists():
        return None
    try:
        taskfile.read(resolved, shown)
    except taskfile.TaskFileError as error:
        return f"{shown}: {error.reason}"
    return None


def task_file_problem(path: str) -> str | None:
    """Why ``path`` cannot be a task file's project path, or None."""
    pure = PurePosixPath(path)
    if not path.strip() or pure.is_absolute() or ".." in pure.parts:
        return f"{path!r} is not a project path: give a path relative to the project, inside it (tasks/T-1.md)"
    if pure.parts and pure.parts[0] == ".git":
        return f"{path!r} is inside .git"
    if pure.suffix != ".md":
        return f"{path!r}: a task file is Markdown, its name ends in .md"
    return None
