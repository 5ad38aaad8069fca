"""A small JavaScript/TypeScript tokenizer: enough to find calls, blocks and literals.

It drops comments (keeping their text, to tell a test commented out from one deleted),
reads strings, template literals (with ``${...}`` inside) and regular expression literals
whole, and pairs brackets. It does not parse: the guards work on token patterns, which
is what lets one tokenizer serve .js, .jsx, .ts, .tsx, .mjs and .cjs.
"""

from __future__ import annotations

import re

from axpipe.records import record

_NAME = re.compile(r"[A-Za-z_$][\w$]*")
_NUMBER = re.compile(r"(?:0[xXbBoO][\da-fA-F_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?)n?")
_PUNCT = re.compile(r"=>|\?\.|\.\.\.|===|!==|==|!=|<=|>=|&&|\|\||\?\?|\+\+|--|[-+*/%=<>!&|^~?:;,.(){}\[\]@#]")
_REGEX_BEFORE = set("(,=:[!&|?{};+-*%<>~^") | {"return", "typeof", "instanceof", "in", "of", "new", "delete",
                                               "void", "throw", "case", "do", "else", "yield", "await", "=>"}
OPENERS = {"(": ")", "[": "]", "{": "}"}


@record(frozen=True)
class Token:
    kind: str    # name, num, str, tmpl, regex, punct
    text: str
    line: int
    offset: int  # where it starts in the source


class Tokens:
    """The tokens of one file, with bracket pairs and the comments' text."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.items, self.comments = tokenize(source)
        self.pairs = _pair(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def text(self, start: int, end: int) -> str:
        """Tokens ``start`` to ``end`` (exclusive) joined with single spaces: a key that
        ignores layout and comments."""
        return " ".join(token.text for token in self.items[start:end])

    def source_text(self, start: int, end: int, limit: int = 160) -> str:
        """The source from token ``start`` to token ``end`` (exclusive), on one line."""
        if start >= end or start >= len(self.items):
            return ""
        last = self.items[min(end, len(self.items)) - 1]
        text = " ".join(self.source[self.items[start].offset:last.offset + len(last.text)].split())
        return text if len(text) <= limit else text[:limit - 3] + "..."

    def at(self, index: int) -> str:
        return self.items[index].text if 0 <= index < len(self.items) else ""

    def close(self, index: int) -> int:
        """Index of the bracket closing the one at ``index`` (the last token if unbalanced)."""
        return self.pairs.get(index, len(self.items) - 1)


def tokenize(source: str) -> tuple[list[Token], str]:
    tokens: list[Token] = []
    comments: list[str] = []
    index, line, length = 0, 1, len(source)
    while index < length:
        char = source[index]
        if char == "\n":
            line += 1
            index += 1
        elif char.isspace():
            index += 1
        elif source.startswith("//", index):
            end = source.find("\n", index)
            end = length if end < 0 else end
            comments.append(source[index + 2:end])
            index = end
        elif source.startswith("/*", index):
            end = source.find("*/", index + 2)
            end = length if end < 0 else end + 2
            comments.append(source[index + 2:end - 2])
            line += source.count("\n", index, end)
            index = end
        elif char in "'\"":
            end = _string_end(source, index, char)
            tokens.append(Token("str", source[index:end], line, index))
            index = end
        elif char == "`":
            end = _template_end(source, index)
            tokens.append(Token("tmpl", source[index:end], line, index))
            line += source.count("\n", index, end)
            index = end
        elif char == "/" and _regex_allowed(tokens):
            end = _regex_end(source, index)
            tokens.append(Token("regex", source[index:end], line, index))
            index = end
        else:
            for kind, pattern in (("name", _NAME), ("num", _NUMBER), ("punct", _PUNCT)):
                match = pattern.match(source, index)
                if match and match.end() > index:
                    tokens.append(Token(kind, match.group(), line, index))
                    index = match.end()
                    break
            else:
                index += 1  # a character no token starts with (JSX text, BOM): skip it
    return tokens, "\n".join(comments)


def _string_end(source: str, index: int, quote: str) -> int:
    position = index + 1
    while position < len(source):
        char = source[position]
        if char == "\\":
            position += 2
            continue
        if char == quote:
            return position + 1
        if char == "\n":  # unterminated (JSX text with an apostrophe): stop at the line's end
            return position
        position += 1
    return position


def _template_end(source: str, index: int) -> int:
    position, depth = index + 1, 0
    while position < len(source):
        char = source[position]
        if char == "\\":
            position += 2
            continue
        if depth == 0 and char == "`":
            return position + 1
        if source.startswith("${", position):
            depth += 1
            position += 2
            continue
        if depth and char == "}":
            depth -= 1
        elif depth and char in "'\"":
            position = _string_end(source, position, char)
            continue
        position += 1
    return position


def _regex_allowed(tokens: list[Token]) -> bool:
    if not tokens:
        return True
    last = tokens[-1]
    return last.text in _REGEX_BEFORE and last.kind in ("punct", "name")


def _regex_end(source: str, index: int) -> int:
    position, in_class = index + 1, False
    while position < len(source) and source[position] != "\n":
        char = source[position]
        if char == "\\":
            position += 2
            continue
        if char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        elif char == "/" and not in_class:
            position += 1
            while position < len(source) and (source[position].isalnum()):
                position += 1
            return position
        position += 1
    return position


def _pair(tokens: list[Token]) -> dict[int, int]:
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for index, token in enumerate(tokens):
        if token.kind != "punct":
            continue
        if token.text in OPENERS:
            stack.append(index)
        elif token.text in (")", "]", "}"):
            while stack and OPENERS[tokens[stack[-1]].text] != token.text:
                stack.pop()  # an unbalanced opener (JSX, a stray brace): drop it
            if stack:
                pairs[stack.pop()] = index
    return pairs
