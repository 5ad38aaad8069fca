"""Judging what a change did to tests, whatever the language: deleted or renamed away,
skipped, assertions removed or loosened, mocks hardcoded to the asserted value.

A test is followed across the change by what it checks, not by its name (see
:mod:`.following`): renamed or moved (the same body), folded into a parametrised test or a
table, split or merged (its assertions, with their values, checked by tests the change
adds or edits), a duplicate removed, removed with the code it tested. Only a test none of
these explains was deleted. A test kept under its name is compared with its new self: its
markers (an edited ``skipif`` is not a new skip), its cases, its assertions by meaning.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Callable
from dataclasses import field

from axpipe.interfaces import CollectedTests, GuardClass
from axpipe.records import record

from .following import Pool, case_literals, covers, follow, in_helpers
from .judge_markers import new_markers, renamed_away, scope_markers, shadowed
from .model import WORDS, Atom, FilePair, Found, Lit, ModuleFacts, TestFacts, show, trivial

__all__ = ["FilePair", "Found", "Surroundings", "judge_tests", "new_markers"]

_BROAD = {"Exception", "BaseException", "Error", "Throwable"}


@record
class Surroundings:
    """What the rest of the change and the repository say about a removed test."""

    removed_code: set[str]                                   # functions the change removed from code
    collects: Callable[[str], bool] = lambda path: True      # does the runner collect tests from this path?
    elsewhere: Callable[[TestFacts], str | None] = lambda test: None  # a test of the repository with its body
    collected: CollectedTests | None = None                  # the runner's view, when it could list the tests
    explained: set[tuple[str, str]] = field(default_factory=set)  # (file, test) gone by name, followed elsewhere
    reported: set[tuple[str, str]] = field(default_factory=set)   # (file, test) a finding already names
    moved: dict[str, str] = field(default_factory=dict)          # a renamed file's old path -> its new one

    def still_runs(self, path: str, name: str) -> bool:
        return self.collected is not None and self.collected.runs(path, name)


def judge_tests(pairs: list[FilePair], observed: set[Lit], surroundings: Surroundings | None = None) -> list[Found]:
    """Findings about tests. ``observed``: literals the failing run printed."""
    around = surroundings or Surroundings(set())
    found: list[Found] = []
    removed: list[tuple[FilePair, TestFacts]] = []
    added: list[tuple[FilePair, TestFacts]] = []
    kept: list[TestFacts] = []
    for pair in pairs:
        old = pair.before.tests if pair.before else {}
        new = pair.after.tests if pair.after else {}
        uncollected = pair.after is not None and pair.change.status == "renamed" and \
            around.collects(pair.change.old_path or "") and not around.collects(pair.change.new_path or "")
        if uncollected:  # renamed out of the runner's match pattern: every test in it is gone
            found.extend(renamed_away(pair, old))
            continue
        for name, test in old.items():
            if name in new:
                if test.light and new[name].light:
                    continue  # untouched by the change
                found.extend(_compare(test, new[name], pair, observed, around))
                kept.append(new[name])
            else:
                removed.append((pair, test))
        added.extend((pair, test) for name, test in new.items() if name not in old)
        found.extend(scope_markers(pair))
        found.extend(shadowed(pair))
    pool = Pool([test for _pair, test in added] + kept,
                {value for pair in pairs if pair.after for value in pair.after.context_literals})
    deleted_files: dict[str, list[TestFacts]] = {}
    for pair, test in removed:
        where = pair.change.old_path or pair.change.path
        partner = _renamed(test, added)
        if partner is not None:
            added.remove(partner)
            around.explained.add((where, test.name))
            found.extend(_compare(test, partner[1], partner[0], observed, around))
            continue
        if follow(test, pool, around.removed_code) is not None or around.elsewhere(test) is not None or \
                around.still_runs(pair.change.path, test.name):
            around.explained.add((where, test.name))
            continue
        around.reported.add((where, test.name))
        if pair.after is None:
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
    """The added test that is ``test`` under another name: the same body, or one at least
    90 % alike (compared word by word) or keeping every one of its assertions."""
    keys = Counter(atom.key for atom in test.atoms)
    words = test.fingerprint.split()
    short = _short(test.name)
    best: tuple[float, tuple[FilePair, TestFacts] | None] = (0.0, None)
    for candidate in added:
        other = candidate[1]
        if other.fingerprint == test.fingerprint:
            return candidate
    for candidate in added:  # its class or describe block renamed: the same test name inside it
        if _short(candidate[1].name) == short and candidate[1].name != test.name and \
                sum(_short(other[1].name) == short for other in added) == 1:
            return candidate
    for candidate in added:
        other = candidate[1]
        keeps = bool(keys) and not keys - Counter(atom.key for atom in other.atoms)
        matcher = difflib.SequenceMatcher(None, words, other.fingerprint.split(), autojunk=False)
        if (not keeps and matcher.real_quick_ratio() < 0.9) or (not keeps and matcher.quick_ratio() < 0.9):
            continue  # cannot reach 0.9: spare the quadratic comparison
        ratio = matcher.ratio()
        if (ratio >= 0.9 or keeps) and ratio > best[0]:
            best = (ratio, candidate)
    return best[1]


def _short(name: str) -> str:
    """A test's own name, without its class or describe blocks."""
    if " > " in name or " " in name:  # a JavaScript title may hold dots
        return name.rsplit(" > ", 1)[-1]
    return name.rsplit(".", 1)[-1]


