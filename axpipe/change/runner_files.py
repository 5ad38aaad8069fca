"""Ignored files a test runner still reads: the part of a working tree git does not show.

pytest loads ``conftest.py`` and reads ``pytest.ini``/``pyproject.toml``/``setup.cfg``/
``tox.ini`` whether or not git ignores them. An agent that adds ``conftest.py`` to
``.git/info/exclude`` (or a ``.gitignore``, or ``core.excludesFile``) and then writes one
that skips every test would be invisible to anything that follows ignore rules:
``git add --all``, ``git status``, ``git diff``. :func:`ignored_runner_files` lists those
files, so that :func:`axpipe.change.from_git.snapshot` and :func:`axpipe.change.from_git.from_git` (the
guards' view of a change) see them whatever the ignore rules say, now or later.

Where to look follows pytest's own collection: it never enters ``.*``, ``build``,
``dist``, ``node_modules``, ``venv``, ``*.egg``, ``__pycache__`` or a virtualenv, so
neither does this (and a ``.venv`` full of packages costs nothing). Everything else that
git ignores is looked into: one ``git ls-files`` lists the ignored files of the folders
git walks anyway and the ignored folders it does not enter; only those folders are walked
here, usually a handful of small ones (``htmlcov/``, ``*.egg-info/``).
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path

from axpipe import git

# The files pytest reads to decide what runs: per-folder plugins and its configuration.
RUNNER_FILES = frozenset({"conftest.py", "pytest.ini", ".pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini"})
# pytest's default `norecursedirs`, plus the folders it always skips.
_NOT_COLLECTED = (".*", "*.egg", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}", "__pycache__")
_VIRTUALENV_MARKERS = ("pyvenv.cfg", "conda-meta")


def _collected(name: str) -> bool:
    return not any(fnmatch.fnmatchcase(name, pattern) for pattern in _NOT_COLLECTED)


def ignored_runner_files(top: Path, excludes: list[str] | None = None) -> list[str]:
    """Paths (from ``top``, the top of the work tree) of the ignored, untracked files named
    in :data:`RUNNER_FILES` in folders pytest would collect. Sorted; empty when git fails.
    ``excludes`` (``--exclude-from=FILE``) replaces git's ignore rules of now: a unit's
    snapshots use the rules it started with (:mod:`axpipe.change.ignore_rules`)."""
    completed = git.run(top, *listing_command(excludes), literal_pathspecs=False)
    return from_listing(top, completed.stdout) if completed.returncode == 0 else []


def listing_command(excludes: list[str] | None = None) -> list[str]:
    """The one ``git ls-files`` :func:`ignored_runner_files` runs, its arguments for
    :mod:`axpipe.git` (a caller may start it beside other git commands and hand its output to
    :func:`from_listing`)."""
    return ["ls-files", "--others", "--ignored", *(excludes or ["--exclude-standard"]), "--directory", "-z"]


def from_listing(top: Path, output: bytes) -> list[str]:
    """The runner files in the output of :func:`listing_command` run in ``top``."""
    found: set[str] = set()
    for entry in output.decode("utf-8", errors="surrogateescape").split("\0"):
        parts = entry.rstrip("/").split("/")
        if not entry or not all(_collected(part) for part in parts[:-1]):
            continue
        if not entry.endswith("/"):
            if parts[-1] in RUNNER_FILES:
                found.add(entry)
        elif _collected(parts[-1]):
            found.update(_walk(top, entry.rstrip("/")))
    return sorted(found)


def _walk(top: Path, folder: str) -> list[str]:
    """Runner files under an ignored ``folder``, pruned as pytest prunes its collection."""
    found: list[str] = []
    for current, folders, files in os.walk(top / folder):
        if any(marker in folders or marker in files for marker in _VIRTUALENV_MARKERS):
            folders[:] = []
            continue
        folders[:] = [name for name in folders if _collected(name)]
        relative = Path(current).relative_to(top).as_posix()
        found.extend(f"{relative}/{name}" for name in files if name in RUNNER_FILES)
    return found
