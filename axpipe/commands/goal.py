"""``axpipe goal status|pause|clear|resume|revise|fork`` and ``axpipe verify``."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

from axpipe import workspace
from axpipe.errors import AxpipeError, ExitCode, InputError
from axpipe.goal import contract, fingerprint
from axpipe.run.events import EventLog
from axpipe.run.lock import RunLock
from axpipe.run.phases import Phase, RunContext
from axpipe.runtime import reaper
from axpipe.store import Store, locate

DEFAULT_IDLE_TIMEOUT_MS = 10 * 60 * 1000


def open_store(root: Path) -> Store:
    """The project's store; an input error when axpipe never ran here."""
    store = locate.existing_store(root)
    if store is None:
        raise InputError(f"no axpipe state in {root}: no goal has been planned here "
                         "(start one with `axpipe run recipe=NAME`)")
    return store


def _choose(store: Store, goal_id: str | None, session_id: str | None, *, latest: bool = False) -> tuple[Any, str]:
    # deferred: ~42 modules and subprocess load only when this action needs them
    from axpipe.goal import goals

    goal, session = goals.choose(store, goal_id, session_id, latest=latest)
    return goal, session["id"]


def status(*, goal_id: str | None, session_id: str | None, as_json: bool) -> int:
    """Print a goal's status, each check's state and why, and its budget use."""
    # deferred: ~53 modules and subprocess load only when this action needs them
    from axpipe.goal.driver import status_json

    root = workspace.find_root()
    with open_store(root) as store:
        goal, session = _choose(store, goal_id, session_id, latest=True)  # settled goals: the latest one
        report = status_json(store, root, goal, session)
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return 0
    sys.stdout.write(render_status(report))
    return 0


def render_status(report: dict[str, Any]) -> str:
    goal, budget = report["goal"], report["budget"]
    lines = [f"Goal {goal['id']}: {goal['objective']}"]
    if goal["status"] == "complete" and not report["complete"]:
        # The stored status is what the last settle found; the checks below are judged now.
        lines.append("  status:      complete when last settled, but that no longer holds on the current "
                     "source (see the checks); `axpipe run` or `axpipe goal resume` re-verifies it")
    else:
        lines.append(f"  status:      {goal['status']}" + (f" ({goal['reason']})" if goal["reason"] else ""))
    if goal["assured"]:
        lines.append(f"  contract:    {goal['contract_digest']} (baseline {goal['baseline'] or 'none'})")
    else:
        lines.append("  contract:    no assurance contract")
    lines.append(f"  session:     {goal['session']}")
    if goal["blocked"]:
        blocked = goal["blocked"]
        lines.append(f"  blocked:     {blocked['kind']}: {blocked['reason']}; needs: {blocked['external_change']}; "
                     f"evidence: {', '.join(blocked['evidence'])}")
    if goal["bounces"]:
        lines.append(f"  bounces:     {goal['bounces']} (QA FAIL or judge REJECTED; limits.bounces blocks the goal)")
    if goal["bad_success"]:
        lines.append("  bad success: the visible checks passed while a held-out check failed")
    lines.append("  checks:")
    width = max([len(check["id"]) for check in report["checks"]] + [4])
    for check in report["checks"]:
        hidden = " (held out)" if check["held_out"] else ""
        lines.append(f"    {check['id']:<{width}}  {check['status']:<8} {check['receipt'] or '-':<14} "
                     f"{check['reason']}{hidden}")
    delivery = report.get("delivery")
    if delivery:
        said = {"pending": "not yet", "delivered": "delivered", "failed": "failed", "blocked": "blocked"}
        detail = f": {delivery['reason']}" if delivery["reason"] else ""
        where = f"; pull request {delivery['pr_url']}" if delivery["pr_url"] else ""
        retry = f"; retry: {delivery['retry']}" if delivery["retry"] else ""
        lines.append(f"  delivery:    {said.get(delivery['status'], delivery['status'])} ({delivery['commits']} runner "
                     f"commit(s) on {delivery['branch']}, base {delivery['base']}){detail}{where}{retry}")
    fingerprint = report["fingerprint"]
    source = fingerprint["digest"] or "no fresh evidence: " + "; ".join(fingerprint["reasons"])
    lines.append(f"  source:      {source}")

    def limit(value: Any) -> str:
        return "-" if value is None else f"{value:g}" if isinstance(value, float) else str(value)

    lines.append(f"  budget:      steps {budget['steps_used']}/{limit(budget['steps'])}, "
                 f"tokens {budget['tokens_used']}/{limit(budget['tokens'])}, "
                 f"{_cost_text(budget)}"
                 f"time {budget['time_used']:.0f}s/{limit(budget['time'])}s, "
                 f"ticks without progress {budget['no_progress']}/{limit(budget['no_progress_limit'])}")
    return "\n".join(lines) + "\n"


