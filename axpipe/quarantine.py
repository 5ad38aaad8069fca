"""Hard stops: move what a unit changed into a named git stash, restore the tree, block the goal.

A hard stop (a scope violation, a failing gate, a write by a read-only phase, the unit
timeout) ends the unit with its evidence kept:

- everything the unit changed (its commits, dirty files, new untracked files, deletions)
  becomes one stash entry ``axpipe quarantine: <goal> unit <n>``. The stash's base is the
  tree as it was before the unit (a commit of the starting snapshot on top of the starting
  HEAD), so ``git stash show -p`` shows exactly the unit's change and ``git stash apply``
  brings it back. Commits the unit made stay reachable from
  ``refs/axpipe/quarantine/<goal>/unit-<n>``;
- the branch goes back to the starting HEAD and the working tree and index to their
  starting state (files that were dirty or untracked before the unit are kept as they were);
- the goal is blocked with the kind, the reason, what a person must do, and the evidence.

Files git ignores are neither quarantined nor removed. Neither is a submodule's content (it
is another repository): a unit that changed a submodule's checkout or files gets a note
saying so, in the hard stop's reason and ``hard-stop.json``, never a clean restore.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from axpipe import goals, units, workspace
from axpipe.errors import ExitCode
from axpipe.names import printable
from axpipe.store import goals as goal_sql

if TYPE_CHECKING:
    from axpipe.driver import GoalDriver, Step


class QuarantineError(Exception):
    """A git step of the quarantine failed (the message says which)."""


def _git(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """git's output as text whose file names keep their bytes: a name that is not valid UTF-8
    decodes with surrogate escapes (as in :mod:`axpipe.fingerprint`), so ``root / name`` is
    the file on disk and encoding it back gives git the same name."""
    completed = subprocess.run(["git", "-c", "core.quotepath=false", *args], cwd=root, capture_output=True,
                               env={**os.environ, **(env or {})})
    if completed.returncode != 0:
        detail = completed.stderr.decode(errors="replace").strip().splitlines()
        raise QuarantineError(f"git {' '.join(args[:2])} failed: {detail[-1] if detail else completed.returncode}")
    return completed.stdout.decode("utf-8", "surrogateescape").strip()


def stash_message(goal_id: str, number: int) -> str:
    return f"axpipe quarantine: {goal_id} unit {number}"


def _commit(root: Path, tree: str, parent: str | None, message: str) -> str:
    return _git(root, "commit-tree", tree, *(["-p", parent] if parent else []), "-m", message)


def stash_unit(root: Path, unit: units.Unit, end_tree: str, end_head: str | None) -> str:
    """Store the unit's change as a stash entry; return the stash commit."""
    assert unit.start_tree is not None
    message = stash_message(unit.goal_id, unit.number)
    name = f"{unit.goal_id} unit {unit.number}"
    base = _commit(root, unit.start_tree, unit.start_head, f"axpipe: the tree before {name}")
    index = _commit(root, unit.start_tree, unit.start_head, f"axpipe: the index before {name}")
    stash = _git(root, "commit-tree", end_tree, "-p", base, "-p", index, "-m", message)
    _git(root, "stash", "store", "-m", message, stash)
    if end_head and end_head != unit.start_head:
        _git(root, "update-ref", quarantine_ref(unit), end_head)
    return stash


def quarantine_ref(unit: units.Unit) -> str:
    safe = re.sub(r"[^A-Za-z0-9_-]+", "-", unit.goal_id).strip("-") or "goal"
    return f"refs/axpipe/quarantine/{safe}/unit-{unit.number}"


def raw_blobs(top: Path, head: str | None, tree: str) -> dict[str, str]:
    """For each regular file of the snapshot ``tree`` that differs from ``head`` (dirty or
    untracked when the unit starts), a blob of its bytes as they are on disk.

    A snapshot stores what ``git add`` stores: bytes after the clean filter and end-of-line
    conversion (``* text=auto`` turns CRLF into LF). A checkout converts back as the
    attributes say, which gives a committed file its bytes again but not a file git never
    checked out: an untracked note written with CRLF would come back with LF. So the
    restore writes these files from blobs of their raw bytes (``hash-object --no-filters``),
    not through a checkout. Only the files that differ from HEAD are read: usually few."""
    try:
        base = head or _git(top, "hash-object", "-t", "tree", os.devnull)
        listed = _git(top, "diff-tree", "-r", "-z", "--no-renames", base, tree)
    except QuarantineError:
        return {}  # the restore then goes through git's checkout, as for a committed file
    fields = listed.split("\0")
    regular = [path for header, path in zip(fields[0::2], fields[1::2], strict=False)
               if header.split(" ")[1:2] in (["100644"], ["100755"]) and "\n" not in path]
    if not regular:
        return {}
    completed = subprocess.run(["git", "hash-object", "-w", "--no-filters", "--stdin-paths"], cwd=top,
                               input="".join(f"{path}\n" for path in regular).encode("utf-8", "surrogateescape"),
                               capture_output=True)
    blobs = completed.stdout.decode().split()
    return dict(zip(regular, blobs, strict=True)) if completed.returncode == 0 else {}


