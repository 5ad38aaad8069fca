"""Following a test the change removed by what it checked, not by its name.

A test whose name disappeared was not deleted when the change still checks what it
checked: each of its assertions has a counterpart of the same shape (``add(1, 2) == 3``
and ``add(a, b) == expected`` are both ``add(_, _) == _``) in a test the change adds or
edits, and the values it checked (its literals and its cases') are still in those tests or
in a table beside them. That is a test folded into a parametrised one, a ``test.each``
table turned into a loop, a test split in two or merged with another, a unittest method
made a pytest function. A test that calls code the change removed went with that code.

A cheat cannot pass through here by renaming: a new test that checks the same call with
other values (the failing case replaced by a passing one) lacks the old values, and a
test that is skipped or checks nothing covers nothing.
"""

from __future__ import annotations

import re

from axpipe.records import record

from .model import Atom, Lit, TestFacts, trivial

_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w.])")
_STRING = re.compile(r"""(?P<q>['"])(?P<body>(?:\\.|(?!(?P=q)).)*)(?P=q)""")
_EXIT_FIELDS = (".exit_code", ".returncode", ".status", ".exitcode", ".code")


@record
class Pool:
    """The tests that may carry a removed test's checks: those the change adds or edits,
    and the literals around them (a table of cases outside the tests)."""

    tests: list[TestFacts]
    context: set[Lit]


def follow(test: TestFacts, pool: Pool, removed_code: set[str]) -> str | None:
    """Why ``test`` (removed under its name) is not a deletion, or None when it is."""
    if test.calls & removed_code:
        return f"it called {', '.join(sorted(test.calls & removed_code))}, which the change removed"
    active = [other for other in pool.tests if not any(
        marker.kind in ("skip", "xfail", "todo") and not marker.conditional for marker in other.markers)]
    if not active:
        return None
    available = set(pool.context)
    for other in active:
        available |= other.literals
    atoms = [atom for atom in test.atoms if atom.strength > 0]
    needed = {value for atom in atoms for value in atom.literals} | test.case_literals
    if not atoms:  # a test that asserts nothing explicitly: the same calls with the same values
        if test.calls and any(test.calls <= other.calls for other in active) and test.literals <= available:
            return "the tests the change adds or edits make the same calls with the same values"
        return None
    if not needed <= available:
        return None
    for atom in atoms:
        if not any(_carries(other_atom, atom) for other in active for other_atom in other.atoms):
            return None
    return "its assertions, with their values, are checked by tests the change adds or edits"


def _carries(new: Atom, old: Atom) -> bool:
    if new.strength <= 0:
        return False
    if new.key == old.key:
        return True
    if new.shape and new.shape == old.shape and new.strength >= old.strength:
        return True
    return covers(new, old)


def covers(new: Atom, old: Atom) -> bool:
    """Does ``new`` check at least what ``old`` checked, spelled differently?

    - ``pytest.raises``/``warns`` with ``match`` (``toThrow(/message/)``): the error's type
      (``isinstance(result.exception, UserWarning)``), its message (``"used more than once"
      in str(...)``) and the failing exit code that came with it;
    - an equality on a whole value (``assert result == (1, 2)``): a check of one of its
      parts (``result[0] == 1``, ``result.name == "x"``)."""
    if new.strength <= 0:
        return False
    if new.kind == "raises" and old.kind != "raises":
        exception = (new.exception or "").rsplit(".", 1)[-1]
        if exception and re.search(rf"(?<![\w$]){re.escape(exception)}(?![\w$])", old.text):
            return True
        if new.match is not None and any(kind == "str" and _matches(new.match, value)
                                         for kind, value in old.literals):
            return True
        # the failing exit code that came with the error
        return old.subject.endswith(_EXIT_FIELDS) and old.expected is not None and old.expected[0] == "num" \
            and old.expected[1] != 0
    return new.kind != "raises" and new.strength >= 3 and old.kind != "raises" and old.subject.startswith(
        (new.subject + "[", new.subject + ".")) and old.strength <= new.strength


def in_helpers(old: Atom, new: TestFacts, helpers: dict[str, list[Atom]]) -> bool:
    """Is ``old`` now checked by a helper ``new`` calls (``check_total(items, 7)``), with the
    values it checked passed in by the test?"""
    inside = [atom for name in new.calls for atom in helpers.get(name, [])]
    return any(_carries(atom, old) for atom in inside) and \
        set(old.literals) <= new.literals.union(*(atom.literals for atom in inside))


def _matches(pattern: str, text: str) -> bool:
    try:
        if re.search(pattern, text):
            return True
    except re.error:
        pass
    return text in pattern or pattern in text


def case_literals(text: str) -> set[Lit]:
    """The non-trivial numbers and strings written in a case's text (either language)."""
    found: set[Lit] = set()
    for match in _STRING.finditer(text):
        value: Lit = ("str", match["body"].encode("utf-8", "backslashreplace").decode("unicode_escape", "replace")
                      if "\\" in match["body"] else match["body"])
        if not trivial(value):
            found.add(value)
    for match in _NUMBER.finditer(_STRING.sub("", text)):
        number: Lit = ("num", float(match[0]))
        if not trivial(number):
            found.add(number)
    return found
