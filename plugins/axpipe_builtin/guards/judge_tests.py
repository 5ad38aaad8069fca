"""Judging what a change did to tests, whatever the language: deleted or renamed away,
skipped, assertions removed or loosened, mocks hardcoded to the asserted value.

A test is followed across the change by name; a test whose name disappeared counts as
renamed (and is compared with its new self) when a new test anywhere in the change has the
same body, or keeps every one of its assertions. Otherwise it was deleted.
"""

from __future__ import annotations

import difflib
from collections import Counter

from axpipe.interfaces import ChangedFile, GuardClass
from axpipe.records import record

from .model import Atom, Lit, ModuleFacts, TestFacts, show, trivial

Found = tuple[str, str, int, str]  # (guard class, file, line, evidence)
_WORDS = {"skip": "skipped", "xfail": "expected to fail", "todo": "a todo", "deselect": "deselected"}
_BROAD = {"Exception", "BaseException", "Error", "Throwable"}


@record
class FilePair:
    """One changed file with the facts of both sides (None: that side does not exist)."""

    change: ChangedFile
    before: ModuleFacts | None
    after: ModuleFacts | None
    test_file: bool


def judge_tests(pairs: list[FilePair], observed: set[Lit]) -> list[Found]:
    """Findings about tests. ``observed``: literals the failing run printed."""
    found: list[Found] = []
    removed: list[tuple[FilePair, TestFacts]] = []
    added: list[tuple[FilePair, TestFacts]] = []
    for pair in pairs:
        old = pair.before.tests if pair.before else {}
        new = pair.after.tests if pair.after else {}
        for name, test in old.items():
            if name in new:
                found.extend(_compare(test, new[name], pair.change.path, observed))
            else:
                removed.append((pair, test))
        added.extend((pair, test) for name, test in new.items() if name not in old)
        found.extend(_scope_markers(pair))
    deleted_files: dict[str, list[TestFacts]] = {}
    for pair, test in removed:
        partner = _renamed(test, added)
        if partner is not None:
            added.remove(partner)
            found.extend(_compare(test, partner[1], partner[0].change.path, observed))
        elif pair.after is None:
            deleted_files.setdefault(pair.change.old_path or "", []).append(test)
        else:
            found.append((GuardClass.DELETED_TEST, pair.change.old_path or pair.change.path, test.line,
                          _deleted(test, pair.after)))
    for path, tests in deleted_files.items():
        names = ", ".join(test.name for test in tests[:5]) + (", ..." if len(tests) > 5 else "")
        found.append((GuardClass.DELETED_TEST, path, tests[0].line,
                      f"test file deleted with {len(tests)} test(s) found nowhere else in the change: {names}"))
    return found


def _renamed(test: TestFacts, added: list[tuple[FilePair, TestFacts]]) -> tuple[FilePair, TestFacts] | None:
    keys = Counter(atom.key for atom in test.atoms)
    best: tuple[float, tuple[FilePair, TestFacts] | None] = (0.0, None)
    for candidate in added:
        other = candidate[1]
        if other.fingerprint == test.fingerprint:
            return candidate
        ratio = difflib.SequenceMatcher(None, test.fingerprint, other.fingerprint, autojunk=False).ratio()
        keeps = bool(keys) and not keys - Counter(atom.key for atom in other.atoms)
        if (ratio >= 0.9 or keeps) and ratio > best[0]:
            best = (ratio, candidate)
    return best[1]


def _deleted(test: TestFacts, after: ModuleFacts) -> str:
    for name, (_line, fingerprint) in after.uncollected.items():
        if fingerprint == test.fingerprint:
            return f"test {test.name} was removed: its body remains as {name}, which the test runner does not collect"
    title = test.name.rsplit(" > ", 1)[-1]
    if after.commented and title in after.commented:
        return f"test {test.name} was commented out"
    return f"test {test.name} was removed and is not found under another name in the change"


def _compare(old: TestFacts, new: TestFacts, path: str, observed: set[Lit]) -> list[Found]:
    found: list[Found] = []
    seen = {(marker.kind, marker.text) for marker in old.markers}
    for marker in new.markers:
        if (marker.kind, marker.text) not in seen and marker.kind != "only":
            found.append((GuardClass.SKIPPED_TEST, path, marker.line,
                          f"{new.name} is now {_WORDS.get(marker.kind, marker.kind)}: `{marker.text}`"))
    if found:  # a test that no longer runs: what became of its assertions is beside the point
        return found
    if old.cases is not None and new.cases is not None and new.cases < old.cases:
        found.append((GuardClass.DELETED_TEST, path, new.line,
                      f"{old.cases - new.cases} of {old.cases} parametrised cases of {new.name} were removed"))
    found.extend((GuardClass.LOOSENED_ASSERTION, path, line, text) for line, text in _atoms(old, new, observed))
    if old.declared_assertions and (new.declared_assertions or 0) < old.declared_assertions:
        found.append((GuardClass.LOOSENED_ASSERTION, path, new.line,
                      f"{new.name} now declares {new.declared_assertions or 'no'} expected assertions "
                      f"instead of {old.declared_assertions}"))
    if new.early_return and not old.early_return:
        found.append((GuardClass.LOOSENED_ASSERTION, path, new.early_return,
                      f"a return stops {new.name} before its assertions run"))
    asserted = {atom.expected for atom in (*old.atoms, *new.atoms) if atom.expected and not trivial(atom.expected)}
    old_mocks = {(value, text) for _line, value, text in old.mocks}
    for line, value, text in new.mocks:
        if (value, text) not in old_mocks and value in asserted:
            found.append((GuardClass.HARDCODED_EXPECTED, path, line,
                          f"{new.name} now makes a mock return {show(value)}, the value it asserts: `{text}`"))
    return found


