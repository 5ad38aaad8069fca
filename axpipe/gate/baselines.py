"""The baseline a gate narrows against, and the lines the change touched since it.

A baseline that cannot be resolved fails closed: a repository without commits, an unknown
ref, or a shallow clone that does not have the commit is an input error naming what to do,
never a silent fall-back to another base. The change is the working tree (committed,
staged, unstaged and untracked files) against the baseline commit; its changed lines are
the added or modified lines of ``git diff -U0`` (renames followed, so a moved file keeps
its history; an untracked file is all new lines unless it is the other side of a rename).
The diff is taken from a scratch copy of the index after ``git add --all``, so a plain
``mv`` that was never staged is a rename, exactly as after ``git add -A``; the user's
index is never written.

The project may be a subfolder of its work tree (a monorepo). The change is still the whole
tree's, but every path in :class:`ChangedLines` is written as the project's tools write it,
from the project's folder: ``git diff`` prints ``services/api/mod.py`` where ruff prints
``mod.py``, and a library beside the project is ``../../lib/x.py``. A project in a folder
git ignores is refused: git would see none of its changes.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import field
from pathlib import Path

from axpipe import git
from axpipe.change import unidiff
from axpipe.errors import InputError
from axpipe.records import record
from axpipe.workspace import from_top, git_prefix, git_top


class BaselineError(InputError):
    """The baseline cannot be resolved: the gate refuses rather than narrow against the wrong base."""


def _git(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    # GIT_LITERAL_PATHSPECS=0: changed_lines() adds the whole tree with the `:/` pathspec (magic)
    return git.run(root, *args, env=env, optional_locks=False, literal_pathspecs=False)


def _commit(root: Path, revision: str) -> str | None:
    return git.resolve_commit(root, revision, optional_locks=False)


def _shallow(root: Path) -> bool:
    return _git(root, "rev-parse", "--is-shallow-repository").stdout.decode().strip() == "true"


def resolve(root: Path, given: str | None, *, what: str = "--baseline") -> str:
    """The baseline commit: ``given``, or HEAD's first parent when None."""
    if _git(root, "rev-parse", "--is-inside-work-tree").stdout.decode().strip() != "true":
        raise BaselineError(f"{root} is not inside a git work tree: a gate narrowed to a change needs git")
    if git_top(root) is None:  # git works from here, but lists none of the folder's files
        raise BaselineError(f"{root} is in a folder its git repository ignores, so git sees none of its changes "
                            "and the gate cannot narrow to them")
    if _commit(root, "HEAD") is None:
        raise BaselineError("the repository has no commit yet, so there is no baseline to narrow against; "
                            "commit first")
    shallow = _shallow(root)
    fetch = " It is a shallow clone: fetch the history it lacks (git fetch --deepen=N or --unshallow)."
    if given is None:
        parent = _commit(root, "HEAD~1")
        if parent is not None:
            return parent
        if shallow:
            raise BaselineError(f"HEAD's parent is not in this shallow clone, so the default baseline (HEAD~1) "
                                f"cannot be resolved.{fetch} Or name one with {what} REV.")
        raise BaselineError(f"HEAD is the first commit and has no parent to narrow against; name a baseline with "
                            f"{what} REV")
    if given.startswith("-"):
        raise BaselineError(f"{what}: {given!r} is not a revision")
    found = _commit(root, given)
    if found is not None:
        return found
    if shallow:
        raise BaselineError(f"{what}: {given!r} is not a commit in this repository, which is a shallow clone and "
                            f"may simply not have it.{fetch}")
    raise BaselineError(f"{what}: {given!r} does not name a commit here (a branch, tag or SHA; see git log)")


