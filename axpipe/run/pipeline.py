"""Run a validated recipe: set up the workspace, events and display, then the lifecycle."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from axpipe import samples, workspace
from axpipe.error_handler import describe
from axpipe.errors import AxpipeError, ExitCode
from axpipe.goal import goals
from axpipe.loop import run as loop_run
from axpipe.output import Display
from axpipe.recipe.resolve import ComposedRecipe
from axpipe.run import lifecycle
from axpipe.run.events import EventLog
from axpipe.run.phases import RunContext, RunOptions
from axpipe.runtime import reaper
from axpipe.schedule import check_recipe_tasks
from axpipe.store import current_schema, locate

_STATUS = {
    ExitCode.OK: "succeeded",
    ExitCode.FAILED: "failed",
    ExitCode.INPUT_ERROR: "refused",
    ExitCode.BLOCKED: "blocked",
    ExitCode.BUDGET_LIMITED: "budget-limited",
    ExitCode.ENVIRONMENT: "environment-not-ready",
    ExitCode.NOT_TERMINAL: "not-terminal",
    ExitCode.LOCKED: "refused",
    ExitCode.INTERRUPTED: "interrupted",
}


def status_of(code: int) -> str:
    """The word a run's exit code is recorded and reported as."""
    return _STATUS.get(ExitCode(code), "failed") if code in ExitCode._value2member_map_ else "failed"


def new_run_dir(root: Path, suffix: str) -> Path:
    """A run folder for a command that does not go through Hydra (``axpipe repair``)."""
    from datetime import datetime

    now = datetime.now()
    folder = workspace.state_dir(root) / "runs" / f"{now:%Y-%m-%d}" / f"{now:%H-%M-%S-%f}-{suffix}"
    folder.mkdir(parents=True, exist_ok=False)
    return folder


def run_id_for(run_dir: Path, root: Path) -> str:
    """A readable id from the run folder: ``2026-11-30_03-12-44-123456`` (``_<n>`` per job)."""
    runs = workspace.state_dir(root) / "runs"
    try:
        relative = run_dir.resolve().relative_to(runs.resolve())
    except ValueError:
        # A sweep job working in a worktree: its run folder is in the sweep's checkout.
        parts = run_dir.resolve().parts
        marks = [index for index in range(len(parts) - 1) if parts[index:index + 2] == (workspace.STATE_DIR, "runs")]
        return "_".join(parts[marks[-1] + 2:]) if marks else run_dir.name
    return "_".join(relative.parts)


@contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """SIGTERM (a supervisor, the runtime backend's cancellation, ``kill``) and SIGHUP (the
    terminal closed) end the run as Ctrl-C does: its processes are killed, and the run and
    any check in progress are recorded and reported as interrupted (exit 130) instead of
    dying with a store row or a receipt left "running" and a check orphaned.

    A signal whose handler is not the default is left alone: someone else decides what it
    means here (``nohup`` ignores SIGHUP, so the command runs on after a hang-up)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    # Asked now: once the terminal has hung up, isatty() on it fails too.
    terminal = [fd for fd in (1, 2) if _isatty(fd)]

    def interrupt(signum: int, frame: object) -> None:
        if signum == getattr(signal, "SIGHUP", None):
            _leave_terminal(terminal)
        raise KeyboardInterrupt(f"received {signal.Signals(signum).name}")

    previous: dict[int, Any] = {}
    for signum in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if signum is not None and signal.getsignal(signum) is signal.SIG_DFL:
            previous[signum] = signal.signal(signum, interrupt)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def _leave_terminal(fds: list[int]) -> None:
    """After a hang-up the terminal refuses every write (EIO): output that went there (the
    descriptors in ``fds``) goes to /dev/null instead, so recording and cleaning up the
    interruption cannot fail on it."""
    for fd in fds:
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, fd)
            os.close(null)
        except OSError:
            continue


def redacted(config: dict[str, Any]) -> dict[str, Any]:
    """The composed recipe with held-out checks reduced to their id and acceptance."""
    copy = dict(config)
    goal = copy.get("goal")
    if isinstance(goal, dict) and isinstance(goal.get("checks"), list):
        goal = dict(goal)
        goal["checks"] = [{"id": check.get("id"), "held_out": True, "acceptance": check.get("acceptance")}
                          if isinstance(check, dict) and check.get("held_out") else check
                          for check in goal["checks"]]
        copy["goal"] = goal
    return copy


def write_record(run_dir: Path, recipe_name: str, overrides: list[str], config: dict[str, Any]) -> Path:
    """``run.yaml``: what this run composed and from which overrides (held-out checks redacted)."""
    import yaml

    path = run_dir / "run.yaml"
    run_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"recipe": recipe_name, "overrides": overrides, "config": redacted(config)},
                                   sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def refuse_before_start(composed: ComposedRecipe, *, recipe_name: str, invocation_root: Path,
                        spent_too: bool = False) -> None:
    """Refuse, before the run starts, a recipe its existing goal's frozen contract rejects,
    or whose ``schedule:`` the plan would refuse (a one-shot ``at`` in the past, say).

    A contract mismatch is an input error (exit 2: nothing ran, nothing changed), so it must
    come before the probe and before the run folder is filled; the caller then removes the
    folder as for any refused run. Only reads the store, and only one with the current schema
    (an older one is migrated under the run lock, where the plan phase checks again).
    ``spent_too``: a budget-limited goal is refused here too (:func:`axpipe.goal.goals.preflight`)."""
    recipe = composed.recipe
    if recipe.goal is None and not recipe.schedule:
        return
    root = invocation_root
    if recipe.workspace.sample:
        if not recipe.workspace.persist:
            return  # a fresh copy of the sample: no goal has been planned there
        root = workspace.state_dir(invocation_root) / "workspaces" / recipe.workspace.sample
    where = locate.location(root)
    if isinstance(where, Path) and where.is_file() and not current_schema(where):
        return

    store = locate.existing_store(root)
    try:
        if recipe.schedule:  # its refusals too come before the goal's session (DESIGN §11)
            check_recipe_tasks(store, recipe, recipe_name, root)
        if store is not None:
            if recipe.goal is not None:  # the contract a run froze holds its task file's criteria
                from axpipe.task.files import with_criteria

                with_criteria(root, recipe, goals.goal_id_for(recipe, recipe_name, composed.variables))
            goals.preflight(store, recipe, recipe_name=recipe_name, variables=composed.variables,
                            spent_too=spent_too)
    finally:
        if store is not None:
            store.close()


def _exclude_run_folder(run_dir: Path, invocation_root: Path) -> None:
    """Keep the invocation root's ``.axpipe/`` out of git when the run folder is in it.

    Hydra made the run folder there before the job started; a recipe whose workspace is a
    sample copy writes its store elsewhere, so excluding only the workspace's ``.axpipe/``
    would leave this one showing in the user's ``git status`` (issue 2 item 7). Done only
    once the run is accepted: a refused run removes the folder and writes nothing."""
    state = workspace.state_dir(invocation_root).resolve()
    if state in run_dir.resolve().parents:
        workspace.ensure_state_dir(invocation_root)


def run_pipeline(composed: ComposedRecipe, *, recipe_name: str, run_dir: Path, options: RunOptions,
                 invocation_root: Path, overrides: list[str] | None = None) -> ExitCode:
    """Run ``composed`` and return the exit code; every outcome is an event and a store row.
    Whatever the run's checks and agents started ends with it (:mod:`axpipe.runtime.reaper`)."""
    with reaper.ends_what_it_starts():
        return _run(composed, recipe_name=recipe_name, run_dir=run_dir, options=options,
                    invocation_root=invocation_root, overrides=overrides)


