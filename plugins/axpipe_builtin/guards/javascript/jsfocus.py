"""The lines of a changed JavaScript/TypeScript file the guards read (see :mod:`.focus`).

A test is an ``it``/``test`` call and its body, up to the line that closes it at the same
indentation, kept with the header and closing lines of the ``describe`` blocks around it;
outside tests, the top-level statement. Layout, not syntax: when it does not say where a
changed line belongs, the caller reads the whole file.
"""

from __future__ import annotations

import re

_JS_TEST = re.compile(r"^\s*(?:[xf]?(?:it|test|specify)|bench)\b(?:\s*\.\s*\w+(?:\([^()]*\))?)*\s*\(")
_JS_GROUP = re.compile(r"^\s*(?:[xf]?describe|suite|context|[xf]?context)\b(?:\s*\.\s*\w+(?:\([^()]*\))?)*\s*\(")
_JS_CLOSER = re.compile(r"^\s*[})\]]")


def javascript_lines(text: str, lines: set[int], *, test_file: bool) -> set[int] | None:
    """``lines`` widened to the tests (or, outside tests, the top-level statements) holding
    them, with the first and last lines of the ``describe`` blocks around them; None when
    the layout does not say where a changed line belongs."""
    rows = text.split("\n")
    keep: set[int] = set()
    ends: dict[int, int] = {}  # each call's end, found once: a describe spanning the file is long to scan
    for line in sorted(lines):
        if line in keep or line > len(rows):
            continue
        block = _enclosing_test(rows, line, ends) if test_file else None
        if block is None:
            block = _top_statement(rows, line)
            if block is None:
                return None
            if test_file and _JS_GROUP.match(rows[block[0] - 1]) and block[1] - block[0] > 0.5 * len(rows):
                return None  # a change at the top of one describe spanning the file: read it whole
        keep.update(range(block[0], block[1] + 1))
        if test_file:
            keep.update(_ancestors(rows, block[0], ends))
    return keep


def _indent(row: str) -> int:
    return len(row) - len(row.lstrip())


def _end(rows: list[str], head: int, ends: dict[int, int]) -> int:
    """The line (1-based) closing the call that starts at ``head``: the next line at the
    head's indentation that starts with a closing bracket, or the line before one less
    indented; the last line when neither comes. Remembered in ``ends``."""
    if head not in ends:
        ends[head] = _scan_end(rows, head)
    return ends[head]


def _scan_end(rows: list[str], head: int) -> int:
    depth = _indent(rows[head - 1])
    for number in range(head + 1, len(rows) + 1):
        row = rows[number - 1]
        if not row.strip():
            continue
        indent = _indent(row)
        if indent == depth and _JS_CLOSER.match(row):
            return number
        if indent < depth or (indent == depth and not _JS_CLOSER.match(row)):
            return number - 1
    return len(rows)


def _enclosing_test(rows: list[str], line: int, ends: dict[int, int]) -> tuple[int, int] | None:
    """The test or describe call (head line, end line) whose lines hold ``line``; a describe
    only when ``line`` is its head (its tests are then all kept) or between its tests."""
    for head in range(line, 0, -1):
        row = rows[head - 1]
        is_test = bool(_JS_TEST.match(row))
        if not is_test and not _JS_GROUP.match(row):
            continue
        end = _end(rows, head, ends)
        if end < line:
            continue
        if is_test or head == line:
            return head, end
        # inside a describe, outside its tests (a hook, a helper): the statement at that level
        return _statement_in(rows, head, end, line)
    return None


def _statement_in(rows: list[str], head: int, end: int, line: int) -> tuple[int, int]:
    """The statement of the block ``head``..``end`` that holds ``line``: from the nearest
    line above it at the block's inner indentation to the line before the next one."""
    inner = next((_indent(rows[number - 1]) for number in range(head + 1, end) if rows[number - 1].strip()
                  and not _JS_CLOSER.match(rows[number - 1])), _indent(rows[head - 1]) + 2)
    start = line
    while start > head + 1 and (not rows[start - 1].strip() or _indent(rows[start - 1]) > inner
                                or _JS_CLOSER.match(rows[start - 1])):
        start -= 1
    stop = line
    while stop + 1 < end and (not rows[stop].strip() or _indent(rows[stop]) > inner or _JS_CLOSER.match(rows[stop])):
        stop += 1
    return start, stop


def _top_statement(rows: list[str], line: int) -> tuple[int, int] | None:
    """The top-level statement holding ``line``: from the nearest column-0 line above that
    starts one to the line before the next."""
    start = line
    while start > 1 and not _starts_statement(rows[start - 1]):
        start -= 1
    stop = line
    while stop < len(rows) and not _starts_statement(rows[stop]):
        stop += 1
    return start, stop


def _starts_statement(row: str) -> bool:
    return bool(row) and row[0] not in " \t})]/*" and not row.startswith(("//", "/*"))


def _ancestors(rows: list[str], head: int, ends: dict[int, int]) -> set[int]:
    """Header lines and closing lines of the describe blocks around line ``head``."""
    kept: set[int] = set()
    depth = _indent(rows[head - 1])
    for number in range(head - 1, 0, -1):
        row = rows[number - 1]
        if not row.strip() or _indent(row) >= depth:
            continue
        depth = _indent(row)
        if _JS_GROUP.match(row) or _JS_TEST.match(row):
            end = _end(rows, number, ends)
            kept.update(range(number, _opening(rows, number) + 1))
            kept.add(end)
        if depth == 0:
            break
    return kept


def _opening(rows: list[str], head: int) -> int:
    """The line where a call's header ends (its block opens), at most a few lines down."""
    for number in range(head, min(head + 6, len(rows) + 1)):
        if rows[number - 1].rstrip().endswith(("{", "=>", "(")):
            return number
    return head
