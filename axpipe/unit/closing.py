"""Closing criteria (DESIGN §8) and ``qa-report.md``.

Every acceptance criterion has a tag:

- ``closes``: decided by its checks (commands); while one of these fails the unit is not
  done yet and QA is not asked;
- ``found``: observed on the running application. When the criterion names a check (its
  *checker*: a browser check kind, or any command), the checker's receipt is its result;
  once the closing checks pass, a checker that fails is a failed QA (a bounce) and one
  that cannot run is ``CANNOT_VERIFY``. Like every declared check it must pass for the
  goal to complete (:mod:`axpipe.goal.completion`). Without a checker the criterion goes, word
  for word, to the "For the reviewer" list of the QA report and never fails the goal;
- ``process``: for people (a design review, a sign-off), listed for them.

``.axpipe/artifacts/<goal>/qa-report.md`` starts with one line per criterion, in this fixed
shape (a pull request is built from these lines)::

    - <id> PASS|FAIL|REVIEWER · browser|command|code · <file or ->

``browser`` when the checker's kind says so (``medium = "browser"`` on the check kind
plugin), ``command`` for other checks, ``code`` when a person judges it from the code.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from axpipe.goal.goals import Goal
from axpipe.records import record


def _natural(key: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", key)]


def criteria(goal: Goal) -> list[tuple[str, dict[str, Any]]]:
    """The goal's acceptance criteria in natural order (AC2 before AC10)."""
    acceptance: dict[str, dict[str, Any]] = goal.plan.get("acceptance", {})
    return sorted(acceptance.items(), key=lambda pair: _natural(pair[0]))


def checks_of(goal: Goal, criterion_id: str, criterion: dict[str, Any]) -> list[str]:
    """The checks that prove one criterion: its ``check`` and those listing it in ``acceptance``."""
    named = [criterion["check"]] if criterion.get("check") else []
    listing = [check["id"] for check in goal.checks if criterion_id in check.get("acceptance", [])]
    return list(dict.fromkeys([*named, *listing]))


def closing_checks(goal: Goal) -> set[str]:
    """The closing checks: those proving a ``closes`` criterion, and those tied to no criterion
    at all (a frozen assertion of its own). A unit asks QA (and counts a failing ``found``
    checker as a bounce) only once these pass. Checks that only verify ``found`` or
    ``process`` criteria are QA's evidence; the completion gate still requires them to pass."""
    tied: dict[str, set[str]] = {check["id"]: set() for check in goal.checks}
    for criterion_id, criterion in goal.plan.get("acceptance", {}).items():
        for check_id in checks_of(goal, criterion_id, criterion):
            tied.setdefault(check_id, set()).add(criterion["tag"])
    return {check_id for check_id, tags in tied.items() if not tags or "closes" in tags}


@record
class Line:
    """One criterion's line of the report."""

    id: str
    tag: str
    text: str
    result: str  # PASS | FAIL | REVIEWER
    medium: str  # browser | command | code
    file: str

    def render(self) -> str:
        return f"- {self.id} {self.result} · {self.medium} · {self.file}"


def lines(root: Path, goal: Goal, states: dict[str, Any], receipts: dict[str, dict[str, Any]],
          browser_kinds: set[str]) -> list[Line]:
    """A line per criterion from the checks' states (``completion.CheckState`` by id) and their receipts."""
    kinds = {check["id"]: check.get("kind", "command") for check in goal.checks}
    out = []
    for criterion_id, criterion in criteria(goal):
        tag, text = criterion["tag"], criterion["text"]
        proving = checks_of(goal, criterion_id, criterion) if tag != "process" else []
        if not proving:
            out.append(Line(criterion_id, tag, text, "REVIEWER", "code", "-"))
            continue
        passed = all(check_id in states and states[check_id].status == "passed" for check_id in proving)
        medium = "browser" if any(kinds.get(check_id) in browser_kinds for check_id in proving) else "command"
        evidence = next((check_id for check_id in proving if not (check_id in states and
                                                               states[check_id].status == "passed")), proving[0])
        out.append(Line(criterion_id, tag, text, "PASS" if passed else "FAIL", medium,
                        _file(root, states.get(evidence), receipts)))
    return out


def _file(root: Path, state: Any, receipts: dict[str, dict[str, Any]]) -> str:
    if state is None or state.held_out or state.receipt is None:
        return "-"
    artifacts = receipts.get(state.receipt, {}).get("artifacts") or []
    if not artifacts:
        return "-"
    return os.path.relpath(artifacts[0], root)


def render(goal: Goal, report_lines: list[Line], *, session_id: str, unit: int | None,
           verdicts: list[dict[str, Any]], outcome: str) -> str:
    body = [line.render() for line in report_lines]
    body += ["", f"# QA report: {goal.id}", "", f"- Objective: {goal.objective}",
             f"- Session: {session_id}" + (f", unit {unit}" if unit is not None else ""), f"- Outcome: {outcome}"]
    closes = [line for line in report_lines if line.tag == "closes"]
    if closes:
        body += ["", "## Closing criteria (`closes`: these alone decide closing)", ""]
        body += [f"- {line.id} {line.result}: {line.text}" for line in closes]
    checked = [line for line in report_lines if line.tag == "found" and line.result != "REVIEWER"]
    if checked:
        body += ["", "## Found criteria with a checker", ""]
        body += [f"- {line.id} {line.result} ({line.medium}): {line.text}" for line in checked]
    reviewer = [line for line in report_lines if line.tag == "found" and line.result == "REVIEWER"]
    body += ["", "## For the reviewer", ""]
    body += [f"- {line.id}: {line.text}" for line in reviewer] or ["(nothing: every found criterion has a checker)"]
    people = [line for line in report_lines if line.tag == "process"]
    if people:
        body += ["", "## For people (`process`)", ""] + [f"- {line.id}: {line.text}" for line in people]
    if verdicts:
        body += ["", "## Verdicts of this unit", ""]
        for verdict in verdicts:
            said = f"{verdict['role']}: {verdict['verdict']}" if verdict["verdict"] else "no verdict"
            trace = f" (trace {verdict['trace']})" if verdict.get("trace") else ""
            body.append(f"- {verdict['name']}: {said}{trace}; {verdict.get('reason') or ''}".rstrip("; "))
    return "\n".join(body) + "\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_name(path.name + ".tmp")
    scratch.write_text(text, encoding="utf-8")
    scratch.replace(path)
    return path
