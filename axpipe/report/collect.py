"""Everything ``axpipe report`` shows, as one JSON-ready mapping (``axpipe report --json``).

The HTML pages are drawn from exactly this data, so a dashboard reading the JSON sees what
a person sees. Field by field in docs/report.md. A check's state is the completion gate's
own judgement (:func:`axpipe.goal.completion.evaluate`: passed, failed, stale, running,
missing), never recomputed here: the report must not call passed what ``goal status``
would not.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from axpipe.errors import AxpipeError
from axpipe.goal import completion
from axpipe.goal.goals import Goal, folder_name
from axpipe.report import folders
from axpipe.store import Store, now_iso
from axpipe.store import report as sql
from axpipe.unit.closing import checks_of, criteria

SCHEMA = 1
RECENT_RUNS = 20
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def slug(kind: str, name: str) -> str:
    """A page's file name for ``name``: readable, safe on every file system, and distinct for
    names that differ only in characters it had to replace."""
    cleaned = _UNSAFE.sub("-", name).strip("-.")[:60] or kind
    if cleaned != name:
        cleaned += "-" + hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return f"{kind}-{cleaned}.html"


def collect(store: Store, root: Path, *, since: str = "") -> dict[str, Any]:
    """The whole report's data for the project at ``root`` (``since``: an ISO date or time)."""
    state = root / ".axpipe"
    runs = sql.runs(store, since)
    receipts = sql.receipts(store, since)
    goals = _goals(store, root, state, receipts)
    schedules = _schedules(store, since)
    newest_dir: dict[str, Path] = {}
    for run in reversed(runs):  # oldest first, so the newest run of each recipe wins
        newest_dir[run["recipe"]] = Path(run["run_dir"])
    repairs = folders.repairs(state, since)
    gates = folders.gates(state, since)
    for entry in repairs:
        entry["page"] = slug("repair", entry["path"])
    for entry in gates:
        entry["page"] = slug("gate", entry["path"])
    return {
        "schema": SCHEMA,
        "generated_at": now_iso(),
        "project": str(root),
        "since": since or None,
        "overview": _overview(runs, goals, schedules),
        "runs": [_run(run) for run in runs],
        "goals": goals,
        "repairs": repairs,
        "gates": gates,
        "reviews": folders.reviews(state),
        "schedules": schedules,
        "coverage": folders.coverage(newest_dir),
        "trend": _trend(receipts),
    }


def _run(row: dict[str, Any]) -> dict[str, Any]:
    keys = ("id", "recipe", "status", "exit_code", "started_at", "finished_at", "summary", "run_dir")
    return {key: row[key] for key in keys}


