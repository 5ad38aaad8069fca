"""Validate a composed recipe: its sections typed, its free variables, its cross-field rules.

Every problem is collected, each with its config path and where its value came from, and
raised as one :class:`~axpipe.errors.ConfigError` (DESIGN §2). The typing itself is the
generic validator's (:mod:`axpipe.recipe.typed`); the cross-field rules are
:mod:`axpipe.recipe.rules`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from axpipe.errors import ConfigError, Problem, did_you_mean
from axpipe.recipe import rules, schema
from axpipe.recipe.typed import Collector, SourceLocator, build_dataclass
from axpipe.schedule.targets import Validator

_INTERPOLATION = re.compile(r"\$\{([A-Za-z_][\w-]*)")


def free_variables(unresolved: Mapping[str, Any]) -> set[str]:
    """Names referenced as ``${name...}`` anywhere in the unresolved configuration."""
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, str):
            found.update(_INTERPOLATION.findall(node))
        elif isinstance(node, Mapping):
            for item in node.values():
                walk(item)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(unresolved)
    return found


def split_variables(resolved: Mapping[str, Any], unresolved: Mapping[str, Any],
                    locate: SourceLocator | None) -> tuple[dict[str, Any], dict[str, Any], list[Problem]]:
    """Separate recipe sections from free variables (``batch: invoices``).

    A top-level key that is not a recipe section is accepted as a variable only when it is a
    scalar some value interpolates (``${batch}``); otherwise it is an unknown key, which is
    how a typo such as ``desciption:`` is caught.
    """
    sections = {f.name for f in dataclasses.fields(schema.Recipe)}
    referenced = free_variables(unresolved)
    recipe: dict[str, Any] = {}
    variables: dict[str, Any] = {}
    out = Collector(locate)
    for key, value in resolved.items():
        if key in sections:
            recipe[key] = value
        elif key in referenced and not isinstance(value, (Mapping, list)):
            variables[key] = value
        else:
            out.add(key, f"unknown key{did_you_mean(key, sorted(sections))}; a top-level scalar is allowed only "
                         "as a variable that some value interpolates as ${" + key + "}")
    return recipe, variables, out.problems


def validate_recipe(resolved: Mapping[str, Any], unresolved: Mapping[str, Any], *,
                    recipe_name: str | None = None, locate: SourceLocator | None = None,
                    plugin_loader: Callable[[str, str], Any] | None = None,
                    extra_problems: list[Problem] | None = None,
                    root: Path | None = None, starts_agents: bool = True,
                    validate_target: Validator | None = None) -> tuple[schema.Recipe, dict[str, Any]]:
    """Validate a composed recipe; return it typed with its free variables, or raise ConfigError.

    ``extra_problems`` (values that failed to resolve) are reported with the others. With
    ``root`` (the workspace the plan will run in), the plan rules of DESIGN §5 apply too;
    the agents' programs are looked up only when the caller ``starts_agents``, and a scheduled
    task's recipe is composed and checked only with ``validate_target`` (what validates a
    composed recipe: :func:`axpipe.recipe.resolve.compose` hands in itself).
    """
    if isinstance(resolved.get("recipe"), Mapping):
        # Hydra put the file's keys in the `recipe` group's package: the header line is
        # missing, and every other problem would only be a consequence of that.
        raise ConfigError([Problem("recipe", "the recipe's keys are nested under `recipe:`; start the recipe "
                                   "file with the line `# @package _global_`", locate("recipe") if locate else None)],
                          recipe=recipe_name)
    sections, variables, problems = split_variables(resolved, unresolved, locate)
    collector = Collector(locate)
    collector.problems.extend(extra_problems or [])
    collector.problems.extend(problems)
    recipe = build_dataclass(schema.Recipe, sections, "", collector, True)
    def add_from_rules(path: str, message: str) -> None:
        if not _judges_a_substitute(path, collector.defaulted):
            collector.add(path, message)

    if recipe is not None:
        rules.check_recipe(recipe, add_from_rules, plugin_loader, root, starts_agents=starts_agents,
                           validate_target=validate_target)
        if recipe.coverage is not None and recipe.coverage.variable not in variables:
            collector.add("coverage.variable", f"'{recipe.coverage.variable}' is not a variable of the recipe "
                          f"(variables: {', '.join(sorted(variables)) or 'none'})")
    if collector.problems:
        raise ConfigError(collector.problems, recipe=recipe_name)
    return recipe, variables


def _judges_a_substitute(path: str, defaulted: set[str]) -> bool:
    """Whether a cross-field rule's problem at ``path`` would be about a default that stands
    in for a wrong-typed list or mapping (whose own problem is already reported): one under
    the replaced value, or a reference between the checks and the criteria when either side
    was replaced ("no check has id", "unknown acceptance id", "not covered by any check")."""
    for replaced in defaulted:
        if path == replaced or path.startswith((replaced + ".", replaced + "[")):
            return True
    checks_replaced = any(item.startswith("goal.checks") for item in defaulted)
    criteria_replaced = any(item.startswith("goal.acceptance") for item in defaulted)
    return (checks_replaced and path.startswith("goal.acceptance")) or (
        criteria_replaced and re.fullmatch(r"goal\.checks\[\d+\]\.acceptance(\[\d+\])?", path) is not None)
