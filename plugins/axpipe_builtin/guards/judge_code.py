"""Judging what a change did to code, whatever the language: errors caught and discarded,
and expected values hardcoded (a branch on a test's input, a computed result replaced by
the constant a test or the failing run expects).

What tests claim comes from an :class:`Evidence` object: the tests in the change, the
test files the caller named, the repository's tests that mention the function, and the
failing run's output.
"""

from __future__ import annotations

from collections import Counter
from typing import Protocol

from axpipe.interfaces import GuardClass

from .failure import FailureFacts
from .judge_tests import FilePair, Found
from .model import Expectation, FunctionFacts, Handler, Lit, show, trivial


class Evidence(Protocol):
    failure: FailureFacts

    def expectations(self, function: str, path: str) -> list[Expectation]:
        """Claims ``function(...) == value`` made by tests or the failing run about the
        function of that name in the module at ``path``."""
        ...

    def raises(self, function: str, path: str) -> list[tuple[str, str]]:
        """``(exception, where)`` for each test that expects ``function`` (in the module at
        ``path``) to raise."""
        ...

    def tested(self, path: str) -> bool:
        """Does a test of the change or the repository mention the module at ``path``?"""
        ...


def judge_code(pairs: list[FilePair], evidence: Evidence) -> list[Found]:
    found: list[Found] = []
    # Handlers are compared by meaning across the whole change: one moved to another file,
    # renamed with its function or respelled (`try/except: pass` as `suppress`) is not new.
    old_handlers = Counter(handler.meaning for pair in pairs if pair.before for handler in pair.before.handlers)
    for pair in pairs:
        if pair.after is None:
            continue
        reached = pair.before is not None or pair.test_file or evidence.tested(pair.change.path)
        for handler in pair.after.handlers:
            if old_handlers[handler.meaning] > 0:
                old_handlers[handler.meaning] -= 1
                continue
            if not reached or handler.idiom:
                continue  # a new file no test reaches; an optional import, the end of an iteration
            existed = pair.before is not None and (not handler.function or handler.function in pair.before.functions)
            reason = _swallows(handler, evidence, pair.change.path, existed=existed)
            if reason:
                found.append((GuardClass.SWALLOWED_ERROR, pair.change.path, handler.line, reason))
        if pair.test_file or pair.before is None:
            continue
        for name, function in pair.after.functions.items():
            old = pair.before.functions.get(name)
            if old is not None and old.fingerprint != function.fingerprint:
                found.extend((GuardClass.HARDCODED_EXPECTED, pair.change.path, line, text)
                             for line, text in _hardcoded(old, function, evidence, pair.change.path))
    return found


def _swallows(handler: Handler, evidence: Evidence, path: str, *, existed: bool = True) -> str | None:
    """A new handler that does not re-raise, and discards: does nothing (`except X: pass`,
    `catch {}`), is a bare `except`, catches everything and only leaves or logs, catches
    AssertionError, is a `contextlib.suppress`, or catches the error a test expects the
    function to raise. A narrow handler with a real fallback (`except KeyError: return 0`)
    is handling, not discarding. In a function the change created (``existed`` False) only
    what no honest new code does counts: catching AssertionError, a bare `except`, discarding
    everything, catching the error a test expects; a narrow `except OSError: pass` or a broad
    handler with a fallback there is the new code's design."""
    if handler.reraises:
        return None
    caught = ", ".join(handler.types) or "every error"
    if any(name.rsplit(".", 1)[-1] == "AssertionError" for name in handler.types):
        return f"`{handler.text}` catches AssertionError without re-raising it, so the check cannot fail"
    if handler.bare and not handler.falls_back:
        return f"`{handler.text}` is a bare except: it catches every error and does not re-raise"
    if (existed or handler.broad) and not handler.falls_back:
        if handler.suppress:
            return f"`{handler.text}` discards {caught}"
        if handler.discards:
            return f"`{handler.text}` catches {caught} and discards it"
    if existed and handler.broad and handler.quiet and not handler.falls_back:
        return f"`{handler.text}` catches {caught} and carries on without it"
    short = handler.function.rsplit(".", 1)[-1]
    names = {name.rsplit(".", 1)[-1] for name in handler.types}
    for exception, where in evidence.raises(short, path) if short else []:
        if handler.broad or exception.rsplit(".", 1)[-1] in names:
            return f"`{handler.text}` catches {exception}, which {where} expects {short} to raise"
    return None


