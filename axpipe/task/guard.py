"""The task file before and after a unit (DESIGN §14): what the unit wrote, and whether it may.

:func:`start` reads the goal's task file and the digest of every other task file beside it
(``*.md`` in the same folder) before the unit's agent runs; :meth:`TaskGuard.problem` reads
them again afterwards and says, in words naming the section or file, why the unit must stop:

- the task file no longer parses (or is gone);
- the unit wrote a part of it its role does not own (a person's journalled edits during the
  unit excepted: :mod:`axpipe.task.journal`);
- the unit edited, created or deleted another task's file.

The caller turns a problem into a hard stop (the quarantine stash, the goal blocked, exit 3).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from axpipe.records import record
from axpipe.task import journal, ownership, taskfile
from axpipe.task.taskfile import TaskFile


@record
class TaskGuard:
    """The task file and its neighbours as a unit found them."""

    root: Path
    path: Path
    shown: str
    before: TaskFile
    others: dict[str, str]
    started_at: str

    def problem(self, role: str) -> str | None:
        """Why the unit of ``role`` must stop, or None when it kept to its sections."""
        try:
            after = taskfile.read(self.path, self.shown)
        except taskfile.TaskFileError as error:
            return f"task file {self.shown}: the unit left it unparseable ({error.reason})"
        changed = _neighbours(self.path)
        touched = sorted(name for name in set(changed) | set(self.others) if changed.get(name) != self.others.get(name))
        if touched:
            return (f"task file: the {role} unit edited another task's file: {', '.join(touched)} "
                    f"(it works on {self.shown} only)")
        written = ownership.unit_writes(self.before, after,
                                        journal.journalled_files(self.root, self.before.id, self.started_at))
        foreign = ownership.outside(role, written)
        if foreign:
            owned = ", ".join(ownership.may_write(role)) or "no section"
            shown = ", ".join(f"'{name}'" for name in foreign)
            return (f"task file {self.shown}: the {role} unit wrote section {shown}, which its role does not own "
                    f"(the {role} role writes {owned})")
        return None

    def put_back(self, keep: Path) -> str:
        """After a hard stop for the task file: keep the unit's version at ``keep`` and write the
        file back as the unit found it (a file git does not track, such as the default under
        ``.axpipe/``, is not restored by the quarantine; one it tracks was, and a person's edit
        with it). A person's journalled edits made during the unit stay: ``axpipe task`` changes
        only the front matter and the ``Journal`` section, which are taken from the latest entry."""
        try:
            now = self.path.read_bytes()
        except OSError:
            now = None
        if now is not None:
            keep.parent.mkdir(parents=True, exist_ok=True)
            keep.write_bytes(now)
        text = self.before.text
        people = journal.journalled_files(self.root, self.before.id, self.started_at)
        if people:
            latest = people[-1]
            kept = taskfile.parse(self.before.with_section("Journal", latest.sections.get("Journal", "")))
            text = latest.front_text + kept.text[len(kept.front_text):]
        if now != text.encode("utf-8"):
            self.path.write_text(text, encoding="utf-8")
        said = " with the person's journalled edits" if people else ""
        return f"the task file is back as the unit found it{said} (the unit's version: {keep})"

    def written(self) -> list[str]:
        """The parts the unit wrote (after :meth:`problem` found none it may not)."""
        try:
            after = taskfile.read(self.path, self.shown)
        except taskfile.TaskFileError:
            return []
        return ownership.unit_writes(self.before, after,
                                     journal.journalled_files(self.root, self.before.id, self.started_at))


def kept_version(artifacts: Path, unit_number: int) -> Path:
    """Where :meth:`TaskGuard.put_back` keeps a stopped unit's version of the task file."""
    return artifacts / f"unit-{unit_number}" / "task-file.md"


def _neighbours(path: Path) -> dict[str, str]:
    """Digest of every other ``*.md`` file in the task file's folder."""
    found: dict[str, str] = {}
    try:
        candidates = sorted(path.parent.glob("*.md"))
    except OSError:
        return found
    for other in candidates:
        if other.name == path.name:
            continue
        try:
            found[other.name] = hashlib.sha256(other.read_bytes()).hexdigest()
        except OSError:
            found[other.name] = "unreadable"
    return found


def start(root: Path, path: Path, shown: str) -> TaskGuard:
    """Read the task file (:class:`taskfile.TaskFileError` when it does not parse) and its
    neighbours before a unit."""
    before = taskfile.read(path, shown)
    return TaskGuard(root, path, shown, before, _neighbours(path), journal.now())