def _run(composed: ComposedRecipe, *, recipe_name: str, run_dir: Path, options: RunOptions,
         invocation_root: Path, overrides: list[str] | None = None) -> ExitCode:
    recipe = composed.recipe
    run_id = run_id_for(run_dir, invocation_root)
    display = Display(sys.stderr if options.json else sys.stdout)
    events = EventLog(goal=None, path=run_dir / "events.jsonl", copy_to=options.event_log,
                      to_stdout=options.json)
    events.subscribe(display.handle)
    try:
        _exclude_run_folder(run_dir, invocation_root)
        write_record(run_dir, recipe_name, list(overrides or []), composed.config)
        root = invocation_root
        if recipe.workspace.sample:
            if recipe.workspace.persist:
                root = samples.persistent(recipe.workspace.sample, invocation_root)
            else:
                root = samples.prepare(recipe.workspace.sample)
        workspace.ensure_state_dir(root)
        events.emit("run.started", run=run_id, recipe=recipe_name, workspace=str(root),
                    run_dir=str(run_dir), pid=os.getpid())
        if recipe.workspace.sample:
            how = "kept in" if recipe.workspace.persist else "copied into a new git repository at"
            events.emit("workspace.prepared", workspace=str(root),
                        summary=f"sample project '{recipe.workspace.sample}' {how} {root}")
        context = RunContext(recipe=recipe, config=composed.config, variables=composed.variables,
                             root=root, run_dir=run_dir, run_id=run_id, events=events,
                             on_output=display.output, recipe_name=recipe_name,
                             overrides=list(overrides or []))
        code = ExitCode.FAILED
        summary = "ended by an error"
        try:
            context.resources.enter_context(sigterm_interrupts())
            phases = lifecycle.DEFAULT_PHASES
            if recipe.loop is not None:  # lock, probe and plan once, then work … settle per tick
                phases = loop_run.phases()
            code, summary = lifecycle.execute(context, phases)
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM (sigterm_interrupts)
            code, summary = ExitCode.INTERRUPTED, "interrupted"
            raise
        except Exception as error:  # recorded as the edge will report it
            summary = describe(error)
            if isinstance(error, AxpipeError):
                code = error.exit_code
            raise
        finally:
            status = _STATUS.get(code, "failed")
            if context.store is not None:
                context.store.finish_run(run_id, status=status, exit_code=int(code), summary=summary)
                context.store.close()
            outputs = {"events": str(run_dir / "events.jsonl"),
                       "store": context.store.display if context.store is not None
                       else str(workspace.store_path(root))}
            if options.event_log is not None:
                outputs["event log copy"] = str(options.event_log)
            where = "" if root == invocation_root else f"cd {root} && "
            if context.driver is not None:
                outputs["goal status"] = f"{where}axpipe goal status"
            # The report is built on demand (it costs ~0.3 s): the line says how, and where it goes.
            if context.store is not None:
                outputs["report"] = (f"{where}axpipe report  "
                                     f"({workspace.state_dir(root) / 'report' / 'index.html'})")
            events.emit("run.finished", run=run_id, status=status, exit_code=int(code),
                        summary=summary, outputs=outputs)
        return code
    finally:
        events.close()
        display.close()

