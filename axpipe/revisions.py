"""The git questions reviews ask: which commit, what changed, is the tree clean.

These are short plumbing calls whose stdout is parsed, so they go through ``subprocess``
with stderr kept apart (as :mod:`axpipe.workspace` does); commands a user declares run
through :mod:`axpipe.process`.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from axpipe.errors import InputError

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
"""git's empty tree: the base of a diff of a repository's first commit."""


class GitError(InputError):
    """A git question that could not be answered (not a repository, unknown revision)."""


def _git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    try:
        completed = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env=env,
                                   errors="replace")
    except FileNotFoundError as error:
        raise GitError("git is not installed (not on PATH)") from error
    if check and completed.returncode != 0:
        message = completed.stderr.strip().splitlines()[-1:] or [f"exit code {completed.returncode}"]
        raise GitError(f"git {' '.join(args)} failed in {root}: {message[0]}")
    return completed


def repository_root(path: Path, *, needed_by: str = "reviews and receipts") -> Path:
    """The top folder of the git work tree holding ``path``; an input error outside git
    that says what (``needed_by``) needs one."""
    completed = _git(path, "rev-parse", "--show-toplevel", check=False)
    if completed.returncode != 0:
        raise GitError(f"{path} is not inside a git work tree; {needed_by} need one")
    return Path(completed.stdout.strip()).resolve()


def head(root: Path) -> str:
    """The full SHA of HEAD; an input error in a repository without commits."""
    sha = resolve(root, "HEAD")
    if sha is None:
        raise GitError(f"the repository {root} has no commit yet; commit what is to be reviewed")
    return sha


def resolve(root: Path, revision: str) -> str | None:
    """The commit ``revision`` names, as a full SHA, or None when it names none."""
    if not revision or revision.startswith("-"):
        return None
    completed = _git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}",
                     check=False)
    return completed.stdout.strip() if completed.returncode == 0 else None


def parent(root: Path, revision: str) -> str | None:
    """The first parent of ``revision``, or None for a root commit."""
    return resolve(root, f"{revision}~1")


def is_ancestor(root: Path, ancestor: str, descendant: str) -> bool:
    """Whether ``ancestor`` is reachable from ``descendant`` (a commit is its own ancestor)."""
    return _git(root, "merge-base", "--is-ancestor", ancestor, descendant, check=False).returncode == 0


def diff(root: Path, base: str, revision: str) -> str:
    """The patch from ``base`` to ``revision`` (no colour, no external diff tool)."""
    return _git(root, "diff", "--no-color", "--no-ext-diff", "--find-renames", base, revision).stdout


def changed_files(root: Path, base: str, revision: str) -> list[str]:
    """Paths that differ between ``base`` and ``revision`` (both sides of a rename)."""
    output = _git(root, "diff", "--name-only", "--no-renames", "-z", base, revision).stdout
    return [path for path in output.split("\0") if path]


def is_file_at(root: Path, revision: str, path: str) -> bool:
    """Whether ``path`` is a file (a blob) in ``revision``'s tree."""
    completed = _git(root, "cat-file", "-t", f"{revision}:{path}", check=False)
    return completed.returncode == 0 and completed.stdout.strip() == "blob"


def uncommitted(root: Path, *, ignore: list[Path] | tuple[Path, ...] = ()) -> list[str]:
    """Every path with a change not in HEAD: staged, modified, deleted or untracked (and not
    ignored by git). Paths under ``ignore`` (absolute folders) are left out."""
    output = _git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=none").stdout
    entries = output.split("\0")
    paths: list[str] = []
    index = 0
    while index < len(entries):
        entry = entries[index]
        index += 1
        if not entry:
            continue
        status, path = entry[:2], entry[3:]
        if status[0] in "RC":
            index += 1  # the rename's source follows as its own entry
        paths.append(path)
    skipped = [folder.resolve() for folder in ignore]

    def kept(path: str) -> bool:
        absolute = (root / path).resolve()
        return not any(absolute == folder or folder in absolute.parents for folder in skipped)

    return sorted(path for path in paths if kept(path))