def _cost_text(budget: dict[str, Any]) -> str:
    """The cost part of the budget line, shown once there is a cost budget or a cost."""
    if budget["cost"] is None and not budget["cost_used"]:
        return ""
    limit = "-" if budget["cost"] is None else f"${budget['cost']:g}"
    unpriced = f" + {budget['unpriced_turns']} unpriced turn(s)" if budget["unpriced_turns"] else ""
    return f"cost ${budget['cost_used']:.4f}/{limit}{unpriced}, "


def pause(*, goal_id: str | None) -> int:
    # deferred: ~42 modules and subprocess load only when this action needs them
    from axpipe.goal import goals

    root = workspace.find_root()
    with open_store(root) as store:
        goal, _ = _choose(store, goal_id, None)
        if goal.status in ("complete", "budget_limited"):
            raise InputError(f"goal '{goal.id}' is {goal.status}; only an unfinished goal can be paused")
        goals.set_status(store, goal, "paused", "paused by the user", None)
    sys.stdout.write(f"Goal {goal.id} paused. `axpipe goal resume --goal {goal.id}` continues it.\n")
    return 0


def clear(*, goal_id: str | None) -> int:
    # deferred: ~42 modules and subprocess load only when this action needs them
    from axpipe.goal import goals

    root = workspace.find_root()
    with open_store(root) as store:
        goal, _ = _choose(store, goal_id, None)
        goals.clear(store, root, goal)
    sys.stdout.write(f"Goal {goal.id} cleared (contracts, sessions and receipts removed).\n")
    return 0


def fork(*, goal_id: str | None) -> int:
    # deferred: ~42 modules and subprocess load only when this action needs them
    from axpipe.goal import goals

    root = workspace.find_root()
    with open_store(root) as store:
        goal, session = _choose(store, goal_id, None)
        new_session = goals.start_session(store, goal, root, forked_from=session)
    sys.stdout.write(f"Goal {goal.id}: new session {new_session} under the same contract "
                     f"(forked from {session}); its checks must run again there.\n")
    return 0


def _compose_goal_recipe(root: Path, goal: Any) -> Any:
    """The goal's recipe composed again with the overrides of the run that planned it."""
    # deferred: Hydra and the run's modules load only when this action needs them
    from axpipe.recipe import compose
    from axpipe.recipe.resolve import compose as validate_composed

    project = workspace.load_project(root)
    overrides = [item for item in goal.overrides if not item.startswith("recipe=")]
    config = compose.compose_config(project, goal.recipe, overrides)
    return validate_composed(config, recipe_name=goal.recipe, overrides=overrides, project=project)


def revise(*, correction: str, goal_id: str | None) -> int:
    """A new contract from the edited recipe, linked to the old digest."""
    # deferred: ~42 modules and subprocess load only when this action needs them
    from axpipe.goal import goals

    if not correction.strip():
        raise InputError("revise needs the correction in words: axpipe goal revise \"<correction>\"")
    root = workspace.find_root()
    with open_store(root) as store:
        goal, _ = _choose(store, goal_id, None)
        composed = _compose_goal_recipe(root, goal)
        events = EventLog(goal=goal.id, path=goals.goal_dir(root, goal.id) / "events.jsonl")
        revised, session = goals.revise(store, root, goal, composed.recipe, correction, events)
        events.close()
    sys.stdout.write(f"Goal {revised.id} revised: contract {goal.contract_digest} -> {revised.contract_digest} "
                     f"(\"{correction}\"); new session {session}. Old receipts cannot satisfy it.\n")
    return 0


