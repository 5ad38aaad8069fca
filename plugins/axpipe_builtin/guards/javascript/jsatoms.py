"""Assertions in one JavaScript/TypeScript test body, graded like Python's (see
:class:`.model.Atom`): ``expect(x).toBe(3)`` is equality, ``toBeTruthy`` truthiness,
``toBeCloseTo(v, digits)`` a tolerance, ``toThrow(E)`` an expected error; plus
``expect.assertions(n)``, ``assert.*`` and the literals mocks return."""

from __future__ import annotations

from ..model import Atom, Expectation, Lit, ModuleFacts, TestFacts
from .jstests import _APPROX, _ASSERT, _IMPLEMENTATIONS, _MOCKS, _STRENGTH, _THROWS, literal, literals, split_args
from .jstokens import Tokens

_CHAIN_WORDS = {"not", "resolves", "rejects", "to", "be", "been", "have", "has", "is", "that", "which", "and",
                "with", "at", "of", "same", "does", "still", "deep", "nested", "own", "ordered", "any", "all"}


def body_atoms(tokens: Tokens, start: int, end: int, test: TestFacts, where: str, facts: ModuleFacts) -> None:
    names = _locals(tokens, start, end)
    index = start
    while index < end:
        token = tokens.items[index]
        before = tokens.at(index - 1)
        if token.kind == "name" and before != "." and token.text == "expect":
            if tokens.at(index + 1) == "(":
                index = _expect(tokens, index, test, where, facts, names)
                continue
            if tokens.at(index + 1) == "." and tokens.at(index + 2) in ("assertions", "hasAssertions"):
                argument = literal(tokens, index + 4, tokens.close(index + 3)) if tokens.at(index + 3) == "(" else None
                test.declared_assertions = int(argument[1]) if argument and argument[0] == "num" else 1
        elif token.kind == "name" and before != "." and token.text == "assert":
            index = _assert(tokens, index, test, where, facts, names)
            continue
        elif token.kind == "name" and before == "." and token.text == "expect" and tokens.at(index + 1) == "(":
            index = _supertest(tokens, index, test)
            continue
        elif token.kind == "name" and token.text in _MOCKS | _IMPLEMENTATIONS and tokens.at(index + 1) == "(":
            _mock(tokens, index, test)
        index += 1
    test.weight = _weight(tokens, start, end, test.atoms)


def _supertest(tokens: Tokens, index: int, test: TestFacts) -> int:
    """``request(app).get('/').expect(200).expect('Content-Type', /json/)``: supertest's
    assertions on a response, one per ``.expect``: the status (and body), or one header
    (its name compared without case, as HTTP does)."""
    close = tokens.close(index + 1)
    args = split_args(tokens, index + 1)
    values = [arg for arg in args if not (arg[1] - arg[0] == 1 and tokens.at(arg[0]) in ("done", "cb"))]
    if not values:
        return close + 1
    line, text = tokens.items[index].line, tokens.source_text(index - 1, close + 1)
    first = literal(tokens, *values[0])
    if first is not None and first[0] == "str" and len(values) > 1:
        name = str(first[1]).lower()
        subject, expected = f"header {name}", literal(tokens, *values[1])
        found = {("str", name)} | literals(tokens, *values[1])
    else:
        subject, expected = "response", first
        found = {value for start, stop in values for value in literals(tokens, start, stop)}
    atom = Atom(line, text, tokens.text(index - 1, close + 1), subject, 3, expected=expected)
    checked = values[1 if subject != "response" else 0:]
    atom.shape = f".expect {subject} " + " ".join(shape(tokens, *arg) for arg in checked)
    atom.literals = frozenset(found)
    test.literals |= found
    test.atoms.append(atom)
    return close + 1


