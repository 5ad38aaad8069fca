"""Delivering a completed goal: branch contract → upstream check → push → pull request (DESIGN §16).

:func:`deliver` is what the settle phase runs when a goal with ``deliver:`` completes, and
what ``axpipe deliver <task>`` runs again without re-running any work. It reads and writes
only git, the remote and the delivery record:

- the branch contract fails: the goal is blocked with ``deliver: branch contract: <what
  failed>`` (exit 3) and nothing is pushed;
- the remote's branch moved during the goal: the goal is blocked (parked, exit 3), never
  force-pushed;
- the remote cannot be read, the push is rejected (non-fast-forward, a protected branch, a
  hook), the deliverer's CLI is missing, unauthenticated or refused: the goal stays
  complete, the record says ``failed`` with the reason and the command that retries, exit 1;
  the local branch is untouched.

Exactly the commit the contract checked is pushed (``<tip>:refs/heads/<branch>``), never with
force.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from axpipe import interfaces
from axpipe.deliver import body, contract, record, repo
from axpipe.deliver.commits import receipt_digest
from axpipe.deliver.repo import DeliverError
from axpipe.errors import AxpipeError, ExitCode
from axpipe.goal import completion, goals
from axpipe.goal.goals import Goal
from axpipe.plugin import registry
from axpipe.recipe.typed import load_plugin_params
from axpipe.records import record as record_type
from axpipe.run.events import EventLog
from axpipe.store import Store
from axpipe.store import goals as goal_sql
from axpipe.unit import closing


@record_type
class Outcome:
    status: str  # delivered | failed | blocked | dry-run
    exit_code: ExitCode
    message: str
    body: str = ""
    tip: str | None = None


def criteria(root: Path, store: Store, goal: Goal, session_id: str) -> tuple[list[body.Criterion], str]:
    """The body's criteria from the completion gate's verdict now, and the summary of that verdict."""
    verdict = completion.evaluate(store, root, goal, session_id)
    states = {state.id: state for state in verdict.checks}
    rows = {state.receipt: goal_sql.get_receipt(store, state.receipt) or {} for state in verdict.checks
            if state.receipt}
    browser = set()
    for kind in {check.get("kind", "command") for check in goal.checks}:
        try:
            if getattr(registry.load("axpipe.checks", kind), "medium", "") == "browser":
                browser.add(kind)
        except AxpipeError:
            continue
    shown = {receipt: dict(row) for receipt, row in rows.items()}
    for row in shown.values():
        if isinstance(row.get("artifacts"), str):
            row["artifacts"] = json.loads(row["artifacts"])
    out = []
    for line in closing.lines(root, goal, states, shown, browser):
        criterion = dict(closing.criteria(goal)).get(line.id, {})
        proving = closing.checks_of(goal, line.id, criterion) if line.tag != "process" else []
        evidence = []
        for check_id in proving:
            state = states.get(check_id)
            if state is None or state.receipt is None:
                continue
            digest = receipt_digest(rows[state.receipt])
            evidence.append(("held-out", "") if state.held_out else (state.receipt, digest))
        screenshot = line.file if line.medium == "browser" and line.file != "-" else None
        out.append(body.Criterion(line.id, line.tag, line.text, line.result, line.render(), evidence, screenshot))
    return out, verdict.summary()


def _commits(root: Path, delivery: record.Delivery, tip: str) -> list[tuple[str, str]]:
    listed = repo.text(root, "log", "--reverse", "--format=%H%x00%s%x00", f"{delivery.base}..{tip}", "--")
    fields = listed.split("\0")
    return [(fields[i].strip(), fields[i + 1]) for i in range(0, len(fields) - 1, 2)]


def _fail(root: Path, delivery: record.Delivery, status: str, reason: str, code: ExitCode) -> Outcome:
    delivery.status, delivery.reason, delivery.attempted_at = status, reason, record.now()
    delivery.retry = record.retry_command(delivery.goal)
    record.save(root, delivery)
    retry = f"; after fixing it, retry with `{delivery.retry}`" if status == "failed" else ""
    return Outcome(status, code, f"deliver: {reason}{retry}")


def _block(root: Path, store: Store, goal: Goal, delivery: record.Delivery, reason: str, change: str,
           events: EventLog | None) -> Outcome:
    outcome = _fail(root, delivery, "blocked", reason, ExitCode.BLOCKED)
    goals.set_status(store, goal, "blocked", outcome.message, events,
                     blocked={"kind": "deliver", "reason": outcome.message, "external_change": change,
                              "evidence": [str(record.path(root, goal.id))], "no_independent_work": True})
    return outcome


def deliver(root: Path, store: Store, goal: Goal, session_id: str, *, dry_run: bool = False,
            events: EventLog | None = None) -> Outcome:
    """Deliver ``goal`` (complete, with a delivery record); see the module's docstring."""
    delivery = record.load(root, goal.id)
    if delivery is None:
        return Outcome("failed", ExitCode.FAILED, f"deliver: goal {goal.id} has no delivery record "
                                                   f"({record.path(root, goal.id)}): no unit of it ran with `deliver:`")
    tip, failed = contract.branch_contract(root, delivery)
    if failed:
        reason = "branch contract: " + "; ".join(failed)
        if dry_run:
            return Outcome("dry-run", ExitCode.BLOCKED, f"deliver: {reason}")
        return _block(root, store, goal, delivery, reason, "a person fixes the task branch (reword or drop the "
                      "commits named) and runs `axpipe deliver` again", events)
    assert tip is not None
    try:
        moved = contract.upstream_moved(root, delivery)
    except DeliverError as error:
        return Outcome("dry-run", ExitCode.FAILED, error.message) if dry_run else \
            _fail(root, delivery, "failed", error.message, ExitCode.FAILED)
    if moved is not None:
        reason = f"upstream moved: {moved}"
        if dry_run:
            return Outcome("dry-run", ExitCode.BLOCKED, f"deliver: {reason}")
        return _block(root, store, goal, delivery, reason, "a person reconciles the remote branch with the task "
                      "branch, then runs `axpipe deliver` again", events)
    items, _ = criteria(root, store, goal, session_id)
    summary = body.Summary(delivery.task, goal.objective, delivery.branch, delivery.base, goal.contract_digest,
                           _commits(root, delivery, tip))
    text = body.render(summary, items)
    if dry_run:
        lines = [f"would push {tip} to {delivery.remote} as refs/heads/{delivery.branch} "
                 f"({len(summary.commits)} commit(s) since {delivery.base}):",
                 *[f"  {sha[:12]} {subject}" for sha, subject in summary.commits]]
        lines.append(f"would open a pull request with `{delivery.spec.get('pr')}`: {_title(delivery)}"
                     if delivery.spec.get("pr") else "no pull request: deliver.pr is not set")
        return Outcome("dry-run", ExitCode.OK, "\n".join(lines), body=text, tip=tip)
    if delivery.pushed != tip:
        try:
            pushed = repo.run(root, "push", "--porcelain", "--end-of-options", delivery.remote,
                              f"{tip}:refs/heads/{delivery.branch}", timeout=float(delivery.spec.get("timeout") or 300))
        except subprocess.TimeoutExpired:
            return _fail(root, delivery, "failed", f"push to {delivery.remote} took longer than deliver.timeout",
                         ExitCode.FAILED)
        if pushed.returncode != 0:
            return _fail(root, delivery, "failed", f"push to {delivery.remote} rejected: {_rejection(pushed)}",
                         ExitCode.FAILED)
        delivery.pushed = tip
        record.save(root, delivery)
    if delivery.spec.get("pr") and delivery.pr_url is None:
        opened = _open(root, delivery, text)
        if not opened.ok:
            return _fail(root, delivery, "failed", f"pull request: {opened.reason}", ExitCode.FAILED)
        delivery.pr_url = opened.url
    delivery.status, delivery.reason, delivery.retry, delivery.attempted_at = "delivered", None, None, record.now()
    record.save(root, delivery)
    if goal.status == "blocked":  # blocked by delivery alone (`axpipe deliver` after a person fixed the branch)
        goals.set_status(store, goal, "complete", f"delivered after a person fixed what blocked delivery: "
                                                  f"{goal.status_reason}", events)
    where = f"; pull request {delivery.pr_url}" if delivery.pr_url else ""
    return Outcome("delivered", ExitCode.OK, f"delivered: pushed {tip[:12]} to {delivery.remote}/"
                                              f"{delivery.branch}{where}", body=text, tip=tip)


