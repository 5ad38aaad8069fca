"""Settling a unit: the QA report, then what the unit's verdicts mean (DESIGN §8).

Called by the lifecycle's settle phase before the completion gate:

1. ``qa-report.md`` is written from what the code verified (:mod:`axpipe.unit.closing`);
2. a unit past ``limits.unit_timeout`` is a hard stop;
3. the verdicts decide, in this order:

   - ``qa: CANNOT_VERIFY`` (a QA unit, or a ``found`` checker that could not run): the goal
     is blocked for a person, without counting a bounce;
   - ``qa: FAIL`` or ``judge: REJECTED`` (or a ``found`` checker that failed): one bounce.
     FAIL and REJECTED share the goal's counter; reaching ``limits.bounces`` (default 2)
     blocks the goal for a person, otherwise the goal stays active for the next unit;
   - a missing verdict (no verdict line in the last event, a CLI that failed): no progress,
     counted like a tick without new evidence (the goal pauses past ``no_progress_limit``);
   - otherwise the completion gate decides, as for any goal.

A held unit (bounced, blocked, no verdict) never completes the goal, whatever its checks say.
A goal blocked for its bounces and resumed by a person starts its counter again.
"""

from __future__ import annotations

import json
from typing import Any

from axpipe.errors import AxpipeError, ExitCode
from axpipe.goal import completion, goals
from axpipe.plugin import registry
from axpipe.run.phases import PhaseResult, RunContext
from axpipe.store import goals as goal_sql
from axpipe.store import units as unit_sql
from axpipe.task.files import record_bounces
from axpipe.unit import closing, units
from axpipe.unit.quarantine import timed_out


def found_verdicts(context: RunContext, verdict: completion.Completion) -> list[dict[str, Any]]:
    """QA verdicts from the ``found`` criteria's checkers, once the closing checks pass."""
    driver = context.driver
    goal = driver.goal
    deciding = closing.closing_checks(goal)
    states = {state.id: state for state in verdict.checks}
    if any(states[check_id].status != "passed" for check_id in deciding if check_id in states):
        return []  # the unit is not done yet: found criteria are QA's, and QA comes after
    found = []
    for criterion_id, criterion in closing.criteria(goal):
        if criterion["tag"] != "found":
            continue
        for check_id in closing.checks_of(goal, criterion_id, criterion):
            state = states.get(check_id)
            if state is None or state.status == "passed":
                continue
            receipt = goal_sql.get_receipt(driver.store, state.receipt) if state.receipt else None
            value = "CANNOT_VERIFY" if receipt is not None and receipt["status"] == "error" else "FAIL"
            found.append({"role": "qa", "name": f"checker {check_id}", "verdict": value, "trace": None,
                          "reason": f"found criterion {criterion_id}: check {check_id} {state.status} "
                                    f"({state.reason})"})
    return found


def settle(context: RunContext, verdict: completion.Completion) -> PhaseResult | None:
    """The settle hook, given the completion gate's ``verdict`` on the current source; None
    lets the gate decide (``GoalDriver.settle``)."""
    driver = context.driver
    if driver is None:
        return None
    unit = units.current(driver)
    late = unit is not None and unit.overdue()
    if unit is not None and not late:
        unit.verdicts.extend(found_verdicts(context, verdict))
    verdicts = list(unit.verdicts) if unit is not None else []
    outcome = _outcome(verdicts) if unit is not None and not late else ("settle", None)
    _report(context, verdict, unit, verdicts, "unit timeout" if late else outcome[0])
    if unit is None:
        return None
    if late:
        return timed_out(driver, unit, "settle")
    kind, reason = outcome
    if kind == "cannot-verify":
        return _block(context, unit, "cannot-verify", f"QA could not verify: {reason}",
                      "a person makes the check or application runnable (a missing tool, a service down) and "
                      "resumes the goal")
    if kind == "bounce":
        return _bounce(context, unit, reason or "")
    if kind == "no-verdict":
        return _no_progress(context, unit, reason or "")
    units.end(driver, unit, "passed", "the unit's contracts held; the completion gate decides")
    return None


def _outcome(verdicts: list[dict[str, Any]]) -> tuple[str, str | None]:
    def said(items: list[dict[str, Any]]) -> str:
        return "; ".join(f"{item['name']}: {item['reason'] or item['verdict']}" for item in items)

    cannot = [item for item in verdicts if item["verdict"] == "CANNOT_VERIFY"]
    if cannot:
        return "cannot-verify", said(cannot)
    rejected = [item for item in verdicts if item["verdict"] in ("FAIL", "REJECTED")]
    if rejected:
        return "bounce", ", ".join(f"{item['name']} said {item['role']}: {item['verdict']}" for item in rejected)
    missing = [item for item in verdicts if item["verdict"] is None]
    if missing:
        return "no-verdict", said(missing)
    return "settle", None


