"""The change a patch file describes, completed from the files on disk when it applies.

New and deleted files are known whole from any patch. A modified file is known whole when
the patch applies to the file on disk, or is already applied there (then it is undone in
memory); otherwise guards see only its hunks, and a note says so.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from axpipe.change import unidiff
from axpipe.change.repolookup import GitLookup, WalkLookup, read_file
from axpipe.errors import InputError
from axpipe.interfaces import ChangedFile, ChangeSet, Hunk
from axpipe.workspace import is_git_repository

_SPECIAL_MODES = ("120000", "160000")  # symlinks and submodules have no text to judge


def from_patch(text: str, source: str, root: Path | None, *, suffixes: tuple[str, ...] = ()) -> ChangeSet:
    """The change a unified diff describes, completed from the files under ``root`` when
    the patch applies to them. Raises :class:`InputError` when ``text`` is not a diff."""
    def wanted(path: str) -> bool:
        return not suffixes or path.endswith(suffixes)

    try:
        patches = unidiff.parse(text)
    except unidiff.PatchFormatError as error:
        raise InputError(f"--patch {source}: not a unified diff: {error}") from error
    changes = ChangeSet(files=[], source=f"patch {source}", root=root)
    if root is not None:
        changes.lookup = GitLookup(root) if is_git_repository(root) else WalkLookup(root)
    read: Callable[[str], str | None] = (lambda path: read_file(root, path)) if root is not None else (
        lambda path: None)
    for patch in patches:
        paths = [path for path in (patch.old_path, patch.new_path) if path]
        if not any(wanted(path) for path in paths):
            continue
        changes.files.append(_complete(patch, read, changes.notes))
    return changes


def _complete(patch: unidiff.FilePatch, read: Callable[[str], str | None], notes: list[str]) -> ChangedFile:
    item = ChangedFile(patch.old_path, patch.new_path, None, None, patch.hunks, complete=False,
                       binary=patch.binary or patch.new_mode in _SPECIAL_MODES)
    if item.binary:
        notes.append(f"{item.path}: not judged (binary, a symlink or a submodule)")
        return item
    if patch.old_path is None:
        item.after, item.complete = unidiff.side_text(patch.hunks, "+", patch.new_no_newline), True
        return item
    if patch.new_path is None:
        item.before, item.complete = unidiff.side_text(patch.hunks, "-", patch.old_no_newline), True
        return item
    on_disk = read(patch.old_path)
    after = _applied(on_disk, patch.hunks, reverse=False, no_newline=patch.new_no_newline)
    if on_disk is not None and after is not None:
        item.before, item.after, item.complete = on_disk, after, True
        return item
    applied = read(patch.new_path)  # the patch may already be applied: undo it in memory
    before = _applied(applied, patch.hunks, reverse=True, no_newline=patch.old_no_newline)
    if applied is not None and before is not None:
        item.before, item.after, item.complete = before, applied, True
        return item
    where = "is not on disk" if on_disk is None and applied is None else "does not match the file on disk"
    notes.append(f"{item.path}: the patch {where}; guards saw its hunks only")
    return item


def _applied(text: str | None, hunks: list[Hunk], *, reverse: bool, no_newline: bool) -> str | None:
    """``text`` with ``hunks`` applied (or undone), or None when they do not match it."""
    if text is None:
        return None
    try:
        return unidiff.apply(text, hunks, reverse=reverse, no_newline=no_newline)
    except unidiff.ApplyError:
        return None


def hunks_between(before: str, after: str) -> list[Hunk]:
    """Hunks from two texts (for files git did not diff, such as untracked ones)."""
    import difflib

    old, new = before.splitlines(), after.splitlines()
    hunks: list[Hunk] = []
    for group in difflib.SequenceMatcher(None, old, new, autojunk=False).get_grouped_opcodes(3):
        lines: list[str] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines.extend(" " + line for line in old[i1:i2])
                continue
            lines.extend("-" + line for line in old[i1:i2])
            lines.extend("+" + line for line in new[j1:j2])
        first, last = group[0], group[-1]
        hunks.append(Hunk(first[1] + 1, last[2] - first[1], first[3] + 1, last[4] - first[3], tuple(lines)))
    return hunks


