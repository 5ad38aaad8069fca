"""``catch`` blocks and promise ``.catch`` handlers in JavaScript/TypeScript, read from
tokens: what they catch in which function, and whether they rethrow, discard or only log.
A JavaScript ``catch`` takes every error, so "broad" does not apply; an empty or
log-only one is what discards."""

from __future__ import annotations

from ..model import Handler, ModuleFacts
from .jstests import literal
from .jstokens import Tokens

_LOGGERS = {"console", "logger", "log", "winston", "debug"}


def handlers(tokens: Tokens, facts: ModuleFacts, spans: list[tuple[int, int, str]]) -> None:
    """Every handler in the file; ``spans`` are the functions' bodies, to name the enclosing one."""
    for index in range(len(tokens)):
        if tokens.at(index) != "catch":
            continue
        if tokens.at(index - 1) == ".":
            _promise_catch(tokens, index, facts, spans)
            continue
        cursor = index + 1
        if tokens.at(cursor) == "(":
            cursor = tokens.close(cursor) + 1
        if tokens.at(cursor) != "{":
            continue
        end = tokens.close(cursor)
        handler = _handler(tokens, index, cursor + 1, end, spans, tokens.source_text(index, end + 1))
        inside = [span for span in spans if span[0] <= index < span[1]]
        limit = min(inside, key=lambda span: span[1] - span[0])[1] if inside else len(tokens)
        handler.falls_back = handler.discards and _falls_back(tokens, index, end, limit)
        facts.handlers.append(handler)


def _falls_back(tokens: Tokens, catch: int, end: int, limit: int) -> bool:
    """``try { return fast() } catch {}`` followed by code that computes the result another
    way: the empty handler lets control fall through to that code, it does not discard."""
    if tokens.at(catch - 1) != "}":
        return False
    opener = next((start for start, stop in tokens.pairs.items() if stop == catch - 1), None)
    if opener is None or tokens.at(opener - 1) != "try" or "return" not in (
            tokens.at(i) for i in range(opener, catch)):
        return False
    cursor = end + 1
    if tokens.at(cursor) == "finally" and tokens.at(cursor + 1) == "{":
        cursor = tokens.close(cursor + 1) + 1
    # what runs next, up to the end of the function (leaving the blocks around the try)
    following = [index for index in range(cursor, limit) if tokens.at(index) not in (";", "}", "]")]
    if not following:
        return False
    rest = following[1:]
    constant = tokens.at(following[0]) == "return" and (
        all(tokens.at(index) in ("{", "[") for index in rest)  # return, return {}, return []
        or (len(rest) == 1 and literal(tokens, rest[0], rest[0] + 1) is not None))
    return not constant


def _promise_catch(tokens: Tokens, index: int, facts: ModuleFacts, spans: list[tuple[int, int, str]]) -> None:
    if tokens.at(index + 1) != "(":
        return
    close = tokens.close(index + 1)
    start = index + 2
    if tokens.at(start) == "(" and tokens.at(tokens.close(start) + 1) == "=>":
        start = tokens.close(start) + 2
    elif tokens.items[start].kind == "name" and tokens.at(start + 1) == "=>":
        start += 2
    else:  # a function reference: .catch(noop), .catch(console.error)
        handler = _handler(tokens, index, start, close, spans, tokens.source_text(index - 1, close + 1))
        name = tokens.at(start)
        handler.discards = name in ("noop", "identity")
        handler.quiet = handler.discards or name in _LOGGERS
        facts.handlers.append(handler)
        return
    if tokens.at(start) == "{":  # .catch(() => { ... })
        facts.handlers.append(_handler(tokens, index, start + 1, tokens.close(start), spans,
                                       tokens.source_text(index - 1, close + 1)))
        return
    handler = _handler(tokens, index, start, close, spans, tokens.source_text(index - 1, close + 1))
    handler.discards = literal(tokens, start, close) == ("none", None)  # .catch(() => null)
    handler.quiet = handler.discards or literal(tokens, start, close) is not None
    facts.handlers.append(handler)


def _handler(tokens: Tokens, index: int, start: int, end: int, spans: list[tuple[int, int, str]],
             text: str) -> Handler:
    inside = [span for span in spans if span[0] <= index < span[1]]
    function = min(inside, key=lambda span: span[1] - span[0])[2] if inside else ""
    body = [token.text for token in tokens.items[start:end]]
    _logged, rest = _strip_logging(tokens, start, end)
    leaves = all(item in ("return", ";", "void") or literal(tokens, position, position + 1) is not None
                 for position, item in rest)
    return Handler(line=tokens.items[index].line, function=function, key=f"{function}|{' '.join(body)}",
                   text=text, reraises="throw" in body or ("reject" in body and "(" in body),
                   discards=not body, quiet=leaves, broad=True)


def _strip_logging(tokens: Tokens, start: int, end: int) -> tuple[bool, list[tuple[int, str]]]:
    """Whether the block logs, and its other tokens (position, text)."""
    rest: list[tuple[int, str]] = []
    logged = False
    index = start
    while index < end:
        if tokens.at(index) in _LOGGERS and tokens.at(index - 1) != ".":
            cursor = index + 1
            while tokens.at(cursor) == "." and cursor + 1 < end:
                cursor += 2
            if tokens.at(cursor) == "(":
                logged = True
                index = tokens.close(cursor) + 1
                continue
        rest.append((index, tokens.at(index)))
        index += 1
    return logged, rest