def _report(context: RunContext, verdict: completion.Completion, unit: units.Unit | None,
            verdicts: list[dict[str, Any]], outcome: str) -> None:
    driver = context.driver
    goal = driver.goal
    states = {state.id: state for state in verdict.checks}
    receipts = {state.receipt: goal_sql.get_receipt(driver.store, state.receipt) or {} for state in verdict.checks
                if state.receipt}
    for row in receipts.values():
        if isinstance(row.get("artifacts"), str):
            row["artifacts"] = json.loads(row["artifacts"])
    browser = set()
    for kind in {check.get("kind", "command") for check in goal.checks}:
        try:
            if getattr(registry.load("axpipe.checks", kind), "medium", "") == "browser":
                browser.add(kind)
        except AxpipeError:  # a kind that no longer loads is reported by verify, not here
            continue
    report_lines = closing.lines(context.root, goal, states, receipts, browser)
    described = {"settle": "the completion gate decides", "bounce": "bounced", "cannot-verify": "blocked: QA could "
                 "not verify", "no-verdict": "no verdict: no progress"}.get(outcome, outcome)
    path = units.artifacts_dir(context.root, goal.id) / "qa-report.md"
    closing.write(path, closing.render(goal, report_lines, session_id=driver.session_id,
                                       unit=unit.number if unit else None, verdicts=verdicts, outcome=described))
    context.events.emit("goal.qa_report", phase="settle", path=str(path),
                        lines=[line.render() for line in report_lines])


def _account(context: RunContext, unit: units.Unit) -> None:
    goal_sql.add_usage(context.driver.store, unit.goal_id, seconds=unit.elapsed(), steps=1)


def _result(status: str, summary: str, stop: ExitCode) -> PhaseResult:
    return PhaseResult(status, summary, stop=stop)


def _block(context: RunContext, unit: units.Unit, kind: str, reason: str, change: str) -> PhaseResult:
    driver = context.driver
    _account(context, unit)
    evidence = [item["trace"] for item in unit.verdicts if item.get("trace")] or [f"unit {unit.number}"]
    goals.set_status(driver.store, driver.goal, "blocked", reason, context.events,
                     blocked={"kind": kind, "reason": reason, "external_change": change, "evidence": evidence,
                              "no_independent_work": True})
    units.end(driver, unit, "blocked", reason)
    return _result("failed", f"blocked ({kind}): {reason}", ExitCode.BLOCKED)


def _bounce(context: RunContext, unit: units.Unit, reason: str) -> PhaseResult:
    driver = context.driver
    limit = context.recipe.limits.bounces
    count = unit_sql.add_bounce(driver.store, unit.goal_id)
    record_bounces(context.root, context.recipe, unit.goal_id, count)  # the task file's front matter (DESIGN §14)
    context.events.emit("goal.bounced", phase="settle", unit=unit.number, bounces=count, limit=limit, reason=reason)
    if count >= limit:
        return _block(context, unit, "bounces", f"bounce limit reached ({count} of {limit}): {reason}",
                      "a person settles the disagreement between the agent and its reviewers (fix the work, the "
                      "criteria or the checks) and resumes the goal, which starts its bounce count again")
    _account(context, unit)
    units.end(driver, unit, "bounced", reason)
    return _result("failed", f"bounced ({count} of {limit}): {reason}; the goal stays active for the next unit",
                   ExitCode.NOT_TERMINAL)


def _no_progress(context: RunContext, unit: units.Unit, reason: str) -> PhaseResult:
    driver = context.driver
    _account(context, unit)
    goal = goals.reload(driver.store, driver.goal)
    count = goal.no_progress + 1
    goal_sql.update_goal(driver.store, goal.id, no_progress=count)
    units.end(driver, unit, "no-verdict", reason)
    limit = driver.spec.no_progress_limit
    if count > limit and (goal.guidance_given or context.recipe.agent is None):
        paused = f"no required verdict and no new evidence in {count} units: {reason}"
        goals.set_status(driver.store, goal, "paused", paused, context.events)
        return _result("failed", f"paused: {paused}", ExitCode.NOT_TERMINAL)
    return _result("failed", f"no verdict, no progress ({count} unit(s) without): {reason}", ExitCode.NOT_TERMINAL)