def resume(*, goal_id: str | None, session_id: str | None, event_log: Path | None, idle_timeout_ms: int) -> int:
    """Drive a goal until it settles; JSONL events on stdout, the last stderr line says how it ended."""
    # deferred: ~42 modules and subprocess load only when this action needs them
    from axpipe.goal import goals

    if idle_timeout_ms <= 0:
        raise InputError(f"--idle-timeout-ms must be a positive number of milliseconds, got {idle_timeout_ms}")
    # deferred: Hydra and the run's modules load only when this action needs them
    from axpipe.run.pipeline import sigterm_interrupts

    root = workspace.find_root()
    # SIGTERM ends the goal's processes as Ctrl-C does (exit 130), instead of killing only
    # this process and leaving the agent or check running.
    with reaper.ends_what_it_starts(), sigterm_interrupts(), open_store(root) as store, \
            RunLock(workspace.state_dir(root), "resume"):
        goal, session = _choose(store, goal_id, session_id)
        goals.refuse_before_reset(goal)  # a usage limit that has not reset yet: nothing would run
        if event_log is not None:
            fingerprint.refuse_judged_output("--event-log", event_log, root, goal.source_paths)
        events = EventLog(goal=goal.id, path=goals.goal_dir(root, goal.id) / "events.jsonl",
                          copy_to=event_log, to_stdout=True)
        code = ExitCode.FAILED
        try:
            code = _drive(store, root, goal, session, events, idle_timeout_ms / 1000)
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the last event says so
            code = ExitCode.INTERRUPTED
            raise
        finally:
            final = goals.load(store, goal.id)
            events.emit("goal.resume_finished", exit_code=int(code),
                        goal_status=final.status if final else "cleared")
            events.close()
            if final is not None:
                sys.stderr.write(f"Goal {final.status}: {final.objective}\n")
    return int(code)


def _drive(store: Store, root: Path, goal: Any, session: str, events: Any, idle_timeout: float) -> ExitCode:
    # deferred: Hydra and the run's modules load only when this action needs them
    from axpipe import process
    from axpipe.goal import goals
    from axpipe.goal.driver import GoalDriver
    from axpipe.goal.goals import Planned
    from axpipe.run import lifecycle
    from axpipe.run.pipeline import new_run_dir, run_id_for, write_record

    if goal.status == "complete":
        # deferred: ~43 modules and subprocess load only when this action needs them
        from axpipe.goal import completion

        if completion.evaluate(store, root, goal, session).complete:  # its receipts still hold on this tree
            return ExitCode.OK
        # The tree changed since the goal completed. As in a re-verifying `axpipe run`, the
        # first pass does no work and runs the checks again; its settle reopens the goal
        # (and the passes go on) only if they no longer pass.
    if goal.status == "budget_limited":
        return ExitCode.BUDGET_LIMITED
    if goal.plan.get("provisional"):  # its plan was parked before any contract was frozen (docs/roles.md)
        raise goals.SessionError(f"goal '{goal.id}' has no plan yet ({goal.status_reason or goal.status}): fix its "
                                 f"task file (axpipe task show {goal.id}) and run `axpipe run recipe={goal.recipe}`, "
                                 "which plans it")
    try:
        composed = _compose_goal_recipe(root, goal)
    except AxpipeError as error:
        raise goals.SessionError(
            f"cannot compose goal '{goal.id}' from recipe '{goal.recipe}': {error.message}") from error
    from axpipe import templates
    from axpipe.recipe.libraries import prompt_folders
    from axpipe.task.files import with_criteria

    with_criteria(root, composed.recipe, goal.id)  # the task file's criteria are part of the contract
    templates.use_library_prompts(prompt_folders(workspace.load_project(root)))  # a team's own prompts first
    goals.refuse_mismatch(store, goal, composed.recipe)
    _restore_contract_file(store, root, goal, events)
    if goal.assured and composed.recipe.goal is not None:
        goals.keep_held_out(root, goal, contract.build(composed.recipe.goal, goal.baseline)[1])
    if goal.status in ("paused", "blocked", "planning"):
        goals.set_status(store, goal, "active", None, events, note="resumed")
    events.emit("goal.resumed", session=session, status=goal.status)
    driver = GoalDriver(store, root, composed.recipe, Planned(goal, session, created=False), events=events,
                        variables=composed.variables)
    # Each pass is a unit as in `axpipe run`: the probe, the scope contract, the gate, the
    # review and the verdicts hold here too. What belongs to a run (repair reports, receipt
    # verification) goes to a run folder of its own, recorded like a run's.
    run_dir = new_run_dir(root, "resume")
    write_record(run_dir, goal.recipe, list(goal.overrides), composed.config)
    context = RunContext(recipe=composed.recipe, config=composed.config, variables=composed.variables, root=root,
                         run_dir=run_dir, run_id=run_id_for(run_dir, root), events=events, store=store,
                         recipe_name=goal.recipe, overrides=list(goal.overrides), driver=driver)
    idle = threading.Event()
    done = threading.Event()

    def watchdog() -> None:
        while not done.wait(0.05):
            if time.monotonic() - events.last_emit > idle_timeout:
                idle.set()
                driver.interrupted = f"goal resume's idle timeout ({idle_timeout:g}s without an event)"
                process.terminate_all()
                return

    guard = threading.Thread(target=watchdog, daemon=True)
    guard.start()
    try:
        probe: list[tuple[str, Phase]] = [("probe", lifecycle.probe_phase)]
        passes = [*(probe if composed.recipe.probe is not None else []), *lifecycle.UNIT_PHASES]
        while True:
            for name, phase in passes:
                result = lifecycle.run_phase(context, name, phase)
                if idle.is_set():
                    events.emit("goal.idle_timeout", seconds=idle_timeout)
                    return ExitCode.IDLE_TIMEOUT
                if result.stop is not None:
                    if result.status == "error":
                        sys.stderr.write(f"axpipe: {name}: {result.summary}\n")
                    return result.stop
    finally:
        done.set()
        guard.join()


