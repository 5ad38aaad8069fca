"""Which lines of a changed file the guards need to read: the definitions that enclose its
hunks, not the whole file.

A 12-line change in a 6,000-line test file concerns one or two tests; parsing every test
of the file (their assertions, fingerprints, claims) is what made time follow the size of
the touched files instead of the size of the change. :func:`changed_lines` gives, for each
side of a change, the lines its hunks cover (context included, so both sides see the same
definitions); :func:`python_lines` and :func:`javascript_lines` widen them to whole
definitions; :func:`sparse` blanks every other line, so a parser reads only those
definitions while line numbers stay those of the file.

The widening reads layout, not syntax: a Python definition is a top-level statement (a
line starting in column 0, with its decorators); a JavaScript test is an ``it``/``test``
call and its body up to the line that closes it at the same indentation, kept with the
header lines of the ``describe`` blocks around it. When the layout does not say (a
changed line outside any test in a file whose top level is one statement), the caller
parses the whole file: focus only ever saves time, it never decides a verdict.
"""

from __future__ import annotations

import re

from axpipe.interfaces import ChangedFile

_JS_TEST = re.compile(r"^\s*(?:[xf]?(?:it|test|specify)|bench)\b(?:\s*\.\s*\w+(?:\([^()]*\))?)*\s*\(")
_JS_GROUP = re.compile(r"^\s*(?:[xf]?describe|suite|context|[xf]?context)\b(?:\s*\.\s*\w+(?:\([^()]*\))?)*\s*\(")
_JS_CLOSER = re.compile(r"^\s*[})\]]")
_PY_DEFINITION = re.compile(r"(?:async\s+def|def|class)\b")
_QUOTES = re.compile(r'"""|\'\'\'')
MAX_SHARE = 0.6   # a focus covering more of the file than this is not worth it: parse the whole


def changed_lines(item: ChangedFile) -> tuple[set[int] | None, set[int] | None]:
    """1-based line numbers each side's hunks cover (context included, so both sides see the
    same definitions); None for a side to read whole: a file added or deleted, or one
    without hunks."""
    if item.old_path is None or item.new_path is None or not item.hunks:
        return None, None
    old: set[int] = set()
    new: set[int] = set()
    for hunk in item.hunks:
        old.update(range(hunk.old_start, hunk.old_start + max(hunk.old_count, 1)))
        new.update(range(hunk.new_start, hunk.new_start + max(hunk.new_count, 1)))
    return old, new


def unchanged(before: dict[str, str], after: dict[str, str]) -> frozenset[str]:
    """Definitions (by qualified name) whose text is the same on both sides: read for their
    name only, never analysed (:func:`.pycode.sources`, :func:`.jstests.sources`)."""
    return frozenset(name for name, text in before.items() if after.get(name) == text)


def sparse(text: str, keep: set[int]) -> str:
    """``text`` with every line not in ``keep`` (1-based) emptied, line numbers unchanged."""
    rows = text.split("\n")
    out = [""] * len(rows)
    for number in keep:
        if 0 < number <= len(rows):
            out[number - 1] = rows[number - 1]
    return "\n".join(out)


def worth_it(text: str, keep: set[int] | None) -> bool:
    return keep is not None and len(keep) <= MAX_SHARE * (text.count("\n") + 1)


def python_lines(text: str, lines: set[int]) -> set[int]:
    """``lines`` widened to the top-level statements (decorators included) holding them; in
    a long class, to the members holding them and the class's header, unless a changed line
    is in the class's own header or statements (a marker on the class reaches every test)."""
    rows = text.split("\n")
    starts = _python_starts(text)
    keep: set[int] = set()
    for index, start in enumerate(starts):
        end = starts[index + 1] if index + 1 < len(starts) else len(rows) + 1
        touched = {line for line in lines if start <= line < end}
        if not touched:
            continue
        members = _members(rows, start, end) if end - start > _LONG_CLASS else None
        if members is None or touched & set(range(start, members[0][0])):
            keep.update(range(start, end))
            continue
        keep.update(range(start, members[0][0]))  # the class line, its decorators and bases
        for first, last in members:
            if any(first <= line < last for line in touched):
                keep.update(range(first, last))
    return keep


_LONG_CLASS = 80
_DOCSTRING = ('"""', "'''", 'r"""', "r'''")


def _members(rows: list[str], start: int, end: int) -> list[tuple[int, int]] | None:
    """The members of the class at ``start`` as (first, end) line ranges, each a method with
    its decorators; None when the block is no class or holds statements other than methods
    (a `pytestmark`, an attribute: a change there concerns the whole class)."""
    header = next((number for number in range(start, end) if rows[number - 1].startswith("class ")), None)
    if header is None:
        return None
    body = [number for number in range(header + 1, end) if rows[number - 1].strip()
            and not rows[number - 1].lstrip().startswith("#")]
    if not body:
        return None
    depth = _indent(rows[body[0] - 1])
    firsts: list[int] = []
    decorated = False
    in_string = False
    for number in body:
        row = rows[number - 1]
        at_depth = not in_string and _indent(row) == depth
        if len(_QUOTES.findall(row)) % 2:
            in_string = not in_string
        if not at_depth:
            continue
        stripped = row.strip()
        if stripped.startswith("@"):
            if not decorated:
                firsts.append(number)
            decorated = True
        elif _PY_DEFINITION.match(stripped):
            if not decorated:
                firsts.append(number)
            decorated = False
        elif stripped.startswith((")", "]", "}")) or (stripped.startswith(_DOCSTRING) and not firsts):
            continue  # the end of a decorator's arguments; the class's docstring
        else:
            return None
    if not firsts:
        return None
    return [(first, firsts[position + 1] if position + 1 < len(firsts) else end)
            for position, first in enumerate(firsts)]


_COLUMN_ZERO = re.compile(r"^[^\s#)\]}]", re.MULTILINE)


def _long_strings(text: str) -> list[tuple[int, int]]:
    """(start, end) of the triple-quoted strings of ``text`` that span lines: each opening
    quote closes at the next one of its kind (escapes and quotes in comments aside)."""
    marks = sorted((match.start(), match[0]) for match in _QUOTES.finditer(text))
    spans: list[tuple[int, int]] = []
    opened: tuple[int, str] | None = None
    for position, quote in marks:
        if opened is None:
            opened = (position, quote)
        elif quote == opened[1]:
            if "\n" in text[opened[0]:position]:
                spans.append((opened[0], position + 3))
            opened = None
    return spans


def _python_starts(text: str) -> list[int]:
    """First lines (1-based) of the top-level statements; a definition's decorators start it.
    Read with two regular expressions over the text (lines in column 0, triple-quoted
    strings that may hold such lines), not line by line: this runs on every changed file."""
    strings = _long_strings(text)
    starts: list[int] = [1]
    decorated = False
    inside = 0
    number, counted = 1, 0
    for match in _COLUMN_ZERO.finditer(text):
        position = match.start()
        while inside < len(strings) and strings[inside][1] <= position:
            inside += 1
        if inside < len(strings) and strings[inside][0] < position:
            continue  # a line of a multi-line string
        number += text.count("\n", counted, position)
        counted = position
        if text.startswith("@", position):
            if not decorated:
                starts.append(number)
            decorated = True
            continue
        if not (decorated and _PY_DEFINITION.match(text, position)):
            starts.append(number)
        decorated = False
    return sorted(set(starts))


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
