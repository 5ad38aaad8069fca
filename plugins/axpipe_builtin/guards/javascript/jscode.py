"""JavaScript/TypeScript code read from tokens: functions (declarations, arrow and function
expressions, methods) with their returns and the literals their branches compare inputs
with. Handlers are read by :mod:`.jshandlers`."""

from __future__ import annotations

from .. import focus
from ..model import Branch, FunctionFacts, Lit, ModuleFacts, Return, Table, TestFacts
from . import jsfocus
from .jshandlers import handlers
from .jstests import extract_tests, literal, literals, split_args, test_sources
from .jstokens import Tokens

_KEYWORDS = {"if", "for", "while", "switch", "catch", "function", "return", "with", "do", "else", "new",
             "typeof", "await", "yield", "super", "import", "constructor"}
_METHOD_BEFORE = {"{", "}", ";", "static", "async", "get", "set", "public", "private", "protected", "readonly",
                  "override", "*", ""}


_TOKENS: dict[tuple[int, int], tuple[str, Tokens, bool]] = {}


def tokens_of(text: str, lines: set[int] | None, *, test_file: bool) -> tuple[Tokens, bool]:
    """The tokens of ``text``, of only the tests (or top-level statements) holding ``lines``
    when that is worth it (:mod:`.focus`), and whether they are partial. The last few are
    kept: :func:`sources` and :func:`extract` read the same text one after the other."""
    key = (id(text), hash((frozenset(lines), test_file)) if lines is not None else 0)
    cached = _TOKENS.get(key)
    if cached is not None and cached[0] is text:
        return cached[1], cached[2]
    keep = jsfocus.javascript_lines(text, lines, test_file=test_file) if lines is not None else None
    partial = keep is not None and focus.worth_it(text, keep)
    tokens = Tokens(focus.sparse(text, keep) if partial and keep is not None else text)
    if len(_TOKENS) > 8:
        _TOKENS.clear()
    _TOKENS[key] = (text, tokens, partial)
    return tokens, partial


def sources(text: str, lines: set[int] | None, *, test_file: bool) -> dict[str, str]:
    """Each test's and function's tokens by name (see :func:`.jstests.test_sources`)."""
    tokens, _partial = tokens_of(text, lines, test_file=test_file)
    found = test_sources(tokens)
    for start, end, name, _head, _params in _spans(tokens):
        found.setdefault(f"function {name}", tokens.text(start, end))
    return found


def extract(text: str, path: str, *, test_file: bool, lines: set[int] | None = None,
            unchanged: frozenset[str] = frozenset()) -> ModuleFacts:
    """Everything the guards compare in one file; with ``lines``, only in the tests (or
    top-level statements) that hold them and the describe blocks around them (:mod:`.focus`);
    a test named in ``unchanged`` (the same on both sides) is read for its name only."""
    tokens, partial = tokens_of(text, lines, test_file=test_file)
    facts = ModuleFacts(commented=tokens.comments, partial=partial)
    if test_file:
        extract_tests(tokens, path, facts, unchanged)
        facts.context_literals = literals(tokens, 0, len(tokens))  # a table of cases beside a loop of tests
    spans = _functions(tokens, facts, unchanged)
    if test_file:  # helpers tests call: the assertions a test moved into one still count
        from .jsatoms import body_atoms

        for start, end, name in spans:
            if "#" not in name and f"function {name}" not in unchanged:
                scratch = TestFacts(name=name, line=0, fingerprint="")
                body_atoms(tokens, start, end, scratch, f"{path}::{name}", ModuleFacts())
                if scratch.atoms:
                    facts.helpers[name] = scratch.atoms
    facts.definitions.update(tokens.at(index + 1) for index in range(len(tokens) - 1)
                             if tokens.at(index) in ("class", "interface", "type", "enum")
                             and tokens.items[index + 1].kind == "name")
    handlers(tokens, facts, spans)
    return facts


