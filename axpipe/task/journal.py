"""A person's edits to a task file, journalled so they never count as a unit's work (DESIGN §14).

``axpipe task approve|answer|note|reopen`` change the task file through :func:`apply`: the
new text is written, a line is added to its ``Journal`` section, and an entry (the time, the
kind, the text, the SHA-256 of the file as the edit left it, and that content) is appended
to ``.axpipe/tasks/journal/<task>.jsonl``. The unit guard (:mod:`axpipe.task.guard`) reads
the entries made since a unit started: a part of the file left exactly as such an entry left
it is the person's. A direct edit that matches no entry counts as the unit's.

The journal lives under ``.axpipe/`` (git ignores it), beside the store, so no agent working
in the tree edits it by accident; it needs no schema migration.
"""

from __future__ import annotations

import hashlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from axpipe.task import taskfile
from axpipe.task.taskfile import TaskFile
from axpipe.workspace import state_dir


def journal_path(root: Path, task_id: str) -> Path:
    return state_dir(root) / "tasks" / "journal" / f"{task_id}.jsonl"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def apply(root: Path, path: Path, task: TaskFile, new_text: str, *, kind: str, text: str) -> TaskFile:
    """Write ``new_text`` (the person's edit of ``task`` at ``path``) with a ``Journal`` line
    saying ``kind: text``, and record the entry; return the file as written."""
    at = now()
    edited = taskfile.parse(new_text, str(path))
    journal = edited.sections.get("Journal", "")
    line = f"- {at[:19]}Z {kind}: {' '.join(text.split())}\n"
    body = journal.rstrip("\n") + "\n" + line
    final = edited.with_section("Journal", body)
    written = taskfile.parse(final, str(path))
    temporary = path.with_name(f".{path.name}.axpipe-{os.getpid()}")
    temporary.write_text(final, encoding="utf-8")
    os.replace(temporary, path)
    log = journal_path(root, task.id)
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"at": at, "kind": kind, "text": text, "sha256": digest(final),
                                 "content": final}) + "\n")
    return written


def entries(root: Path, task_id: str, since: str | None = None) -> list[dict[str, Any]]:
    """The journal's entries for ``task_id`` (made at or after ``since`` when given)."""
    log = journal_path(root, task_id)
    try:
        lines = log.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    found = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a torn last line (a crash while writing) is no entry
        if isinstance(entry, dict) and (since is None or str(entry.get("at", "")) >= since):
            found.append(entry)
    return found


def journalled_files(root: Path, task_id: str, since: str) -> list[TaskFile]:
    """The task file as each person's edit since ``since`` left it (entries whose content no
    longer matches their hash, or no longer parses, are ignored: they prove nothing)."""
    found = []
    for entry in entries(root, task_id, since):
        content = entry.get("content")
        if not isinstance(content, str) or digest(content) != entry.get("sha256"):
            continue
        try:
            found.append(taskfile.parse(content))
        except taskfile.TaskFileError:
            continue
    return found
