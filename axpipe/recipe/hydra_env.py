"""Hydra set up for axpipe: recipe libraries on the search path, axpipe's resolvers, the
command line as Hydra reads it, and Hydra's errors as axpipe's config errors.

One place for what ``axpipe run`` (:mod:`axpipe.run.app`), composing without running
(:mod:`axpipe.recipe.compose`) and a scheduled task's target check
(:mod:`axpipe.schedule.targets`) share.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from axpipe import workspace
from axpipe.errors import ConfigError, InputError, Problem, did_you_mean, not_found_message
from axpipe.recipe import libraries as recipes
from axpipe.recipe import source as recipe_source
from axpipe.recipe.hydra_input import quote_recipe_choice
from axpipe.recipe.schema import all_paths, is_schema_path

PROG = "axpipe run"


def schema_overrides(arguments: list[str]) -> list[str]:
    """Let ``KEY=VALUE`` set any recipe-schema key, even one the recipe leaves at its default.

    ``goal.budget.time=30m`` must work on a recipe that declares a goal without a budget;
    Hydra would demand ``+``. Such overrides become ``++KEY=VALUE`` (add or override);
    anything else (free variables, typos) is left for Hydra to judge. A recipe name Hydra
    would read as a number is quoted (``recipe=2024``; see :mod:`axpipe.recipe.hydra_input`).
    """
    rewritten = []
    for argument in arguments:
        key, equals, _ = argument.partition("=")
        if key == "recipe":
            argument = quote_recipe_choice(argument)
        elif (equals and key and key[0] not in "+~-" and not key.startswith("hydra.")
                and is_schema_path(key)):
            argument = "++" + argument
        rewritten.append(argument)
    return rewritten


@contextmanager
def hydra_environment(root: Path, libraries: list[recipes.Library], argv: list[str]) -> Iterator[None]:
    """Recipe libraries, the ``axpipe_root`` and ``axpipe_python`` resolvers and ``sys.argv``
    set up for Hydra."""
    from omegaconf import OmegaConf
    recipe_source.install(libraries)
    OmegaConf.register_new_resolver("axpipe_root", lambda: str(root), replace=True)
    # The interpreter axpipe runs on, for agent commands that are Python modules shipped with
    # axpipe or its plugins: `python3` on PATH may be another one (a venv not activated, pipx).
    OmegaConf.register_new_resolver("axpipe_python", lambda: sys.executable, replace=True)
    saved_argv = sys.argv
    saved_full_error = os.environ.get("HYDRA_FULL_ERROR")
    sys.argv = [PROG, *argv]  # Hydra reads its arguments from sys.argv
    os.environ["HYDRA_FULL_ERROR"] = "1"  # let typed exceptions reach us
    try:
        yield
    finally:
        sys.argv = saved_argv
        if saved_full_error is None:
            os.environ.pop("HYDRA_FULL_ERROR", None)
        else:
            os.environ["HYDRA_FULL_ERROR"] = saved_full_error
        from hydra.core.global_hydra import GlobalHydra

        GlobalHydra.instance().clear()


def translate_hydra_error(error: Exception, project: workspace.ProjectConfig) -> InputError:
    """A Hydra composition or override error as axpipe's config error (exit 2)."""
    from hydra.errors import MissingConfigException, OverrideParseException

    # Schema overrides were rewritten to ++KEY (see schema_overrides); speak of what was typed.
    message = str(error).strip().replace("override ++", "override ")
    if isinstance(error, MissingConfigException) and "recipe" in message:
        name = _missing_recipe_name(message)
        entries = recipes.discover(project)
        listing = "\n".join(f"  {entry.name:<24} {entry.source}" for entry in entries)
        head = not_found_message("recipe", name, [entry.name for entry in entries]) if name else message
        return InputError(f"{head}\nRecipes on the search path:\n{listing}")
    if isinstance(error, OverrideParseException):
        return ConfigError([Problem("", f"bad override: {message}", "command line")])
    unknown = re.match(r"Could not override '([^']+)'", message)
    if unknown:
        key = unknown.group(1)
        # Schema keys were sent as ++KEY, so this key is not one: `+KEY` can only add a
        # top-level variable, and the recipe takes it only when some value uses ${KEY}.
        hint = "" if "." in key else f"; +{key}=VALUE adds it as a variable, which some value must use as ${{{key}}}"
        return ConfigError([Problem(key, f"no such key in the recipe{did_you_mean(key, all_paths())}{hint}",
                                    "command line")])
    deleted = re.match(r"Could not (?:delete|append to) .*?'([^']+)'", message)
    if deleted:
        return ConfigError([Problem(deleted.group(1), message.splitlines()[0], "command line")])
    cause = error.__cause__
    if cause is not None and str(cause).strip() and str(cause).strip() not in message:
        message = f"{message}\n{str(cause).strip()}"
    return ConfigError([Problem("", message, "command line" if "override" in message.lower() else None)])


def _missing_recipe_name(message: str) -> str | None:
    match = re.search(r"Could not find 'recipe/([^']+)'", message)
    return match.group(1) if match else None


def omegaconf_error(error: Exception) -> InputError | None:
    try:
        from omegaconf.errors import OmegaConfBaseException
    except ImportError:  # pragma: no cover
        return None
    if isinstance(error, OmegaConfBaseException):
        key = getattr(error, "full_key", None) or ""
        return ConfigError([Problem(str(key), str(error).splitlines()[0])])
    return None