def _restore_contract_file(store: Store, root: Path, goal: Any, events: Any) -> None:
    """A contract.json deleted or edited by hand is written again from the store, and said."""
    # deferred: ~39 modules and subprocess load only when this action needs them
    from axpipe.goal import frozen

    restored = frozen.restore_file(store, root, goal)
    if restored is not None:
        events.emit("goal.warning", warning=restored)
        sys.stderr.write(f"axpipe: warning: {restored}\n")


def verify(*, check_id: str, goal_id: str | None, session_id: str | None, as_json: bool) -> int:
    """Run one frozen check and record its receipt: 0 passed, 1 failed or an error receipt, 2 unknown
    check, 5 an error receipt because the check's program is not there (environment not ready)."""
    # deferred: Hydra and the run's modules load only when this action needs them
    from axpipe.goal import goals, receipts
    from axpipe.run.pipeline import sigterm_interrupts

    root = workspace.find_root()
    with sigterm_interrupts(), open_store(root) as store:  # SIGTERM: the check is ended, not orphaned
        goal, session = _choose(store, goal_id, session_id)
        events = EventLog(goal=goal.id, path=goals.goal_dir(root, goal.id) / "events.jsonl")
        _restore_contract_file(store, root, goal, events)
        try:
            receipt = receipts.verify(store, root, goal, session, check_id, events=events)
        finally:
            events.close()
    if as_json:
        sys.stdout.write(json.dumps({"receipt": receipt.id, "check": receipt.check_id, "status": receipt.status,
                                     "exit_code": receipt.exit_code, "summary": receipt.summary,
                                     "fingerprint": receipt.fingerprint,
                                     "fingerprint_reason": receipt.fingerprint_reason}, indent=2) + "\n")
    else:
        fresh = receipt.fingerprint[:12] if receipt.fingerprint else receipt.fingerprint_reason
        sys.stdout.write(f"{receipt.check_id}: {receipt.status} ({receipt.summary}); receipt {receipt.id}; "
                         f"source {fresh}\n")
    if receipt.status == "passed":
        return int(ExitCode.OK)
    if receipt.status == "error" and receipt.missing_program is not None:
        return int(ExitCode.ENVIRONMENT)
    # failed, or an error that is not the environment's (a plugin fault, a report that could
    # not be read): 1, "error, or a check's assertion failed" (DESIGN §11); never 5, which
    # promises the probe's "nothing ran", while this check ran and left a receipt
    return int(ExitCode.FAILED)
