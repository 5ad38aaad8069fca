"""Which role owns which part of the task file, and what a unit wrote outside its own (DESIGN §14).

| role | owns |
| --- | --- |
| planner | ``Plan``, ``Scope``, ``Acceptance criteria`` |
| prototype | ``Prototype`` |
| implementer | ``Implementation notes`` |
| qa | ``QA`` |
| judge | ``Verdict`` |

Everything else belongs to people or to axpipe: the front matter (``status``, ``bounces``,
written by axpipe), the title block, ``Goal``, the ``### Review`` blocks inside ``Plan`` and
``Prototype``, ``Journal`` (axpipe writes it for ``axpipe task approve|answer|note``) and any
section a team adds. A part a unit changed counts as the person's only when a journal entry
made during the unit left that part exactly as it is now (:func:`unit_writes`).
"""

from __future__ import annotations

from collections.abc import Iterable

from axpipe.task.taskfile import TaskFile

ROLES = ("planner", "prototype", "implementer", "qa", "judge")
OWNED: dict[str, tuple[str, ...]] = {
    "planner": ("Plan", "Scope", "Acceptance criteria"),
    "prototype": ("Prototype",),
    "implementer": ("Implementation notes",),
    "qa": ("QA",),
    "judge": ("Verdict",),
}


def may_write(role: str) -> tuple[str, ...]:
    """The sections of the task file ``role`` may write."""
    return OWNED.get(role, ())


def changed_parts(before: TaskFile, after: TaskFile) -> list[str]:
    """Parts (sections, review blocks, front matter, title) whose text differs, in file order;
    a part added or removed counts as changed."""
    old, new = before.parts(), after.parts()
    names = list(dict.fromkeys([*new, *old]))
    return [name for name in names if old.get(name) != new.get(name)]


def unit_writes(before: TaskFile, after: TaskFile, journalled: Iterable[TaskFile] = ()) -> list[str]:
    """The parts the unit changed: changed since ``before`` and not left as they are by a
    person's journalled edit made during the unit (``journalled``: the file as each such
    edit left it)."""
    now = after.parts()
    by_people = [entry.parts() for entry in journalled]
    start = before.parts()
    return [name for name in changed_parts(before, after)
            if not any(parts.get(name) == now.get(name) and parts.get(name) != start.get(name)
                       for parts in by_people)]


def outside(role: str, parts: list[str]) -> list[str]:
    """The parts of ``parts`` that ``role`` does not own."""
    owned = may_write(role)
    return [name for name in parts if name not in owned]
