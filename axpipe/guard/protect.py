"""Protected tests: the agent's edits to the project's tests are undone before any guard runs.

Making tests read-only to the agent is what cut cheating to near zero without hurting
honest work in the ImpossibleBench study; the guards then judge only the rest of the fix.
``repair.protect`` and ``goal.protect`` are git-style globs (:mod:`axpipe.change.globs`) relative
to the project's folder, by default the runners' test locations (:data:`DEFAULT`);
``allow_test_edits: true`` in the same section turns the protection off (a task that is
about the tests themselves).

:func:`restore` puts back exactly the paths it is given, as they were at a point marked
before the agent ran (:func:`axpipe.change.revert.mark`, :func:`axpipe.change.revert.restore_paths`): a
protected file the agent edited gets its bytes back, one it created is removed, one it
deleted comes back. No other file is touched, so untouched files keep their inodes and
times. Git's index entries of those paths are put back
too (:func:`staged` before the agent runs, :func:`restore` with it after): what the agent
staged there is unstaged, what the user had staged stays. A commit the agent made is a
whole revert's business, which the repair does when HEAD moved.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from axpipe import git
from axpipe.change import revert
from axpipe.change.globs import glob_regex

# Where pytest, unittest, jest, vitest, mocha and node:test find tests, and pytest's conftest.
DEFAULT = ("tests/**", "test/**", "testing/**", "**/tests/**", "**/test/**", "**/__tests__/**", "**/test_*.py",
           "**/*_test.py", "**/conftest.py", "**/*.test.*", "**/*.spec.*")
GUARD = "protected-path"


def patterns(protect: Sequence[str] | None, allow_test_edits: bool) -> tuple[str, ...]:
    """The globs in force: none when test edits are allowed, else ``protect`` or the default."""
    if allow_test_edits:
        return ()
    return tuple(protect) if protect is not None else DEFAULT


def matching(paths: Iterable[str], globs: Sequence[str]) -> list[str]:
    """The ``paths`` (relative to the project's folder) that one of ``globs`` matches."""
    if not globs:
        return []
    pattern = re.compile("|".join(f"(?:{glob_regex(glob)})" for glob in globs))
    return sorted({path for path in paths if not path.startswith("../") and pattern.fullmatch(path)})


def staged(top: Path) -> dict[str, bytes]:
    """Every index entry (``git ls-files --stage``) by path, to put some back later."""
    listed = git.run(top, "ls-files", "--stage", "-z").stdout
    entries: dict[str, bytes] = {}
    for entry in listed.split(b"\0"):
        if b"\t" in entry:
            entries[git.decode(entry.split(b"\t", 1)[1])] = entry
    return entries


def restore(top: Path, point: revert.Point, paths: Sequence[str], index: dict[str, bytes] | None = None) -> None:
    """Put ``paths`` (relative to the work tree's top ``top``) back as they were at
    ``point`` (:func:`axpipe.change.revert.restore_paths`: a file created since is removed, one
    changed or deleted written back; nothing else is touched). With ``index``
    (:func:`staged` before the agent ran), their index entries go back to it as well."""
    if not paths:
        return
    revert.restore_paths(top, point, point.snapshot(top), only=paths)
    if index is None:
        return
    now = staged(top)
    changed = [path for path in paths if now.get(path) != index.get(path)]
    if not changed:
        return
    # the agent staged there: its entries go, the earlier ones come back (update-index takes
    # the paths literally and does not ask whether the file still matches)
    git.run(top, "update-index", "-z", "--force-remove", "--stdin",
            input=b"".join(os.fsencode(path) + b"\0" for path in changed), check=True)
    lines = b"".join(index[path] + b"\0" for path in changed if path in index)
    if lines:
        git.run(top, "update-index", "-z", "--index-info", input=lines, check=True)
