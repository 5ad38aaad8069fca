"""Acceptance criteria in a task file (DESIGN §14) and the goal they become.

A criterion is a numbered line of the ``Acceptance criteria`` section::

    1. **[closes]** the parser keeps every byte: `pytest -q tests/test_parser.py`
    2. [found] the page shows the total
    3. **[process]** a person reads the migration notes

(bold optional; the command is the first backticked span after the colon). A line that
looks like a criterion (it carries a ``[closes]``, ``[found]`` or ``[process]`` tag) but is
not ``N. [tag]`` (a bullet, ``1a.``, ``1)``) is never skipped silently: it is a problem, so
the plan is refused rather than a criterion lost. A ``[closes]`` criterion with a command
becomes a frozen check ``criterion-N`` proving acceptance id ``C<N>``; the goal that results
goes through plan validation (DESIGN §5) like a recipe's.
"""

from __future__ import annotations

import dataclasses
import re

from axpipe.recipe import schema
from axpipe.records import record

SECTION = "Acceptance criteria"
TAGS = ("closes", "found", "process")
_CRITERION = re.compile(
    r"^(?P<number>\d+)\.\s+(?P<bold>\*\*)?\[(?P<tag>closes|found|process)\](?P=bold)?\s*(?P<rest>.*)$")
_LOOKS_LIKE = re.compile(r"\[(?:closes|found|process)\]")
_COMMAND = re.compile(r":\s*`(?P<command>[^`]+)`")
_BARE = re.compile(r"`(?P<command>[^`]+)`")
FORM = "N. **[closes]** text: `command`"


@record
class Criterion:
    """One numbered criterion of the task file."""

    number: int
    tag: str
    text: str
    command: str | None
    line: str

    @property
    def acceptance_id(self) -> str:
        return f"C{self.number}"

    @property
    def check_id(self) -> str | None:
        return f"criterion-{self.number}" if self.tag == "closes" and self.command else None


def parse(body: str) -> tuple[list[Criterion], list[str]]:
    """The criteria of an ``Acceptance criteria`` section's ``body``, and one problem per line
    that looks like a criterion but is not read as one (or repeats a number)."""
    found: list[Criterion] = []
    problems: list[str] = []
    fenced = False
    for raw in body.splitlines():
        line = raw.strip()
        if line.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or not line:
            continue
        match = _CRITERION.match(line)
        if match is None:
            if _LOOKS_LIKE.search(line):
                problems.append(f"criterion {line!r}: not read as a criterion, number it N.: {FORM}")
            continue
        rest = match["rest"]
        # the first backticked span after the colon; a criterion without a colon takes its
        # first backticked span, as task files written before the colon form were read
        command_match = _COMMAND.search(rest) or (_BARE.search(rest) if ":" not in rest else None)
        text = rest[:command_match.start()].strip() if command_match else rest.rstrip(":").strip()
        number = int(match["number"])
        if any(item.number == number for item in found):
            problems.append(f"criterion {line!r}: number {number} is used twice; number each criterion once")
            continue
        if match["tag"] == "closes" and command_match is None:
            problems.append(f"criterion {number} ({line!r}): a [closes] criterion needs its command: {FORM}")
        found.append(Criterion(number, match["tag"], text,
                               command_match["command"].strip() if command_match else None, line))
    return found, problems


def merged_goal(goal: schema.Goal, criteria: list[Criterion]) -> schema.Goal:
    """``goal`` with the task file's criteria added: each an acceptance criterion ``C<N>``,
    each ``[closes]`` command a check ``criterion-N`` (idempotent)."""
    ids = {item.check_id for item in criteria}
    acceptance = dict(goal.acceptance)
    checks = [check for check in goal.checks if check is None or check.id not in ids]  # merging twice adds once
    for item in criteria:
        acceptance[item.acceptance_id] = schema.Acceptance(tag=item.tag, text=item.text, check=item.check_id)
        if item.check_id is not None:
            checks.append(schema.CheckSpec(id=item.check_id, kind="command", acceptance=[item.acceptance_id],
                                           command=item.command, purpose=item.text))  # type: ignore[arg-type]
    return dataclasses.replace(goal, acceptance=acceptance, checks=checks)


def scope_patterns(body: str) -> list[str]:
    """The patterns of a ``Scope`` section: one per bullet (``- `src/lib/*.ts` ``), backticks
    optional; other lines are prose."""
    found = []
    for line in body.splitlines():
        match = re.match(r"^\s*[-*]\s+`?(?P<pattern>[^`]+?)`?\s*$", line)
        if match:
            found.append(match["pattern"])
    return found
