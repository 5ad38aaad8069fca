"""Putting a work tree back where it stood before an agent ran, touching only what the agent changed.

DESIGN §8: "a revert restores exactly what the agent changed and never deletes or rewrites
a file the agent did not touch". Both reverts go through here: a repair's rejected fix
(:mod:`axpipe.repair.engine`) and a goal unit's hard stop (:mod:`axpipe.unit.quarantine`).

- :func:`mark` records a :class:`Point` before the agent runs: HEAD, the branch, a snapshot
  of the whole working tree (untracked files included) under the ignore rules of now, the
  index's bytes, and the exact bytes (as blobs) of the files that differ from HEAD.
- :func:`restore` compares the point's snapshot with one taken now and puts back only the
  paths that differ: a file the agent created is removed, one it changed or deleted is
  written back. Every other file is never opened for writing, renamed or unlinked, so it
  keeps its inode, bytes, mode and modification time, and a program still writing to it
  (the shell behind ``axpipe repair ... > out.json``) writes to the file that stays. A
  revert killed half-way has touched nothing else either.
- :func:`restore_paths` does the same for named paths only, without HEAD or the index (for
  callers that put back a few files and judge the rest).

axpipe's own output is never the agent's work: a file in the tree that this process's
stdout or stderr writes to (:func:`own_outputs`) is left out of every snapshot taken under
the point's rules, so no diff, scope check, stash or revert counts it.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Collection
from dataclasses import field
from pathlib import Path

from axpipe import git
from axpipe.change import from_git, ignore_rules
from axpipe.change.ignore_rules import IgnoreRules
from axpipe.errors import AxpipeError, InputError
from axpipe.records import record
from axpipe.workspace import _ignore_literal, git_prefix, git_top, state_dir


class RevertError(Exception):
    """A git step of a revert failed (the message says which)."""


def _git(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """git's output as text whose file names keep their bytes: a name that is not valid UTF-8
    decodes with surrogate escapes, so ``root / name`` is the file on disk and encoding it back
    gives git the same name."""
    completed = git.run(root, *args, env=env)
    if completed.returncode != 0:
        detail = completed.stderr.decode(errors="replace").strip().splitlines()
        raise RevertError(f"git {' '.join(args[:2])} failed: {detail[-1] if detail else completed.returncode}")
    return git.decode(completed.stdout).strip()


def _git_text(root: Path, *args: str) -> str | None:
    """A git command's stripped output, or None when it fails or prints nothing."""
    return git.output(root, *args)


@record
class Point:
    """Where a work tree stood before an agent ran (see :func:`mark`); all None outside git.
    ``rules``: the ignore rules every snapshot of the point applies (None: git's of the moment)."""

    head: str | None
    ref: str | None
    tree: str | None
    index: bytes | None
    rules: IgnoreRules | None
    raw_blobs: dict[str, str] = field(default_factory=dict)  # dirty or untracked file -> its bytes, unconverted
    sparse_absent: frozenset[str] = frozenset()  # skip-worktree entries not on disk
    submodules: dict[str, str] = field(default_factory=dict)  # checked-out submodule -> its HEAD and files

    def snapshot(self, top: Path) -> str:
        """A snapshot of the work tree now, under the ignore rules of the point (or of now)."""
        return from_git.snapshot(top, self.rules)


def own_outputs(top: Path) -> list[str]:
    """Files inside the work tree at ``top`` that this process's stdout or stderr write to,
    from the top. The shell opened them before axpipe started and keeps writing where its
    descriptor points; they are axpipe's output, not anyone's work."""
    found: list[str] = []
    resolved = top.resolve()
    for number in (1, 2):  # what the shell redirected, whatever sys.stdout is now
        try:
            opened = os.fstat(number)
        except OSError:  # closed
            continue
        path = _descriptor_path(number)
        if path is None:
            continue
        try:
            if not os.path.samestat(opened, os.stat(path)):
                continue
            relative = Path(path).resolve().relative_to(resolved).as_posix()
        except (OSError, ValueError):  # gone, or outside the work tree
            continue
        if relative not in found and relative != ".":
            found.append(relative)
    return found


