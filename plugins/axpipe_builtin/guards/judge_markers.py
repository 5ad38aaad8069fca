"""What a change did to whether tests run at all, beyond each test's own body: markers
on a class, describe block, module or conftest, ``.only``, a test shadowed by a later
definition, a test file renamed out of the runner's patterns; and which of a test's
markers are new (an edited ``skipif`` is not).
"""

from __future__ import annotations

from collections import Counter

from axpipe.interfaces import GuardClass

from .model import WORDS, FilePair, Found, Marker, ModuleFacts, TestFacts


def renamed_away(pair: FilePair, tests: dict[str, TestFacts]) -> list[Found]:
    if not tests:
        return []
    names = ", ".join(list(tests)[:5]) + (", ..." if len(tests) > 5 else "")
    first = min(tests.values(), key=lambda test: test.line)
    return [(GuardClass.DELETED_TEST, pair.change.path, first.line,
             f"test file renamed from {pair.change.old_path} to {pair.change.new_path}, which the test runner "
             f"does not collect: {len(tests)} test(s) no longer run ({names})")]


def shadowed(pair: FilePair) -> list[Found]:
    """A test redefined under the same name: only the later definition runs."""
    before = pair.before.shadowed if pair.before else {}
    after = pair.after.shadowed if pair.after else {}
    return [(GuardClass.DELETED_TEST, pair.change.path, lines[0],
             f"test {name} (line {lines[0]}) is defined again at line {lines[1]}: the runner only sees the later "
             "definition, so the earlier one no longer runs")
            for name, lines in after.items() if name not in before]


def new_markers(old: TestFacts, new: TestFacts) -> list[Marker]:
    """Markers the change added to a test. A marker of the same kind and source that was
    already there was edited, not added (its reason or condition reworded), unless the edit
    made a conditional skip unconditional."""
    remaining = list(old.markers)
    fresh: list[Marker] = []
    for marker in new.markers:
        same = next((item for item in remaining if item.kind == marker.kind and item.text == marker.text), None) or \
            next((item for item in remaining if item.kind == marker.kind and item.source == marker.source), None)
        if same is None:
            fresh.append(marker)
            continue
        remaining.remove(same)
        if same.conditional and not marker.conditional and same.text != marker.text:
            fresh.append(marker)
    return [marker for marker in fresh if marker.kind != "only"]


def scope_markers(pair: FilePair) -> list[Found]:
    """Markers on a class, describe block, module or conftest that reach existing tests;
    and `.only`, which skips every test it is not on."""
    found: list[Found] = []
    if pair.after is None:
        return found
    before = pair.before or ModuleFacts()
    old_tests = set(before.tests)
    seen = {(scope.scope, scope.marker.kind, scope.marker.text) for scope in before.scope_markers}
    sources = Counter((scope.scope, scope.marker.kind, scope.marker.source) for scope in before.scope_markers
                      if scope.marker.source)
    for scope in pair.after.scope_markers:
        if (scope.scope, scope.marker.kind, scope.marker.text) in seen:
            continue
        edited = (scope.scope, scope.marker.kind, scope.marker.source)
        if scope.marker.source and sources[edited] > 0:  # the same marker, its condition or reason reworded
            sources[edited] -= 1
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
                          f"{len(reached)} existing test(s) now {WORDS.get(scope.marker.kind, scope.marker.kind)} "
                          f"by `{scope.marker.text}` on {scope.scope}: {names}"))
    old_only = Counter(marker.text for marker in before.only_markers)
    for marker in pair.after.only_markers:
        if old_only[marker.text] > 0:
            old_only[marker.text] -= 1
            continue
        found.append((GuardClass.SKIPPED_TEST, pair.change.path, marker.line,
                      f"`{marker.text}` makes the runner skip every other test in the file"))
    return found