def _weight(tokens: Tokens, start: int, end: int, atoms: list[Atom]) -> int:
    """Assertions one run makes: the arms of an ``if``/``else`` are alternatives, so the
    smaller arm's assertions do not add to the count."""
    lines = [atom.line for atom in atoms if atom.strength > 0]
    total = len(lines)
    for index in range(start, end):
        if tokens.at(index) != "if" or tokens.at(index + 1) != "(":
            continue
        body = tokens.close(index + 1) + 1
        if tokens.at(body) != "{":
            continue
        body_end = tokens.close(body)
        if tokens.at(body_end + 1) != "else" or tokens.at(body_end + 2) != "{":
            continue
        other_end = tokens.close(body_end + 2)
        first = sum(1 for line in lines if tokens.items[body].line <= line <= tokens.items[body_end].line)
        second = sum(1 for line in lines if tokens.items[body_end + 2].line <= line <= tokens.items[other_end].line)
        total -= min(first, second)
    return total


def _locals(tokens: Tokens, start: int, end: int) -> dict[str, tuple[int, int]]:
    """``const result = add(1, 2)`` → result: the tokens of ``add(1, 2)``."""
    found: dict[str, tuple[int, int]] = {}
    for index in range(start, end - 3):
        if tokens.at(index) in ("const", "let", "var") and tokens.items[index + 1].kind == "name" \
                and tokens.at(index + 2) == "=":
            value_start = stop = index + 3
            line = tokens.items[value_start].line
            while stop < end and tokens.at(stop) not in (";", "}") and (tokens.items[stop].line == line
                                                                          or tokens.at(stop - 1) in ("(", ",")):
                stop = tokens.close(stop) + 1 if tokens.at(stop) in ("(", "[", "{") else stop + 1
            found[tokens.at(index + 1)] = (value_start, min(stop, end))
    return found


def _chain(tokens: Tokens, cursor: int) -> tuple[list[tuple[str, int | None]], int]:
    """``.not.toBe(3)`` → [("not", None), ("toBe", index of its "(")], and where it ends."""
    parts: list[tuple[str, int | None]] = []
    while tokens.at(cursor) == "." and cursor + 1 < len(tokens):
        name = tokens.at(cursor + 1)
        cursor += 2
        if tokens.at(cursor) == "(":
            parts.append((name, cursor))
            cursor = tokens.close(cursor) + 1
        else:
            parts.append((name, None))
    return parts, cursor


def shape(tokens: Tokens, start: int, end: int) -> str:
    """The assertion with literals and local names as ``_`` (see :func:`.pyatoms.shape`)."""
    parts = []
    for index in range(start, end):
        token = tokens.items[index]
        literal_token = token.kind in ("num", "str", "regex") or (token.kind == "tmpl" and "${" not in token.text)
        local_name = token.kind == "name" and tokens.at(index + 1) != "(" and tokens.at(index - 1) != "." and \
            not token.text[:1].isupper() and token.text not in ("true", "false", "null", "undefined", "not")
        if literal_token or local_name:
            parts.append("_")
        else:
            parts.append(token.text)
    return " ".join(parts)


def _add(test: TestFacts, atom: Atom, tokens: Tokens, start: int, stop: int) -> None:
    atom.shape = shape(tokens, start, stop)
    atom.literals = frozenset(literals(tokens, start, stop))
    test.atoms.append(atom)


