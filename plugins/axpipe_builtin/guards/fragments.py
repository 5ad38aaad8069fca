"""Both sides of a file known only from a patch's hunks, as far as they hold whole
definitions: the degraded mode (``--patch`` without the files) judged by meaning too.

Each hunk gives a stretch of the old side (context and removed lines) and of the new side
(context and added lines). Laid at their line numbers in otherwise empty texts, they are
read like whole files, after trimming what cannot be read alone: the lines before a hunk's
first definition in column 0 (the tail of a definition that starts above it) and the lines
after its last changed line from the next definition on (the head of one that ends below).
Changed lines trimmed away are left to the line rules of :mod:`.hunks`; everything else is
judged as in a repository, so a test folded into a parametrised one or a handler renamed
with its function is followed in a patch alone as well.
"""

from __future__ import annotations

from axpipe.interfaces import ChangedFile, Hunk
from axpipe.records import record

_CLOSERS = (")", "]", "}")


@record
class Fragments:
    before: str
    after: str
    old_lines: set[int]     # the changed lines read on the old side
    new_lines: set[int]     # and on the new side


def fragments(item: ChangedFile, *, indented: bool) -> Fragments:
    """The readable parts of ``item``'s hunks on each side; ``indented``: blocks are marked
    by indentation (Python), else by braces (a stretch then starts at any column-0 line)."""
    old: dict[int, str] = {}
    new: dict[int, str] = {}
    old_read: set[int] = set()
    new_read: set[int] = set()
    for hunk in item.hunks:
        first, stop = _readable(hunk, indented)
        before, after = hunk.old_start, hunk.new_start
        for position, line in enumerate(hunk.lines):
            kind, text = line[:1], line[1:]
            inside = first <= position < stop
            if kind in (" ", "-"):
                if inside:
                    old[before] = text
                    if kind == "-":
                        old_read.add(before)
                before += 1
            if kind in (" ", "+"):
                if inside:
                    new[after] = text
                    if kind == "+":
                        new_read.add(after)
                after += 1
    return Fragments(_text(old), _text(new), old_read, new_read)


def _readable(hunk: Hunk, indented: bool) -> tuple[int, int]:
    """The stretch of ``hunk.lines`` (start, stop) that holds whole top-level statements:
    from its first line in column 0, to the first line in column 0 after its last change
    (a decorator's definition and body count with it). The same stretch on both sides."""
    rows = [line[1:] for line in hunk.lines]

    def starts(text: str) -> bool:
        return bool(text) and text[0] not in " \t#" and not text.startswith(_CLOSERS)

    first = next((index for index, text in enumerate(rows) if starts(text)), len(rows)) if indented else 0
    changed = [index for index, line in enumerate(hunk.lines) if line[:1] in ("+", "-")]
    last = changed[-1] if changed else len(rows) - 1
    heads = [rows[index] for index in range(first, last + 1) if starts(rows[index])]
    decorated = bool(heads) and heads[-1].startswith("@")  # a changed decorator whose definition follows
    stop = len(rows)
    for index in range(last + 1, len(rows)):
        if not starts(rows[index]):
            continue
        if decorated and (rows[index].startswith(("@", "def ", "async def ", "class "))):
            decorated = not rows[index].startswith(("def ", "async def ", "class "))
            continue  # the definition a changed decorator belongs to, and its body
        stop = index
        break
    return first, stop


def _text(lines: dict[int, str]) -> str:
    if not lines:
        return ""
    return "\n".join(lines.get(number, "") for number in range(1, max(lines) + 1)) + "\n"