def _title(delivery: record.Delivery) -> str:
    return f"{delivery.task}: {delivery.summary}"


def _rejection(completed: Any) -> str:
    """What the remote said: the porcelain status line and the hook's own lines."""
    said = [line[len("remote: "):].strip() for line in completed.stderr.decode(errors="replace").splitlines()
            if line.startswith("remote: ") and line[len("remote: "):].strip()]
    status = [line.split("\t")[-1] for line in completed.stdout.decode(errors="replace").splitlines()
              if line.startswith("!")]
    return "; ".join([*status, *said[-3:]]) or repo.last_line(completed.stderr)


def _open(root: Path, delivery: record.Delivery, text: str) -> Any:
    name = str(delivery.spec["pr"])
    try:
        plugin = registry.load("axpipe.deliverers", name)
        params, problems = load_plugin_params(plugin, delivery.spec.get("params") or {}, "deliver.params", None)
        if problems:
            return interfaces.Opened(False, reason="; ".join(f"{p.path}: {p.message}" for p in problems))
        request = interfaces.PullRequest(cwd=root, remote=delivery.remote, head=delivery.branch, base=delivery.base,
                                         title=_title(delivery), body=text, params=params,
                                         timeout=float(delivery.spec.get("timeout") or 300), env=dict(os.environ))
        return plugin.open(request)
    except AxpipeError as error:
        return interfaces.Opened(False, reason=error.message)
    except Exception as error:  # a deliverer's bug is a failed delivery, retried later, never a lost goal
        return interfaces.Opened(False, reason=f"the {name} deliverer failed: {type(error).__name__}: {error}")