def _spans(tokens: Tokens) -> list[tuple[int, int, str, int, list[str]]]:
    spans: list[tuple[int, int, str, int, list[str]]] = []
    for index in range(len(tokens)):
        found = _function_at(tokens, index)
        if found is not None:
            start, end, name, _open, params = found
            spans.append((start, end, name, index, params))
    return spans


def _functions(tokens: Tokens, facts: ModuleFacts,
               unchanged: frozenset[str] = frozenset()) -> list[tuple[int, int, str]]:
    """Every function, with its body span (start, end, qualified name), outermost first."""
    spans = _spans(tokens)
    named = {tokens.at(index - 2): table for index in range(2, len(tokens)) if tokens.at(index) == "{"
             and tokens.at(index - 1) == "=" and tokens.at(index - 3) in ("const", "let", "var")
             for table in [_object_table(tokens, index)] if table is not None}  # `const answers = {...}`
    result: list[tuple[int, int, str]] = []
    counts: dict[str, int] = {}
    for start, end, name, head, params in spans:
        counts[name] = counts.get(name, 0) + 1
        qualified = name if counts[name] == 1 else f"{name}#{counts[name]}"
        facts.definitions.add(name)
        result.append((start, end, qualified))
        if f"function {name}" in unchanged and counts[name] == 1:
            continue  # the same on both sides: nothing to compare
        nested = [(other[0], other[1]) for other in spans if start < other[0] and other[1] <= end]
        function = FunctionFacts(qualified, name, tokens.items[head].line, tokens.text(start, end), params)
        _body(tokens, start, end, nested, function)
        function.tables = [table for index in range(start, end) for table in [
            _object_table(tokens, index) if tokens.at(index) == "{" else named.get(tokens.at(index))
            if tokens.items[index].kind == "name" and tokens.at(index - 1) != "." else None] if table is not None]
        facts.functions[qualified] = function
    return result


def _function_at(tokens: Tokens, index: int) -> tuple[int, int, str, int, list[str]] | None:
    """(body start, body end, name, index of the parameters' "(", parameters) of a function
    starting at ``index``; for an expression-bodied arrow the body is the expression."""
    at = tokens.at
    item = tokens.items[index]
    if item.kind != "name":
        return None
    name, params_open = "", -1
    if item.text == "function":
        cursor = index + 1 + (at(index + 1) == "*")
        if _is_name(tokens, cursor):
            name, params_open = at(cursor), cursor + 1
    elif at(index + 1) in ("=", ":") and at(index - 1) != "." and item.text not in _KEYWORDS:
        cursor = index + 2 + (at(index + 2) == "async")
        if at(cursor) == "function":
            cursor += 1 + (at(cursor + 1) == "*")
            if _is_name(tokens, cursor):  # a named function expression: `add = function add(`
                cursor += 1
            name, params_open = item.text, cursor
        elif at(cursor) == "(" and _arrow_after(tokens, tokens.close(cursor)) is not None:
            name, params_open = item.text, cursor
        elif _is_name(tokens, cursor) and at(cursor + 1) == "=>":
            return _arrow(tokens, cursor + 1, item.text, cursor, [at(cursor)])
    elif at(index + 1) == "(" and item.text not in _KEYWORDS and at(index - 1) in _METHOD_BEFORE:
        after = tokens.close(index + 1) + 1
        if at(after) == "{" or (at(after) == ":" and _brace_after(tokens, after) is not None):
            name, params_open = item.text, index + 1
    if not name or at(params_open) != "(":
        return None
    params = _params(tokens, params_open)
    arrow = _arrow_after(tokens, tokens.close(params_open))
    if arrow is not None:
        return _arrow(tokens, arrow, name, params_open, params)
    brace = _brace_after(tokens, tokens.close(params_open) + 1)
    if brace is None:
        return None
    return brace + 1, tokens.close(brace), name, params_open, params


def _is_name(tokens: Tokens, index: int) -> bool:
    return 0 <= index < len(tokens) and tokens.items[index].kind == "name"