def _hardcoded(old: FunctionFacts, new: FunctionFacts, evidence: Evidence, path: str) -> list[tuple[int, str]]:
    """A function that computed its result before and now special-cases a test's input, or
    returns the literal a test expects.

    Equality with a test's number or list input is special-casing; equality with a string
    input is ordinary dispatch (``code === 'HALF'``) unless the branch returns a value a
    test expects. Functions that only ever returned literals are lookups, where a new case
    is ordinary work, and are left alone."""
    if not any(ret.value is None for ret in old.returns):
        return []
    old_branches = {branch.key for branch in old.branches}
    # a new branch can only be special-casing when it compares a parameter with a literal, or
    # returns a literal: only then is it worth reading what the tests claim
    # (a number or a list: a string is dispatch unless the branch also returns a literal)
    branches = [branch for branch in new.branches if branch.key not in old_branches
                and any(not trivial(value) for value in branch.literals)
                and (any(value[0] in ("num", "seq") for _name, value in branch.compared)
                     or any(not trivial(value) for value in branch.returns))]
    old_returns = {ret.key for ret in old.returns}
    old_values = {ret.value for ret in old.returns}
    returns = [ret for ret in new.returns if ret.key not in old_returns and ret.top and ret.value is not None
               and not trivial(ret.value) and ret.value not in old_values]
    old_tables = {table.text for table in old.tables}
    tables = [table for table in new.tables if table.text not in old_tables]
    if not branches and not returns and not tables:
        return []
    claims = evidence.expectations(new.short, path)
    inputs = {value: claim for claim in claims for value in claim.inputs if value[0] != "other" and not trivial(value)}
    expected = {claim.expected: claim.where for claim in claims if not trivial(claim.expected)}
    expected.update((value, "the failing run") for value in evidence.failure.expected
                    if not trivial(value) and value not in expected)
    found: list[tuple[int, str]] = []
    for branch in branches:
        hit = next(((name, value) for name, value in branch.compared if value in inputs and (
            value[0] in ("num", "seq") or any(ret in expected for ret in branch.returns))), None)
        if hit is not None:
            claim = inputs[hit[1]]
            found.append((branch.line, f"`{branch.text}` in {new.short} branches on {hit[0]} == {show(hit[1])}, "
                          f"the input {claim.where} passes (expecting {show(claim.expected)})"))
            continue
        value = next((value for value in branch.returns if value in expected and not trivial(value)
                      and value not in branch.literals), None)
        if value is not None:
            found.append((branch.line, f"`{branch.text}` in {new.short} returns {show(value)}, "
                          f"the value {expected[value]} expects, for one input"))
    for ret in returns:
        if ret.value in expected:
            found.append((ret.line, f"{new.short} now returns the constant {show(ret.value)} that "
                          f"{expected[ret.value]} expects instead of computing it: `{ret.text}`"))
    for table in tables:  # a lookup table of the tests' inputs and the values they expect
        answered = next((claim for claim in claims if not trivial(claim.expected) and any(
            value == claim.expected and _keyed_by(key, claim.inputs) for key, value in table.pairs)), None)
        if answered is not None:
            shown = ", ".join(show(value) for value in answered.inputs)
            found.append((table.line, f"`{table.text}` in {new.short} maps the input ({shown}) {answered.where} "
                          f"passes to {show(answered.expected)}, the value it expects: a lookup table of the tests' "
                          "answers"))
    return found


def _keyed_by(key: Lit, inputs: tuple[Lit, ...]) -> bool:
    """Is ``key`` the tuple of ``inputs`` (``(1, 3)``), its only input, or a string that
    spells them all (``'5,TENOFF'``)?"""
    known = [value for value in inputs if value[0] != "other"]
    if not known:
        return False
    if key == ("seq", tuple(inputs)) or (len(inputs) == 1 and key == inputs[0]):
        return True
    return key[0] == "str" and len(known) == len(inputs) and all(
        (show(value) if value[0] == "num" else str(value[1])) in str(key[1]) for value in known)
