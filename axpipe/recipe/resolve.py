"""A composed config made a recipe: every value resolved, then validated, each problem
located (a recipe file, or the command line).

Hydra composes (``axpipe run``'s job, or :mod:`axpipe.recipe.compose`); this resolves the
interpolations one value at a time and validates the result, so a recipe is refused with
every problem listed before anything runs or is written.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from axpipe import resources, workspace
from axpipe.errors import ConfigError, InputError, Problem
from axpipe.recipe import libraries as recipes
from axpipe.recipe import typed, validation
from axpipe.records import record


@record
class ComposedRecipe:
    """A validated recipe and what it was composed from."""

    recipe: Any
    variables: dict[str, Any]
    config: dict[str, Any]


def compose(cfg: Any, *, recipe_name: str | None, overrides: list[str],
            project: workspace.ProjectConfig, starts_agents: bool = True) -> ComposedRecipe:
    """Resolve and validate a composed config; raise ConfigError listing every problem.
    ``starts_agents``: False for callers that never start the recipe's agents (gate, review),
    which then do not need their programs installed."""
    from omegaconf import OmegaConf

    if recipe_name is None:
        entries = recipes.discover(project)
        listing = "\n".join(f"  {entry.name:<24} {entry.source}" for entry in entries)
        raise InputError(f"no recipe selected: use `axpipe run recipe=NAME [overrides]`\n"
                         f"Recipes on the search path:\n{listing}")
    locate = make_locator(project, recipe_name, overrides)
    container = OmegaConf.to_container(cfg, resolve=False)
    assert isinstance(container, dict)
    unresolved = {str(key): value for key, value in container.items()}
    resolved, problems = resolve_each(cfg, locate)
    recipe, variables = validation.validate_recipe(resolved, unresolved, recipe_name=recipe_name,
                                                   locate=locate, extra_problems=problems,
                                                   root=plan_root(resolved, project.root),
                                                   starts_agents=starts_agents, validate_target=compose)
    return ComposedRecipe(recipe=recipe, variables=variables, config=resolved)


def plan_root(resolved: dict[str, Any], project_root: Path) -> Path:
    """Where the plan's commands will run: the sample project for a demo workspace, else the project."""
    section = resolved.get("workspace")
    sample = section.get("sample") if isinstance(section, dict) else None
    if isinstance(sample, str):
        folder = resources.samples_dir() / sample
        if folder.is_dir():
            return folder
    return project_root


def resolve_each(cfg: Any, locate: typed.SourceLocator | None) -> tuple[dict[str, Any], list[Problem]]:
    """Resolve every interpolation, collecting one problem per value that cannot resolve."""
    from omegaconf import DictConfig, ListConfig
    from omegaconf.errors import OmegaConfBaseException

    problems: list[Problem] = []

    def where(path: str) -> str | None:
        return locate(path) if locate else None

    def walk(node: Any, path: str) -> Any:
        if isinstance(node, DictConfig):
            out: dict[str, Any] = {}
            for key in node:
                name = str(key)
                child_path = f"{path}.{name}" if path else name
                try:
                    child = node[key]
                except OmegaConfBaseException as error:
                    problems.append(Problem(child_path, _first_line(error), where(child_path)))
                    continue
                out[name] = walk(child, child_path)
            return out
        if isinstance(node, ListConfig):
            items = []
            for index in range(len(node)):
                child_path = f"{path}[{index}]"
                try:
                    child = node[index]
                except OmegaConfBaseException as error:
                    problems.append(Problem(child_path, _first_line(error), where(child_path)))
                    continue
                items.append(walk(child, child_path))
            return items
        return node

    resolved = walk(cfg, "")
    return resolved, problems


def _first_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    message = text[0] if text else type(error).__name__
    if "Missing mandatory value" in message:
        return "missing value (???): set it in the recipe or on the command line"
    return message


def make_locator(project: workspace.ProjectConfig, recipe_name: str,
                 overrides: list[str]) -> typed.SourceLocator:
    """Say where a config path's value came from: a command-line override or a recipe file."""

    override_keys: list[tuple[list[Any], str]] = []
    for override in overrides:
        key = override.split("=", 1)[0].lstrip("+~")
        if key and not key.startswith("hydra.") and key != "recipe":
            tokens = [int(part) if part.isdigit() else part for part in key.split(".")]
            override_keys.append((tokens, override.lstrip("+")))
    loaded: list[tuple[Path, Any]] = []
    files: list[Path] = []

    def load_files() -> None:
        # Only a run with problems needs to know where values came from: read lazily.
        if files:
            return
        import yaml

        try:
            entry = recipes.find(project, recipe_name)
            files.extend(recipes.defaults_chain(entry, project))
        except InputError:
            return
        for path in files:
            try:
                loaded.append((path, yaml.safe_load(recipes.read_recipe(path)) or {}))
            except (ConfigError, yaml.YAMLError):
                continue

    def overridden(tokens: list[Any]) -> str | None:
        for key_tokens, text in override_keys:
            if tokens[:len(key_tokens)] == key_tokens:
                return text
        return None

    def locate(config_path: str) -> str | None:
        tokens = _tokens(config_path)
        text = overridden(tokens)
        if text is not None:
            return f"command line: {text}"
        load_files()
        while tokens:
            for path, data in reversed(loaded):
                if _has(data, tokens):
                    # `time: ${limit}` with `limit=soon` on the command line: the bad value is the override's
                    raw = _get(data, tokens)
                    for name in _INTERPOLATION.findall(raw) if isinstance(raw, str) else []:
                        text = overridden(_tokens(name))
                        if text is not None:
                            return f"command line: {text}, through {raw!r} in {_display_path(path)}"
                    return _display_path(path)
            tokens = tokens[:-1]
        return _display_path(files[-1]) if files else None

    return locate


_INTERPOLATION = re.compile(r"\$\{([A-Za-z_][\w.]*(?:\[\d+\])*)\}")  # a plain key, not a resolver call


def _tokens(path: str) -> list[Any]:
    tokens: list[Any] = []
    for part in path.split("."):
        match = re.fullmatch(r"([^\[]*)((?:\[\d+\])*)", part)
        if not match:
            tokens.append(part)
            continue
        if match.group(1):
            tokens.append(match.group(1))
        tokens.extend(int(index) for index in re.findall(r"\[(\d+)\]", match.group(2)))
    return tokens


def _has(data: Any, tokens: list[Any]) -> bool:
    return _get(data, tokens, _MISSING) is not _MISSING


_MISSING = object()


def _get(data: Any, tokens: list[Any], default: Any = None) -> Any:
    """The value at ``tokens`` in loaded YAML, or ``default``."""
    node = data
    for token in tokens:
        if isinstance(token, int):
            if not isinstance(node, list) or token >= len(node):
                return default
            node = node[token]
        else:
            if not isinstance(node, dict) or token not in node:
                return default
            node = node[token]
    return node


def _display_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


