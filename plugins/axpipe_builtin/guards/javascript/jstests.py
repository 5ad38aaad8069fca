"""JavaScript/TypeScript tests (jest, vitest, mocha, node:test) read from tokens.

Finds ``describe``/``it``/``test`` blocks with their modifiers (``.skip``, ``.only``,
``.todo``, ``.failing``, ``.each``, ``x``/``f`` prefixes), each test's assertions
(``expect(...)`` matcher chains, chai chains, ``assert.*``) graded like Python's, the
literals mocks return, and the claims tests make (``expect(add(40, 2)).toBe(42)``).
"""

from __future__ import annotations

from dataclasses import field

from axpipe.records import record

from ..model import Lit, Marker, ModuleFacts, ScopeMarker, TestFacts, trivial
from .jstokens import Tokens

TESTS = {"it", "test", "specify", "xit", "xtest", "xspecify", "fit", "ftest"}
BLOCKS = {"describe", "suite", "context", "xdescribe", "xcontext", "fdescribe", "fcontext"}
_CALLED = {"each", "skipIf", "runIf", "for"}
_MODIFIERS = {"skip": "skip", "todo": "todo", "failing": "xfail", "fails": "xfail", "skipIf": "skip", "runIf": "skip",
              "only": "only"}
_CONDITIONAL = {"skipIf", "runIf"}
_STRENGTH = {
    "toStrictEqual": 4, "toBe": 3, "toEqual": 3, "toBeNull": 3, "toBeUndefined": 3, "toBeNaN": 3,
    "toHaveLength": 2, "toHaveBeenCalledWith": 3, "toHaveBeenCalledTimes": 3, "toHaveBeenNthCalledWith": 3,
    "toHaveBeenLastCalledWith": 3, "toMatchSnapshot": 3, "toMatchInlineSnapshot": 3, "toHaveReturnedWith": 3,
    "equal": 3, "equals": 3, "eql": 3, "true": 3, "false": 3, "null": 3, "undefined": 3, "NaN": 3,
    "lengthOf": 3, "calledWith": 3, "calledOnceWith": 3,
    "toContain": 2, "toContainEqual": 2, "toMatch": 2, "toMatchObject": 2, "toBeGreaterThan": 2,
    "toBeGreaterThanOrEqual": 2, "toBeLessThan": 2, "toBeLessThanOrEqual": 2, "toHaveProperty": 2,
    "include": 2, "contain": 2, "includes": 2, "match": 2, "above": 2, "below": 2, "least": 2, "most": 2,
    "within": 2, "property": 2, "members": 2, "keys": 2, "calledOnce": 2,
    "toBeTruthy": 1, "toBeFalsy": 1, "toBeDefined": 1, "toBeInstanceOf": 1, "toHaveBeenCalled": 1,
    "ok": 1, "exist": 1, "a": 1, "an": 1, "instanceOf": 1, "called": 1, "empty": 1,
}
_ASSERT = {"strictEqual": 4, "deepStrictEqual": 4, "equal": 3, "deepEqual": 3, "ok": 1, "notEqual": 1,
           "notStrictEqual": 1, "notDeepStrictEqual": 1, "match": 2, "isTrue": 3, "isFalse": 3, "isOk": 1}
_APPROX = {"toBeCloseTo", "closeTo", "approximately"}
_THROWS = {"toThrow", "toThrowError", "throw", "throws", "rejects", "toThrowErrorMatchingSnapshot"}
_MOCKS = {"mockReturnValue", "mockReturnValueOnce", "mockResolvedValue", "mockResolvedValueOnce"}
_IMPLEMENTATIONS = {"mockImplementation", "mockImplementationOnce", "fn"}


