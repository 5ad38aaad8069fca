"""The task a goal's delivery is named after, and the templates that use it (DESIGN §16).

The seam to the task file (DESIGN §14): :func:`task_of` is the one place that says what a
goal's task is called and how it is summed up. Until goals carry a task file, the task is the
goal itself: its id is the name, the first line of its objective the summary.
"""

from __future__ import annotations

import re
import string
from typing import TYPE_CHECKING, Any

from axpipe.recipe import schema
from axpipe.records import record

if TYPE_CHECKING:  # recipe validation uses the templates' rules: it need not load the goal layer
    from axpipe.goal.goals import Goal

SUMMARY_LIMIT = 72  # a commit subject line people read in `git log --oneline`
FIELDS = {"branch": ("task",), "subject": ("task", "summary", "unit")}


@record
class Task:
    name: str
    summary: str


def task_of(goal: Goal) -> Task:
    """The task ``goal`` delivers."""
    first = next((line.strip() for line in goal.objective.splitlines() if line.strip()), goal.id)
    summary = first.rstrip(".")
    if len(summary) > SUMMARY_LIMIT:
        summary = summary[:SUMMARY_LIMIT - 1].rstrip() + "…"
    return Task(goal.id, summary)


def template_problem(template: str, key: str) -> str | None:
    """Why ``template`` (``deliver.branch`` or ``deliver.subject``) cannot be filled in, or None."""
    allowed = FIELDS[key]
    try:
        names = [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]
    except ValueError as error:
        return f"{template!r} is not a template: {error}"
    unknown = sorted({name for name in names if name not in allowed})
    if unknown:
        return f"{template!r} uses {', '.join('{' + name + '}' for name in unknown)}; it may use " + \
            ", ".join("{" + name + "}" for name in allowed)
    return None


def branch(spec: schema.Deliver, task: Task) -> str:
    return spec.branch.format(task=task.name)


def subject(spec: schema.Deliver, task: Task, unit: int) -> str:
    text = spec.subject.format(task=task.name, summary=task.summary, unit=unit)
    return " ".join(text.split())  # one line: a newline would make the rest the body


def subject_pattern(spec: schema.Deliver | dict[str, Any], task: Task) -> str:
    given = spec.get("subject_pattern") if isinstance(spec, dict) else spec.subject_pattern
    return given if given else f"^{re.escape(task.name)}: "