def _expect(tokens: Tokens, index: int, test: TestFacts, where: str, facts: ModuleFacts,
            names: dict[str, tuple[int, int]]) -> int:
    open_index = index + 1
    close = tokens.close(open_index)
    subject = (open_index + 1, close)
    parts, stop = _chain(tokens, close + 1)
    words = [name for name, _ in parts]
    matchers = [(name, paren) for name, paren in parts if name not in _CHAIN_WORDS]
    if not matchers:
        return stop
    matcher, paren = matchers[-1]
    args = split_args(tokens, paren) if paren is not None else []
    text, key = tokens.source_text(index, stop), tokens.text(index, stop)
    subject_text = tokens.text(*subject)
    line = tokens.items[index].line
    expected = literal(tokens, *args[0]) if args else None
    negated = "not" in words
    if matcher in _THROWS or "rejects" in words:
        # toThrow(TypeError) names the error; toThrow('text') or toThrow(/re/) its message
        pattern = bool(args) and tokens.items[args[0][0]].kind in ("str", "regex", "tmpl")
        exception = tokens.source_text(*args[0]) if args and not pattern else None
        _add(test, Atom(line, text, key, subject_text, 1 if negated else (3 if args else 1), "raises",
                        exception=exception, pattern=pattern, match=_pattern(tokens, args[0]) if pattern else None),
             tokens, index, stop)
        callee = _callee(tokens, *subject, names)
        if callee and not negated:
            facts.raises.append((callee[0], exception or "Error", where))
        return stop
    subject_text = _unwrapped(subject_text)
    if matcher in _APPROX:
        digits = literal(tokens, *args[1]) if len(args) > 1 else None
        if matcher == "toBeCloseTo":
            slack = 0.5 * 10 ** -(digits[1] if digits and digits[0] == "num" else 2)
        else:
            slack = digits[1] if digits and digits[0] == "num" else 0.0
        # toBeCloseTo with its default precision is how floats are compared for equality
        strength = 3 if matcher == "toBeCloseTo" and (digits is None or (digits[0] == "num" and digits[1] >= 2)) else 2
        _add(test, Atom(line, text, key, subject_text, strength, "approx", expected, slack), tokens, index, stop)
        _claim(tokens, subject, expected, where, facts, names)
        return stop
    strength = _STRENGTH.get(matcher, 1)
    if negated:
        strength = 1
    if literal(tokens, *subject) is not None or (args and tokens.text(*args[0]) == subject_text):
        strength = 0  # expect(true).toBe(true), expect(x).toBe(x)
    if subject_text.endswith(" . length") and strength:  # expect(x.length): its size only
        subject_text = _unwrapped(subject_text[: -len(" . length")])
        zero = expected == ("num", 0.0)
        if matcher in ("toBeGreaterThanOrEqual",) and zero:
            strength = 0
        else:
            strength = 3 if zero and strength >= 3 else min(strength, 2)
    if matcher == "toHaveLength" and expected == ("num", 0.0):
        strength = 3  # empty
    if matcher in ("toEqual", "toStrictEqual") and not negated and args and _split(tokens, subject, args[0], test, line,
                                                                                 text, key, strength):
        return stop
    _add(test, Atom(line, text, key, subject_text, strength, expected=expected), tokens, index, stop)
    if strength >= 3 and matcher in _EQUALITY and args and not negated:  # `a == b`, however it is spelled
        test.atoms[-1].shape = f"{shape(tokens, *subject)} == {shape(tokens, *args[0])}"
    if strength >= 3:
        _claim(tokens, subject, expected, where, facts, names)
    return stop


_EQUALITY = {"toBe", "toEqual", "toStrictEqual", "equal", "equals", "eql", "strictEqual", "deepEqual",
             "deepStrictEqual"}


def _unwrapped(subject: str) -> str:
    """``String ( x )`` and ``x . toString ( )`` check ``x``'s text: its subject is ``x``."""
    for head, tail in (("String ( ", " )"), ("", " . toString ( )")):
        if subject.startswith(head) and subject.endswith(tail) and len(subject) > len(head) + len(tail):
            inner = subject[len(head):len(subject) - len(tail)]
            if inner.count("(") == inner.count(")"):
                return inner
    return subject


def _assert(tokens: Tokens, index: int, test: TestFacts, where: str, facts: ModuleFacts,
            names: dict[str, tuple[int, int]]) -> int:
    method, paren = "", index + 1
    if tokens.at(index + 1) == "." and tokens.at(index + 3) == "(":
        method, paren = tokens.at(index + 2), index + 3
    if tokens.at(paren) != "(":
        return index + 1
    args = split_args(tokens, paren)
    stop = tokens.close(paren) + 1
    if not args:
        return stop
    text, key, line = tokens.source_text(index, stop), tokens.text(index, stop), tokens.items[index].line
    subject = tokens.text(*args[0])
    if method in ("throws", "rejects"):
        checked = [arg for arg in args[1:3] if tokens.items[arg[0]].kind in ("str", "regex", "tmpl") or (
            tokens.at(arg[0]) == "{" and any(tokens.at(i) == "message" for i in range(*arg)))]
        named = [arg for arg in args[1:2] if tokens.items[arg[0]].kind == "name"]  # assert.throws(fn, TypeError)
        exception = tokens.source_text(*named[0]) if named else None
        _add(test, Atom(line, text, key, subject, 3 if exception or checked else 1, "raises", exception=exception,
                        pattern=bool(checked), match=_pattern(tokens, checked[0]) if checked else None),
             tokens, index, stop)
        callee = _callee(tokens, *args[0], names)
        if callee:
            facts.raises.append((callee[0], exception or "Error", where))
        return stop
    if method == "":
        strength = 3 if any(tokens.at(i) in ("===", "==") for i in range(*args[0])) else 1
    else:
        strength = _ASSERT.get(method, 1)
    expected = literal(tokens, *args[1]) if len(args) > 1 else None
    if literal(tokens, *args[0]) is not None and method in ("", "ok", "isTrue"):
        strength = 0
    if strength >= 3 and len(args) > 1 and tokens.text(*args[0]) == tokens.text(*args[1]):
        strength = 0  # assert.equal(x, x)
    _add(test, Atom(line, text, key, subject, strength, expected=expected), tokens, index, stop)
    if strength >= 3 and len(args) > 1:
        _claim(tokens, args[0], expected, where, facts, names)
    return stop


