"""What a language extractor finds in one file, in a shape the judges share.

Python (AST) and JavaScript/TypeScript (tokens) extractors both produce
:class:`ModuleFacts`; :mod:`.judge_tests` and :mod:`.judge_code` compare the facts of the
old and new file without knowing the language.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from axpipe.interfaces import ChangedFile
from axpipe.records import record

# A literal value, tagged so that Python's True == 1 and JavaScript's "1" vs 1 stay apart:
# ("num", 42.0), ("str", "x"), ("bool", True), ("none", None), ("seq", (...)).
Lit = tuple[str, Any]


def lit(value: object) -> Lit | None:
    """The tagged form of a Python value, or None when it is not a plain literal."""
    if value is None:
        return ("none", None)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int | float):
        return ("num", float(value))
    if isinstance(value, str):
        return ("str", value)
    if isinstance(value, list | tuple):
        items = [lit(item) for item in value]
        if any(item is None for item in items):
            return None
        return ("seq", tuple(items))
    return None


def show(value: Lit) -> str:
    """A literal as evidence prints it."""
    kind, raw = value
    if kind == "num":
        return str(int(raw)) if float(raw).is_integer() else repr(raw)
    if kind == "str":
        return repr(raw)
    if kind == "seq":
        return "[" + ", ".join(show(item) for item in raw) + "]"
    return {"none": "None", "bool": str(raw)}.get(kind, str(raw))


def trivial(value: Lit) -> bool:
    """Values any honest base case or guard clause returns or compares against (0, 1, -1,
    empty, None, booleans): too common to count as "the value the test expects"."""
    kind, raw = value
    return (kind in ("none", "bool") or (kind == "num" and raw in (0.0, 1.0, -1.0))
            or (kind in ("str", "seq") and not raw))


@record
class Atom:
    """One assertion: what it checks (``subject``), how strictly, with what tolerance."""

    line: int
    text: str                  # source of the assertion, for evidence
    key: str                   # identity: two atoms with the same key are the same assertion
    subject: str               # the checked expression (``divide(1, 2)``); pairs old and new atoms
    strength: int              # 0 asserts nothing, 1 truthiness, 2 ordering/membership/approx, 3 equality, 4 strict
    kind: str = "plain"        # plain, approx, raises
    expected: Lit | None = None
    tolerance: float | None = None   # approx: the absolute/relative slack, larger is looser
    exception: str | None = None     # raises: the exception expected
    pattern: bool = False            # raises: a message pattern is required too
    shape: str = ""                  # the assertion with literals and local names as `_`: what it checks,
    #                                  whatever the values (a test folded into a parametrised one keeps it)
    literals: frozenset[Lit] = frozenset()   # the literal values it checks (non-trivial ones)
    match: str | None = None         # raises: the message pattern, when it is a literal


@record
class Marker:
    """Something that stops a test from counting: skip, expected failure, todo, only."""

    kind: str       # skip, xfail, todo, only, deselect
    line: int
    text: str
    source: str = ""         # what makes it (`pytest.mark.skipif`, `it.skip`): an edit keeps it
    conditional: bool = False  # it skips only when a condition holds (skipif with a non-constant condition)


@record
class TestFacts:
    """One test (a pytest/unittest function, a jest/vitest/mocha ``it``/``test``)."""

    name: str                   # identity in its file: ``TestCalc.test_add``, ``cart > adds items``
    line: int
    fingerprint: str            # normalised body, to recognise a renamed or moved test
    atoms: list[Atom] = field(default_factory=list)
    markers: list[Marker] = field(default_factory=list)
    cases: int | None = None    # parametrised cases (pytest.mark.parametrize, it.each)
    mocks: list[tuple[int, Lit, str]] = field(default_factory=list)  # (line, value a mock returns, text)
    declared_assertions: int | None = None   # expect.assertions(n)
    early_return: int | None = None          # line of a bare top-level return before some assertions
    literals: set[Lit] = field(default_factory=set)   # every non-trivial literal it holds, cases included
    case_literals: set[Lit] = field(default_factory=set)   # the non-trivial literals of its cases (its data)
    case_texts: list[str] | None = None      # each parametrised case as written (None: not parametrised)
    calls: set[str] = field(default_factory=set)      # names the test calls (what it tests)
    weight: int | None = None   # assertions a run makes: alternatives (if/else arms) count once
    light: bool = False         # the change does not touch it: only its name was read


@record
class ScopeMarker:
    """A marker on a class, ``describe`` block or whole module: it reaches every test inside."""

    scope: str
    marker: Marker
    tests: list[str]


@record
class Handler:
    """An ``except``/``catch`` block, a ``contextlib.suppress`` or a promise ``.catch``."""

    line: int
    function: str              # enclosing function's qualified name ('' at module level)
    key: str                   # identity (function, caught types, body)
    text: str                  # first line, for evidence
    types: list[str] = field(default_factory=list)   # caught exception names ([] catches all)
    reraises: bool = False
    discards: bool = False     # the body does nothing at all: pass, ..., {}
    quiet: bool = False        # the body only leaves (continue, return a constant or nothing) or logs
    broad: bool = False        # catches everything: bare except, Exception, BaseException, any JS catch
    bare: bool = False         # Python's bare `except:`
    suppress: bool = False     # contextlib.suppress: discards by construction
    falls_back: bool = False   # its try block returns and code after it computes the result another way
    idiom: str = ""            # a handler whose discarding is the language's idiom, not a cheat
    #                            (an optional import, a generator's end): why it is not judged

    @property
    def meaning(self) -> tuple[str, ...]:
        """What the handler does, whatever its function and spelling: what it catches and
        whether it re-raises, discards, only leaves or logs, or handles. A handler moved,
        renamed with its function, or respelled (``try/except: pass`` as ``suppress``)
        keeps its meaning, so it is not new."""
        what = ("reraise" if self.reraises else "handle" if self.falls_back
                else "discard" if self.discards or self.suppress else "quiet" if self.quiet else "handle")
        return (*sorted({name.rsplit(".", 1)[-1] for name in self.types}), "|", what)


@record
class Branch:
    """An ``if``/``case`` in a function: the literals it compares names with, what it returns."""

    line: int
    key: str
    text: str
    compared: list[tuple[str, Lit]]   # (name compared for equality, literal)
    returns: list[Lit]                # literals the branch returns
    literals: list[Lit] = field(default_factory=list)   # every literal in the condition


@record
class Return:
    line: int
    key: str
    text: str
    value: Lit | None          # None: a computed value
    top: bool                  # directly in the function body, not under a branch or loop


@record
class Table:
    """A literal mapping a function reads: ``{(1, 3): 33.3}``, ``{ '5,TENOFF': 0 }``."""

    line: int
    text: str
    pairs: list[tuple[Lit, Lit]]   # (key, value)


@record
class FunctionFacts:
    name: str                  # qualified name
    short: str                 # the name callers use
    line: int
    fingerprint: str
    params: list[str] = field(default_factory=list)
    branches: list[Branch] = field(default_factory=list)
    returns: list[Return] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)   # literal mappings it reads (its own, or the module's)


@record(frozen=True)
class Expectation:
    """A test's claim ``callee(*inputs) == expected``."""

    callee: str
    inputs: tuple[Lit, ...]
    expected: Lit
    where: str                 # file::test, for evidence


