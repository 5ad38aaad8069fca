"""``axpipe repair TARGET``: a replx repair from the command line."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from axpipe import workspace
from axpipe.errors import ExitCode, InputError
from axpipe.output import Display
from axpipe.recipe import schema
from axpipe.run.events import EventLog
from axpipe.run.lock import RunLock
from axpipe.runtime import reaper

_PHASE_SPLIT = re.compile(r",(?=\s*(?:lint|build|test)\s*=)")


def parse_phases(text: str | None) -> dict[str, str]:
    """``lint=ruff check .,test=pytest -q`` → {"lint": ..., "test": ...} (commas inside commands kept)."""
    if not text:
        return {}
    phases: dict[str, str] = {}
    for part in _PHASE_SPLIT.split(text):
        name, equals, command = part.partition("=")
        name = name.strip()
        if not equals or name not in ("lint", "build", "test") or not command.strip():
            raise InputError(f"--phases: expected lint=CMD,build=CMD,test=CMD, got {part.strip()!r}")
        if name in phases:
            raise InputError(f"--phases: {name} given twice")
        phases[name] = command.strip()
    return phases


def repair(*, target: str, budget: str | None, until_line: str | None, condition: str | None, agent: str | None,
           agent_command: str | None, phases: str | None, as_json: bool, report_path: str | None, prose: bool,
           guards: str | None, protect: list[str] | None = None, allow_test_edits: bool = False) -> int:
    """Repair ``target`` until its condition holds; 0 resolved, 4 unresolved, 2 input error."""
    # deferred: ~53 modules and subprocess load only when this action needs them
    from axpipe.repair.engine import DEFAULT_BUDGET, Repair, RepairInputError, RepairReport, declare, parse_budget

    if report_path is not None:
        workspace.output_path(report_path, "--report")
    root = workspace.find_root()
    report: RepairReport

    def refused(reason: str) -> int:  # before the run folder exists: the report goes to stdout only
        early = RepairReport(target=target, target_kind="command", command=target, condition="", budget=str(budget),
                             status="input-error", reason=reason,
                             not_validated=["nothing was run: the repair was refused before iteration 1"])
        return _emit(early, as_json, report_path, None, reason)

    try:
        checked_budget = parse_budget(budget) if budget is not None else DEFAULT_BUDGET
    except InputError as error:
        return refused(error.message)
    if until_line is not None and condition is not None:
        raise InputError("give --until-line or --condition, not both")
    if agent is not None and agent_command is not None:
        raise InputError("give --agent or --agent-command, not both")
    if until_line is not None:
        success = schema.SuccessSpec(kind="oracle", params={"line": until_line})
    else:
        success = schema.SuccessSpec(kind=condition or "exit", params={})
    agent_spec = None
    if agent_command is not None:
        agent_spec = schema.AgentSpec(kind="command", params={"command": agent_command})
    elif agent is not None:
        agent_spec = schema.AgentSpec(kind=agent, params={})
    spec = schema.Repair(target=target, budget=checked_budget, success=success, phases=parse_phases(phases),
                         guards=[name.strip() for name in guards.split(",") if name.strip()] if guards else None,
                         agent=agent_spec, prose=prose, protect=protect or None, allow_test_edits=allow_test_edits)
    if protect and allow_test_edits:
        return refused("give --protect or --allow-test-edits, not both: --allow-test-edits lets fixes edit every test")
    agent_source = "--agent-command" if agent_command is not None else None
    try:  # every refusal the input alone decides (a guard named that does not load, an agent's program
        # that is missing...), before .axpipe/, the lock and the run folder exist
        declared = declare(root, spec, agent_spec, agent_source=agent_source, guards_source="--guards")
    except RepairInputError as error:  # its report, as declared so far: no run folder to write it to
        return _emit(error.report, as_json, report_path, None, error.message)
    # deferred: Hydra and the run's modules load only when this action needs them
    from axpipe.run.pipeline import new_run_dir, sigterm_interrupts

    state = workspace.ensure_state_dir(root)
    run_dir = new_run_dir(root, "repair")
    display = Display(sys.stderr if as_json else sys.stdout)
    events = EventLog(path=run_dir / "events.jsonl")
    events.subscribe(display.handle)
    try:
        # SIGTERM or SIGHUP ends the target's and the agent's processes as Ctrl-C does
        # (exit 130); the run's events end with what stopped it.
        with reaper.ends_what_it_starts(), sigterm_interrupts(), RunLock(state, run_dir.name):
            repairer = Repair(root, spec, agent_spec, events=events, folder=run_dir, on_output=display.output,
                              agent_source=agent_source)
            try:
                repairer.prepare(declared)
                report = repairer.run()
            except RepairInputError as error:
                report = error.report
                return _emit(report, as_json, report_path, run_dir, error.message)
            except KeyboardInterrupt as interrupt:
                events.emit("repair.interrupted", phase="work", reason=str(interrupt) or "received SIGINT",
                            iterations_used=len(repairer.report.iterations))
                raise
    finally:
        events.close()
        display.close()
    return _emit(report, as_json, report_path, run_dir, None)


def _emit(report: object, as_json: bool, report_path: str | None, run_dir: Path | None, error: str | None) -> int:
    # deferred: ~53 modules and subprocess load only when this action needs them
    from axpipe.repair.engine import RepairReport

    assert isinstance(report, RepairReport)
    markdown = report.markdown()
    payload = json.dumps(report.to_json(), indent=2) + "\n"
    if run_dir is not None:
        (run_dir / "report.md").write_text(markdown, encoding="utf-8")
        (run_dir / "report.json").write_text(payload, encoding="utf-8")
    if report_path is not None:
        path = Path(report_path)
        path.write_text(payload if path.suffix == ".json" else markdown, encoding="utf-8")
    sys.stdout.write(payload if as_json else markdown)
    if error is not None:
        sys.stderr.write(f"axpipe: error: {error}\n")
    return int(report.exit_code if report.status != "input-error" else ExitCode.INPUT_ERROR)
