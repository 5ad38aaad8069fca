"""Looking after a frozen contract once it is frozen (DESIGN §3, §5).

- :func:`restore_file`: ``.axpipe/goals/<id>/contract.json`` is how a person (or an agent)
  reads the contract, but the store holds it. A file deleted or edited by hand is written
  again from the store, with a warning saying so (a "restoration warning"): the contract
  never silently reads otherwise than the store that decides completion.
- :func:`failing_when_frozen`: each check is run once, with no receipt, on the tree as it
  is when the contract is frozen (a new goal, a revise). A check that already fails then
  is said (in the output and the events): that is expected of a check the goal is meant to
  make pass, but a check guarding what the goal does not change (a barrier) keeps the goal
  from ever completing until that failure is fixed first. Whatever a check writes into the
  tree is put back at once (:mod:`axpipe.change.revert`) and said too: the tree the first unit
  starts from is the one the person left, and a check that writes into its own source
  would never give fresh evidence.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from axpipe import workspace
from axpipe.change import revert
from axpipe.errors import AxpipeError
from axpipe.goal import contract, private
from axpipe.goal.receipts import check_description, source_fingerprint, typed_params
from axpipe.goal.record import Goal, goal_dir
from axpipe.interfaces import CheckRequest, CheckStatus
from axpipe.plugin import registry
from axpipe.plugin.check_run import run_check
from axpipe.run.events import EventLog
from axpipe.store import Store
from axpipe.store import goals as sql


def restore_file(store: Store, root: Path, goal: Goal) -> str | None:
    """Write ``goal``'s contract.json again from the store when it is missing or differs from
    it; the warning to give, or None when the file is as frozen."""
    if goal.contract_digest is None:
        return None  # no assurance contract: no file
    stored = sql.get_contract(store, goal.contract_digest)
    if stored is None:
        return None  # nothing to restore from (the store lacks it: plan's own checks say so)
    path = goal_dir(root, goal.id) / "contract.json"
    expected = {"digest": goal.contract_digest, "revises": stored["revises"], "correction": stored["correction"],
                "contract": stored["canonical"]}
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        what = "was missing"
    except (OSError, ValueError):
        what = "was not readable JSON"
    else:
        if found == expected:
            return None
        what = "had been edited"
    contract.write_file(path, stored["canonical"], goal.contract_digest, stored["revises"], stored["correction"])
    return (f"{path.relative_to(root)} {what}: restored from the store (contract {goal.contract_digest[:12]}). "
            "The frozen contract lives in the store; to change the requirements, edit the recipe and run "
            f"`axpipe goal revise --goal {goal.id} \"<correction>\"`")


def failing_when_frozen(store: Store, root: Path, goal: Goal, events: EventLog) -> list[str]:
    """Run each of ``goal``'s checks once, without a receipt, on the tree as it is (events
    ``freeze.check_started`` and ``freeze.check_finished``); a warning naming those that do
    not pass, and one for each check that wrote into the tree (what it wrote is put back at
    once: :mod:`axpipe.change.revert`). Outside git nothing could be put back, so nothing runs."""
    # git's ignore rules of each moment: a tool's cache that ignores itself (.ruff_cache/) is no write
    point = revert.mark(root, keep_rules=False)
    top = workspace.git_top(root)
    if point.tree is None or top is None:
        return []
    failing: list[str] = []
    warnings = []
    for index, check in enumerate(goal.checks):
        name = f"goal.checks[{index}] (check '{check['id']}')"
        events.emit("freeze.check_started", phase="plan", check=check["id"])
        failed = _trial(store, root, goal, check)
        events.emit("freeze.check_finished", phase="plan", check=check["id"], passed=failed is None,
                    summary=failed or "passed")
        if failed is not None:
            failing.append(f"{name}: {failed}")
        after = point.snapshot(top)
        if after != point.tree:
            try:
                written = revert.restore(top, point, after)
            except revert.RevertError as error:
                written = [f"(not all put back: {error})"]
            prefix = workspace.git_prefix(root, top)
            shown = ", ".join(workspace.from_top(path, prefix) for path in written[:10])
            warnings.append(f"{name} wrote into the tree it verifies ({shown}; put back): its receipts will be no "
                            "fresh evidence; write its output under .axpipe/")
    if failing:
        warnings.insert(0, f"already failing before any work: {'; '.join(failing)}. That is expected of a check the "
                           "goal is meant to make pass; one that guards what the goal leaves alone (a barrier) keeps "
                           "the goal from completing until that failure is fixed: fix it first, or `axpipe goal "
                           "revise`")
    return warnings


def _trial(store: Store, root: Path, goal: Goal, check: dict[str, Any]) -> str | None:
    """Run ``check`` once; how it did not pass (``exit code 1``), or None when it passed."""
    check_id = check["id"]
    logs = private.log_dir(root, goal.id) if check.get("held_out") else goal_dir(root, goal.id) / "logs"
    try:
        description = check_description(root, goal, check_id)
        kind = registry.load("axpipe.checks", description["kind"])
        request = CheckRequest(
            check_id=check_id, command=description.get("command"), params=typed_params(kind, description), cwd=root,
            timeout=float(description["timeout"]), env={"AXPIPE_GOAL_ID": goal.id, "AXPIPE_CHECK_ID": check_id},
            artifacts_dir=logs, on_output=None, fingerprint=lambda: source_fingerprint(store, root, goal).digest)
    except AxpipeError as error:  # the verify phase reports it again, with a receipt
        return f"could not be run when the contract was frozen: {error.message}"
    outcome = run_check(kind, request)
    if outcome.status is CheckStatus.PASSED:
        return None
    return "held-out check failed" if check.get("held_out") else outcome.summary