def _descriptor_path(number: int) -> str | None:
    """The path a file descriptor was opened with (Linux's /proc, macOS's F_GETPATH)."""
    try:
        return os.readlink(f"/proc/self/fd/{number}")
    except OSError:
        pass
    try:
        import fcntl

        getpath = getattr(fcntl, "F_GETPATH", None)
        if getpath is None:
            return None
        answer = fcntl.fcntl(number, getpath, bytes(1024))
        return os.fsdecode(answer.split(b"\0", 1)[0]) or None
    except OSError:
        return None


def mark(root: Path, *, keep_rules: bool = True) -> Point:
    """HEAD, the branch it names, a snapshot tree of the working tree, the index bytes, and
    the unconverted bytes (as blobs) of the files that differ from HEAD; all None outside a
    git repository.

    With ``keep_rules`` (a goal's unit) the ignore rules of now are kept and every later
    snapshot of the point applies them (:mod:`axpipe.change.ignore_rules`); axpipe's state folder and
    its own output files (:func:`own_outputs`) are outside those snapshots whatever git's
    rules say. Without it (a repair's fix, judged within seconds) each snapshot takes git's
    rules as they are then, so a cache folder a tool creates with its own ``.gitignore``
    (``.ruff_cache/``) stays out; :func:`restore_paths` still never touches axpipe's output."""
    # git answers from inside a folder its repository ignores, but lists none of its files:
    # that folder is outside git (workspace.git_top), and the contracts that need git fail closed
    top = git_top(root)
    if top is None or _git_text(root, "rev-parse", "--is-inside-work-tree") != "true":
        return Point(None, None, None, None, None)
    start = _git_text(root, "rev-parse", "--verify", "-q", "HEAD^{commit}")
    ref = _git_text(root, "symbolic-ref", "-q", "HEAD")
    rules = None
    if keep_rules:
        state = git_prefix(root, top) + state_dir(Path()).as_posix()
        always = (f"/{_ignore_literal(state)}/", *(f"/{_ignore_literal(name)}" for name in own_outputs(top)))
        rules = ignore_rules.capture(top, always=always)
    try:
        tree: str | None = from_git.snapshot(root, rules)
    except InputError:
        tree = None
    index_path = _git_text(root, "rev-parse", "--git-path", "index")
    index = None
    if index_path is not None:
        path = Path(index_path) if Path(index_path).is_absolute() else root / index_path
        index = path.read_bytes() if path.is_file() else None
    raw = raw_blobs(top, start, tree) if tree is not None else {}
    return Point(start, ref, tree, index, rules, raw, sparse_absent(top), submodule_states(top))


def raw_blobs(top: Path, head: str | None, tree: str) -> dict[str, str]:
    """For each regular file of the snapshot ``tree`` that differs from ``head`` (dirty or
    untracked at the point), a blob of its bytes as they are on disk.

    A snapshot stores what ``git add`` stores: bytes after the clean filter and end-of-line
    conversion (``* text=auto`` turns CRLF into LF). A checkout converts back as the
    attributes say, which gives a committed file its bytes again but not a file git never
    checked out: an untracked note written with CRLF would come back with LF. So a revert
    writes these files from blobs of their raw bytes (``hash-object --no-filters``), not
    through a checkout. Only the files that differ from HEAD are read: usually few."""
    try:
        base = head or _git(top, "hash-object", "-t", "tree", os.devnull)
        listed = _git(top, "diff-tree", "-r", "-z", "--no-renames", base, tree)
    except RevertError:
        return {}  # the revert then goes through git's checkout, as for a committed file
    fields = listed.split("\0")
    regular = [path for header, path in zip(fields[0::2], fields[1::2], strict=False)
               if header.split(" ")[1:2] in (["100644"], ["100755"]) and "\n" not in path]
    if not regular:
        return {}
    completed = git.run(top, "hash-object", "-w", "--no-filters", "--stdin-paths",
                        input="".join(f"{path}\n" for path in regular).encode("utf-8", "surrogateescape"))
    blobs = completed.stdout.decode().split()
    return dict(zip(regular, blobs, strict=True)) if completed.returncode == 0 else {}


