"""Which lines of a changed file the guards need to read: the definitions that enclose its
hunks, not the whole file.

A 12-line change in a 6,000-line test file concerns one or two tests; parsing every test
of the file (their assertions, fingerprints, claims) is what made time follow the size of
the touched files instead of the size of the change. :func:`changed_lines` gives, for each
side of a change, the lines its hunks cover (context included, so both sides see the same
definitions); :func:`python_lines` and :func:`.jsfocus.javascript_lines` widen them to
whole definitions; :func:`sparse` blanks every other line, so a parser reads only those
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


def _indent(row: str) -> int:
    return len(row) - len(row.lstrip())
