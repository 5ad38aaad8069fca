"""Unified diffs as git writes them: parse them, and apply their hunks to text in memory.

Understands ``diff --git`` headers with their extended lines (new/deleted file, renames
and copies, modes, ``index``), quoted paths, ``Binary files ... differ`` and ``GIT binary
patch`` markers, ``\\ No newline at end of file``, and plain ``diff -u`` output without a
``diff --git`` line. Applying is exact (no fuzz) but tolerates moved hunks, like
``patch`` and ``git apply`` do.
"""

from __future__ import annotations

import re
from dataclasses import field

from axpipe.interfaces import Hunk
from axpipe.records import record

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_ESCAPES = {"a": "\a", "b": "\b", "t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r",
            '"': '"', "\\": "\\"}


class PatchFormatError(ValueError):
    """The text is not a unified diff (or is cut off in the middle of a hunk)."""


@record
class FilePatch:
    """The part of a diff about one file."""

    old_path: str | None
    new_path: str | None
    hunks: list[Hunk] = field(default_factory=list)
    binary: bool = False
    old_blob: str | None = None     # from `index <old>..<new>`; full ids with --full-index
    new_blob: str | None = None
    new_mode: str | None = None
    old_mode: str | None = None
    # `\ No newline at end of file` after the last old / new line of a hunk
    old_no_newline: bool = False
    new_no_newline: bool = False


def unquote(path: str) -> str:
    """A path as git prints it: plain, or C-quoted with octal escapes for bytes."""
    if not (path.startswith('"') and path.endswith('"') and len(path) >= 2):
        return path
    body, out, index = path[1:-1], bytearray(), 0
    while index < len(body):
        char = body[index]
        if char == "\\" and index + 1 < len(body):
            following = body[index + 1]
            digits = body[index + 1:index + 4]
            if len(digits) == 3 and all(digit in "01234567" for digit in digits):  # a byte: \303
                out.append(int(digits, 8))
                index += 4
                continue
            out.extend(_ESCAPES.get(following, following).encode())
            index += 2
            continue
        out.extend(char.encode())
        index += 1
    return out.decode("utf-8", errors="surrogateescape")  # a name that is not UTF-8 keeps its bytes


def _strip_prefix(path: str) -> str | None:
    path = unquote(path.split("\t", 1)[0].rstrip("\n"))
    if path == "/dev/null":
        return None
    return path[2:] if path.startswith(("a/", "b/")) else path


def _git_header_paths(rest: str) -> tuple[str | None, str | None]:
    """Paths of ``diff --git a/x b/y``; ambiguous when paths hold spaces, so the ``---``,
    ``+++`` and rename lines that follow take precedence when present."""
    if rest.startswith('"'):
        end = rest.index('"', 1)
        while rest[end - 1] == "\\":
            end = rest.index('"', end + 1)
        return _strip_prefix(rest[:end + 1]), _strip_prefix(rest[end + 1:].strip())
    if " b/" in rest:
        old, _, new = rest.partition(" b/")
        return _strip_prefix(old), new
    old, _, new = rest.partition(" ")
    return _strip_prefix(old), _strip_prefix(new)


def parse(text: str) -> list[FilePatch]:
    """Every file patch in ``text``. Raises :class:`PatchFormatError` when non-blank text
    holds no file patch, or a hunk is shorter than its header says."""
    lines = text.splitlines()
    patches: list[FilePatch] = []
    current: FilePatch | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("diff --git "):
            old, new = _git_header_paths(line[len("diff --git "):])
            current = FilePatch(old, new)
            patches.append(current)
        elif line.startswith("--- ") and index + 1 < len(lines) and lines[index + 1].startswith("+++ "):
            old, new = _strip_prefix(line[4:]), _strip_prefix(lines[index + 1][4:])
            if current is None or current.hunks or current.binary:
                current = FilePatch(old, new)
                patches.append(current)
            else:
                current.old_path, current.new_path = old, new
            index += 1
        elif current is not None and line.startswith("@@ "):
            index = _read_hunk(lines, index, current)
            continue
        elif current is not None:
            _extended_header(line, current)
        index += 1
    if not patches and text.strip():
        raise PatchFormatError("no file header (`diff --git` or `---`/`+++`) found")
    return patches