def sparse_absent(top: Path) -> frozenset[str]:
    """Index entries marked skip-worktree that are not on disk: a sparse checkout left them
    out. A snapshot holds their index blob; a revert must leave them out again."""
    listed = _git(top, "ls-files", "-v", "-z")
    return frozenset(entry[2:] for entry in listed.split("\0")
                     if entry[:1] in ("S", "s") and not os.path.lexists(top / entry[2:]))


def submodule_states(top: Path) -> dict[str, str]:
    """Each checked-out submodule of the work tree at ``top``: its HEAD and a snapshot of its
    own working tree. A snapshot of ``top`` holds only a submodule's commit, not an edit
    inside it, so this is what tells whether the agent changed one."""
    states = {}
    for entry in _git(top, "ls-files", "--stage", "-z").split("\0"):
        if not entry.startswith("160000 "):
            continue
        path = entry.split("\t", 1)[1]
        folder = top / path
        if not (folder / ".git").exists():
            continue  # not checked out: nothing on disk to change
        try:
            states[path] = f"{_git(folder, 'rev-parse', '-q', '--verify', 'HEAD')} {from_git.snapshot(folder)}"
        except (RevertError, AxpipeError, subprocess.CalledProcessError) as error:
            states[path] = f"unreadable: {error}"
    return states


def changed_submodules(top: Path, before: dict[str, str]) -> list[str]:
    """The submodules whose HEAD or files differ from ``before`` (:func:`submodule_states`),
    and the ones that appeared or went."""
    after = submodule_states(top)
    return sorted(path for path in set(before) | set(after) if before.get(path) != after.get(path))


def restore(top: Path, point: Point, end_tree: str) -> list[str]:
    """Put HEAD, the branch, the working tree and the index back as they were at ``point``;
    ``end_tree`` is a snapshot of now under the point's rules (:meth:`Point.snapshot`).
    ``top`` is the top of the work tree: the trees' paths are relative to it. Returns the
    paths written back or removed.

    Only the paths that differ between the two snapshots are touched (:func:`restore_paths`)."""
    assert point.tree is not None
    if point.ref is not None:
        _git(top, "symbolic-ref", "HEAD", point.ref)
        if point.head is not None:
            _git(top, "update-ref", point.ref, point.head)
    elif point.head is not None:
        _git(top, "update-ref", "--no-deref", "HEAD", point.head)
    touched = restore_paths(top, point, end_tree)
    index = Path(_git(top, "rev-parse", "--git-path", "index"))
    index = index if index.is_absolute() else top / index
    if point.index is not None:
        # byte for byte rather than reset: what the user had staged stays staged, and whatever
        # the agent staged (a skipped test, a new conftest.py) leaves the index with its edit
        scratch = index.with_name(index.name + ".axpipe")
        scratch.write_bytes(point.index)
        scratch.replace(index)
    else:
        index.unlink(missing_ok=True)  # there was none
    # Written-back files have new modification times: refresh the index's stat data so
    # `git status` compares contents, not times. Only the index is written.
    git.run(top, "update-index", "-q", "--refresh")
    return touched