def _callee(tokens: Tokens, start: int, end: int,
            names: dict[str, tuple[int, int]]) -> tuple[str, tuple[Lit, ...]] | None:
    """``add(1, 2)``, ``await svc.add(1, 2)``, ``() => add(1, 2)`` → ("add", (1, 2))."""
    if end - start == 1 and tokens.at(start) in names:
        start, end = names[tokens.at(start)]
    for index in range(start, end):
        if tokens.items[index].kind == "name" and tokens.at(index + 1) == "(" and tokens.at(index) not in (
                "await", "async", "function", "new"):
            arguments = tuple(literal(tokens, *arg) or ("other", tokens.text(*arg)) for arg in split_args(
                tokens, index + 1))
            return tokens.at(index), arguments
    return None


def _claim(tokens: Tokens, subject: tuple[int, int], expected: Lit | None, where: str, facts: ModuleFacts,
           names: dict[str, tuple[int, int]]) -> None:
    if expected is None:
        return
    callee = _callee(tokens, *subject, names)
    if callee is not None:
        facts.expectations.append(Expectation(callee[0], callee[1], expected, where))


def _mock(tokens: Tokens, index: int, test: TestFacts) -> None:
    args = split_args(tokens, index + 1)
    if not args:
        return
    start, end = args[0]
    if tokens.at(index) in _IMPLEMENTATIONS:  # () => 42
        if tokens.at(start) == "(" and tokens.at(tokens.close(start) + 1) == "=>":
            start = tokens.close(start) + 2
        else:
            return
    value = literal(tokens, start, end)
    if value is not None:
        stop = tokens.close(index + 1) + 1
        test.mocks.append((tokens.items[index].line, value, tokens.source_text(index, stop)))


def _pattern(tokens: Tokens, argument: tuple[int, int]) -> str | None:
    """The message a throw assertion requires: a string's text or a regex's source."""
    token = tokens.items[argument[0]]
    if token.kind == "regex":
        return token.text[1:token.text.rfind("/")]
    value = literal(tokens, *argument)
    return str(value[1]) if value is not None and value[0] == "str" else None


def _split(tokens: Tokens, subject: tuple[int, int], expected: tuple[int, int], test: TestFacts, line: int,
           text: str, key: str, strength: int) -> bool:
    """``expect([a, b]).toEqual([1, 2])``: two assertions, one per pair (merged comparisons)."""
    if tokens.at(subject[0]) != "[" or tokens.close(subject[0]) != subject[1] - 1 or \
            tokens.at(expected[0]) != "[" or tokens.close(expected[0]) != expected[1] - 1:
        return False
    left, right = split_args(tokens, subject[0]), split_args(tokens, expected[0])
    if len(left) != len(right) or len(left) < 2:
        return False
    for (a_start, a_end), (b_start, b_end) in zip(left, right, strict=True):
        atom = Atom(line, text, f"{key}#{tokens.text(a_start, a_end)}", tokens.text(a_start, a_end), strength,
                    expected=literal(tokens, b_start, b_end))
        atom.shape = f"{shape(tokens, a_start, a_end)} == {shape(tokens, b_start, b_end)}"
        atom.literals = frozenset(literals(tokens, a_start, a_end) | literals(tokens, b_start, b_end))
        test.atoms.append(atom)
    return True