@record
class ChangedLines:
    """The lines a change added or modified, by path from the project's folder (``../`` for a
    file outside it, in a monorepo)."""

    lines: dict[str, set[int]] = field(default_factory=dict)
    new_files: set[str] = field(default_factory=set)
    old_paths: dict[str, str] = field(default_factory=dict)
    hunks: dict[str, list[tuple[int, int, int, int]]] = field(default_factory=dict)
    """Per path, each hunk's ``(new_start, new_count, old_start, old_count)``."""
    paths: set[str] = field(default_factory=set)
    """Every file the change added or modified, binary ones included: a baseline run that
    reads one from the workspace is not running the baseline's code."""

    def touched(self, path: str, line: int) -> bool:
        return path in self.new_files or line in self.lines.get(path, set())

    def has_file(self, path: str) -> bool:
        return path in self.new_files or path in self.lines

    def baseline_line(self, path: str, line: int) -> tuple[str, int] | None:
        """Where an unchanged line of ``path`` was at the baseline: ``(path then, line then)``;
        None for a line the change touched or a file the baseline did not have."""
        if self.touched(path, line):
            return None
        shift = 0
        for new_start, new_count, _old_start, old_count in self.hunks.get(path, []):
            before = new_start + new_count - 1 < line if new_count else new_start < line
            if before:
                shift += new_count - old_count
        return self.old_paths.get(path, path), line - shift

    @property
    def files(self) -> int:
        return len(set(self.lines) | self.new_files)

    @property
    def line_count(self) -> int:
        return sum(len(numbers) for path, numbers in self.lines.items() if path not in self.new_files)


def _scratch_index(root: Path, scratch: Path) -> dict[str, str]:
    """The environment of a git that sees the whole working tree as staged, through a copy of
    the index git uses here (in a hook, the one being committed: ``GIT_INDEX_FILE``)."""
    located = _git(root, "rev-parse", "--path-format=absolute", "--git-path", "index")
    index = scratch / "index"
    source = Path(git.decode(located.stdout.strip()))  # a folder that is not UTF-8 keeps its bytes
    if located.returncode == 0 and source.is_file():
        # copy2 keeps the mtime: git trusts an entry's stat only when the file is older than the
        # index, so a fresh mtime would hide same-size edits made in the same second.
        shutil.copy2(source, index)
    env = {"GIT_INDEX_FILE": str(index)}
    added = _git(root, "add", "--all", "--", ":/", env=env)  # `:/` is the top: an edit anywhere counts
    if added.returncode != 0:
        raise BaselineError(f"cannot list the working tree's changes (git add --all into a scratch index): "
                            f"{added.stderr.decode(errors='replace').strip()}")
    return env


def changed_lines(root: Path, baseline: str) -> ChangedLines:
    """What the working tree ``root`` is in changed since ``baseline``, paths from ``root``."""
    top = git_top(root)
    prefix = git_prefix(root, top) if top is not None else ""
    # The diff is of the whole tree with paths from its top (`git diff` prints them so even
    # from a subfolder), then re-expressed from the project's folder. `diff.relative=true` in
    # a user's config would cut the diff to the folder's own files.
    with tempfile.TemporaryDirectory(prefix="axpipe-gate-index-") as scratch:
        env = _scratch_index(root, Path(scratch))
        diff = _git(root, "-c", "diff.relative=false", "diff", "--cached", "-U0", "--no-color", "--no-ext-diff",
                    "--no-textconv", "-M", "--src-prefix=a/", "--dst-prefix=b/", baseline, env=env)
    if diff.returncode != 0:
        raise BaselineError(f"git diff {baseline[:12]} failed: {diff.stderr.decode(errors='replace').strip()}")
    changed = ChangedLines()
    for patch in unidiff.parse(diff.stdout.decode("utf-8", errors="replace")):
        if patch.new_path is None:
            continue
        path = from_top(patch.new_path, prefix)
        changed.paths.add(path)
        if patch.binary:
            continue
        if patch.old_path is None:
            changed.new_files.add(path)
            continue
        numbers = changed.lines.setdefault(path, set())
        changed.old_paths[path] = from_top(patch.old_path, prefix)
        for hunk in patch.hunks:
            numbers.update(number for number, _ in hunk.added())
            changed.hunks.setdefault(path, []).append(
                (hunk.new_start, hunk.new_count, hunk.old_start, hunk.old_count))
    return changed