def restore_paths(top: Path, point: Point, end_tree: str, only: Collection[str] | None = None) -> list[str]:
    """Put the files of the working tree that differ between ``point``'s snapshot and
    ``end_tree`` back as they were at the point (``only``: just these paths, from the top);
    HEAD and the index are left as they are. Returns the paths written back or removed.

    A file created since is removed (and folders it leaves empty); one changed or deleted is
    written back: a file that was dirty or untracked from the blob of its raw bytes
    (:func:`raw_blobs`), a committed one through git's checkout. Every other path, ignored
    ones included, is never written, renamed or unlinked."""
    assert point.tree is not None
    created, back = _differences(top, point.tree, end_tree)
    wanted = set(only) if only is not None else None
    ours = set(own_outputs(top))  # axpipe's stdout or stderr: the shell still writes there
    if ours:
        created = [name for name in created if name not in ours]
        back = {name: mode for name, mode in back.items() if name not in ours}
    if wanted is not None:
        created = [name for name in created if name in wanted]
        back = {name: mode for name, mode in back.items() if name in wanted}
    # a path a sparse checkout left out was absent: what was written there goes, nothing returns
    created += [name for name in back if name in point.sparse_absent and name not in created]
    back = {name: mode for name, mode in back.items() if name not in point.sparse_absent}
    raw = {name: back[name] for name in back if name in point.raw_blobs}
    checkout = [name for name in back if name not in raw]
    try:
        # deepest first, so a folder made in place of a file is gone before the file returns
        for name in sorted(created, key=lambda name: name.count("/"), reverse=True):
            _remove(top, name)
        if checkout:
            _restore_checkout(top, point.tree, checkout)
        for name, mode in raw.items():
            _write_blob(top, name, point.raw_blobs[name], mode)
    except (OSError, subprocess.CalledProcessError) as error:
        raise RevertError(f"cannot put a file back: {error}") from error
    return sorted({*created, *back})


def _differences(root: Path, start: str, end: str) -> tuple[list[str], dict[str, str]]:
    """Paths created since ``start``, and the paths to write back with their mode in ``start``.
    Submodules (mode 160000) are left alone: their content is another repository's."""
    listed = _git(root, "diff-tree", "-r", "-z", "--no-renames", start, end)
    fields = listed.split("\0")
    created: list[str] = []
    back: dict[str, str] = {}
    for header, name in zip(fields[0::2], fields[1::2], strict=False):
        old_mode, new_mode = header.lstrip(":").split(" ")[:2]
        if new_mode != "000000" and new_mode != "160000" and (old_mode == "000000" or old_mode[:2] != new_mode[:2]):
            created.append(name)  # new, or a file that became a symlink (or back): remove, then write
        if old_mode not in ("000000", "160000"):
            back[name] = old_mode
    return created, back


def _restore_checkout(root: Path, tree: str, names: list[str]) -> None:
    """Check ``names`` out of ``tree`` as git would (smudge filters, end-of-line conversion),
    through a scratch index: the user's index may flag a path skip-worktree or
    assume-unchanged (the agent may have), and a checkout through it would skip that path."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="axpipe-restore-") as scratch:
        env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        _git(root, "read-tree", tree, env=env)
        completed = git.run(root, "checkout-index", "--force", "-z", "--stdin", env=env,
                            input="".join(f"{name}\0" for name in names).encode("utf-8", "surrogateescape"))
    if completed.returncode != 0:
        detail = completed.stderr.decode(errors="replace").strip().splitlines()
        raise RevertError(f"git checkout-index failed: {detail[-1] if detail else completed.returncode}")


def _remove(root: Path, name: str) -> None:
    path = root / name
    if path.is_symlink() or path.is_file():
        path.unlink()
    folder = path.parent
    while folder != root and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent


def _write_blob(root: Path, name: str, blob: str, mode: str) -> None:
    """Write ``blob``'s bytes at ``name`` as they are (no filter, no end-of-line conversion). A
    file still there is rewritten in place, so it keeps its permissions (a ``0600`` secret
    stays private); only the executable bits follow ``mode``."""
    content = git.run(root, "cat-file", "blob", blob, check=True).stdout
    path = root / name
    if path.is_symlink() or (path.exists() and not path.is_file()):
        _remove(root, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    executable = mode == "100755"
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o777 if executable else 0o666)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(content)
    permissions = path.stat().st_mode & 0o7777
    readable = (permissions & 0o444) >> 2
    path.chmod(permissions | readable if executable else permissions & ~0o111)