def literal(tokens: Tokens, start: int, end: int) -> Lit | None:
    """The literal tokens ``start:end`` spell (``42``, ``-1.5``, ``'x'``, ``true``, ``null``)."""
    items = tokens.items[start:end]
    sign = 1.0
    if len(items) == 2 and items[0].text == "-" and items[1].kind == "num":
        sign, items = -1.0, items[1:]
    if len(items) != 1:
        return None
    token = items[0]
    if token.kind == "num":
        try:
            return ("num", sign * float(token.text.replace("_", "").rstrip("n")))
        except ValueError:
            return ("num", sign * float(int(token.text.replace("_", "").rstrip("n"), 0)))
    if token.kind == "str" or (token.kind == "tmpl" and "${" not in token.text):
        return ("str", _unquote(token.text))
    return {"true": ("bool", True), "false": ("bool", False), "null": ("none", None),
            "undefined": ("none", None)}.get(token.text) if token.kind == "name" else None


def _unquote(text: str) -> str:
    body = text[1:-1] if len(text) >= 2 and text[-1] == text[0] else text[1:]
    return body.encode("utf-8", "backslashreplace").decode("unicode_escape", errors="replace") if "\\" in body else body


def split_args(tokens: Tokens, open_index: int) -> list[tuple[int, int]]:
    """``(start, end)`` of each argument of the call whose ``(`` is at ``open_index``."""
    close = tokens.close(open_index)
    args: list[tuple[int, int]] = []
    start = index = open_index + 1
    while index < close:
        if tokens.at(index) in ("(", "[", "{"):
            index = tokens.close(index) + 1
            continue
        if tokens.at(index) == ",":
            args.append((start, index))
            start = index + 1
        index += 1
    if start < close:
        args.append((start, close))
    return args


@record
class _Block:
    head: int
    open: int
    close: int
    title: str
    modifiers: list[str]
    text: str
    body: tuple[int, int] | None
    cases: int | None = None
    tests: list[str] = field(default_factory=list)
    full: str = ""
    table: tuple[int, int] | None = None   # the tokens of an `each` table


def blocks(tokens: Tokens) -> list[_Block]:
    """Every test and describe call, in source order."""
    found: list[_Block] = []
    items = tokens.items
    for index, token in enumerate(items):
        if token.kind != "name" or token.text not in TESTS | BLOCKS or tokens.at(index - 1) in (".", "function"):
            continue
        cursor, modifiers, cases = index + 1, [], None
        each: tuple[int, int] | None = None
        while tokens.at(cursor) == "." and cursor + 1 < len(items) and items[cursor + 1].kind == "name":
            modifiers.append(items[cursor + 1].text)
            cursor += 2
            if modifiers[-1] in _CALLED and tokens.at(cursor) == "(":
                if modifiers[-1] == "each":
                    table = cursor + 1
                    cases = len(split_args(tokens, table)) if tokens.at(table) == "[" else None
                    each = (table, tokens.close(cursor))
                cursor = tokens.close(cursor) + 1
            elif modifiers[-1] == "each" and cursor < len(items) and items[cursor].kind == "tmpl":
                cursor += 1
        if tokens.at(cursor) != "(":
            continue
        args = split_args(tokens, cursor)
        if not args:
            continue
        first = args[0]
        title_literal = literal(tokens, *first)
        title = str(title_literal[1]) if title_literal else tokens.text(*first)
        body = args[-1] if len(args) > 1 else None
        options = [arg for arg in args[1:-1] if tokens.at(arg[0]) == "{"]  # node:test `{ skip: true }`
        for start, end in options:
            modifiers.extend(tokens.at(i) for i in range(start, end) if tokens.at(i) in ("skip", "todo")
                             and tokens.at(i + 1) == ":" and tokens.at(i + 2) not in ("false", "undefined"))
        shown = token.text + "".join("." + name for name in modifiers) + f"({tokens.source_text(*first)})"
        found.append(_Block(index, cursor, tokens.close(cursor), title, modifiers, shown, body, cases, table=each))
    return found


def _named(tokens: Tokens, found: list[_Block]) -> list[tuple[_Block, str, list[_Block]]]:
    """Each test block with its name (``describe > ... > title``, ``#n`` for repeats) and
    the describe blocks around it; a describe block's ``full`` name is set on the way."""
    describes = [block for block in found if tokens.at(block.head) in BLOCKS]
    seen: dict[str, int] = {}
    named: list[tuple[_Block, str, list[_Block]]] = []
    for block in found:
        outer = [d for d in describes if d.open < block.head < d.close and d is not block]
        name = " > ".join([*(d.title for d in outer), block.title])
        if tokens.at(block.head) in BLOCKS:
            block.full = name
            continue
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            name = f"{name} #{seen[name]}"
        named.append((block, name, outer))
    return named


