"""``axpipe rules sync|check --recipe NAME [overrides]``: the standing rules in every agent
instruction file of a recipe's agents (DESIGN §15; :mod:`axpipe.task.standing`).

``sync`` writes the marker block into each target and says which changed (exit 0). ``check``
names each copy that differs from the source or is missing, with its first differing line,
and exits 2 when any does (0 when all match): what the runner checks before every unit.
"""

from __future__ import annotations

import sys
from pathlib import Path

from axpipe import workspace
from axpipe.errors import ExitCode, InputError
from axpipe.recipe import schema
from axpipe.task import standing


def _recipe(name: str, overrides: list[str]) -> tuple[schema.Recipe, Path, str]:
    from axpipe.recipe import compose, resolve
    from axpipe.recipe import libraries as recipes

    project = workspace.load_project(workspace.find_root())
    recipes.find(project, name)  # an unknown name lists the recipes that exist
    config = compose.compose_config(project, name, overrides)
    composed = resolve.compose(config, recipe_name=name, overrides=overrides, project=project, starts_agents=False)
    recipe = composed.recipe
    if recipe.rules is None or recipe.rules.standing is None:
        raise InputError(f"recipe '{name}' declares no standing rules (`rules.standing`)")
    return recipe, project.root, recipe.rules.standing


def sync(*, recipe: str, overrides: list[str]) -> int:
    spec, root, _ = _recipe(recipe, overrides)
    changed = standing.sync(spec, root)
    unchanged = [target for target in standing.targets(spec) if target not in changed]
    for target in changed:
        sys.stdout.write(f"synced {target}\n")
    for target in unchanged:
        sys.stdout.write(f"up to date {target}\n")
    return int(ExitCode.OK)


def check(*, recipe: str, overrides: list[str]) -> int:
    spec, root, source = _recipe(recipe, overrides)
    drifted = standing.drift(spec, root)
    for message in drifted:
        sys.stdout.write(f"drift {message}\n")
    if drifted:
        sys.stderr.write(f"axpipe: standing rules out of sync in {len(drifted)} file(s); `axpipe rules sync "
                         f"--recipe {recipe}` copies {source} into them\n")
        return int(ExitCode.INPUT_ERROR)
    sys.stdout.write(f"standing rules in sync: {', '.join(standing.targets(spec))}\n")
    return int(ExitCode.OK)
