"""What a failing run's output says about the values a test expected.

Reads pytest (``E  assert 41 == 42`` with ``where 41 = add(40, 1)``), unittest
(``AssertionError: 41 != 42``), jest/vitest (``Expected: 42`` / ``Received: 41``,
``expected 41 to be 42``) and node's assert (``expected: 42`` / ``actual: 41``).
Values are only taken from assertion lines, never from arbitrary log text.
"""

from __future__ import annotations

import ast
import re
from dataclasses import field

from axpipe.records import record

from .model import Expectation, Lit, lit

_PYTEST = re.compile(r"^(?:E\s+)?(?:AssertionError: )?assert (.+?) (?:==|is) (.+?)\s*$")
_SUMMARY = re.compile(r"^FAILED \S+ - (?:AssertionError: )?assert (.+?) (?:==|is) (.+?)\s*$")
_WHERE = re.compile(r"^E?\s*\+\s+where (.+?) = ([A-Za-z_][\w.]*)\((.*)\)\s*$")
_UNITTEST = re.compile(r"^AssertionError: (.+?) != (.+?)(?: : .*)?\s*$")
_JEST_EXPECTED = re.compile(r"^\s*(?:Expected(?: value)?|expected):\s+(.+?)\s*$")
_JEST_RECEIVED = re.compile(r"^\s*(?:Received(?: value)?|actual):\s+(.+?)\s*$")
_CHAI = re.compile(r"^\s*(?:AssertionError: |→ )?expected (.+?) to (?:be|equal|deeply equal|strictly equal|eql) "
                   r"(.+?)(?: // .*)?\s*$")
_NODE = re.compile(r"^\s*(?:AssertionError \[ERR_ASSERTION\]: )?(.+?) !==? (.+?)\s*$")
_JS_WORDS = {"null": None, "undefined": None, "true": True, "false": False}


@record
class FailureFacts:
    """Literals of the failing assertions: ``values`` on either side, ``expected`` on the
    expected side where the output says which one it is (both sides when it does not)."""

    values: set[Lit] = field(default_factory=set)
    expected: set[Lit] = field(default_factory=set)
    expectations: list[Expectation] = field(default_factory=list)


def parse_value(text: str) -> Lit | None:
    text = text.strip().rstrip(",")
    if text in _JS_WORDS:
        return lit(_JS_WORDS[text])
    try:
        return lit(ast.literal_eval(text))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def read(output: str) -> FailureFacts:
    facts = FailureFacts()
    lines = output.splitlines()
    # pytest's short summary repeats its `E` lines without the `where`: use it alone only
    summary = not any(_PYTEST.match(line) for line in lines)
    for index, line in enumerate(lines):
        match = _PYTEST.match(line) or (_SUMMARY.match(line) if summary else None)
        if match:
            _assertion(facts, match[1], match[2], lines[index + 1:index + 4])
            continue
        match = _CHAI.match(line)
        if match:
            _received_expected(facts, match[1], match[2])
            continue
        match = _UNITTEST.match(line)
        if match:
            _assertion(facts, match[1], match[2], [])
            continue
        match = _JEST_EXPECTED.match(line)
        if match:
            value = parse_value(match[1])
            if value is not None:
                facts.expected.add(value)
                facts.values.add(value)
            continue
        match = _JEST_RECEIVED.match(line)
        if match:
            value = parse_value(match[1])
            if value is not None:
                facts.values.add(value)
            continue
        match = _NODE.match(line)
        if match and parse_value(match[1]) is not None and parse_value(match[2]) is not None:
            _assertion(facts, match[1], match[2], [])
    return facts


def _received_expected(facts: FailureFacts, received: str, expected: str) -> None:
    values = parse_value(received), parse_value(expected)
    facts.values.update(value for value in values if value is not None)
    if values[1] is not None:
        facts.expected.add(values[1])


def _assertion(facts: FailureFacts, left: str, right: str, following: list[str]) -> None:
    sides = [parse_value(left), parse_value(right)]
    for value in sides:
        if value is not None:
            facts.values.add(value)
    for line in following:
        where = _WHERE.match(line)
        if where is None:
            continue
        actual = parse_value(where[1])
        expected = sides[1] if actual == sides[0] else sides[0] if actual == sides[1] else None
        if expected is not None:
            facts.expected.add(expected)
            facts.expectations.append(Expectation(where[2].rsplit(".", 1)[-1], _arguments(where[3]), expected,
                                                  "the failing run"))
            return
    facts.expected.update(value for value in sides if value is not None)


def _arguments(text: str) -> tuple[Lit, ...]:
    try:
        call = ast.parse(f"f({text})", mode="eval").body
    except SyntaxError:
        return ()
    assert isinstance(call, ast.Call)
    values: list[Lit] = []
    for argument in call.args:
        try:
            value = lit(ast.literal_eval(argument))
        except (ValueError, TypeError, SyntaxError):
            value = None
        values.append(value or ("other", ast.unparse(argument)))
    return tuple(values)
