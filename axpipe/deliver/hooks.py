"""Where a goal's driver calls delivery as a unit begins (DESIGN §16); nothing without ``deliver:``.

- :func:`prepare`, before a unit starts: the checkout is on the task branch;
- :func:`watch`, once it started: HEAD and the refs, before the agent runs;
- :func:`status`, the delivery's part of ``goal status``.

What comes later in the unit (the hard stop for a commit the runner did not make, the
runner's commit, delivery once the goal completes) is in :mod:`axpipe.deliver.stops`, which
needs the quarantine: kept apart so a goal's driver loads only this.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from axpipe.deliver import commits, record, refs
from axpipe.deliver.repo import DeliverError
from axpipe.deliver.task import task_of
from axpipe.errors import ExitCode, InputError
from axpipe.goal import goals
from axpipe.run.phases import Step


def prepare(driver: Any) -> Step | None:
    """Before a unit: the task branch checked out (made the first time); a Step when it cannot be."""
    spec = driver.recipe.deliver
    if spec is None:
        return None
    try:
        delivery = commits.prepare(driver.root, spec, driver.goal.id, task_of(driver.goal))
    except DeliverError as error:
        reason = f"deliver: {error.message}"
        goals.set_status(driver.store, driver.goal, "blocked", reason, driver.events,
                         blocked={"kind": "deliver-branch", "reason": reason, "evidence": [],
                                  "external_change": "a person makes the task branch available (commit or set "
                                                     "aside what blocks the checkout, or fix deliver.branch/base) "
                                                     "and resumes the goal", "no_independent_work": True})
        return Step("stopped", f"blocked (deliver-branch): {reason}", stop=ExitCode.BLOCKED)
    driver.events.emit("deliver.branch", phase="work", branch=delivery.branch, base=delivery.base)
    return None


def watch(driver: Any) -> dict[str, str] | None:
    """HEAD and the refs as the unit starts (None without ``deliver:``)."""
    return refs.snapshot(driver.root) if driver.recipe.deliver is not None else None


def status(root: Path, goal_id: str) -> dict[str, Any] | None:
    """``goal status``'s ``delivery``: the record's branch and last attempt (None without one)."""
    try:
        delivery = record.load(root, goal_id)
    except InputError:  # an id that is no folder name (a hand-edited store) has no record: status still reads
        return None
    if delivery is None:
        return None
    return {"branch": delivery.branch, "base": delivery.base, "remote": delivery.remote, "status": delivery.status,
            "reason": delivery.reason, "retry": delivery.retry, "pushed": delivery.pushed, "pr_url": delivery.pr_url,
            "commits": len(delivery.commits)}
