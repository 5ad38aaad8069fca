"""The git questions reviews ask: which commit, what changed, is the tree clean.

These are short plumbing calls whose stdout is parsed, so they go through ``subprocess``
with stderr kept apart (as :mod:`axpipe.workspace` does); commands a user declares run
through :mod:`axpipe.process`.

``root`` is the project folder (:func:`project_root`): the top of a work tree or, in a
monorepo, a subfolder of one. Reviewers run there, so every path answered here is relative
to it; a change elsewhere in the work tree is still answered, as ``../`` paths, because a
round reviews (and a clean checkout means) the whole commit.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from axpipe import git
from axpipe.errors import InputError
from axpipe.git import EMPTY_TREE as EMPTY_TREE  # re-exported: reviews name revisions.EMPTY_TREE
from axpipe.records import record
from axpipe.workspace import find_root, from_top, git_prefix, git_top


class GitError(InputError):
    """A git question that could not be answered (not a repository, unknown revision)."""


def _git(root: Path, *args: str, check: bool = True, errors: str = "replace") -> subprocess.CompletedProcess[str]:
    # GIT_LITERAL_PATHSPECS=0: views() writes `:/` and `:(exclude)` pathspecs (magic) itself
    try:  # quote_names: the diffs here are read by reviewers, with git's own quoting
        completed = git.text(root, *args, errors=errors, env={"LC_ALL": "C"}, optional_locks=False,
                             literal_pathspecs=False, quote_names=True)
    except FileNotFoundError as error:
        raise GitError("git is not installed (not on PATH)") from error
    if check and completed.returncode != 0:
        message = completed.stderr.strip().splitlines()[-1:] or [f"exit code {completed.returncode}"]
        raise GitError(f"git {' '.join(args)} failed in {root}: {message[0]}")
    return completed


def repository_root(path: Path, *, needed_by: str = "reviews and receipts") -> Path:
    """The top folder of the git work tree holding ``path``; an input error outside git
    that says what (``needed_by``) needs one."""
    # surrogateescape: a folder whose name is not UTF-8 keeps its bytes (errors=replace would lose them)
    completed = _git(path, "rev-parse", "--show-toplevel", check=False, errors="surrogateescape")
    if completed.returncode != 0:
        raise GitError(f"{path} is not inside a git work tree; {needed_by} need one")
    return Path(completed.stdout.strip()).resolve()


def project_root(start: Path, *, needed_by: str = "reviews and receipts") -> Path:
    """The project folder around ``start`` (:func:`axpipe.workspace.find_root`: the nearest
    folder holding ``axpipe.yaml`` or ``.git``), where reviewers run and receipts' paths
    start; an input error when git does not see it, saying what (``needed_by``) needs git."""
    root = find_root(start)
    if git_top(root) is None:
        raise GitError(f"{start} is not inside a git work tree; {needed_by} need one")
    return root


def prefix(root: Path) -> str:
    """``root`` relative to the top of its work tree as git writes paths: ``""`` at the top
    (or where git does not see ``root``), else ending in ``/`` (``services/api/``)."""
    top = git_top(root)
    return git_prefix(root, top) if top is not None else ""


@record(frozen=True)
class View:
    """One ``git diff`` over a part of the work tree whose paths read from the project folder.

    ``options`` and ``pathspecs`` go into the diff; ``up`` goes before each name that
    ``--name-only`` prints (the patch's own paths carry it through its prefixes).
    """

    options: tuple[str, ...]
    pathspecs: tuple[str, ...]
    up: str


def views(root: Path) -> list[View]:
    """The diffs that together show the whole work tree from ``root``.

    At the top of a work tree that is one plain diff. In a subfolder it is the folder's own
    change with ``--relative`` (paths a reviewer running there can open), then the change
    outside it, with ``../`` paths: never left out, because an edit to a shared library is
    part of the change too. Both name ``--relative`` or ``--no-relative`` so that a user's
    ``diff.relative`` setting cannot hide either part; the outside part has no rename
    detection because git writes a rename's ``rename from`` lines without the prefixes.
    """
    folder = prefix(root)
    if not folder:
        return [View((), (), "")]
    up = "../" * folder.count("/")
    return [View(("--relative",), (), ""),
            View(("--no-relative", "--no-renames", f"--src-prefix=a/{up}", f"--dst-prefix=b/{up}"),
                 (":/", f":(top,exclude,literal){folder}"), up)]


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
    """The patch from ``base`` to ``revision`` (no colour, no external diff tool), with paths
    relative to ``root`` (see :func:`views`)."""
    return "".join(_git(root, "diff", "--no-color", "--no-ext-diff", "--find-renames", *view.options, base,
                        revision, "--", *view.pathspecs).stdout for view in views(root))


def changed_files(root: Path, base: str, revision: str) -> list[str]:
    """Paths, relative to ``root``, that differ between ``base`` and ``revision`` (both sides
    of a rename)."""
    paths: list[str] = []
    for view in views(root):
        output = _git(root, "diff", "--name-only", "--no-renames", "-z", *view.options, base, revision, "--",
                      *view.pathspecs).stdout
        paths.extend(view.up + path for path in output.split("\0") if path)
    return paths


FILE_MODES = {"100644": "a file", "100755": "an executable file"}
"""The tree entry modes of a regular file. A symlink (120000) is a blob too, but its
content is a path that can lead anywhere, out of the repository included."""
OTHER_MODES = {"120000": "a symlink", "160000": "a submodule", "040000": "a folder"}


def mode_at(root: Path, revision: str, path: str) -> str | None:
    """The mode of ``path`` (relative to ``root``) in ``revision``'s tree (``100644``,
    ``100755``, ``120000`` for a symlink, ...), or None when the tree has no such entry."""
    # ls-tree reads paths from the folder git runs in, matches whole names (never a prefix
    # or a glob) and, with -z, writes the name unquoted: "<mode> <type> <object>\t<name>"
    completed = _git(root, "ls-tree", "-z", "--end-of-options", revision, "--", f"./{path}", check=False)
    wanted = os.path.normpath(path)
    for entry in completed.stdout.split("\0") if completed.returncode == 0 else []:
        meta, _, name = entry.partition("\t")
        if name and os.path.normpath(name) == wanted:
            return meta.split(" ", 1)[0]
    return None


def is_file_at(root: Path, revision: str, path: str) -> bool:
    """Whether ``path`` (relative to ``root``) is a regular file in ``revision``'s tree
    (mode 100644 or 100755; not a symlink, a submodule or a folder)."""
    return mode_at(root, revision, path) in FILE_MODES


def uncommitted(root: Path, *, ignore: list[Path] | tuple[Path, ...] = ()) -> list[str]:
    """Every path with a change not in HEAD: staged, modified, deleted or untracked (and not
    ignored by git), anywhere in the work tree, relative to ``root`` (``../`` outside it: a
    round reviews the whole commit). Paths under ``ignore`` (absolute folders) are left out."""
    output = _git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=none").stdout
    project = prefix(root)  # `git status` writes paths from the top of the work tree, wherever it runs
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
        paths.append(from_top(path, project))
    skipped = [folder.resolve() for folder in ignore]

    def kept(path: str) -> bool:
        absolute = (root / path).resolve()
        return not any(absolute == folder or folder in absolute.parents for folder in skipped)

    return sorted(path for path in paths if kept(path))