def test_sources(tokens: Tokens) -> dict[str, str]:
    """Each test's tokens (its modifiers and title included) by name."""
    return {name: tokens.text(block.head, block.close + 1) for block, name, _outer in _named(tokens, blocks(tokens))}


def extract_tests(tokens: Tokens, path: str, facts: ModuleFacts, unchanged: frozenset[str] = frozenset()) -> None:
    """The tests of a test file; one named in ``unchanged`` is the same on both sides of the
    change, so only its name is read."""
    found = blocks(tokens)
    describes = [block for block in found if tokens.at(block.head) in BLOCKS]
    for block, name, outer in _named(tokens, found):
        head = tokens.at(block.head)
        for describe in outer:
            describe.tests.append(name)
        if name in unchanged:
            facts.tests[name] = TestFacts(name=name, line=tokens.items[block.head].line, fingerprint="", light=True)
        else:
            facts.tests[name] = _test(tokens, block, name, path, facts)
        if "only" in block.modifiers or head.startswith("f"):
            facts.only_markers.append(Marker("only", tokens.items[block.head].line, block.text))
    for describe in describes:
        head = tokens.at(describe.head)
        kinds = [(_MODIFIERS[name], f"{head}.{name}", name in _CONDITIONAL) for name in describe.modifiers
                 if name in _MODIFIERS]
        kinds += [("skip", head, False)] if head.startswith("x") else []
        for kind, source, conditional in kinds:
            marker = Marker(kind, tokens.items[describe.head].line, describe.text, source, conditional)
            if kind == "only":
                facts.only_markers.append(marker)
            else:
                facts.scope_markers.append(ScopeMarker(describe.full, marker, describe.tests))
        if head.startswith("f"):
            facts.only_markers.append(Marker("only", tokens.items[describe.head].line, describe.text))


def _test(tokens: Tokens, block: _Block, name: str, path: str, facts: ModuleFacts) -> TestFacts:
    line = tokens.items[block.head].line
    start, end = block.body if block.body else (block.close, block.close)
    test = TestFacts(name=name, line=line, fingerprint=tokens.text(start, end), cases=block.cases)
    head = tokens.at(block.head)
    kinds = [(_MODIFIERS[m], f"{head}.{m}", m in _CONDITIONAL) for m in block.modifiers
             if m in _MODIFIERS and m != "only"]
    kinds += [("skip", head, False)] if head.startswith("x") else []
    kinds += [("todo", f"{head}.todo", False)] if block.body is None and "todo" not in block.modifiers else []
    test.markers = [Marker(kind, line, block.text, source, conditional)
                    for kind, source, conditional in dict.fromkeys(kinds)]
    if block.table is not None:
        rows = split_args(tokens, block.table[0]) if tokens.at(block.table[0]) == "[" else []
        test.case_texts = [tokens.text(*row) for row in rows] or None
        test.case_literals = literals(tokens, *block.table)
    test.literals = test.case_literals | literals(tokens, start, end)
    test.calls = {tokens.at(i) for i in range(start, end) if tokens.items[i].kind == "name"
                  and tokens.at(i + 1) == "(" and tokens.at(i) not in _NOT_CALLS}
    from .jsatoms import body_atoms

    body_atoms(tokens, start, end, test, f"{path}::{name}", facts)
    return test


_NOT_CALLS = {"expect", "assert", "it", "test", "describe", "if", "for", "while", "function", "switch", "catch",
              "return", "await", "async", "typeof", "new", "require", "import"}


def literals(tokens: Tokens, start: int, end: int) -> set[Lit]:
    """The non-trivial literal values of tokens ``start:end``."""
    found: set[Lit] = set()
    for index in range(start, min(end, len(tokens))):
        if tokens.items[index].kind in ("num", "str", "tmpl"):
            value = literal(tokens, index, index + 1)
            if value is not None and not trivial(value):
                found.add(value)
    return found