def sparse_absent(top: Path) -> frozenset[str]:
    """Index entries marked skip-worktree that are not on disk: a sparse checkout left them
    out. A snapshot holds their index blob; the restore must leave them out again."""
    listed = _git(top, "ls-files", "-v", "-z")
    return frozenset(entry[2:] for entry in listed.split("\0")
                     if entry[:1] in ("S", "s") and not os.path.lexists(top / entry[2:]))


def submodule_states(top: Path) -> dict[str, str]:
    """Each checked-out submodule of the work tree at ``top``: its HEAD and a snapshot of its
    own working tree. A snapshot of ``top`` holds only a submodule's commit, not an edit
    inside it, so this is what tells whether a unit changed one."""
    from axpipe.changes import snapshot
    from axpipe.errors import AxpipeError

    states = {}
    for entry in _git(top, "ls-files", "--stage", "-z").split("\0"):
        if not entry.startswith("160000 "):
            continue
        path = entry.split("\t", 1)[1]
        folder = top / path
        if not (folder / ".git").exists():
            continue  # not checked out: nothing on disk to change
        try:
            states[path] = f"{_git(folder, 'rev-parse', '-q', '--verify', 'HEAD')} {snapshot(folder)}"
        except (QuarantineError, AxpipeError, subprocess.CalledProcessError) as error:
            states[path] = f"unreadable: {error}"
    return states


def changed_submodules(top: Path, before: dict[str, str]) -> list[str]:
    """The submodules whose HEAD or files differ from ``before`` (:func:`submodule_states`),
    and the ones that appeared or went."""
    after = submodule_states(top)
    return sorted(path for path in set(before) | set(after) if before.get(path) != after.get(path))


def restore(root: Path, unit: units.Unit, end_tree: str) -> None:
    """Put HEAD, the branch, the working tree and the index back as they were before the unit.
    ``root`` is the top of the work tree: the trees' paths are relative to it.

    Only the paths that differ between the start and end snapshots are touched: files the
    unit created are removed, files it changed or deleted are written back (a file that was
    dirty or untracked from the blob of its raw bytes, :func:`raw_blobs`; a committed one
    through git's checkout). Every other file, ignored ones included, keeps its bytes and
    its modification time."""
    assert unit.start_tree is not None
    if unit.start_ref is not None:
        _git(root, "symbolic-ref", "HEAD", unit.start_ref)
        if unit.start_head is not None:
            _git(root, "update-ref", unit.start_ref, unit.start_head)
    elif unit.start_head is not None:
        _git(root, "update-ref", "--no-deref", "HEAD", unit.start_head)
    created, back = _differences(root, unit.start_tree, end_tree)
    # a path a sparse checkout left out was absent: what the unit wrote there goes, nothing returns
    created += [name for name in back if name in unit.sparse_absent and name not in created]
    back = {name: mode for name, mode in back.items() if name not in unit.sparse_absent}
    raw = {name: back[name] for name in back if name in unit.raw_blobs}
    checkout = [name for name in back if name not in raw]
    try:
        # deepest first, so a folder the unit made in place of a file is gone before the file returns
        for name in sorted(created, key=lambda name: name.count("/"), reverse=True):
            _remove(root, name)
        if checkout:
            _restore_checkout(root, unit.start_tree, checkout)
        for name, mode in raw.items():
            _write_blob(root, name, unit.raw_blobs[name], mode)
    except (OSError, subprocess.CalledProcessError) as error:
        raise QuarantineError(f"cannot put a file back: {error}") from error
    if unit.index is not None:
        index = Path(_git(root, "rev-parse", "--git-path", "index"))
        index = index if index.is_absolute() else root / index
        scratch = index.with_name(index.name + ".axpipe")
        scratch.write_bytes(unit.index)
        scratch.replace(index)
        subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=root, capture_output=True)
    else:
        _git(root, "read-tree", *([unit.start_head] if unit.start_head is not None else ["--empty"]))


