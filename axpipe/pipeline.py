"""Run a validated recipe: set up the workspace, events and display, then the lifecycle."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from axpipe import lifecycle, workspace
from axpipe.errors import ExitCode
from axpipe.events import EventLog
from axpipe.job import ComposedRecipe
from axpipe.lifecycle import RunContext, RunOptions
from axpipe.output import Display

_STATUS = {
    ExitCode.OK: "succeeded",
    ExitCode.FAILED: "failed",
    ExitCode.BLOCKED: "blocked",
    ExitCode.BUDGET_LIMITED: "budget-limited",
    ExitCode.ENVIRONMENT: "environment-not-ready",
    ExitCode.NOT_TERMINAL: "not-terminal",
    ExitCode.LOCKED: "refused",
    ExitCode.INTERRUPTED: "interrupted",
}


def run_id_for(run_dir: Path, root: Path) -> str:
    """A readable id from the run folder: ``2026-11-30_03-12-44-123456`` (``_<n>`` per job)."""
    runs = workspace.state_dir(root) / "runs"
    try:
        relative = run_dir.resolve().relative_to(runs.resolve())
    except ValueError:
        return run_dir.name
    return "_".join(relative.parts)


def run_pipeline(composed: ComposedRecipe, *, recipe_name: str, run_dir: Path, options: RunOptions,
                 invocation_root: Path) -> ExitCode:
    """Run ``composed`` and return the exit code; every outcome is an event and a store row."""
    recipe = composed.recipe
    run_id = run_id_for(run_dir, invocation_root)
    display = Display(sys.stderr if options.json else sys.stdout)
    events = EventLog(goal=None, path=run_dir / "events.jsonl", copy_to=options.event_log,
                      to_stdout=options.json)
    events.subscribe(display.handle)
    try:
        root = invocation_root
        if recipe.workspace.sample:
            from axpipe import samples

            root = samples.prepare(recipe.workspace.sample)
        workspace.ensure_state_dir(root)
        events.emit("run.started", run=run_id, recipe=recipe_name, workspace=str(root),
                    run_dir=str(run_dir), pid=os.getpid())
        if recipe.workspace.sample:
            events.emit("workspace.prepared", workspace=str(root),
                        summary=f"sample project '{recipe.workspace.sample}' copied into a new git "
                                f"repository: {root}")
        context = RunContext(recipe=recipe, config=composed.config, variables=composed.variables,
                             root=root, run_dir=run_dir, run_id=run_id, events=events,
                             on_output=display.output)
        code = ExitCode.INTERRUPTED
        summary = "interrupted"
        try:
            code, summary = lifecycle.execute(context, lifecycle.DEFAULT_PHASES)
        finally:
            status = _STATUS.get(code, "failed")
            if context.store is not None:
                context.store.finish_run(run_id, status=status, exit_code=int(code), summary=summary)
                context.store.close()
            outputs = {"events": str(run_dir / "events.jsonl"),
                       "store": str(workspace.state_dir(root) / "state.db")}
            if options.event_log is not None:
                outputs["event log copy"] = str(options.event_log)
            events.emit("run.finished", run=run_id, status=status, exit_code=int(code),
                        summary=summary, outputs=outputs)
        return code
    finally:
        events.close()
        display.close()
