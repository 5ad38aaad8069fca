"""``axpipe recipes list`` and ``axpipe recipes show NAME``."""

from __future__ import annotations

import json
import sys

from axpipe import workspace
from axpipe.recipe import libraries as recipes


def list_recipes(*, as_json: bool) -> int:
    """Every recipe on the search path with its description and the library that wins it."""
    project = workspace.load_project(workspace.find_root())
    entries = recipes.discover(project)
    for entry in entries:
        if entry.problem is not None:  # listed, and said where a person reads warnings
            sys.stderr.write(f"axpipe: warning: recipe '{entry.name}' ({entry.path}) cannot be used: "
                             f"{entry.problem}\n")
    if as_json:
        payload = [{"name": entry.name, "description": entry.description, "source": entry.source,
                    "path": str(entry.path), "shadows": [library.label for library in entry.shadows],
                    "problem": entry.problem}
                   for entry in entries]
        json.dump(payload, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    width = max([len(entry.name) for entry in entries] + [4])
    source_width = max([len(entry.source) for entry in entries] + [6])
    sys.stdout.write(f"{'NAME':<{width}}  {'SOURCE':<{source_width}}  DESCRIPTION\n")
    for entry in entries:
        sys.stdout.write(f"{entry.name:<{width}}  {entry.source:<{source_width}}  {entry.description}\n")
        for library in entry.shadows:
            sys.stdout.write(f"{'':<{width}}  (shadows the one in {library.label})\n")
    sys.stdout.write("Precedence: project (axpipe.yaml recipe_paths) > AXPIPE_RECIPE_PATH > packages > built-in\n")
    return 0


def show_recipe(*, name: str, overrides: list[str], resolve: bool) -> int:
    """Print the composed YAML of recipe ``name`` (composes with Hydra's compose API)."""
    root = workspace.find_root()
    project = workspace.load_project(root)
    recipes.find(project, name)  # an unknown name is an input error listing what exists
    # deferred: Hydra and the run's modules load only when this action needs them
    from axpipe.recipe import compose

    text = compose.composed_yaml(project, name, overrides, resolve=resolve)
    sys.stdout.write(text)
    return 0
