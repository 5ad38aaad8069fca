"""``axpipe run``: hand the arguments to Hydra, then validate and run each composed job.

Hydra owns the command line of ``run`` (overrides, ``-m``, ``--cfg``, ``--info``,
``--help``, shell completion). axpipe takes out its own flags first (``--json``,
``--event-log PATH``, ``--version``), registers its recipe libraries and the
``axpipe_root`` and ``axpipe_python`` resolvers, and calls a ``@hydra.main`` task.
Hydra's exceptions are turned into config errors (exit 2) here, so a user never sees a
Hydra traceback unless ``AXPIPE_DEBUG=1``.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from axpipe import workspace
from axpipe.errors import AxpipeError, ConfigError, InputError, Problem, did_you_mean, not_found_message
from axpipe.recipe import libraries as recipes
from axpipe.run.lifecycle import RunOptions

PROG = "axpipe run"


def split_options(argv: list[str]) -> tuple[RunOptions, list[str], bool]:
    """Separate axpipe's flags from Hydra's arguments; the bool is ``--version``."""
    options = RunOptions()
    rest: list[str] = []
    version = False
    items = iter(argv)
    for item in items:
        if item == "--json":
            options.json = True
        elif item == "--version":
            version = True
        elif item == "--event-log" or item.startswith("--event-log="):
            value = item.partition("=")[2] if "=" in item else next(items, None)
            if not value:
                raise InputError("--event-log needs a file path (--event-log PATH)")
            options.event_log = workspace.output_path(value, "--event-log")
        else:
            rest.append(item)
    return options, rest, version


def schema_overrides(arguments: list[str]) -> list[str]:
    """Let ``KEY=VALUE`` set any recipe-schema key, even one the recipe leaves at its default.

    ``goal.budget.time=30m`` must work on a recipe that declares a goal without a budget;
    Hydra would demand ``+``. Such overrides become ``++KEY=VALUE`` (add or override);
    anything else (free variables, typos) is left for Hydra to judge. A recipe name Hydra
    would read as a number is quoted (``recipe=2024``; see :mod:`axpipe.recipe.hydra_input`).
    """
    from axpipe.recipe.hydra_input import quote_recipe_choice
    from axpipe.recipe.schema import is_schema_path

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


def main(argv: list[str]) -> int:
    """Run ``axpipe run ARGS``; return the exit code."""
    if "-sc" in argv or "--shell-completion" in argv:
        from axpipe.run import shell_completion

        # Hydra's scripts would be built for a program called `axpipe run` (one word).
        handled = shell_completion.intercept(argv)
        if handled is not None:
            return handled
    options, typed, version = split_options(argv)
    hydra_args = schema_overrides(typed)
    if version:
        from axpipe import __version__

        print(f"axpipe {__version__}")
        return 0
    root = workspace.find_root()
    project = workspace.load_project(root)
    libraries = recipes.libraries(project)
    from axpipe.recipe import resolve as job

    # File times come from a coarser clock than time.time(): a second of slack.
    before, since = _existing(root), time.time() - 1
    results: list[job.JobResult] = []
    with hydra_environment(root, libraries, hydra_args):
        import hydra
        from hydra.errors import HydraException

        from axpipe import resources

        def task(cfg: Any) -> int:
            result = job.run_job(cfg, project=project, options=options, created_before=before, typed=typed)
            results.append(result)
            return int(result.exit_code)

        # Hydra names the task after the function; keep it stable and readable.
        task.__module__ = "axpipe"
        task.__name__ = "axpipe"
        app = hydra.main(config_path=str(resources.conf_dir()), config_name="config",
                         version_base="1.3")(task)
        try:
            app()
        except job.JobInterrupted as stop:  # already reported; the sweep stops here
            results.append(stop.result)
        except SystemExit as stop:
            return _exit_status(stop.code)
        except HydraException as error:
            _remove_refused_folders(root, before, since)
            raise translate_hydra_error(error, project) from error
        except AxpipeError:
            _remove_refused_folders(root, before, since)  # e.g. a recipe file that is not valid YAML
            raise
        except Exception as error:
            from axpipe.recipe.hydra_input import recipe_names, user_error

            translated = _omegaconf_error(error) or user_error(error, project, recipe_names(typed))
            if translated is None:
                raise
            _remove_refused_folders(root, before, since)
            raise translated from error
    if not results:
        return 0  # --cfg, --info, shell completion: Hydra printed what was asked
    if len(results) == 1:
        return int(results[0].exit_code)
    return job.summarize_multirun(results, sys.stderr if options.json else sys.stdout)  # --json: stdout is events


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")
    return 1


def _remove_refused_folders(root: Path, before: set[Path], since: float) -> None:
    """A refused composition leaves nothing behind: the folders Hydra made for it since
    ``since`` (a multirun's sweep folder is made before its first job composes) go, when
    empty; a job that ran keeps its folder, and older folders are not touched."""
    from axpipe.recipe.resolve import prune

    runs = workspace.state_dir(root) / "runs"
    for parent in (runs / "multirun", runs):
        days = sorted(parent.iterdir()) if parent.is_dir() else []
        for day in (day for day in days if day.is_dir() and day.name != "multirun"):
            for run in (run for run in sorted(day.iterdir()) if run.is_dir()):
                if run.stat().st_mtime >= since:
                    prune(run, before, root)  # stops at what holds anything, and at what was there before
            if day not in before:
                prune(day, before, root)
    prune(runs, before, root)


def _existing(root: Path) -> set[Path]:
    """Folders that exist before Hydra creates its run folder (so a refused run can undo it)."""
    state = workspace.state_dir(root)
    candidates = [state, state / "runs", state / "runs" / "multirun"]
    if (state / "runs").is_dir():
        candidates.extend(path for path in (state / "runs").iterdir())
    if (state / "runs" / "multirun").is_dir():
        candidates.extend(path for path in (state / "runs" / "multirun").iterdir())
    return {path for path in candidates if path.exists()}


@contextmanager
def hydra_environment(root: Path, libraries: list[recipes.Library], argv: list[str]) -> Iterator[None]:
    """Recipe libraries, the ``axpipe_root`` and ``axpipe_python`` resolvers and ``sys.argv``
    set up for Hydra."""
    from omegaconf import OmegaConf

    from axpipe.recipe import source as recipe_source

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
        from axpipe.recipe.schema import all_paths

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


def _omegaconf_error(error: Exception) -> InputError | None:
    try:
        from omegaconf.errors import OmegaConfBaseException
    except ImportError:  # pragma: no cover
        return None
    if isinstance(error, OmegaConfBaseException):
        key = getattr(error, "full_key", None) or ""
        return ConfigError([Problem(str(key), str(error).splitlines()[0])])
    return None

