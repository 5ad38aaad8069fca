"""One composed Hydra job of ``axpipe run``: validate the recipe, then run its lifecycle.

Validation happens before anything runs or is written. Hydra creates its run folder before
calling the task, so a job refused for a config error removes that folder again: a refused
run leaves the workspace as it found it.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import field
from pathlib import Path
from typing import Any, TextIO

from axpipe import workspace
from axpipe.error_handler import guarded
from axpipe.errors import ExitCode
from axpipe.goal import fingerprint
from axpipe.recipe import resolve
from axpipe.recipe.hydra_input import typed_form
from axpipe.records import record
from axpipe.run import collector
from axpipe.run import sweep as sweeps
from axpipe.run.phases import RunOptions
from axpipe.run.pipeline import redacted, refuse_before_start, run_pipeline


@record
class JobResult:
    """What one job of ``axpipe run`` ended with."""

    exit_code: ExitCode
    run_dir: Path
    recipe: str | None
    overrides: list[str] = field(default_factory=list)
    started: bool = False


def run_job(cfg: Any, *, project: workspace.ProjectConfig, options: RunOptions,
            created_before: set[Path], typed: list[str] | None = None,
            sweep: sweeps.Sweep | None = None) -> JobResult:
    """The body of the Hydra task: returns a result instead of raising, so every job of a
    multirun reports back. ``typed``: the arguments as the user typed them, before axpipe
    rewrote them for Hydra; the job's overrides are reported and recorded in that form.
    In a ``sweep`` the job records its end, skips itself when a resumed sweep finished it
    before, and works in a worktree of its own under a parallel launcher."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    hydra_config = HydraConfig.get()
    if hydra_config.mode == RunMode.MULTIRUN:
        redact_sweep_record(Path(hydra_config.sweep.dir) / "multirun.yaml")
    run_dir = Path(hydra_config.runtime.output_dir)
    recipe_name = hydra_config.runtime.choices.get("recipe")
    overrides = [typed_form(item, typed or []) for item in hydra_config.overrides.task]
    result = JobResult(ExitCode.OK, run_dir, recipe_name, overrides)
    if sweep is None:
        return _run(cfg, result, project, options, created_before, project.root)
    num = int(hydra_config.job.num)
    user_overrides = [item for item in overrides if not item.startswith("hydra.")]
    if num in sweep.done:  # a resumed sweep: this job finished in an earlier run
        shutil.rmtree(run_dir, ignore_errors=True)
        prune(run_dir.parent, created_before, project.root)
        result.exit_code = ExitCode(int(sweep.done[num]["exit_code"]))
        return result
    branch, home = None, project.root
    try:
        if sweep.parallel:
            made: list[tuple[Path, str]] = []

            def make() -> int:
                made.append(sweeps.worktree(sweep, num))
                return 0

            code = guarded(make)
            if not made:  # no worktree, no run: the job failed, and says why (never a pass)
                result.exit_code = ExitCode(code) if code else ExitCode.FAILED
                shutil.rmtree(run_dir, ignore_errors=True)
                return result
            root, branch = made[0]
            project = workspace.ProjectConfig(root, project.recipe_paths, project.file, project.store_url)
        _run(cfg, result, project, options, created_before, home)
    finally:
        commit = sweeps.commit_work(project.root, sweep, num, user_overrides) if branch and result.started else None
        sweeps.record_job(sweep, num, {"overrides": user_overrides, "exit_code": int(result.exit_code),
                                       "started": result.started, "run_dir": str(run_dir), "branch": branch,
                                       "worktree": str(project.root) if branch else None, "commit": commit})
    return result


def _run(cfg: Any, result: JobResult, project: workspace.ProjectConfig, options: RunOptions,
         created_before: set[Path], home: Path) -> JobResult:
    """Compose, refuse or run one job in ``project.root``; ``result`` says how it ended.
    ``home``: the checkout whose ``.axpipe/runs/`` holds the run folder Hydra made."""
    run_dir, recipe_name, overrides = result.run_dir, result.recipe, result.overrides

    def action() -> int:
        composed = resolve.compose(cfg, recipe_name=recipe_name, overrides=overrides, project=project)
        goal = composed.recipe.goal
        if options.event_log is not None and goal is not None and not composed.recipe.workspace.sample:
            fingerprint.refuse_judged_output("--event-log", options.event_log, project.root, goal.source_paths)
        refuse_before_start(composed, recipe_name=str(recipe_name), invocation_root=project.root)
        result.started = True
        collector.resume()  # start-up is over; a loop or a long goal collects garbage as usual

        user_overrides = [item for item in overrides if not item.startswith("hydra.")]
        return int(run_pipeline(composed, recipe_name=str(recipe_name), run_dir=run_dir,
                                options=options, invocation_root=project.root, overrides=user_overrides))

    result.exit_code = ExitCode(guarded(action))
    collector.resume()  # a refused job too: the next job of a sweep composes with the collector on
    if not result.started:
        shutil.rmtree(run_dir, ignore_errors=True)
        prune(run_dir.parent, created_before, home)
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


def summarize_sweep(sweep: sweeps.Sweep, stream: TextIO = sys.stdout) -> int:
    """The sweep's line, then one per job (its exit code, and its branch and commit under a
    parallel launcher); exit with the worst job's code (DESIGN §12). A job with no record
    never ran (the sweep stopped before it)."""
    recorded = sweeps.jobs(sweep)
    code = sweeps.worst([int(job["exit_code"]) for job in recorded])
    stream.write(f"sweep {sweep.id}: {len(recorded)} job(s), exit {code}"
                 + (f"; resume with --resume {sweep.id}" if code == ExitCode.INTERRUPTED else "") + "\n")
    for job in recorded:
        line = f"job {job['num']}: {' '.join(job['overrides'])} -> exit {job['exit_code']}"
        if job.get("branch"):
            line += f"; branch {job['branch']}" + (f" at {job['commit'][:12]}" if job.get("commit") else ", no change")
        if int(job["num"]) in sweep.done:
            line += " (finished before; not run again)"
        stream.write(line + "\n")
    return code


def summarize_multirun(results: list[JobResult], stream: TextIO = sys.stdout) -> int:
    """Print one line per job of a multirun; exit with the first failing job's code."""
    for number, result in enumerate(results):
        overrides = " ".join(item for item in result.overrides if not item.startswith("hydra."))
        stream.write(f"job {number}: {overrides} -> exit {int(result.exit_code)}\n")
    failing = [result.exit_code for result in results if result.exit_code != ExitCode.OK]
    return int(failing[0]) if failing else 0