def _differences(root: Path, start: str, end: str) -> tuple[list[str], dict[str, str]]:
    """Paths the unit created, and the paths to write back with their mode in ``start``.
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
    assume-unchanged (the unit may have), and a checkout through it would skip that path."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="axpipe-restore-") as scratch:
        env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        _git(root, "read-tree", tree, env=env)
        completed = subprocess.run(
            ["git", "checkout-index", "--force", "-z", "--stdin"], cwd=root, capture_output=True,
            input="".join(f"{name}\0" for name in names).encode("utf-8", "surrogateescape"),
            env={**os.environ, **env})
    if completed.returncode != 0:
        detail = completed.stderr.decode(errors="replace").strip().splitlines()
        raise QuarantineError(f"git checkout-index failed: {detail[-1] if detail else completed.returncode}")


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
    content = subprocess.run(["git", "cat-file", "blob", blob], cwd=root, capture_output=True, check=True).stdout
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


def hard_stop(driver: GoalDriver, unit: units.Unit, *, kind: str, reason: str, external_change: str,
              evidence: list[str] | None = None, details: dict[str, Any] | None = None) -> Step:
    """End ``unit`` as a hard stop: quarantine its change, restore the tree, block the goal (exit 3)."""
    from axpipe.driver import Step

    unit.close()
    reason = printable(reason)
    if driver.interrupted is not None:  # the processes were ended from outside: keep the work, judge nothing
        units.end(driver, unit, "interrupted", f"{kind} not judged: {driver.interrupted}")
        return Step("interrupted", f"{kind} not judged: {driver.interrupted}", stop=ExitCode.INTERRUPTED)
    root = driver.root
    # The snapshots cover the whole work tree, so the restore does too: in a monorepo the
    # unit may have changed files outside the project's folder.
    tree = workspace.git_top(root) or root
    stash: str | None = None
    notes: list[str] = []
    if unit.start_tree is not None:
        end_tree = unit.snapshot(tree)
        end_head = units.head(tree)
        if end_tree != unit.start_tree or end_head != unit.start_head:
            try:
                stash = stash_unit(tree, unit, end_tree, end_head)
                restore(tree, unit, end_tree)
                after = unit.snapshot(tree)
                if after != unit.start_tree:
                    notes.append("the tree could not be restored exactly; compare it with " + unit.start_tree)
            except QuarantineError as error:
                notes.append(f"quarantine incomplete: {error}")
        # A submodule is another repository: its commits and files are neither stashed nor put
        # back, so a change there is said, never passed over as a clean restore.
        submodules = changed_submodules(tree, unit.submodules)
        if submodules:
            notes.append(f"not restored: the unit changed submodule(s) {', '.join(submodules)} (their HEAD or "
                         "files); a submodule is another repository, so neither its commits nor its files are in "
                         "the stash: look at them with `git -C <path> status` and `git -C <path> log`")
    else:
        notes.append("not a git repository: nothing could be quarantined")
    message = stash_message(unit.goal_id, unit.number)
    record = {"kind": kind, "reason": reason, "unit": unit.number, "stash": stash,
              "stash_message": message if stash else None, "start_head": unit.start_head,
              "start_tree": unit.start_tree, "notes": notes, **(details or {})}
    folder = units.artifacts_dir(root, unit.goal_id) / f"unit-{unit.number}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "hard-stop.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    kept = [f"stash {stash} ({message})"] if stash else []
    where = f"{message} (git stash list)" if stash else "nothing to quarantine: the unit changed no file"
    goal_sql.add_usage(driver.store, driver.goal.id, seconds=unit.elapsed(), steps=1)
    blocked = {"kind": kind, "reason": reason, "external_change": external_change,
               "evidence": [*kept, *(evidence or []), str(folder / "hard-stop.json")], "no_independent_work": True}
    goals.set_status(driver.store, driver.goal, "blocked", reason, driver.events, blocked=blocked)
    units.end(driver, unit, "quarantined", reason, stash=stash)
    driver.events.emit("unit.quarantined", unit=unit.number, kind=kind, reason=reason, stash=stash,
                       stash_message=message if stash else None, notes=notes)
    extra = printable(f"; {'; '.join(notes)}") if notes else ""
    return Step("failed", f"hard stop ({kind}): {reason}; {where}{extra}", stop=ExitCode.BLOCKED)
