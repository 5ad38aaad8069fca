"""What a scheduled task will run, checked when it is registered: its recipe composed with
its overrides and validated as ``axpipe run recipe=NAME OVERRIDES`` would at composition.

Without this, ``overrides: ["nosuch.key=3"]`` is accepted and the task fails every time it
fires. The check is read-only (Hydra's compose API, then the validator the caller hands in:
:func:`axpipe.recipe.resolve.compose`, which passes itself, so validating a recipe's
schedule needs no import of what validates it), and
the recipe may still change before the task fires: a run refused then is recorded as
failed with its message (docs/schedules.md).

Problems come back as ``(override index, message)``; the index is None for a problem of the
recipe itself (a broken recipe fails every firing too).
"""

from __future__ import annotations

from contextvars import ContextVar
from pathlib import Path
from typing import Any, Protocol

from axpipe import workspace
from axpipe.errors import AxpipeError, ConfigError, Problem
from axpipe.workspace import ProjectConfig

TargetProblem = tuple[int | None, str]

# A target's own `schedule:` names targets in turn (a recipe may schedule itself): those
# are checked when that recipe runs, not here, so validating a task never recurses.
_checking: ContextVar[bool] = ContextVar("axpipe_schedule_targets", default=False)


def composable_here(root: Path) -> bool:
    """Whether targets can be composed for the project at ``root`` in this process.

    Inside ``axpipe run``, Hydra is already set up for the project the command was run in
    (its recipe libraries, its ``axpipe_root``); composing for another root (a sample
    workspace's copy) would mix the two, so such tasks are checked when they fire."""
    return root.resolve() == workspace.find_root().resolve()


class Validator(Protocol):
    """What turns a composed config into a validated recipe, raising ``ConfigError``
    (:func:`axpipe.recipe.resolve.compose`)."""

    def __call__(self, cfg: Any, *, recipe_name: str | None, overrides: list[str],
                 project: ProjectConfig) -> object: ...


def problems(root: Path, recipe: str, overrides: list[str], validate: Validator) -> list[TargetProblem]:
    """Why ``axpipe run recipe=<recipe> <overrides>`` in ``root`` would be refused at composition."""
    if _checking.get():
        return []
    token = _checking.set(True)
    try:
        return _problems(root, recipe, overrides, validate)
    finally:
        _checking.reset(token)


def _problems(root: Path, recipe: str, overrides: list[str], validate: Validator) -> list[TargetProblem]:
    project = workspace.load_project(root)
    found: list[TargetProblem] = []
    kept = list(range(len(overrides)))
    try:
        config = _compose(project, recipe, overrides)
    except AxpipeError as error:
        found = _composition_problems(project, recipe, overrides, error)
        if any(index is None for index, _ in found):
            return found  # the recipe itself: nothing more to learn from its overrides
        # The rest of the overrides may break the recipe's values too: list those as well.
        kept = [index for index in kept if index not in {culprit for culprit, _ in found}]
        try:
            config = _compose(project, recipe, [overrides[index] for index in kept])
        except AxpipeError:
            return found
    rest = [overrides[index] for index in kept]
    try:
        validate(config, recipe_name=recipe, overrides=rest, project=project)
    except ConfigError as error:
        for problem in error.problems:
            index, message = _attribute(problem, recipe, rest)
            found.append((kept[index] if index is not None else None, message))
    except AxpipeError as error:
        found.append((None, _of_recipe(recipe, error.message)))
    return found


def _compose(project: ProjectConfig, recipe: str, overrides: list[str]) -> object:
    """The composed config, through the Hydra of ``axpipe run`` when this is its job, else
    through the compose API; Hydra and OmegaConf errors become axpipe's config errors."""
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    # deferred: Hydra loads only when a task's recipe is composed (rules import this module)
    from axpipe.recipe.compose import compose_config
    from axpipe.recipe.hydra_env import schema_overrides, translate_hydra_error

    try:
        if GlobalHydra.instance().is_initialized():
            from hydra import compose

            return compose("config", overrides=schema_overrides([f"recipe={recipe}", *overrides]))
        return compose_config(project, recipe, overrides)
    except HydraException as error:
        raise translate_hydra_error(error, project) from None
    except OmegaConfBaseException as error:
        key = getattr(error, "full_key", None) or ""
        raise ConfigError([Problem(str(key), str(error).splitlines()[0])]) from None


def _composition_problems(project: ProjectConfig, recipe: str, overrides: list[str],
                          error: AxpipeError) -> list[TargetProblem]:
    """Hydra refused the composition: name the overrides at fault. A key Hydra names is
    matched to its override; otherwise each override is tried alone (only on this error
    path), and a recipe that does not compose even without them is the recipe's problem."""
    found = error.problems if isinstance(error, ConfigError) else []
    attributed = [_attribute(problem, recipe, overrides) for problem in found]
    if found and all(index is not None for index, _ in attributed):
        return attributed
    try:
        _compose(project, recipe, [])
    except AxpipeError as alone:
        return [(None, _of_recipe(recipe, _text(alone)))]
    culprits: list[TargetProblem] = []
    for index, override in enumerate(overrides):
        try:
            _compose(project, recipe, [override])
        except AxpipeError as refused:
            culprits.append((index, f"{override!r} is refused by recipe {recipe!r}: {_text(refused)}"))
    return culprits or [(None, _of_recipe(recipe, f"with this task's overrides: {_text(error)}"))]


def _attribute(problem: Problem, recipe: str, overrides: list[str]) -> TargetProblem:
    """A problem of the composed target, on the override that set its value when one did."""
    message = _first(problem.message)
    stated = f"{problem.path}: {message}" if problem.path else message
    for index, override in enumerate(overrides):
        typed = override.lstrip("+")
        key = typed.lstrip("~").split("=", 1)[0]
        if problem.source in (f"command line: {typed}", f"command line: {override}") \
                or (problem.source or "").startswith(f"command line: {typed}, through ") \
                or (problem.source == "command line" and problem.path == key):
            return index, f"{override!r} is refused by recipe {recipe!r}: {stated}"
    where = f" (in {problem.source})" if problem.source else ""
    return None, _of_recipe(recipe, stated + where)


def _of_recipe(recipe: str, message: str) -> str:
    return f"recipe {recipe!r} would be refused when the task fires: {message}"


def _text(error: AxpipeError) -> str:
    """The error on one line; where a value came from is the override, or the task's recipe."""
    if isinstance(error, ConfigError):
        return "; ".join(f"{problem.path}: {_first(problem.message)}" if problem.path else _first(problem.message)
                         for problem in error.problems)
    return _first(error.message)


def _first(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0] if lines else text