def _arrow_after(tokens: Tokens, close: int) -> int | None:
    """Index of ``=>`` after a parameter list (allowing a TypeScript return type)."""
    cursor = close + 1
    if tokens.at(cursor) == ":":
        while cursor < len(tokens) and tokens.at(cursor) not in ("=>", "{", ";", "="):
            cursor += 1
    return cursor if tokens.at(cursor) == "=>" else None


def _brace_after(tokens: Tokens, cursor: int) -> int | None:
    if tokens.at(cursor) == ":":
        while cursor < len(tokens) and tokens.at(cursor) not in ("{", ";", "=>", "="):
            cursor += 1
    return cursor if tokens.at(cursor) == "{" else None


def _arrow(tokens: Tokens, arrow: int, name: str, params_open: int,
           params: list[str]) -> tuple[int, int, str, int, list[str]]:
    if tokens.at(arrow + 1) == "{":
        return arrow + 2, tokens.close(arrow + 1), name, params_open, params
    return arrow + 1, expression_end(tokens, arrow + 1), name, params_open, params


def expression_end(tokens: Tokens, start: int) -> int:
    """Where an expression starting at ``start`` ends: ``;``, ``,`` or a closing bracket at
    its depth, or a line break after a token that cannot continue an expression."""
    index = start
    while index < len(tokens):
        text = tokens.at(index)
        if text in (";", ",", ")", "]", "}"):
            return index
        if text in ("(", "[", "{"):
            index = tokens.close(index) + 1
        else:
            index += 1
        if index < len(tokens) and tokens.items[index].line > tokens.items[index - 1].line and \
                tokens.at(index - 1) not in ("=>", "?", ":", "&&", "||", "??", "+", "-", "*", "/", "=", ".", "(") \
                and tokens.at(index) not in ("?", ":", ".", "&&", "||", "??", "+", "-", "*", "/", ")"):
            return index
    return index


def _params(tokens: Tokens, open_index: int) -> list[str]:
    names = []
    for start, end in split_args(tokens, open_index):
        first = tokens.items[start] if start < end else None
        if first is not None and first.kind == "name":
            names.append(first.text)
        elif first is not None and first.text == "..." and start + 1 < end:
            names.append(tokens.at(start + 1))
    return names


def _body(tokens: Tokens, start: int, end: int, nested: list[tuple[int, int]], function: FunctionFacts) -> None:
    if start == end or tokens.at(start - 1) != "{":  # an arrow's expression is its return value
        result = literal(tokens, start, end)
        function.returns.append(Return(tokens.items[min(start, len(tokens) - 1)].line, "=> " + tokens.text(start, end),
                                       "=> " + tokens.source_text(start, end), result, True))
        return
    index = start
    while index < end:
        skip = next((stop for first, stop in nested if first == index or (first <= index < stop)), None)
        if skip is not None:
            index = skip + 1
            continue
        text = tokens.at(index)
        if text == "return":
            stop = index + 1
            line = tokens.items[index].line
            while stop < end and tokens.at(stop) not in (";", "}") and tokens.items[stop].line == line:
                stop = tokens.close(stop) + 1 if tokens.at(stop) in ("(", "[", "{") else stop + 1
            value: Lit | None = literal(tokens, index + 1, stop) if stop > index + 1 else ("none", None)
            top = tokens.at(index - 1) in ("{", "}", ";") and _enclosing_brace(tokens, index, start) == start - 1
            function.returns.append(Return(tokens.items[index].line, tokens.text(index, stop),
                                           tokens.source_text(index, stop), value, top))
        elif text == "if" and tokens.at(index + 1) == "(":
            function.branches.append(_branch(tokens, index, function.params))
        elif text == "switch" and tokens.at(index + 1) == "(":
            function.branches.extend(_cases(tokens, index, function.params))
        index += 1


