"""Before any push (DESIGN §16): the branch contract, and the upstream that must not have moved.

The **branch contract**: the task branch exists, it is ahead of ``deliver.base``, and every
commit on it since the base (merges included) has a subject matching
``deliver.subject_pattern`` (default ``^<task>: ``). Every failure is listed.

The **upstream check**: the remote's task branch is where it was when the goal's first unit
made the branch, or where delivery last pushed it. Anything else (a person or an agent
pushed, the branch was deleted and made again) parks the goal: delivery never force-pushes.
"""

from __future__ import annotations

import re
from pathlib import Path

from axpipe.deliver import record, repo
from axpipe.deliver.commits import read_upstream
from axpipe.deliver.task import Task, subject_pattern


def branch_contract(root: Path, delivery: record.Delivery) -> tuple[str | None, list[str]]:
    """The branch's tip and what failed (empty: the contract holds)."""
    tip = repo.commit_of(root, f"refs/heads/{delivery.branch}")
    if tip is None:
        return None, [f"branch {delivery.branch} does not exist"]
    base = repo.commit_of(root, delivery.base)
    if base is None:
        return tip, [f"base {delivery.base} does not name a commit"]
    listed = repo.text(root, "log", "--format=%H%x00%s%x00", f"{base}..{tip}", "--")
    fields = listed.split("\0")
    commits = [(fields[i].strip(), fields[i + 1]) for i in range(0, len(fields) - 1, 2)]
    if not commits:
        return tip, [f"{delivery.branch} is not ahead of {delivery.base}: no commit since {base[:12]}"]
    pattern = subject_pattern(delivery.spec, Task(delivery.task, delivery.summary))
    compiled = re.compile(pattern)
    failed = [f"commit {sha[:12]} {subject!r} does not match {pattern!r}" for sha, subject in commits
              if compiled.search(subject) is None]
    return tip, failed


def upstream_moved(root: Path, delivery: record.Delivery) -> str | None:
    """Why the remote's task branch is not where delivery expects it, or None. Raises
    :class:`~axpipe.deliver.repo.DeliverError` when the remote cannot be read."""
    now = read_upstream(root, delivery.remote, delivery.branch, float(delivery.spec.get("timeout") or 300))
    expected: set[str | None] = {delivery.pushed} if delivery.pushed else set()
    if delivery.upstream_known:
        expected.add(delivery.upstream)
    else:
        expected.add(None)  # unknown when the goal began: only "still absent" or our own push is proven
    if now in expected:
        return None
    was = " or ".join(sorted((value or "absent")[:12] for value in expected))
    return (f"{delivery.remote}/{delivery.branch} is at {(now or 'absent')[:12]}, expected {was}: someone else "
            "pushed to it during the goal; it is never force-pushed")