def _goals(store: Store, root: Path, state: Path, receipts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    sessions = sql.latest_sessions(store)
    contracts: dict[str, list[dict[str, Any]]] = {}
    for row in sql.contracts(store):
        contracts.setdefault(row["goal_id"], []).append(row)
    units: dict[str, list[dict[str, Any]]] = {}
    for row in sql.units(store):
        units.setdefault(row["goal_id"], []).append(row)
    history: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in receipts:
        history.setdefault((row["goal_id"], row["check_id"]), []).append(row)
    out = []
    for row in sql.goals(store):
        goal = Goal.from_row(row)
        out.append(_goal(store, root, state, goal, row, sessions.get(goal.id), contracts.get(goal.id, []),
                         units.get(goal.id, []), history))
    return out


def _states(store: Store, goal: Goal, session: str | None) -> tuple[dict[str, completion.CheckState], str | None]:
    """The completion gate's state of each check in the latest session, or why there is none."""
    if session is None:
        return {}, "no session yet"
    try:
        judged = completion.evaluate(store, Path(goal.workspace), goal, session)
    except (AxpipeError, OSError) as error:
        return {}, f"cannot judge the checks: {error}"
    return {state.id: state for state in judged.checks}, None


def _goal(store: Store, root: Path, state: Path, goal: Goal, row: dict[str, Any], session: str | None,
          contracts: list[dict[str, Any]], units: list[dict[str, Any]],
          history: dict[tuple[str, str], list[dict[str, Any]]]) -> dict[str, Any]:
    states, not_judged = _states(store, goal, session)
    checks = []
    for check in goal.checks:
        judged = states.get(check["id"])
        past = [_receipt(receipt) for receipt in history.get((goal.id, check["id"]), [])]
        checks.append({
            "id": check["id"], "kind": check.get("kind", "command"), "held_out": bool(check.get("held_out")),
            "command": None if check.get("held_out") else _command(check.get("command")),
            "acceptance": check.get("acceptance") or [],
            "status": judged.status if judged else "unknown",
            "reason": judged.reason if judged else (not_judged or "not judged"),
            "receipt": judged.receipt if judged else None,
            "fingerprint": next((item["fingerprint"] for item in reversed(past)
                                 if judged and item["id"] == judged.receipt), None),
            "history": past,
        })
    acceptance = [{"id": criterion_id, "tag": criterion.get("tag"), "text": criterion.get("text"),
                   "checks": checks_of(goal, criterion_id, criterion)} for criterion_id, criterion in criteria(goal)]
    current = next((item for item in contracts if item["digest"] == goal.contract_digest), None)
    return {
        "id": goal.id, "page": slug("goal", goal.id), "objective": goal.objective, "recipe": goal.recipe,
        "status": goal.status, "status_reason": goal.status_reason, "assured": goal.assured,
        "blocked": goal.blocked, "contract_digest": goal.contract_digest, "baseline": goal.baseline,
        "workspace": goal.workspace, "session": session, "variables": goal.variables,
        "bounces": row.get("bounces", 0), "created_at": row["created_at"], "updated_at": row["updated_at"],
        "budget": {"limits": goal.budget, "tokens_used": goal.tokens_used, "time_used": goal.time_used,
                   "steps_used": goal.steps_used},
        "contract": json.loads(current["canonical"]) if current else None,
        "contract_history": [{"digest": item["digest"], "revises": item["revises"], "correction": item["correction"],
                              "created_at": item["created_at"]} for item in contracts],
        "acceptance": acceptance,
        "checks": checks,
        "units": [{"number": unit["number"], "status": unit["status"], "reason": unit["reason"],
                   "verdicts": [{key: verdict.get(key) for key in ("role", "name", "verdict", "trace", "reason")}
                                for verdict in json.loads(unit["verdicts"] or "[]") if isinstance(verdict, dict)],
                   "started_at": unit["started_at"],
                   "finished_at": unit["finished_at"], "quarantine_stash": unit["stash"]} for unit in units],
        "qa_report": folders.qa_report(state, folder_name(goal.id)),
    }


def _command(command: Any) -> str | None:
    if command is None:
        return None
    return command if isinstance(command, str) else " ".join(str(word) for word in command)


def _receipt(row: dict[str, Any]) -> dict[str, Any]:
    held_out = bool(row["held_out"])
    return {"id": row["id"], "session": row["session_id"], "status": row["status"], "exit_code": row["exit_code"],
            "summary": row["summary"], "fingerprint": row["fingerprint"],
            "fingerprint_reason": row["fingerprint_reason"], "started_at": row["started_at"],
            "finished_at": row["finished_at"], "artifacts": [] if held_out else json.loads(row["artifacts"] or "[]")}


def _schedules(store: Store, since: str) -> list[dict[str, Any]]:
    runs: dict[str, list[dict[str, Any]]] = {}
    for run in sql.schedule_runs(store, since):
        runs.setdefault(run["task_id"], []).append(run)
    out = []
    for task in sql.schedule_tasks(store):
        keys = ("id", "title", "status", "status_reason", "kind", "expression", "tz", "recipe", "catch_up",
                "next_run", "consecutive_failures", "backoff_until", "max_run_duration", "grace")
        entry = {key: task[key] for key in keys}
        entry["page"] = slug("schedule", task["id"])
        entry["overrides"] = json.loads(task["overrides"] or "[]")
        entry["runs"] = runs.get(task["id"], [])
        entry["run_counts"] = dict(Counter(run["status"] for run in entry["runs"]))
        out.append(entry)
    return out


def _overview(runs: list[dict[str, Any]], goals: list[dict[str, Any]],
              schedules: list[dict[str, Any]]) -> dict[str, Any]:
    failing = [{"goal": goal["id"], "page": goal["page"], "check": check["id"], "status": check["status"],
                "reason": check["reason"]}
               for goal in goals for check in goal["checks"] if check["status"] != "passed"]
    due = sorted((task for task in schedules if task["status"] == "active" and task["next_run"]),
                 key=lambda task: task["next_run"])
    return {
        "goals_by_status": dict(sorted(Counter(goal["status"] for goal in goals).items())),
        "runs_total": len(runs),
        "runs_by_status": dict(sorted(Counter(run["status"] for run in runs).items())),
        "last_runs": [_run(run) for run in runs[:RECENT_RUNS]],
        "failing_checks": failing,
        "schedules_due": [{"id": task["id"], "title": task["title"], "next_run": task["next_run"],
                           "page": task["page"]} for task in due],
    }


def _trend(receipts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Receipts per day: how many checks ran and how many passed."""
    days: dict[str, Counter[str]] = {}
    for row in receipts:
        days.setdefault(row["started_at"][:10], Counter())[row["status"]] += 1
    return [{"day": day, "passed": counts["passed"], "total": sum(counts.values())}
            for day, counts in sorted(days.items())]