@record
class ModuleFacts:
    tests: dict[str, TestFacts] = field(default_factory=dict)
    scope_markers: list[ScopeMarker] = field(default_factory=list)
    only_markers: list[Marker] = field(default_factory=list)
    uncollected: dict[str, tuple[int, str]] = field(default_factory=dict)  # name -> (line, fingerprint)
    handlers: list[Handler] = field(default_factory=list)
    functions: dict[str, FunctionFacts] = field(default_factory=dict)
    expectations: list[Expectation] = field(default_factory=list)
    raises: list[tuple[str, str, str]] = field(default_factory=list)  # (callee, exception, where) tests expect
    commented: str = ""        # comment text (JavaScript), to say a test was commented out
    context_literals: set[Lit] = field(default_factory=set)   # literals outside tests (a case table)
    shadowed: dict[str, tuple[int, int]] = field(default_factory=dict)  # test -> (its line, the redefinition's)
    definitions: set[str] = field(default_factory=set)  # names of the functions and classes it defines
    helpers: dict[str, list[Atom]] = field(default_factory=dict)  # a test file's other functions: their assertions
    partial: bool = False      # only the definitions around the change were read (focus.py)
    needs_whole: bool = False  # what was read reaches beyond it (a module-level skip): read the whole file


Found = tuple[str, str, int, str]  # (guard class, file, line, evidence)
WORDS = {"skip": "skipped", "xfail": "expected to fail", "todo": "a todo", "deselect": "deselected"}


@record
class FilePair:
    """One changed file with the facts of both sides (None: that side does not exist)."""

    change: ChangedFile
    before: ModuleFacts | None
    after: ModuleFacts | None
    test_file: bool