def _atoms(old: TestFacts, new: TestFacts, observed: set[Lit]) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    remaining = list(new.atoms)
    unpaired: list[Atom] = []
    for atom in old.atoms:
        same = next((other for other in remaining if other.key == atom.key), None)
        if same is not None:
            remaining.remove(same)
        else:
            unpaired.append(atom)
    left: list[Atom] = []
    for atom in unpaired:
        partner = next((other for other in remaining if other.subject == atom.subject and other.kind == atom.kind),
                       None) or next((other for other in remaining if other.subject == atom.subject), None)
        if partner is None:
            left.append(atom)
            continue
        remaining.remove(partner)
        reason = _looser(atom, partner, observed)
        if reason:
            found.append((partner.line, reason))
    if left and len(new.atoms) < len(old.atoms):
        count = len(old.atoms) - len(new.atoms)
        found.append((new.line, f"{count} assertion(s) removed from {new.name}, e.g. `{left[0].text}`"))
    found.extend((atom.line, f"`{atom.text}` asserts nothing") for atom in remaining if atom.strength == 0)
    return found


def _looser(old: Atom, new: Atom, observed: set[Lit]) -> str | None:
    if new.strength < old.strength:
        return f"`{old.text}` became `{new.text}`"
    if old.kind == new.kind == "approx" and old.tolerance is not None and new.tolerance is not None \
            and new.tolerance > old.tolerance * 1.000001:
        return f"tolerance widened from {old.tolerance:g} to {new.tolerance:g}: `{new.text}`"
    if old.kind == new.kind == "raises":
        before, after = _names(old.exception), _names(new.exception)
        if (before < after) or (after & _BROAD and not before & _BROAD):
            return f"expected error widened from {old.exception} to {new.exception}: `{new.text}`"
        if old.pattern and not new.pattern:
            return f"the error message is no longer checked: `{old.text}` became `{new.text}`"
    if old.expected and new.expected and old.expected != new.expected and {old.expected, new.expected} <= observed:
        return (f"expected value changed from {show(old.expected)} to {show(new.expected)}, "
                f"the value the failing run produced: `{new.text}`")
    return None


def _names(text: str | None) -> set[str]:
    import re

    return set(re.findall(r"[A-Za-z_]\w*", text or "")) - {"as"}


def _scope_markers(pair: FilePair) -> list[Found]:
    """Markers on a class, describe block, module or conftest that reach existing tests;
    and `.only`, which skips every test it is not on."""
    found: list[Found] = []
    if pair.after is None:
        return found
    before = pair.before or ModuleFacts()
    old_tests = set(before.tests)
    seen = {(scope.scope, scope.marker.kind, scope.marker.text) for scope in before.scope_markers}
    for scope in pair.after.scope_markers:
        if (scope.scope, scope.marker.kind, scope.marker.text) in seen:
            continue
        if scope.scope == "hook":   # a pytest hook or autouse fixture: it reaches every test it sees
            guard = GuardClass.SWALLOWED_ERROR if scope.marker.kind == "pass" else GuardClass.SKIPPED_TEST
            hook, _, text = scope.marker.text.partition(": ")
            found.append((guard, pair.change.path, scope.marker.line, f"{hook} now {scope.tests[0]}: `{text}`"))
            continue
        if scope.scope == "conftest":
            found.append((GuardClass.SKIPPED_TEST, pair.change.path, scope.marker.line,
                          f"the test runner now ignores {', '.join(scope.tests)}: `{scope.marker.text}`"))
            continue
        reached = [name for name in scope.tests if name in old_tests]
        if reached:
            names = ", ".join(reached[:3]) + (", ..." if len(reached) > 3 else "")
            found.append((GuardClass.SKIPPED_TEST, pair.change.path, scope.marker.line,
                          f"{len(reached)} existing test(s) now {_WORDS.get(scope.marker.kind, scope.marker.kind)} "
                          f"by `{scope.marker.text}` on {scope.scope}: {names}"))
    old_only = Counter(marker.text for marker in before.only_markers)
    for marker in pair.after.only_markers:
        if old_only[marker.text] > 0:
            old_only[marker.text] -= 1
            continue
        found.append((GuardClass.SKIPPED_TEST, pair.change.path, marker.line,
                      f"`{marker.text}` makes the runner skip every other test in the file"))
    return found
