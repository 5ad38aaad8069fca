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
import sys
import time
from pathlib import Path
from typing import Any

from axpipe import __version__, resources, workspace
from axpipe.error_handler import ERROR_FILE_ENV, copy_errors_to
from axpipe.errors import AxpipeError, InputError
from axpipe.recipe import libraries as recipes
from axpipe.recipe.hydra_env import hydra_environment, omegaconf_error, schema_overrides, translate_hydra_error
from axpipe.recipe.hydra_input import recipe_names, user_error
from axpipe.run import job, shell_completion
from axpipe.run import sweep as sweeps
from axpipe.run.job import prune
from axpipe.run.phases import RunOptions
from axpipe.runtime import reaper

# Arguments that make Hydra print instead of run: no sweep is started for them.
_PRINT_ONLY = ("--cfg", "-c", "--info", "-i", "--help", "-h", "--hydra-help", "--resolve")


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
        elif item == "--resume" or item.startswith("--resume="):
            value = item.partition("=")[2] if "=" in item else next(items, None)
            if not value:
                raise InputError("--resume needs the id a sweep printed when it started (--resume ID)")
            options.resume = value
        elif item == "--event-log" or item.startswith("--event-log="):
            value = item.partition("=")[2] if "=" in item else next(items, None)
            if not value:
                raise InputError("--event-log needs a file path (--event-log PATH)")
            options.event_log = workspace.output_path(value, "--event-log")
        else:
            rest.append(item)
    return options, rest, version


def main(argv: list[str]) -> int:
    """Run ``axpipe run ARGS``; return the exit code."""
    reaper.end_with_parent()  # a scheduled run ends with its launcher, however the launcher dies
    copy_errors_to(os.environ.pop(ERROR_FILE_ENV, None))  # its launcher records them; checks must not
    if "-sc" in argv or "--shell-completion" in argv:
        # Hydra's scripts would be built for a program called `axpipe run` (one word).
        handled = shell_completion.intercept(argv)
        if handled is not None:
            return handled
    options, typed, version = split_options(argv)
    hydra_args = schema_overrides(typed)
    if version:
        print(f"axpipe {__version__}")
        return 0
    root = workspace.find_root()
    project = workspace.load_project(root)
    libraries = recipes.libraries(project)
    sweep = None
    if sweeps.is_multirun(typed) and not any(item.split("=")[0] in _PRINT_ONLY for item in typed):
        sweep = sweeps.begin(root, typed, options.resume)
        again = f" (resumed: {len(sweep.done)} job(s) finished before are not run again)" if options.resume else ""
        (sys.stderr if options.json else sys.stdout).write(
            f"sweep {sweep.id}{again}; if it stops, run the same command with --resume {sweep.id}\n")
    elif options.resume is not None:
        raise InputError("--resume: only a sweep (axpipe run -m ...) can be resumed")

    # File times come from a coarser clock than time.time(): a second of slack.
    before, since = _existing(root), time.time() - 1
    results: list[job.JobResult] = []
    with hydra_environment(root, libraries, hydra_args):
        import hydra
        from hydra.errors import HydraException
        def task(cfg: Any) -> int:
            result = job.run_job(cfg, project=project, options=options, created_before=before, typed=typed,
                                 sweep=sweep)
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
            translated = omegaconf_error(error) or user_error(error, project, recipe_names(typed))
            if translated is None:
                raise
            _remove_refused_folders(root, before, since)
            raise translated from error
    if sweep is not None:
        return job.summarize_sweep(sweep, sys.stderr if options.json else sys.stdout)
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


