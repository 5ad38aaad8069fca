"""One composed Hydra job: validate the recipe, then run its lifecycle.

Validation happens before anything runs or is written. Hydra creates its run folder before
calling the task, so a job refused for a config error removes that folder again: a refused
run leaves the workspace as it found it.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from dataclasses import field
from pathlib import Path
from typing import Any, TextIO

from axpipe import workspace
from axpipe.error_handler import guarded
from axpipe.errors import ExitCode, InputError, Problem
from axpipe.recipe import libraries as recipes
from axpipe.recipe import typed as validation
from axpipe.records import record
from axpipe.run.lifecycle import RunOptions


@record
class JobResult:
    """What one job of ``axpipe run`` ended with."""

    exit_code: ExitCode
    run_dir: Path
    recipe: str | None
    overrides: list[str] = field(default_factory=list)
    started: bool = False


@record
class ComposedRecipe:
    """A validated recipe and what it was composed from."""

    recipe: Any
    variables: dict[str, Any]
    config: dict[str, Any]


def run_job(cfg: Any, *, project: workspace.ProjectConfig, options: RunOptions,
            created_before: set[Path], typed: list[str] | None = None) -> JobResult:
    """The body of the Hydra task: returns a result instead of raising, so every job of a
    multirun reports back. ``typed``: the arguments as the user typed them, before axpipe
    rewrote them for Hydra; the job's overrides are reported and recorded in that form."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from axpipe.recipe.hydra_input import typed_form

    hydra_config = HydraConfig.get()
    if hydra_config.mode == RunMode.MULTIRUN:
        redact_sweep_record(Path(hydra_config.sweep.dir) / "multirun.yaml")
    run_dir = Path(hydra_config.runtime.output_dir)
    recipe_name = hydra_config.runtime.choices.get("recipe")
    overrides = [typed_form(item, typed or []) for item in hydra_config.overrides.task]
    result = JobResult(ExitCode.OK, run_dir, recipe_name, overrides)

    def action() -> int:
        composed = compose(cfg, recipe_name=recipe_name, overrides=overrides, project=project)
        goal = composed.recipe.goal
        if options.event_log is not None and goal is not None and not composed.recipe.workspace.sample:
            from axpipe.goal import fingerprint

            fingerprint.refuse_judged_output("--event-log", options.event_log, project.root, goal.source_paths)
        from axpipe.run.pipeline import refuse_before_start, run_pipeline

        refuse_before_start(composed, recipe_name=str(recipe_name), invocation_root=project.root)
        result.started = True
        from axpipe.run import collector

        collector.resume()  # start-up is over; a loop or a long goal collects garbage as usual

        user_overrides = [item for item in overrides if not item.startswith("hydra.")]
        return int(run_pipeline(composed, recipe_name=str(recipe_name), run_dir=run_dir,
                                options=options, invocation_root=project.root, overrides=user_overrides))

    result.exit_code = ExitCode(guarded(action))
    from axpipe.run import collector

    collector.resume()  # a refused job too: the next job of a sweep composes with the collector on
    if not result.started:
        shutil.rmtree(run_dir, ignore_errors=True)
        prune(run_dir.parent, created_before, project.root)
    if result.exit_code == ExitCode.INTERRUPTED:
        raise JobInterrupted(result)  # Ctrl-C or SIGTERM: the rest of a multirun must not start
    return result


def redact_sweep_record(path: Path) -> None:
    """Hydra's ``multirun.yaml`` with held-out checks reduced as in ``run.yaml``.

    Hydra's sweeper writes the whole composed config there before it starts the first
    job, held-out commands included, inside the workspace. Every job rewrites it before it
    does anything else, so no agent of the sweep ever runs while the file holds them.
    """
    import yaml

    from axpipe.run.pipeline import redacted

    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return
    if isinstance(config, dict):
        safe = redacted(config)
        if safe != config:  # replaced whole: a job running beside this one never reads half a file
            partial = path.with_name(f".{path.name}.{os.getpid()}")
            partial.write_text(yaml.safe_dump(safe, sort_keys=False, allow_unicode=True), encoding="utf-8")
            os.replace(partial, path)


class JobInterrupted(KeyboardInterrupt):
    """A job ended by Ctrl-C or SIGTERM, with its result. A ``KeyboardInterrupt``, so Hydra's
    launcher lets it through instead of starting the next job of a sweep."""

    def __init__(self, result: JobResult) -> None:
        super().__init__("interrupted")
        self.result = result


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
                                                   starts_agents=starts_agents)
    return ComposedRecipe(recipe=recipe, variables=variables, config=resolved)


def plan_root(resolved: dict[str, Any], project_root: Path) -> Path:
    """Where the plan's commands will run: the sample project for a demo workspace, else the project."""
    section = resolved.get("workspace")
    sample = section.get("sample") if isinstance(section, dict) else None
    if isinstance(sample, str):
        from axpipe import resources

        folder = resources.samples_dir() / sample
        if folder.is_dir():
            return folder
    return project_root


def resolve_each(cfg: Any, locate: validation.SourceLocator | None) -> tuple[dict[str, Any], list[Problem]]:
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
                 overrides: list[str]) -> validation.SourceLocator:
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
                loaded.append((path, yaml.safe_load(path.read_text(encoding="utf-8")) or {}))
            except (OSError, yaml.YAMLError):
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


def prune(folder: Path, keep: set[Path], root: Path) -> None:
    """Remove folders Hydra created for a refused run, up to ``.axpipe`` itself: from
    ``folder`` upwards, each one that is empty (or holds only a sweep's ``multirun.yaml``)
    and is not in ``keep``."""
    state = workspace.state_dir(root).resolve()
    current = folder.resolve()
    while current != state.parent and (current == state or state in current.parents):
        if current in {path.resolve() for path in keep}:
            return
        leftovers = [item.name for item in current.iterdir()] if current.is_dir() else []
        if leftovers and leftovers != ["multirun.yaml"]:
            return
        shutil.rmtree(current, ignore_errors=True)
        current = current.parent


def summarize_multirun(results: list[JobResult], stream: TextIO = sys.stdout) -> int:
    """Print one line per job of a multirun; exit with the first failing job's code."""
    for number, result in enumerate(results):
        overrides = " ".join(item for item in result.overrides if not item.startswith("hydra."))
        stream.write(f"job {number}: {overrides} -> exit {int(result.exit_code)}\n")
    failing = [result.exit_code for result in results if result.exit_code != ExitCode.OK]
    return int(failing[0]) if failing else 0
