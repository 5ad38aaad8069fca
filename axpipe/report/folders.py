"""What the report reads from files rather than the store: repair and gate reports, review
rounds, ``qa-report.md`` and the migration coverage a run's events carry.

Every reader tolerates what a crash or an older axpipe can leave behind (a half-written
JSON file, a folder without its report): such a file is listed with the reason it could not
be read, never silently dropped and never guessed at.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from axpipe.review.verdicts import VerdictProblem, parse_output

Found = dict[str, Any]
_REPAIR_KEYS = ("target", "condition", "budget", "status", "iterations_used", "final_diff", "not_validated", "reason",
                "discarded", "applied", "next_step")
_ITERATION_KEYS = ("n", "command", "exit_code", "oracle_line", "result", "diagnosis", "fix", "guard", "phase")
_GATE_KEYS = ("baseline", "baseline_given", "head", "narrow", "status", "summary", "changed_files", "changed_lines")


def _mtime(path: Path) -> str:
    stamp = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    return stamp.isoformat(timespec="seconds").replace("+00:00", "Z")


def _load(path: Path) -> dict[str, Any] | str:
    """A report's JSON, or why it cannot be read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        return f"cannot read {path.name}: {error}"
    return data if isinstance(data, dict) else f"{path.name} is not a JSON object"


def _relative(path: Path, state: Path) -> str:
    return os.path.relpath(path, state)


def repairs(state: Path, since: str) -> list[Found]:
    """Every repair report under ``.axpipe/runs/`` (``report.json``, ``report-<n>.json``), newest first."""
    found: list[Found] = []
    for path in sorted((state / "runs").rglob("report*.json")):
        when = _mtime(path)
        if when < since:
            continue
        data = _load(path)
        if isinstance(data, dict) and "iterations" not in data:
            continue  # another kind of report in a run folder (a gate's)
        # Every entry has every key (None when unread), so pages and dashboards need no guessing.
        readable = data if isinstance(data, dict) else {}
        entry: Found = {"path": _relative(path, state), "written_at": when,
                        "error": data if isinstance(data, str) else None}
        entry.update({key: readable.get(key) for key in _REPAIR_KEYS})
        entry["iterations"] = [_iteration(item) for item in readable.get("iterations") or [] if isinstance(item, dict)]
        entry["guard_rejections"] = sum(1 for item in entry["iterations"] if item.get("guard"))
        found.append(entry)
    return sorted(found, key=lambda entry: entry["written_at"], reverse=True)


def _iteration(item: dict[str, Any]) -> Found:
    return {key: item.get(key) for key in _ITERATION_KEYS} | {"evidence": item.get("evidence") or []}


def gates(state: Path, since: str) -> list[Found]:
    """Every gate report: ``axpipe gate`` runs (``.axpipe/gate/``) and units' gates (artifacts)."""
    paths = [*(state / "gate").glob("*/report.json"), *(state / "artifacts").glob("*/gate/*/report.json")]
    found: list[Found] = []
    for path in sorted(paths):
        when = _mtime(path)
        if when < since:
            continue
        data = _load(path)
        readable = data if isinstance(data, dict) else {}
        entry: Found = {"path": _relative(path, state), "written_at": when,
                        "error": data if isinstance(data, str) else None}
        entry.update({key: readable.get(key) for key in _GATE_KEYS})
        entry["phases"] = [_phase(phase) for phase in readable.get("phases") or [] if isinstance(phase, dict)]
        found.append(entry)
    return sorted(found, key=lambda entry: entry["written_at"], reverse=True)


def _phase(phase: dict[str, Any]) -> Found:
    items = [{key: item.get(key) for key in ("verdict", "why", "subject", "message", "code")}
             | {"counts": item.get("counts", True)} for item in phase.get("items") or [] if isinstance(item, dict)]
    attempts = [attempt for attempt in phase.get("attempts") or [] if isinstance(attempt, dict)]
    return {
        "name": phase.get("name"), "command": phase.get("command"), "status": phase.get("status"),
        "summary": phase.get("summary"),
        "blamed": [item for item in items if item["verdict"] == "blamed" and item["counts"]],
        "pre_existing": [item for item in items if item["verdict"] == "pre-existing"],
        "attempts": [{"where": attempt.get("where"), "result": attempt.get("result"),
                      "exit_code": attempt.get("exit_code"), "log": attempt.get("log"),
                      "output_tail": attempt.get("output_tail") or ""} for attempt in attempts],
    }


def reviews(state: Path) -> list[Found]:
    """Review rounds under ``.axpipe/review/``: each reviewer's exit code and final verdict."""
    found: list[Found] = []
    for folder in sorted((state / "review").glob("round-*"), key=lambda path: _number(path.name)):
        if not folder.is_dir() or _number(folder.name) < 0:
            continue
        revision = folder / "revision.txt"
        reviewers = [_reviewer(cli) for cli in sorted(folder.iterdir()) if cli.is_dir()]
        found.append({"round": _number(folder.name), "path": _relative(folder, state),
                      "revision": revision.read_text(encoding="utf-8").strip() if revision.is_file() else None,
                      "reviewers": reviewers})
    return found


def _number(name: str) -> int:
    tail = name.rpartition("-")[2]
    return int(tail) if tail.isdigit() else -1


def _reviewer(folder: Path) -> Found:
    exit_file = folder / "exit.txt"
    exit_text = exit_file.read_text(encoding="utf-8").strip() if exit_file.is_file() else ""
    verdict: str | None = None
    problem: str | None = None
    for name, jsonl in (("stdout.jsonl", True), ("stdout.txt", False)):
        output = folder / name
        if output.is_file():
            try:
                verdict = parse_output(output.read_text(encoding="utf-8", errors="replace"), jsonl=jsonl).line
            except VerdictProblem as error:
                problem = error.message
            break
    else:
        problem = "no stdout.txt or stdout.jsonl"
    return {"cli": folder.name, "exit_code": int(exit_text) if exit_text.lstrip("-").isdigit() else None,
            "verdict": verdict, "problem": problem}


def qa_report(state: Path, folder_name: str) -> str | None:
    path = state / "artifacts" / folder_name / "qa-report.md"
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def coverage(run_dirs: dict[str, Path]) -> list[Found]:
    """The last ``goal.coverage`` event of each recipe's newest run (``run_dirs``: recipe → folder)."""
    found: list[Found] = []
    for recipe, folder in sorted(run_dirs.items()):
        events = folder / "events.jsonl"
        try:
            lines = [line for line in events.read_text(encoding="utf-8").splitlines() if '"goal.coverage"' in line]
        except (OSError, UnicodeDecodeError):
            continue
        for line in reversed(lines):
            try:
                event = json.loads(line)
            except ValueError:
                continue
            found.append({"recipe": recipe, "at": event.get("ts"), "summary": event.get("summary"),
                          "total": event.get("total"), "accepted": event.get("accepted") or [],
                          "remaining": event.get("remaining") or {}, "error": event.get("error")})
            break
    return found