def _deleted(test: TestFacts, after: ModuleFacts) -> str:
    for name, (_line, fingerprint) in after.uncollected.items():
        if fingerprint == test.fingerprint:
            return f"test {test.name} was removed: its body remains as {name}, which the test runner does not collect"
    title = test.name.rsplit(" > ", 1)[-1]
    if after.commented and title in after.commented:
        return f"test {test.name} was commented out"
    return (f"test {test.name} was removed and is not found under another name in the change (no test the change "
            "adds or edits checks what it checked)")


def _compare(old: TestFacts, new: TestFacts, pair: FilePair, observed: set[Lit],
             around: Surroundings | None = None) -> list[Found]:
    path = pair.change.path
    found: list[Found] = []
    markers = new_markers(old, new)
    if markers and around is not None and around.still_runs(path, new.name):
        markers = []  # the runner evaluated them here: the test still runs (a skipif whose condition is false)
    for marker in markers:
        if around is not None:
            around.reported.add((path, new.name))
        when = " (when its condition holds)" if marker.conditional else ""
        found.append((GuardClass.SKIPPED_TEST, path, marker.line,
                      f"{new.name} is now {WORDS.get(marker.kind, marker.kind)}{when}: `{marker.text}`"))
    if found:  # a test that no longer runs: what became of its assertions is beside the point
        return found
    found.extend(_cases(old, new, path, pair.after))
    helpers = pair.after.helpers if pair.after else {}
    found.extend((GuardClass.LOOSENED_ASSERTION, path, line, text)
                 for line, text in _atoms(old, new, observed, helpers))
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


def _cases(old: TestFacts, new: TestFacts, path: str, after: ModuleFacts | None) -> list[Found]:
    """Parametrised cases the change removed: compared by what they hold, so a case
    reworded, re-id'd or moved into another parametrize decorator is still there."""
    if old.case_texts is not None and new.case_texts is not None:
        gone = [case for case in old.case_texts if case not in new.case_texts]
        available = new.literals | (after.context_literals if after else set())
        gone = [case for case in gone if not _literals_kept(case, available)]
        plain = [case for case in gone if not case_literals(case)]  # only trivial values: counted, not matched
        if plain and len(new.case_texts) >= len(old.case_texts):
            gone = [case for case in gone if case not in plain]
        if gone:
            shown = ", ".join(f"`{case}`" for case in gone[:3]) + (", ..." if len(gone) > 3 else "")
            return [(GuardClass.DELETED_TEST, path, new.line,
                     f"{len(gone)} of {len(old.case_texts)} parametrised cases of {new.name} were removed: {shown}")]
        return []
    if old.cases is not None and new.cases is not None and new.cases < old.cases and old.case_texts is None:
        return [(GuardClass.DELETED_TEST, path, new.line,
                 f"{old.cases - new.cases} of {old.cases} parametrised cases of {new.name} were removed")]
    return []


def _literals_kept(case: str, available: set[Lit]) -> bool:
    """Are the non-trivial values of a removed case's text all still in the test?"""
    values = case_literals(case)
    return bool(values) and values <= available


def _atoms(old: TestFacts, new: TestFacts, observed: set[Lit],
           helpers: dict[str, list[Atom]] | None = None) -> list[tuple[int, str]]:
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
            if not any(covers(other, atom) for other in new.atoms) and not in_helpers(atom, new, helpers or {}):
                left.append(atom)
            continue
        remaining.remove(partner)
        reason = _looser(atom, partner, observed)
        if reason:
            found.append((partner.line, reason))
    empty = [atom for atom in remaining if atom.strength == 0]
    moved = sum(len((helpers or {}).get(name, [])) for name in new.calls)
    if left and not empty and _weight(new) + moved < _weight(old):  # a tautology in its place says it already
        found.append((new.line, f"{len(left)} assertion(s) removed from {new.name}, e.g. `{left[0].text}`"))
    found.extend((atom.line, f"`{atom.text}` asserts nothing") for atom in empty)
    return found


def _weight(test: TestFacts) -> int:
    return test.weight if test.weight is not None else sum(1 for atom in test.atoms if atom.strength > 0)


def _looser(old: Atom, new: Atom, observed: set[Lit]) -> str | None:
    if new.strength < old.strength:
        return f"`{old.text}` became `{new.text}`"
    if old.kind == new.kind == "approx" and old.tolerance is not None and new.tolerance is not None \
            and new.tolerance > old.tolerance * 1.000001:
        return f"tolerance widened from {old.tolerance:g} to {new.tolerance:g}: `{new.text}`"
    if old.kind == new.kind == "raises":
        before, after = _names(old.exception), _names(new.exception)
        if old.exception and not new.exception and not new.pattern:
            return f"the expected error is no longer named: `{old.text}` became `{new.text}`"
        if old.exception and new.exception and ((before < after) or (after & _BROAD and not before & _BROAD)):
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
