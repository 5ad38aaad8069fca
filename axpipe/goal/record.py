"""A goal as stored (its row with the JSON columns decoded) and the one folder each goal owns
under ``.axpipe/``. Kept below :mod:`axpipe.goal.goals` so that the modules it uses (frozen
contracts, private folders, receipts) can name a goal without importing it back."""

from __future__ import annotations

import json
import re
from dataclasses import field
from pathlib import Path
from typing import Any

from axpipe.errors import InputError
from axpipe.records import record
from axpipe.workspace import state_dir


@record
class Goal:
    """A goal as stored, with its JSON columns decoded."""

    id: str
    recipe: str
    overrides: list[str]
    variables: dict[str, Any]
    objective: str
    assured: bool
    status: str
    status_reason: str | None
    blocked: dict[str, Any] | None
    contract_digest: str | None
    baseline: str | None
    workspace: str
    plan: dict[str, Any]
    budget: dict[str, Any] = field(default_factory=dict)
    tokens_used: int = 0
    cost_used: float = 0.0
    unpriced_turns: int = 0
    resumes_at: str | None = None  # while paused by a usage limit: when it resets (ISO UTC)
    time_used: float = 0.0
    steps_used: int = 0
    no_progress: int = 0
    guidance_given: bool = False
    wrap_up_done: bool = False
    bad_success: bool = False
    last_edit_at: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Goal:
        return cls(
            id=row["id"], recipe=row["recipe"], overrides=json.loads(row["overrides"]),
            variables=json.loads(row["variables"]),
            objective=row["objective"], assured=bool(row["assured"]), status=row["status"],
            status_reason=row["status_reason"], blocked=json.loads(row["blocked"]) if row["blocked"] else None,
            contract_digest=row["contract_digest"], baseline=row["baseline"], workspace=row["workspace"],
            plan=json.loads(row["plan"]), budget=json.loads(row["budget"]), tokens_used=row["tokens_used"],
            time_used=row["time_used"], cost_used=row["cost_used"], unpriced_turns=row["unpriced_turns"],
            resumes_at=row["resumes_at"],
            steps_used=row["steps_used"], no_progress=row["no_progress"], guidance_given=bool(row["guidance_given"]),
            wrap_up_done=bool(row["wrap_up_done"]), bad_success=bool(row["bad_success"]),
            last_edit_at=row["last_edit_at"], extra={"created_at": row["created_at"], "updated_at": row["updated_at"]},
        )

    @property
    def checks(self) -> list[dict[str, Any]]:
        """Every check of the plan; held-out ones only as ``{id, held_out, acceptance}``."""
        checks: list[dict[str, Any]] = self.plan["checks"]
        return checks

    @property
    def source_paths(self) -> list[str]:
        paths: list[str] = self.plan["source_paths"]
        return paths

    @property
    def private_key(self) -> str:
        """The private folder's name for this goal's held-out descriptions."""
        return self.contract_digest or f"plan-{self.id}"


def folder_name(goal_id: str) -> str:
    """``goal_id`` as the one folder name it becomes under ``.axpipe/`` (``goals/<id>``,
    ``artifacts/<id>``, the private logs). Recipes are validated (``goal.id``) and derived ids
    keep to ``[A-Za-z0-9_.-]``; this refuses anything else (a hand-edited store, an id from
    before ids were validated) so no goal writes, or ``goal clear`` removes, outside its folder."""
    if goal_id in ("", ".", "..") or not re.fullmatch(r"[\w.-]+", goal_id):
        raise InputError(f"goal id {goal_id!r} is not a folder name (letters, digits, '.', '_', '-'): axpipe "
                         "writes and removes nothing for it")
    return goal_id


def goal_dir(root: Path, goal_id: str) -> Path:
    return state_dir(root) / "goals" / folder_name(goal_id)
