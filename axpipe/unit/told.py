"""What every unit's prompt states (DESIGN §15): the contract is told before it is checked.

:func:`context` gives the templates (``turn.md.j2``, ``planner.md.j2``, ``prototype.md.j2``)
one mapping, ``told``: the role and what it may write; the objective; every scope pattern;
the source paths; each visible acceptance criterion with its check id and frozen command
(held-out checks are never named); the limits that stop the unit (unit timeout, budget left,
bounces left); after a bounce, the latest QA and judge verdicts with what they said,
verbatim; where the task file and the standing rules are.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from axpipe.duration import format_duration
from axpipe.process import command_text
from axpipe.store import units as unit_sql
from axpipe.task import ownership
from axpipe.unit.units import Driving, artifacts_dir

SAID_LIMIT = 4000  # characters of a verdict's trace repeated in the next prompt


def may_write(role: str, scope: list[str] | None, artifacts: str) -> list[str]:
    """What ``role`` may write, one item a line of the prompt."""
    sections = ", ".join(f"`{name}`" for name in ownership.may_write(role))
    if role == "implementer":
        code = ("code inside the scope patterns below" if scope is not None
                else "any file of the project (the recipe declares no scope)")
        return [code, f"the task file's {sections} section"]
    if role == "planner":
        return [f"the task file's {sections} sections only; no other file"]
    return [f"only `{artifacts}/`", f"the task file's {sections} section"]


def criteria(driver: Driving) -> list[dict[str, Any]]:
    """Each visible criterion with its check id and frozen command (held-out checks unnamed)."""
    goal = driver.goal
    held_out = {check["id"] for check in goal.checks if check.get("held_out")}
    commands = {check["id"]: command_text(check["command"]) for check in goal.checks
                if not check.get("held_out") and check.get("command") is not None}
    found = []
    for key, item in goal.plan.get("acceptance", {}).items():
        check = item.get("check") if item.get("check") not in held_out else None
        found.append({"id": key, "tag": item["tag"], "text": item["text"], "check": check,
                      "command": commands.get(check or "")})
    return found


def latest_verdicts(driver: Driving) -> list[dict[str, Any]]:
    """The QA and judge verdicts of the latest unit, when it bounced: each with what its
    reviewer said (the end of its trace), verbatim."""
    rows = [row for row in unit_sql.list_units(driver.store, driver.goal.id) if row["status"] != "running"]
    if not rows or rows[-1]["status"] not in ("bounced", "blocked") or not rows[-1]["verdicts"]:
        return []
    found = []
    for verdict in rows[-1]["verdicts"]:
        said = ""
        trace = verdict.get("trace")
        if trace and str(trace).endswith(".txt"):
            path = Path(trace) if os.path.isabs(trace) else driver.root / trace
            try:
                said = path.read_text(encoding="utf-8", errors="replace")[-SAID_LIMIT:].strip()
            except OSError:
                said = ""
        found.append({"role": verdict["role"], "name": verdict["name"], "verdict": verdict["verdict"],
                      "reason": verdict.get("reason") or "", "said": said})
    return found


def limits(driver: Driving) -> dict[str, Any]:
    recipe, goal = driver.recipe, driver.goal
    budget = recipe.goal.budget if recipe.goal is not None else None
    left = []
    if budget is not None and budget.tokens is not None:
        left.append(f"{max(0, budget.tokens - goal.tokens_used)} of {budget.tokens} tokens")
    if budget is not None and budget.time is not None:
        left.append(f"{format_duration(max(0.0, budget.time - goal.time_used))} of {format_duration(budget.time)}")
    if budget is not None:
        left.append(f"{max(0, budget.steps - goal.steps_used)} of {budget.steps} steps")
    bounces = unit_sql.bounces(driver.store, goal.id)
    return {"unit_timeout": format_duration(recipe.limits.unit_timeout), "budget_left": "; ".join(left),
            "bounces_left": max(0, recipe.limits.bounces - bounces), "bounces": recipe.limits.bounces}


def context(driver: Driving, role: str, task_file: str | None) -> dict[str, Any]:
    """``{"told": {...}}``: what a template of ``role``'s prompt renders."""
    recipe, goal = driver.recipe, driver.goal
    artifacts = os.path.relpath(artifacts_dir(driver.root, goal.id), driver.root)
    standing = recipe.rules.standing if recipe.rules is not None else None
    return {"told": {
        "role": role, "may_write": may_write(role, recipe.scope, artifacts), "objective": goal.objective,
        "goal_id": goal.id, "scope": list(recipe.scope) if recipe.scope is not None else None,
        "source_paths": list(goal.source_paths), "criteria": criteria(driver), "limits": limits(driver),
        "verdicts": latest_verdicts(driver), "task_file": task_file, "standing_rules": standing,
        "criterion_form": "N. **[closes]** text: `command`", "artifacts": artifacts,
    }}
