"""A shell command line split into words with their spans, as a POSIX shell reads it.

Quotes and backslashes are read as the shell reads them, ``$(...)`` and backticks stay inside
their word, and the control operators (``&&``, ``||``, ``;``, ``|``, ``&``, a newline,
parentheses) are words of their own that end a *segment*. A redirection (``> out.txt``,
``2>&1``) is marked: it belongs to its segment but is no argument. The spans let
:mod:`axpipe_builtin.gate_commands` edit a command without retyping the rest of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_OPERATORS = ("&&", "||", ";;", ";", "|", "&", "\n", "(", ")")
_REDIRECT = re.compile(r"^(\d*|&)(>>?|<<?|>&|<&|>\|)(.*)$")


@dataclass
class Word:
    """One word of a command, or a control operator."""

    value: str  # as the program receives it (quotes removed)
    start: int  # span in the command string (list commands: the index, start == end - 1)
    end: int
    operator: bool = False
    redirect: bool = False


def shell_words(text: str) -> list[Word]:
    """The words and control operators of ``text``, each with its span."""
    words: list[Word] = []
    index, size = 0, len(text)
    while index < size:
        char = text[index]
        if char in " \t":
            index += 1
            continue
        if char == "#":
            while index < size and text[index] != "\n":
                index += 1
            continue
        operator = next((op for op in _OPERATORS if text.startswith(op, index)), None)
        if operator is not None and not text.startswith("&>", index):
            words.append(Word(operator, index, index + len(operator), operator=True))
            index += len(operator)
            continue
        start, value = index, list[str]()
        while index < size and text[index] not in " \t\n;|()" and not (
                text[index] == "&" and not _redirect_ampersand(text, index, value)):
            char = text[index]
            if char == "\\" and index + 1 < size:
                value.append(text[index + 1])
                index += 2
            elif char == "'":
                end = text.find("'", index + 1)
                end = size if end < 0 else end
                value.append(text[index + 1:end])
                index = end + 1
            elif char == '"':
                index += 1
                while index < size and text[index] != '"':
                    if text[index] == "\\" and index + 1 < size and text[index + 1] in '"\\$`\n':
                        index += 1
                    value.append(text[index])
                    index += 1
                index += 1
            elif text.startswith("$(", index):
                end = _closing(text, index + 1)
                value.append(text[index:end])
                index = end
            elif char == "`":
                end = text.find("`", index + 1)
                end = size if end < 0 else end + 1
                value.append(text[index:end])
                index = end
            else:
                value.append(char)
                index += 1
        words.append(Word("".join(value), start, min(index, size)))
    _mark_redirects(words)
    return words


def _redirect_ampersand(text: str, index: int, value: list[str]) -> bool:
    """``&`` inside a redirection (``2>&1``, ``&>out``) is part of the word, not an operator."""
    before = "".join(value)
    return before.endswith((">", "<")) or (not before and text.startswith("&>", index))


def _closing(text: str, index: int) -> int:
    """The index just past the ``)`` that closes the ``(`` at ``index``."""
    depth = 0
    while index < len(text):
        if text[index] == "(":
            depth += 1
        elif text[index] == ")":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return index


def _mark_redirects(words: list[Word]) -> None:
    for number, word in enumerate(words):
        if word.operator or word.redirect:
            continue
        match = _REDIRECT.match(word.value)
        if match:
            word.redirect = True
            if not match[3] and number + 1 < len(words) and not words[number + 1].operator:
                words[number + 1].redirect = True  # `> out.txt`: its target too
