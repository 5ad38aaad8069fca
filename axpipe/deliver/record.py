"""A goal's delivery record: ``.axpipe/goals/<goal>/delivery.json`` (``goal clear`` removes it with the goal).

Written when the goal's first unit makes the task branch, updated by every delivery attempt.
It keeps what delivery must know later without the recipe (``axpipe deliver <task>`` retries
from it alone, re-running nothing): the recipe's ``deliver:`` section as the goal ran it, the
branch, its base, what the remote's branch was expected to be (the upstream check), and how
the last attempt ended with its reason and the command that retries it.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from axpipe.goal.goals import goal_dir
from axpipe.records import record

STATUSES = ("pending", "delivered", "failed", "blocked")


@record
class Delivery:
    goal: str
    task: str
    summary: str
    spec: dict[str, Any]  # the recipe's `deliver:` as the last run used it (branch, base, remote: the first unit's)
    branch: str
    base: str
    base_commit: str
    remote: str
    upstream: str | None  # the remote's branch as last seen (None: it had none)
    upstream_known: bool  # False: the remote could not be read when the branch was made
    status: str = "pending"
    reason: str | None = None
    retry: str | None = None
    pushed: str | None = None
    pr_url: str | None = None
    attempted_at: str | None = None
    commits: list[dict[str, Any]] = field(default_factory=list)  # the runner's commits: unit, sha, subject


def path(root: Path, goal_id: str) -> Path:
    return goal_dir(root, goal_id) / "delivery.json"


def load(root: Path, goal_id: str) -> Delivery | None:
    file = path(root, goal_id)
    if not file.is_file():
        return None
    return Delivery(**json.loads(file.read_text(encoding="utf-8")))


def save(root: Path, delivery: Delivery) -> Path:
    file = path(root, delivery.goal)
    file.parent.mkdir(parents=True, exist_ok=True)
    scratch = file.with_name(file.name + ".tmp")
    scratch.write_text(json.dumps(asdict(delivery), indent=2) + "\n", encoding="utf-8")
    os.replace(scratch, file)  # a reader never sees half a record
    return file


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def retry_command(goal_id: str) -> str:
    return f"axpipe deliver {goal_id}"