def _object_table(tokens: Tokens, open_index: int) -> Table | None:
    """An object literal whose keys and values are all literals (``{ '5,TENOFF': 0 }``)."""
    if tokens.at(open_index - 1) not in ("=", "(", "return", ":", ",", "?", "??", "||", "[") or \
            tokens.close(open_index) == len(tokens) - 1:
        return None
    pairs: list[tuple[Lit, Lit]] = []
    for start, end in split_args(tokens, open_index):
        if end - start < 3 or tokens.at(start + 1) != ":":
            return None
        token = tokens.items[start]
        key: Lit | None = ("str", token.text) if token.kind == "name" else literal(tokens, start, start + 1)
        value = literal(tokens, start + 2, end)
        if key is None or value is None:
            return None
        pairs.append((key, value))
    if not pairs:
        return None
    return Table(tokens.items[open_index].line, tokens.source_text(open_index, tokens.close(open_index) + 1, 120),
                 pairs)


def _enclosing_brace(tokens: Tokens, index: int, body_start: int) -> int:
    depth = 0
    for cursor in range(index - 1, body_start - 2, -1):
        text = tokens.at(cursor)
        if text in (")", "]", "}"):
            depth += 1
        elif text in ("(", "[", "{"):
            if depth == 0:
                return cursor
            depth -= 1
    return body_start - 1


def _compared(tokens: Tokens, start: int, end: int, params: list[str]) -> list[tuple[str, Lit]]:
    found: list[tuple[str, Lit]] = []
    for index in range(start, end):
        if tokens.at(index) not in ("===", "=="):
            continue
        left_start = index - 1
        while left_start > start and (tokens.at(left_start - 1) == "." or tokens.at(left_start) == "."):
            left_start -= 1
        left = (left_start, index)
        right_end = index + 2 if tokens.at(index + 1) != "-" else index + 3
        right = (index + 1, min(right_end, end))
        for name_side, value_side in ((left, right), (right, left)):
            value = literal(tokens, *value_side)
            root = tokens.at(name_side[0])
            if value is not None and root in params:
                found.append((tokens.text(*name_side), value))
    return found


def _branch(tokens: Tokens, index: int, params: list[str]) -> Branch:
    close = tokens.close(index + 1)
    if tokens.at(close + 1) == "{":
        body_end = tokens.close(close + 1)
    else:
        body_end = close + 1
        while body_end < len(tokens) and tokens.at(body_end) not in (";", "}"):
            body_end += 1
    literals = [value for cursor in range(index + 2, close) for value in [literal(tokens, cursor, cursor + 1)]
                if value is not None]
    return Branch(tokens.items[index].line, "if " + tokens.text(index + 1, close + 1),
                  "if " + tokens.source_text(index + 1, close + 1),
                  _compared(tokens, index + 2, close, params), _literal_returns(tokens, close + 1, body_end),
                  literals)


def _cases(tokens: Tokens, index: int, params: list[str]) -> list[Branch]:
    subject_close = tokens.close(index + 1)
    subject = tokens.text(index + 2, subject_close)
    if tokens.at(index + 2) not in params or tokens.at(subject_close + 1) != "{":
        return []
    end = tokens.close(subject_close + 1)
    cases = [cursor for cursor in range(subject_close + 2, end) if tokens.at(cursor) in ("case", "default")]
    branches = []
    for position, cursor in enumerate(cases):
        stop = cases[position + 1] if position + 1 < len(cases) else end
        colon = next((c for c in range(cursor, stop) if tokens.at(c) == ":"), stop)
        value = literal(tokens, cursor + 1, colon) if tokens.at(cursor) == "case" else None
        if value is None:
            continue
        branches.append(Branch(tokens.items[cursor].line, f"switch {subject} " + tokens.text(cursor, colon),
                               f"case {tokens.source_text(cursor + 1, colon)}:", [(subject, value)],
                               _literal_returns(tokens, colon + 1, stop), [value]))
    return branches


def _literal_returns(tokens: Tokens, start: int, end: int) -> list[Lit]:
    values = []
    for index in range(start, end):
        if tokens.at(index) == "return":
            stop = index + 1
            while stop < end and tokens.at(stop) not in (";", "}"):
                stop += 1
            value = literal(tokens, index + 1, stop)
            if value is not None:
                values.append(value)
    return values
