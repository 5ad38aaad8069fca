"""A gate's test command read as the shell reads it, and edited without retyping the rest.

The test adapters narrow a command as the user wrote it (DESIGN §8): they find the runner in
it (``pytest``, ``python -m unittest``, ``npx vitest run``, ``node --test``), take out its
fail-fast options and add their report option. Everything else stays byte for byte: a
``$VAR``, a glob, ``|| true`` or a redirection would not survive being split and joined
again, so a command given as a string is edited by the spans of its words
(:mod:`axpipe_builtin.shell_words`), never re-quoted. The runner is looked for segment by
segment, so ``cd web && vitest run`` and ``pytest -q || true`` are narrowed in the part that
runs the tests.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field

from axpipe_builtin.shell_words import Word, shell_words


@dataclass
class Invocation:
    """A runner found in a command, and the edits made to it so far."""

    command: str | list[str]
    words: list[Word]
    first: int  # the index of the runner's first argument (after its program words)
    last: int  # the index after the segment's last argument
    drops: set[int] = field(default_factory=set)
    inserts: dict[int, list[str]] = field(default_factory=dict)  # after word index -> options

    @property
    def arguments(self) -> list[tuple[int, str]]:
        """The runner's arguments as (index, value), redirections left out."""
        return [(number, self.words[number].value) for number in range(self.first, self.last)
                if not self.words[number].redirect]

    def drop(self, number: int) -> None:
        self.drops.add(number)

    def insert_after(self, number: int, options: list[str]) -> None:
        self.inserts.setdefault(number, []).extend(options)

    def append(self, options: list[str]) -> None:
        """After the runner's last argument (before a ``--``, which would make them file names)."""
        end = next((number for number, value in self.arguments if value == "--"), None)
        if end is not None:
            self.insert_after(end - 1, options)
            return
        arguments = self.arguments
        self.insert_after(arguments[-1][0] if arguments else self.first - 1, options)

    def result(self) -> str | list[str]:
        if isinstance(self.command, list):
            edited: list[str] = list(self.inserts.get(-1, []))
            for number, part in enumerate(self.command):
                if number not in self.drops:
                    edited.append(part)
                edited.extend(self.inserts.get(number, []))
            return edited
        text, pieces, cursor = self.command, [], 0
        for number, word in enumerate(self.words):
            if number in self.drops:
                pieces.append(text[cursor:word.start].rstrip(" \t"))  # the word and the blank before it
                cursor = word.end
            if number in self.inserts:
                pieces.append(text[cursor:word.end])
                pieces.append("".join(" " + shlex.quote(option) for option in self.inserts[number]))
                cursor = word.end
        pieces.append(text[cursor:])
        return "".join(pieces)


Matcher = Callable[[list[str], int], int | None]
"""Given a segment's word values and where the program starts (after ``VAR=value`` words),
the index of the runner's first argument, or None when the segment is not this runner."""


def find(command: str | list[str], matcher: Matcher) -> Invocation | None:
    """The first segment of ``command`` that runs the matcher's runner."""
    if isinstance(command, list):
        words = [Word(value, number, number + 1) for number, value in enumerate(command)]
    else:
        words = shell_words(command)
    start = 0
    while start < len(words):
        end = next((number for number in range(start, len(words)) if words[number].operator), len(words))
        values = [word.value for word in words[start:end]]
        program = next((number for number, value in enumerate(values)
                        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", value)), len(values))
        if program < len(values) and not words[start + program].redirect:
            first = matcher(values, program)
            if first is not None:
                last = end
                while last > start + first and words[last - 1].redirect:
                    last -= 1
                return Invocation(command, words, start + first, last)
        start = end + 1
    return None


def program_name(word: str) -> str:
    return os.path.basename(word)


def combined_flags(value: str, flags: str, with_values: str) -> tuple[str, str] | None:
    """``-xq`` as (the flags in it, the rest): None when ``value`` is no bundle of one-letter
    flags (``-rxX`` is ``-r`` with the value ``xX``: the flags stop at one that takes a value)."""
    if not re.match(r"^-[A-Za-z]", value) or value.startswith("--"):
        return None
    found: list[str] = []
    for position, letter in enumerate(value[1:], start=1):
        if letter in with_values:
            return "".join(found), value[position:]
        if letter not in flags:
            return None
        found.append(letter)
    return "".join(found), ""


def without_flag(invocation: Invocation, letter: str, long_names: tuple[str, ...], flags: str,
                 with_values: str) -> list[str]:
    """Take the one-letter flag ``letter`` (also inside a bundle such as ``-xq``) and its long
    names out of the runner's arguments; the words removed, as written."""
    removed = []
    for number, value in invocation.arguments:
        if value in long_names:
            invocation.drop(number)
            removed.append(value)
            continue
        bundle = combined_flags(value, flags, with_values)
        if bundle is None or letter not in bundle[0]:
            continue
        invocation.drop(number)
        removed.append(value)
        kept = bundle[0].replace(letter, "") + bundle[1]
        if kept:
            invocation.insert_after(number, ["-" + kept])
    return removed


def without_option(invocation: Invocation, names: tuple[str, ...], *, value: str) -> list[str]:
    """Take ``--name=V`` and ``--name V`` out; ``value``: ``required``, ``optional`` (the next
    word is the option's only when it is a number) or ``none``."""
    removed = []
    arguments = invocation.arguments
    skip = False
    for position, (number, word) in enumerate(arguments):
        if skip:
            skip = False
            continue
        name = word.split("=", 1)[0]
        if name not in names:
            continue
        invocation.drop(number)
        removed.append(word)
        following = arguments[position + 1] if position + 1 < len(arguments) else None
        if "=" in word or following is None or value == "none":
            continue
        if value == "required" or following[1].isdigit():
            invocation.drop(following[0])
            removed[-1] += f" {following[1]}"
            skip = True
    return removed


def has_option(invocation: Invocation, names: tuple[str, ...]) -> str | None:
    """The value of the first ``--name=V`` / ``--name V`` among the runner's arguments ("" for
    a flag without a value), or None when there is none."""
    arguments = invocation.arguments
    for position, (_, word) in enumerate(arguments):
        name, equals, given = word.partition("=")
        if name in names:
            if equals:
                return given
            following = arguments[position + 1][1] if position + 1 < len(arguments) else ""
            return following if following and not following.startswith("-") else ""
    return None
