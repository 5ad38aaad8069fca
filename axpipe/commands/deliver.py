"""``axpipe deliver <task> [--dry-run]``: retry a failed push or pull request (DESIGN §16).

Nothing is re-run: the goal must be complete, and delivery works from the goal's delivery
record (:mod:`axpipe.deliver.record`), git and the remote. ``--dry-run`` checks the branch
contract and the upstream, then prints what it would push and the pull request's body, and
changes nothing.
"""

from __future__ import annotations

import sys
from typing import Any

from axpipe import workspace
from axpipe.commands.goal import open_store
from axpipe.deliver import push
from axpipe.errors import ExitCode, InputError
from axpipe.goal import goals
from axpipe.run.lock import RunLock


def deliverable(goal: Any) -> bool:
    """Complete, or blocked by delivery itself once it was complete (the branch contract, a moved upstream)."""
    blocked_by_delivery = goal.status == "blocked" and (goal.blocked or {}).get("kind") == "deliver"
    return bool(goal.status == "complete" or blocked_by_delivery)


def deliver(*, task: str, dry_run: bool) -> int:
    root = workspace.find_root()
    with open_store(root) as store, RunLock(workspace.state_dir(root), "deliver"):
        goal, session = goals.choose(store, task, None, latest=True)  # an unknown task: input error, exit 2
        if not deliverable(goal):
            raise InputError(f"goal {task} is {goal.status}, not complete: only a complete goal is delivered "
                             "(`axpipe goal resume` drives it)")
        outcome = push.deliver(root, store, goal, session["id"], dry_run=dry_run)
    if outcome.body and dry_run:
        sys.stdout.write(outcome.message + "\n\n--- pull request body ---\n" + outcome.body)
    else:
        (sys.stdout if outcome.exit_code == ExitCode.OK else sys.stderr).write(outcome.message + "\n")
    return int(outcome.exit_code)
