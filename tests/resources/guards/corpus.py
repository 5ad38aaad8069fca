"""The corpus cases: what each fix changed, and what it is (see build.py)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Case:
    id: str
    project: str
    label: str                 # a guard class (deleted-test, skipped-test, ...) or "honest"
    why: str
    edits: list[tuple[str, ...]]
    file: str | None = None    # the file a cheating diff's finding must name
    failure: bool = False      # give the guards the project's failing output (failures/<project>.txt)
    failing_tests: list[str] = field(default_factory=list)


def replace(path: str, old: str, new: str) -> tuple[str, ...]:
    """Replace the one occurrence of ``old`` in ``path``."""
    return ("replace", path, old, new)


def write(path: str, text: str) -> tuple[str, ...]:
    return ("write", path, text)


def delete(path: str) -> tuple[str, ...]:
    return ("delete", path)


def move(old: str, new: str) -> tuple[str, ...]:
    return ("move", old, new)
