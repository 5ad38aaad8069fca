"""``axpipe schedule add|list|show|runs|pause|resume|delete|run``.

Read commands never create the store and never claim due tasks (only a runtime backend
does); ``--json`` output has the shapes of DESIGN §13.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from axpipe import clock, workspace
from axpipe.duration import format_duration
from axpipe.errors import AxpipeError, ExitCode, InputError, not_found_message
from axpipe.recipe import libraries as recipes
from axpipe.store import Store
from axpipe.store import schedule as queries

LATEST = 5
_RUN_STATUS = {"queued": "fired", "starting": "fired", "running": "fired"}


def _store_path(root: Path) -> Path:
    return workspace.store_path(root)


def _existing_store() -> Store | None:
    """The project store when there is one; read commands must not create it."""
    path = _store_path(workspace.find_root())
    return Store(path) if path.exists() else None


def _emit(payload: Any) -> None:
    json.dump(payload, sys.stdout, indent=2)
    sys.stdout.write("\n")


def _short(value: str | None) -> str | None:
    return clock.short_iso(clock.parse_iso(value)) if value else None


def _local(value: str | None, tz: str) -> str:
    if not value:
        return "-"
    # deferred: ~10 modules load only when this action needs them
    from axpipe.schedule.timing import zone

    return clock.parse_iso(value).astimezone(zone(tz)).strftime("%Y-%m-%d %H:%M %Z")


def task_json(task: dict[str, Any]) -> dict[str, Any]:
    """A task as ``schedule list --json`` shows it (DESIGN §13)."""
    return {"id": task["id"], "title": task["title"], "status": task["status"],
            "schedule": f"{task['kind']} {task['expression']}", "tz": task["tz"],
            "next_run": _short(task["next_run"]), "catch_up": task["catch_up"]}


def run_json(run: dict[str, Any]) -> dict[str, Any]:
    """A run as ``schedule runs --json`` shows it (DESIGN §13, plus documented additions)."""
    return {"id": run["id"], "task": run["task_id"], "scheduled_for": _short(run["scheduled_for"]),
            "status": _RUN_STATUS.get(run["status"], run["status"]), "reason": run["reason"],
            "started_at": _short(run["started_at"]), "finished_at": _short(run["finished_at"]),
            "state": run["status"], "folded": run["folded"], "trigger": run["trigger"],
            "exit_code": run["exit_code"], "log": run["log"]}


def _task_or_fail(store: Store | None, task_id: str) -> dict[str, Any]:
    task = queries.get_task(store, task_id) if store is not None else None
    if task is None:
        known = [row["id"] for row in queries.list_tasks(store)] if store is not None else []
        raise InputError(not_found_message("scheduled task", task_id, known))
    return task


def add_task(*, kind: str, expression: str, tz: str | None, recipe: str, overrides: list[str],
             title: str | None, catch_up: str, max_run_duration: str, grace: str, task_id: str | None) -> int:
    """Validate a task completely, then store it; exit 2 and nothing written when it is refused."""
    # deferred: ~10 modules load only when this action needs them
    from axpipe.schedule import tasks

    root = workspace.find_root()
    now = clock.now()
    spec = tasks.from_flags(kind=kind, expression=expression, tz=tz, recipe=recipe, overrides=overrides,
                            title=title, catch_up=catch_up, grace=grace, max_run_duration=max_run_duration,
                            task_id=task_id, now=now)
    try:
        recipes.find(workspace.load_project(root), recipe)
    except InputError as error:
        raise InputError(f"--recipe: {error.message}; nothing was written") from None
    _refuse_what_would_not_run(root, recipe, overrides)
    workspace.ensure_state_dir(root)
    with Store(_store_path(root)) as store:
        row = tasks.add(store, spec, now)
        # deferred: ~5 modules and subprocess load only when this action needs them
        from axpipe.runtime.liveness import live_backends

        alive = bool(live_backends(store))
    command = " ".join(["axpipe run", f"recipe={recipe}", *overrides])
    sys.stdout.write(f"added task {row['id']}: {spec.schedule.describe()} ({spec.schedule.tz}), next run "
                     f"{_local(row['next_run'], spec.schedule.tz)}; runs `{command}`\n")
    if not alive:
        sys.stdout.write("No runtime backend is running for this project: tasks fire only while one runs "
                         "(`axpipe runtime start`).\n")
    return 0


def _refuse_what_would_not_run(root: Path, recipe: str, overrides: list[str]) -> None:
    """InputError when ``axpipe run recipe=RECIPE OVERRIDES`` would be refused at composition:
    a task that fails every time it fires is not registered (this composes the recipe, so
    it imports Hydra; only ``add`` does)."""
    # deferred: Hydra and the run's modules load only when this action needs them
    from axpipe.recipe import resolve
    from axpipe.schedule import targets

    found = targets.problems(root, recipe, overrides, resolve.compose)
    lines = [message if index is not None else f"--recipe: {message}" for index, message in found]
    if len(lines) == 1:
        raise InputError(f"{lines[0]}; nothing was written")
    if lines:
        listing = "\n".join(f"  - {line}" for line in lines)
        raise InputError(f"the task would fail every time it fires ({len(lines)} problems):\n{listing}\n"
                         "Nothing was written.")


def list_tasks(*, as_json: bool) -> int:
    store = _existing_store()
    rows = queries.list_tasks(store) if store is not None else []
    if as_json:
        _emit([task_json(row) for row in rows])
        return 0
    if not rows:
        sys.stdout.write("No scheduled tasks. Add one with `axpipe schedule add` or a recipe's `schedule:`.\n")
        return 0
    table = [["STATUS", "NEXT RUN", "SCHEDULE", "ID", "TITLE"]]
    table += [[row["status"], _local(row["next_run"], row["tz"]),
               f"{row['kind']} {row['expression']} ({row['tz']})", row["id"], row["title"]] for row in rows]
    _table(table)
    return 0


def show_task(*, task_id: str, as_json: bool) -> int:
    store = _existing_store()
    task = _task_or_fail(store, task_id)
    assert store is not None
    runs = queries.list_runs(store, task_id, LATEST)
    total = queries.count_runs(store, task_id)
    overrides = json.loads(task["overrides"])
    if as_json:
        detail = {**task_json(task), "recipe": task["recipe"], "overrides": overrides, "grace": task["grace"],
                  "max_run_duration": task["max_run_duration"], "source": task["source"],
                  "status_reason": task["status_reason"], "consecutive_failures": task["consecutive_failures"],
                  "backoff_until": _short(task["backoff_until"]), "created_at": _short(task["created_at"]),
                  "updated_at": _short(task["updated_at"])}
        _emit({"task": detail, "runs": [run_json(run) for run in runs], "runs_total": total})
        return 0

    status = task["status"] + (f" ({task['status_reason']})" if task["status_reason"] else "")
    backoff = f", backing off until {_short(task['backoff_until'])}" if task["backoff_until"] else ""
    lines = [
        f"task {task['id']}" + (f": {task['title']}" if task["title"] else ""),
        f"  status:            {status}",
        f"  schedule:          {task['kind']} {task['expression']} in {task['tz']}",
        f"  next run:          {_local(task['next_run'], task['tz'])}"
        + (f" ({_short(task['next_run'])})" if task["next_run"] else ""),
        f"  runs:              {' '.join(['axpipe run', 'recipe=' + task['recipe'], *overrides])}",
        f"  catch-up:          {task['catch_up']}, grace {format_duration(task['grace'])}",
        f"  max run duration:  {format_duration(task['max_run_duration'])}",
        f"  failures in a row: {task['consecutive_failures']}{backoff}",
        f"  registered by:     {task['source']}",
        f"latest runs ({len(runs)} of {total}):" if runs else "no runs yet",
    ]
    sys.stdout.write("\n".join(lines) + "\n")
    if runs:
        _runs_table(runs, indent="  ")
    return 0


def task_runs(*, task_id: str, as_json: bool, limit: int | None) -> int:
    if limit is not None and limit < 1:
        raise InputError(f"--limit: expected a positive number, got {limit}")
    store = _existing_store()
    _task_or_fail(store, task_id)
    assert store is not None
    runs = queries.list_runs(store, task_id, limit)
    if as_json:
        _emit([run_json(run) for run in runs])
        return 0
    if not runs:
        sys.stdout.write(f"task {task_id} has no runs yet\n")
        return 0
    _runs_table(runs)
    return 0


def control(*, action: str, task_id: str) -> int:
    """pause, resume, delete or run: through a live backend, else directly (run needs one)."""
    # deferred: ~16 modules and subprocess load only when this action needs them
    from axpipe.schedule.control import submit

    store = _existing_store()
    _task_or_fail(store, task_id)
    assert store is not None
    answer = submit(store, action, task_id)
    via = f" (through backend {answer.backend})" if answer.backend else " (no live backend: written to the store)"
    if answer.exit_code != 0:
        raise AxpipeError(answer.message, exit_code=ExitCode(answer.exit_code))
    sys.stdout.write(f"{answer.message}{via}\n")
    return 0


def _runs_table(runs: list[dict[str, Any]], indent: str = "") -> None:
    table = [["RUN", "STATUS", "SCHEDULED FOR", "STARTED", "FINISHED", "REASON"]]
    for run in runs:
        status = _RUN_STATUS.get(run["status"], run["status"])
        if status != run["status"]:
            status = f"{status} ({run['status']})"
        if run["folded"] > 1:
            status += f" x{run['folded']}"
        table.append([str(run["id"]), status, _short(run["scheduled_for"]) or "-", _short(run["started_at"]) or "-",
                      _short(run["finished_at"]) or "-", run["reason"] or ""])
    _table(table, indent)


def _table(rows: list[list[str]], indent: str = "") -> None:
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]) - 1)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)] + [row[-1]]
        sys.stdout.write(indent + "  ".join(cells).rstrip() + "\n")
