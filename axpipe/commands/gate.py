"""``axpipe gate``: the project's checks narrowed to a change, for CI and pre-commit (DESIGN §8)."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from axpipe import workspace
from axpipe.duration import DurationError, parse_duration
from axpipe.errors import ExitCode, InputError
from axpipe.gate.report import render
from axpipe.recipe import libraries as recipes

if TYPE_CHECKING:
    from axpipe.gate.narrowing import GateSettings


def gate(*, recipe: str | None, overrides: list[str], lint: str | None, typecheck: str | None, test: str | None,
         command: str | None, baseline: str | None, narrow: bool, timeout: str | None, report_dir: str | None,
         as_json: bool) -> int:
    """Run the gate; exit 0 when it passed, 1 when a phase failed, 5 when a phase could not run
    at all (its program is missing) and nothing failed, 2 for bad input (an unresolvable
    baseline included: the gate never narrows against a base it cannot find)."""
    # deferred: ~64 modules and subprocess load only when this action needs them
    from axpipe.gate import baselines
    from axpipe.gate.narrowing import DEFAULT_TIMEOUT, GateSettings, run_gate
    from axpipe.review import revisions

    given = {name: value for name, value in (("lint", lint), ("typecheck", typecheck), ("test", test)) if value}
    if recipe is None and not given and command is None:
        raise InputError("name what to gate: --recipe NAME (its `gate:` section), or commands with --lint, "
                         "--typecheck, --test or --command")
    if recipe is None and overrides:
        raise InputError(f"overrides ({' '.join(overrides)}) need --recipe NAME")
    for name, value in (*given.items(), ("command", command)):
        if value is not None and not value.strip():
            raise InputError(f"--{name}: the command is empty")
    try:
        seconds = parse_duration(timeout) if timeout is not None else None
    except DurationError as error:
        raise InputError(f"--timeout: {error}") from error
    if seconds is not None and seconds < 1:
        raise InputError(f"--timeout: {timeout} is below the minimum 1s")
    chosen_folder = workspace.output_path(report_dir, "--report-dir", folder=True) if report_dir else None
    # Refuses outside git; the gate itself runs at the project's root (the folder holding
    # axpipe.yaml, as `axpipe run` does), not at the work tree's top: in a monorepo the
    # project's commands, its recipes and its .axpipe/ are in its own subfolder.
    revisions.repository_root(Path.cwd(), needed_by="the gate's narrowing and worktrees")
    root = workspace.find_root()
    settings, declared = _from_recipe(recipe, overrides) if recipe is not None else (GateSettings(), None)
    baseline = baseline or declared
    settings.phases.update(given)
    if command is not None:
        settings.command = command
    settings.narrow = settings.narrow and narrow
    settings.timeout = seconds or (settings.timeout if recipe is not None else DEFAULT_TIMEOUT)
    if not settings.commands():
        raise InputError(f"recipe '{recipe}' declares no gate (`gate:` with `phases` or `command`)")
    resolved = baselines.resolve(root, baseline, what="--baseline")
    workspace.ensure_state_dir(root)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d_%H-%M-%S-%f")
    folder = chosen_folder or workspace.state_dir(root) / "gate" / stamp
    # deferred: Hydra and the run's modules load only when this action needs them
    from axpipe.run.pipeline import sigterm_interrupts

    # SIGTERM or SIGHUP ends the phases' processes as Ctrl-C does (exit 130) instead of
    # leaving a test run or a baseline worktree behind.
    with sigterm_interrupts():
        report = run_gate(root, settings, baseline=resolved, baseline_given=baseline or "HEAD~1, the default",
                          folder=folder, on_output=None)
    if as_json:
        json.dump(report.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render(report))
        sys.stdout.write(f"\nReport: {folder / 'report.md'}\n")
    if report.ok:
        return int(ExitCode.OK)
    if all(phase.status in ("passed", "error") for phase in report.phases):
        return int(ExitCode.ENVIRONMENT)
    return int(ExitCode.FAILED)


def _from_recipe(recipe: str, overrides: list[str]) -> tuple[GateSettings, str | None]:
    """The recipe's gate (composed with its overrides, as `axpipe run` would) and its baseline."""
    # deferred: Hydra and the run's modules load only when this action needs them
    from axpipe.gate.narrowing import GateSettings
    from axpipe.recipe import compose, resolve

    project = workspace.load_project(workspace.find_root())
    recipes.find(project, recipe)  # an unknown name lists the recipes that exist
    config = compose.compose_config(project, recipe, overrides)
    composed = resolve.compose(config, recipe_name=recipe, overrides=overrides, project=project,
                           starts_agents=False)  # judges without the agent: it need not be installed
    spec = composed.recipe.gate
    if spec is None:
        return GateSettings(), None
    return GateSettings(phases=dict(spec.phases), command=spec.command,
                        narrow=spec.narrow, timeout=spec.timeout), spec.baseline
