"""``axpipe task show|approve|answer|note|replan|reopen <task>``: a person and the task file.

Every change goes through the journal (:mod:`axpipe.task.journal`): a line in the file's
``Journal`` section and an entry with the file's content hash, so an edit made while a unit
runs never counts as the unit's work. ``<task>`` is a task or goal id a run recorded, or the
task file's project path.

- ``show``: the task file, and the goal's status with its reason (a parked plan lists every
  problem); ``--json`` gives ``{"task", "path", "goal", "front", "sections", "criteria",
  "problems"}``;
- ``approve``: front matter ``status: approved``;
- ``answer`` / ``note``: a journal line only;
- ``replan``: front matter ``status: replan``: the next run has the planner write the plan again
  (refused, exit 2, when the goal's contract is already frozen: clear or revise it instead);
- ``reopen``: front matter ``bounces: 0`` and ``status: open``; the goal's bounce counter goes
  back to 0, and a goal blocked for its bounces becomes active again.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from axpipe import workspace
from axpipe.errors import ExitCode, InputError
from axpipe.store import Store
from axpipe.task import criteria, files, journal, taskfile

ACTIONS = ("show", "approve", "answer", "note", "replan", "reopen")


def _goal(goal_id: str | None) -> tuple[Store | None, Any]:
    from axpipe.goal import goals

    root = workspace.find_root()
    path = workspace.state_dir(root) / "state.db"
    if goal_id is None or not path.is_file():
        return None, None
    store = Store(path)
    return store, goals.load(store, goal_id)


def show(*, task: str, as_json: bool) -> int:
    root = workspace.find_root()
    goal_id, path, shown = files.find(root, task)
    parsed = taskfile.read(path, shown)
    found, problems = criteria.parse(parsed.sections.get(criteria.SECTION, ""))
    store, goal = _goal(goal_id)
    if store is not None:
        store.close()
    goal_json = None if goal is None else {"id": goal.id, "status": goal.status, "reason": goal.status_reason,
                                           "blocked": goal.blocked}
    if as_json:
        sys.stdout.write(json.dumps({
            "task": parsed.id, "path": shown, "goal": goal_json, "front": parsed.front,
            "sections": parsed.sections,
            "criteria": [{"number": item.number, "tag": item.tag, "text": item.text, "command": item.command,
                          "check": item.check_id} for item in found],
            "problems": problems}, indent=2, default=str) + "\n")
        return 0
    lines = [f"task {parsed.id}: {parsed.title}", f"  file:     {shown}",
             f"  status:   {parsed.front.get('status', 'open')} · bounces {parsed.front.get('bounces', 0)}"]
    if goal is not None:
        listed = (goal.blocked or {}).get("problems", [])
        reason = goal.status_reason or ""
        if listed:  # a parked plan: its reason ends with the problems, listed one a line below
            reason = reason.split("): ", 1)[0] + ")"
        lines.append(f"  goal:     {goal.id} {goal.status}" + (f": {reason}" if reason else ""))
        lines.extend(f"    - {problem}" for problem in listed)
    lines.append(f"  criteria: {len(found)}" + (f" ({len(problems)} line(s) not read as criteria)" if problems
                                                else ""))
    sys.stdout.write("\n".join(lines) + "\n\n" + parsed.text)
    return 0


def edit(*, action: str, task: str, text: str) -> int:
    """approve, answer, note, replan or reopen: a journalled edit."""
    root = workspace.find_root()
    goal_id, path, shown = files.find(root, task)
    parsed = taskfile.read(path, shown)
    if action == "replan":
        _refuse_frozen(goal_id)
    new_text = parsed.text
    if action == "approve":
        new_text = parsed.with_front(status="approved")
    elif action == "replan":
        new_text = parsed.with_front(status="replan")
    elif action == "reopen":
        new_text = taskfile.parse(parsed.with_front(bounces=0), shown).with_front(status="open")
    journal.apply(root, path, parsed, new_text, kind=action, text=text or action)
    said = f"task {parsed.id}: {action} journalled in {shown}"
    if action == "reopen":
        said += _reopen_goal(goal_id)
    sys.stdout.write(said + "\n")
    return int(ExitCode.OK)


def _refuse_frozen(goal_id: str | None) -> None:
    """A goal whose plan holds has a frozen contract: a new plan would not match it."""
    store, goal = _goal(goal_id)
    if store is None:
        return
    store.close()
    if goal is not None and not goal.plan.get("provisional"):
        raise InputError(f"goal '{goal.id}' already has a frozen contract from this plan: a new plan would not match "
                         f"it. Clear the goal first (axpipe goal clear --goal {goal.id}), or edit the criteria and "
                         f"run `axpipe goal revise --goal {goal.id} \"<correction>\"`")


def _reopen_goal(goal_id: str | None) -> str:
    from axpipe.goal import goals
    from axpipe.store import units as unit_sql

    store, goal = _goal(goal_id)
    if store is None or goal is None:
        return ""
    with store:
        unit_sql.reset_bounces(store, goal.id)
        if goal.status == "blocked" and (goal.blocked or {}).get("kind") == "bounces":
            goals.set_status(store, goal, "active", None, None, note="reopened by `axpipe task reopen`")
            return f"; goal {goal.id} active again, its bounces reset"
    return f"; goal {goal.id}'s bounces reset"