def _extended_header(line: str, current: FilePatch) -> None:
    if line.startswith("new file mode "):
        current.old_path, current.new_mode = None, line.rsplit(" ", 1)[1]
    elif line.startswith("deleted file mode "):
        current.new_path, current.old_mode = None, line.rsplit(" ", 1)[1]
    elif line.startswith(("rename from ", "copy from ")):
        current.old_path = unquote(line.split(" ", 2)[2])
    elif line.startswith(("rename to ", "copy to ")):
        current.new_path = unquote(line.split(" ", 2)[2])
    elif line.startswith("old mode "):
        current.old_mode = line.rsplit(" ", 1)[1]
    elif line.startswith("new mode "):
        current.new_mode = line.rsplit(" ", 1)[1]
    elif line.startswith("index "):
        blobs = line.split()[1]
        current.old_blob, _, current.new_blob = blobs.partition("..")
        if len(line.split()) > 2 and current.new_mode is None:
            current.new_mode = current.old_mode = line.split()[2]
    elif line.startswith("Binary files ") or line == "GIT binary patch":
        current.binary = True


def _read_hunk(lines: list[str], index: int, current: FilePatch) -> int:
    match = _HUNK.match(lines[index])
    if match is None:
        raise PatchFormatError(f"line {index + 1}: malformed hunk header {lines[index]!r}")
    old_start, new_start = int(match[1]), int(match[3])
    old_count = int(match[2]) if match[2] is not None else 1
    new_count = int(match[4]) if match[4] is not None else 1
    body: list[str] = []
    old_left, new_left = old_count, new_count
    index += 1
    while (old_left > 0 or new_left > 0) and index < len(lines):
        line = lines[index]
        kind = line[:1]
        if kind == "\\":  # `\ No newline at end of file` after a removed line, mid-hunk
            _no_newline(body, current)
            index += 1
            continue
        if line == "":  # some tools drop the space of an empty context line
            line, kind = " ", " "
        if kind not in " -+":
            break
        body.append(line)
        if kind in " -":
            old_left -= 1
        if kind in " +":
            new_left -= 1
        index += 1
    if old_left > 0 or new_left > 0:
        raise PatchFormatError(f"hunk at line {index} is cut short: "
                               f"{old_left} old and {new_left} new line(s) missing")
    while index < len(lines) and lines[index].startswith("\\"):
        _no_newline(body, current)
        index += 1
    current.hunks.append(Hunk(old_start, old_count, new_start, new_count, tuple(body)))
    return index


def _no_newline(body: list[str], current: FilePatch) -> None:
    """``\\ No newline at end of file`` refers to the line just before it."""
    kind = body[-1][:1] if body else " "
    if kind in " -":
        current.old_no_newline = True
    if kind in " +":
        current.new_no_newline = True


class ApplyError(ValueError):
    """The hunks do not match the text they are applied to."""


def apply(text: str, hunks: list[Hunk], *, reverse: bool = False, no_newline: bool = False) -> str:
    """Apply ``hunks`` to ``text`` (or undo them with ``reverse``). Each hunk is looked for at
    its stated line first, then at the nearest place where its old lines match exactly.
    ``no_newline``: the result's last line has no newline (from the diff's marker)."""
    source = text.splitlines()
    result: list[str] = []
    position = 0  # next unconsumed line of source
    for hunk in hunks:
        old = [line[1:] for line in hunk.lines if line[:1] in (" ", "+" if reverse else "-")]
        new = [line[1:] for line in hunk.lines if line[:1] in (" ", "-" if reverse else "+")]
        start = (hunk.new_start if reverse else hunk.old_start) - 1
        if not old:  # pure insertion: the header says where (after line `start`)
            start += 1
        found = _locate(source, old, max(start, position), position)
        if found is None:
            raise ApplyError(f"hunk @@ -{hunk.old_start},{hunk.old_count} +{hunk.new_start},"
                             f"{hunk.new_count} @@ does not match")
        result.extend(source[position:found])
        result.extend(new)
        position = found + len(old)
    result.extend(source[position:])
    if not result:
        return ""
    return "\n".join(result) + ("" if no_newline else "\n")


def _locate(source: list[str], old: list[str], hint: int, floor: int) -> int | None:
    def matches(at: int) -> bool:
        return at >= 0 and at + len(old) <= len(source) and source[at:at + len(old)] == old

    hint = min(hint, len(source))
    for distance in range(len(source) + 1):
        for candidate in (hint - distance, hint + distance):
            if candidate >= floor and matches(candidate):
                return candidate
        if hint - distance < floor and hint + distance > len(source):
            break
    return None


def side_text(hunks: list[Hunk], side: str, no_newline: bool = False) -> str:
    """The whole text of one side of a new (``+``) or deleted (``-``) file's single hunk."""
    lines = [line[1:] for hunk in hunks for line in hunk.lines if line[:1] in (" ", side)]
    if not lines:
        return ""
    return "\n".join(lines) + ("" if no_newline else "\n")
