"""``axpipe loop start|status|stop``: loops that live in the process running them.

``loop start`` is ``axpipe run`` of a goal's recipe (or ``--recipe NAME``) with the loop
given on the command line, in the foreground of this process. ``status`` and ``stop`` read
and write the loop's row in the project store; they never import Hydra.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

from axpipe import workspace
from axpipe.clock import timings
from axpipe.duration import DurationError, format_duration, parse_duration
from axpipe.errors import AxpipeError, InputError
from axpipe.goal import fingerprint
from axpipe.loop.text import render_status
from axpipe.recipe import schema
from axpipe.recipe import typed as validation
from axpipe.store import Store
from axpipe.store import loops as queries

_WAIT_POLL = 0.05


def _store(root: Path) -> Store | None:
    path = workspace.store_path(root)
    return Store(path) if path.is_file() else None


def alive(row: dict[str, Any], now_real: float | None = None) -> bool:
    """Whether the loop of ``row`` still runs: not ended, heartbeat fresh, and (on this host) its pid."""
    # deferred: ~7 modules and subprocess load only when this action needs them
    from axpipe.runtime.liveness import HOST, fresh
    from axpipe.runtime.processes import pid_alive

    if row["status"] != "running":
        return False
    if not fresh(row["heartbeat_real"], time.time() if now_real is None else now_real, timings()):
        return False
    return row["host"] != HOST or pid_alive(int(row["pid"]))


def starting(row: dict[str, Any]) -> bool:
    """Whether the loop of ``row`` is registered but has not ticked yet: its run's probe or
    plan is running (a loop registers as soon as its run holds the checkout)."""
    return row["tick"] is None and row["last_tick"] is None and row["next_tick_at"] is None


def live_loop(store: Store) -> dict[str, Any] | None:
    """The loop running in this checkout, if any (it holds the run lock, so there is one at most)."""
    return next((row for row in queries.running_loops(store) if alive(row)), None)


# -- start ------------------------------------------------------------------------------


def _interval(text: str) -> float:
    import dataclasses

    try:
        seconds = parse_duration(text)
    except DurationError as error:
        raise InputError(f"INTERVAL: {error}") from None
    meta = next(item.metadata for item in dataclasses.fields(schema.Loop) if item.name == "interval")
    low, high = validation.bounds(meta)
    if seconds < low:
        raise InputError(f"INTERVAL: {text} is below the minimum {format_duration(low)}")
    if seconds > high:
        raise InputError(f"INTERVAL: {text} is above the maximum {format_duration(high)}")
    return seconds


def hydra_quote(text: str) -> str:
    """``text`` as a quoted Hydra override value that composes back to exactly ``text``.

    In a quoted value backslashes are literal, except a run of them before a quote, before
    ``${`` or at the end: such a run is doubled and the quote or ``${`` escaped, so a prompt
    can hold quotes, backslashes and ``${...}`` without Hydra reading them.
    """
    text = re.sub(r"(\\*)'", lambda match: match.group(1) * 2 + "\\'", text)
    text = re.sub(r"(\\*)\$\{", lambda match: match.group(1) * 2 + "\\${", text)
    text = re.sub(r"(\\+)$", lambda match: match.group(1) * 2, text)
    return f"'{text}'"


def loop_overrides(*, interval: str, prompt: str | None, command: str | None, max_runs: int) -> list[str]:
    """The overrides that make a recipe's ``loop:`` the one given on the command line."""
    return [f"++loop.interval={hydra_quote(interval)}",
            f"++loop.prompt={'null' if prompt is None else hydra_quote(prompt)}",
            f"++loop.command={'null' if command is None else hydra_quote(command)}",
            f"++loop.max_runs={max_runs}"]


def _goal_recipe(root: Path, goal_id: str | None) -> tuple[str, list[str]]:
    """The recipe and overrides of the goal to loop on (``--goal``, else the only resumable one)."""
    # deferred: ~41 modules and subprocess load only when this action needs them
    from axpipe.goal import goals

    store = _store(root)
    if store is None:
        raise InputError(f"no goal to loop on in {root}: give --recipe NAME, or plan a goal first with "
                         "`axpipe run recipe=NAME`")
    with store:
        try:
            goal, _ = goals.choose(store, goal_id, None)
        except goals.SessionError as error:  # nothing ran yet: an input error, like any bad argument
            raise InputError(error.message.replace(" or --session ID", "")) from None  # loop start has no --session
    kept = []
    for override in goal.overrides:
        key = override.split("=", 1)[0].lstrip("+~")
        if key not in ("recipe", "loop") and not key.startswith(("loop.", "hydra.")):
            kept.append(override)
    return goal.recipe, kept


def _check_recipe(root: Path, name: str, overrides: list[str], event_log: str | None) -> None:
    """Compose and validate the new loop's recipe, its ``--event-log`` and its goal's frozen
    contract and budget, as `axpipe run` will: a loop that would be refused must not stop
    the running one."""
    # deferred: Hydra and the run's modules load only when this action needs them
    from axpipe.recipe import compose
    from axpipe.recipe.resolve import compose as validate
    from axpipe.run.pipeline import refuse_before_start

    project = workspace.load_project(root)
    composed = validate(compose.compose_config(project, name, overrides), recipe_name=name, overrides=overrides,
                        project=project)
    goal = composed.recipe.goal
    if event_log is not None and goal is not None and not composed.recipe.workspace.sample:
        fingerprint.refuse_judged_output("--event-log", Path(event_log).resolve(), root, goal.source_paths)
    refuse_before_start(composed, recipe_name=name, invocation_root=root, spent_too=True)


def _replace_running(root: Path, name: str, overrides: list[str], event_log: str | None) -> None:
    """One loop per checkout: ask the running one to stop after its tick, and wait for it."""
    store = _store(root)
    if store is None:
        return
    with store:
        row = live_loop(store)
        if row is None:
            return
        _check_recipe(root, name, overrides, event_log)
        queries.request_stop(store, row["id"], f"replaced by a new loop (`axpipe loop start`, pid {os.getpid()})",
                             now=False)
        sys.stderr.write(f"Replacing loop {row['id']} (pid {row['pid']}): it stops after its tick in progress.\n")
        while (fresh := queries.get_loop(store, row["id"])) is not None and alive(fresh):
            time.sleep(_WAIT_POLL)
    _wait_for_exit(row)
    sys.stderr.write(f"Loop {row['id']} stopped.\n")


def _wait_for_exit(row: dict[str, Any], limit: float = 30.0) -> None:
    """The loop records its end just before its run releases the checkout: wait for its
    process to be gone too (on this host), so the new loop finds the run lock free."""
    # deferred: ~7 modules and subprocess load only when this action needs them
    from axpipe.runtime.liveness import HOST
    from axpipe.runtime.processes import pid_alive

    give_up = time.monotonic() + limit
    while row["host"] == HOST and pid_alive(int(row["pid"])) and time.monotonic() < give_up:
        time.sleep(_WAIT_POLL)


def start(*, interval: str, prompt: str | None, command: str | None, goal_id: str | None, recipe: str | None,
          max_runs: int, as_json: bool, event_log: str | None) -> int:
    """Run a loop in the foreground until the goal settles, ``loop stop``, the cap or a signal."""
    # deferred: ~13 modules and subprocess load only when this action needs them
    from axpipe.loop.engine import HARD_CAP

    _interval(interval)
    if (prompt is None) == (command is None):
        raise InputError("give the tick's PROMPT or --command CMD (one of them)")
    if prompt is not None and not prompt.strip():
        raise InputError("PROMPT is empty")
    if command is not None and not command.strip():
        raise InputError("--command is empty")
    if not 1 <= max_runs <= HARD_CAP:
        raise InputError(f"--max-runs: {max_runs} is outside 1..{HARD_CAP} (the hard cap is {HARD_CAP} runs)")
    if event_log is not None:  # before a running loop is asked to make way for this one
        workspace.output_path(event_log, "--event-log")
    root = workspace.find_root()
    overrides: list[str] = []
    if recipe is not None:
        name = recipe
    else:
        name, overrides = _goal_recipe(root, goal_id)
    overrides += loop_overrides(interval=interval, prompt=prompt, command=command, max_runs=max_runs)
    arguments = [f"recipe={name}", *overrides]
    if as_json:
        arguments.append("--json")
    if event_log is not None:
        arguments += ["--event-log", event_log]
    # deferred: Hydra and the run's modules load only when this action needs them
    from axpipe.run import app as hydra_app
    from axpipe.run.pipeline import sigterm_interrupts

    # From here on the command waits or runs in the foreground: SIGHUP (the terminal
    # closed) and SIGTERM end it as Ctrl-C does (exit 130), while it waits for the loop it
    # replaces (which is left stopping) and while Hydra composes. Once the run holds the
    # checkout its loop takes SIGTERM as `loop stop --now`, and SIGHUP still interrupts it,
    # its end reason naming the signal.
    with sigterm_interrupts():
        _replace_running(root, name, overrides, event_log)
        return hydra_app.main(arguments)


# -- status and stop --------------------------------------------------------------------


def describe(row: dict[str, Any], now_real: float | None = None) -> dict[str, Any]:
    """A loop row as ``loop status --json`` shows it."""
    moment = time.time() if now_real is None else now_real
    running = alive(row, moment)
    state = ("stopping" if row["stop_requested"] else "running") if running else \
        ("ended" if row["status"] == "ended" else "died")
    end_reason = row["end_reason"]
    if state == "died":
        end_reason = (f"its process (pid {row['pid']} on {row['host']}) ended without recording an end: "
                      "a loop lives only in the process that runs it")
    return {
        "id": row["id"], "state": state, "pid": row["pid"], "host": row["host"], "recipe": row["recipe"],
        "goal": row["goal_id"], "session": row["session_id"], "run": row["run_id"], "interval": row["interval"],
        "prompt": row["prompt"], "command": json.loads(row["command"]) if row["command"] else None,
        "max_runs": row["max_runs"], "runs": row["runs"], "busy_skips": row["busy_skips"],
        "tick": {"n": row["tick"], "started_at": row["tick_started_at"]} if row["tick"] is not None else None,
        "last_tick": {"n": row["last_tick"], "status": row["last_status"], "summary": row["last_summary"],
                      "finished_at": row["last_finished_at"]} if row["last_tick"] is not None else None,
        "next_tick_at": row["next_tick_at"] if running else None, "started_at": row["started_at"],
        "heartbeat_age": round(moment - row["heartbeat_real"], 3), "stop_requested": row["stop_requested"],
        "ended_at": row["ended_at"], "end_reason": end_reason,
    }


def status(*, as_json: bool) -> int:
    """The loop running in this checkout (exit 0), or none (exit 1) and how the last one ended."""
    root = workspace.find_root()
    store = _store(root)
    rows = queries.list_loops(store) if store is not None else []
    if store is not None:
        store.close()
    now_real = time.time()
    described = [describe(row, now_real) for row in rows]
    current = next((item for item in described if item["state"] in ("running", "stopping")), None)
    last = next((item for item in described if item is not current), None)
    if as_json:
        sys.stdout.write(json.dumps({"running": current is not None, "loop": current, "last": last}, indent=2) + "\n")
        return 0 if current else 1

    sys.stdout.write(render_status(root, current, last))
    return 0 if current else 1


def stop(*, now: bool, timeout: str) -> int:
    """Ask the running loop to stop (after its tick, or ``--now``) and wait up to ``timeout``."""
    try:
        wait = parse_duration(timeout)
    except DurationError as error:
        raise InputError(f"--timeout: {error}") from None
    root = workspace.find_root()
    store = _store(root)
    row = live_loop(store) if store is not None else None
    if store is None or row is None:
        sys.stdout.write(f"No loop is running in {root}; nothing to stop.\n")
        if store is not None:
            store.close()
        return 0
    with store:
        reason = "requested by `axpipe loop stop" + (" --now`" if now else "`")
        queries.request_stop(store, row["id"], reason, now=now)
        give_up = time.monotonic() + wait
        while (fresh := queries.get_loop(store, row["id"])) is not None and alive(fresh):
            if time.monotonic() >= give_up:
                break
            time.sleep(_WAIT_POLL)
    if fresh is not None and alive(fresh):
        if now:
            raise AxpipeError(f"loop {row['id']} (pid {row['pid']}) did not stop within {format_duration(wait)}; "
                              "it may be hung: end its process with SIGTERM")
        if starting(fresh):
            sys.stdout.write(f"Loop {row['id']} (pid {row['pid']}) is still in its run's probe or plan; it stops "
                             "when that step ends, before its first tick.\n")
            return 0
        tick = f"tick {fresh['tick']} running since {fresh['tick_started_at']}" if fresh["tick"] else "its tick"
        sys.stdout.write(f"Loop {row['id']} (pid {row['pid']}) will stop when its tick in progress ends ({tick}); "
                         "`axpipe loop stop --now` ends the tick too.\n")
        return 0
    ended = fresh or row
    sys.stdout.write(f"Stopped loop {row['id']} (pid {row['pid']}) after {ended['runs']} run(s), "
                     f"{ended['busy_skips']} busy-skip(s).\n")
    return 0
