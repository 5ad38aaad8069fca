"""What the Python and JavaScript guards share: read both sides of each changed file into
facts, gather what tests claim, run the judges, fall back to hunks where sides are unknown.

A language supplies :meth:`LanguageGuard.extract` (text → facts, raising ``SyntaxError``
when the text cannot be read), :meth:`LanguageGuard.is_test_path` and its hunk rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from axpipe.interfaces import ChangedFile, ChangeSet, GuardClass, GuardContext, GuardFinding, RepoLookup

from . import failure, focus
from .following import Pool, follow
from .fragments import fragments
from .hunks import HunkRules, judge_hunks
from .judge_code import judge_code
from .judge_runner import runner_losses
from .judge_tests import FilePair, Found, Surroundings, judge_tests
from .model import Expectation, ModuleFacts, TestFacts

MAX_LOOKUPS = 25   # repository test files read per changed function, at most
# module-level statements that decide what a file's runner collects, read with any focus
_COLLECTION = re.compile(r"^(?:__test__|pytestmark|collect_ignore\w*)\s*=|^def load_tests\b|^pytest\.skip\(")


class LanguageGuard:
    params_schema: type | None = None
    suffixes: tuple[str, ...] = ()
    test_globs: tuple[str, ...] = ()   # where the runner looks for tests (git pathspec globs)
    runners: tuple[str, ...] = ()      # the runners whose listings this guard judges (axpipe.guard.runner_tests)
    name = ""
    hunk_rules: HunkRules

    def describe(self) -> str:
        raise NotImplementedError

    def is_test_path(self, path: str) -> bool:
        raise NotImplementedError

    def collects(self, path: str) -> bool:
        """Does the runner (by its default patterns) collect tests from ``path``?"""
        return self.is_test_path(path)

    def search_word(self, test: TestFacts) -> str:
        """A word the definition of ``test`` holds, to find it in other files."""
        return test.name.rsplit(".", 1)[-1]

    def extract(self, text: str, path: str, *, test_file: bool, lines: set[int] | None = None,
                unchanged: frozenset[str] = frozenset()) -> ModuleFacts:
        """The facts of ``text``; with ``lines``, at least of the definitions holding them.
        A definition named in ``unchanged`` is the same on both sides: its name is enough."""
        raise NotImplementedError

    def sources(self, text: str, lines: set[int] | None, *, test_file: bool) -> dict[str, str]:
        """Each definition's text by qualified name (of those ``lines`` reach), to tell the
        ones the change did not touch; empty when the language cannot say cheaply."""
        return {}

    def extra_findings(self, item: ChangedFile, lookup: RepoLookup | None) -> list[Found]:
        """Files the language judges outside the facts (Python: pytest's config files)."""
        return []

    def check(self, changes: ChangeSet, context: GuardContext) -> list[GuardFinding]:
        pairs: list[FilePair] = []
        partial: list[tuple[ChangedFile, bool]] = []
        found: list[Found] = []
        for item in changes.matching(self.suffixes):
            extra = self.extra_findings(item, changes.lookup)
            if extra or not item.path.endswith(self.code_suffixes()):
                found.extend(extra)
                continue
            test_file = self.is_test_path(item.path) or self.is_test_path(item.old_path or item.path)
            pair = self._pair(item, test_file, changes.notes) if item.complete else None
            if pair is None:
                partial.append((item, test_file))
            else:
                pairs.append(pair)
        read: dict[str, tuple[set[int], set[int]]] = {}
        for item, test_file in partial:  # a patch alone: read the hunks' whole definitions by meaning
            pair, lines = self._pair_from_hunks(item, test_file)
            if pair is not None:
                pairs.append(pair)
                read[item.path] = lines
        if partial:  # a test gone from a hunk may live on in another file of the change
            present = {name.rsplit(" > ", 1)[-1].rsplit(".", 1)[-1] for pair in pairs if pair.after
                       for name in pair.after.tests}
            present.update(match[1] for item, _test in partial for _line, text in item.added_lines()
                           for match in [self.hunk_rules.test.search(text)] if match)
            for item, test_file in partial:
                lines = read.get(item.path, (set(), set()))
                found.extend(judge_hunks(item, self.hunk_rules, test_file, present, lines))
        evidence = _Evidence(self, pairs, context, changes.lookup)
        collected = context.collected
        surroundings = Surroundings(_removed_code(pairs), self.collects, evidence.same_test_elsewhere,
                                    collected if collected is not None and collected.known else None,
                                    moved={item.old_path: item.path for item in changes.matching(self.suffixes)
                                           if item.old_path and item.old_path != item.path})
        found.extend(judge_tests(pairs, evidence.failure.values, surroundings))
        if collected is not None and collected.known and collected.runner in self.runners:
            found.extend(runner_losses(collected, surroundings))
        found.extend(judge_code(pairs, evidence))
        if collected is not None and not collected.known:  # the text rules stood in for the runner: say so
            found = [(guard, path, line, f"{text} (judged from the change's text: {collected.error})")
                     if guard in (GuardClass.DELETED_TEST, GuardClass.SKIPPED_TEST) else (guard, path, line, text)
                     for guard, path, line, text in found]
        return [GuardFinding(path, line, str(guard), text, self.name) for guard, path, line, text in found]

    def code_suffixes(self) -> tuple[str, ...]:
        return self.suffixes

    def _pair(self, item: ChangedFile, test_file: bool, notes: list[str]) -> FilePair | None:
        # Only the definitions around the hunks are read (focus.py): the cost follows the
        # change, not the size of the file. Both sides are read alike, or both whole.
        focused = focus.changed_lines(item)
        sides = self._sides(item, test_file, notes, focused)
        if sides is None:
            return None
        if any(side is not None and (side.needs_whole or not side.partial) for side in sides) and \
                any(side is not None and side.partial for side in sides):
            sides = self._sides(item, test_file, notes, (None, None))
            if sides is None:
                return None
        return FilePair(item, sides[0], sides[1], test_file)

    def _pair_from_hunks(self, item: ChangedFile, test_file: bool) -> tuple[FilePair | None, tuple[set[int], set[int]]]:
        """Both sides of a file known only from its hunks, as far as they read (see
        :mod:`.fragments`), and the changed lines they cover; (None, nothing) when they do not."""
        frag = fragments(item, indented=self.hunk_rules.indented)
        sides: list[ModuleFacts | None] = []
        for text, path in ((frag.before, item.old_path), (frag.after, item.new_path)):
            if path is None:
                sides.append(None)
                continue
            try:
                facts = self.extract(text, path, test_file=test_file)
            except (SyntaxError, ValueError, RecursionError):
                return None, (set(), set())
            facts.partial = True
            facts.shadowed = {}  # a fragment cannot tell a redefinition from a definition elsewhere
            sides.append(facts)
        return FilePair(item, sides[0], sides[1], test_file), (frag.old_lines, frag.new_lines)

    def _sides(self, item: ChangedFile, test_file: bool, notes: list[str],
               focused: tuple[set[int] | None, set[int] | None]) -> list[ModuleFacts | None] | None:
        sides: list[ModuleFacts | None] = []
        try:
            same = focus.unchanged(self.sources(item.before, focused[0], test_file=test_file),
                                   self.sources(item.after, focused[1], test_file=test_file)) \
                if item.before is not None and item.after is not None and focused[0] is not None else frozenset()
        except (SyntaxError, ValueError, RecursionError):
            same = frozenset()
        for text, path, lines in ((item.before, item.old_path, focused[0]), (item.after, item.new_path, focused[1])):
            if path is None or text is None:
                sides.append(None)
                continue
            try:
                sides.append(self.extract(text, path, test_file=test_file, lines=lines, unchanged=same))
            except (SyntaxError, ValueError, RecursionError) as error:
                which = "old" if path == item.old_path and text is item.before else "new"
                notes.append(f"{path}: the {which} version does not parse ({type(error).__name__}: {error}); "
                             f"the {self.name} guard judged its hunks only")
                return None
        return sides


class _Evidence:
    """What tests claim about functions, gathered lazily: the change's test files first,
    then the caller's test files, then the repository's tests that mention the function.
    A test found by searching must also mention the changed function's module (``calc``
    for ``calc.py``), so a common name (``run``) does not link unrelated code and tests."""

    def __init__(self, guard: LanguageGuard, pairs: list[FilePair], context: GuardContext,
                 lookup: RepoLookup | None) -> None:
        self.guard = guard
        self.pairs = pairs
        self.lookup = lookup
        self.whole: dict[tuple[str, str], ModuleFacts | None] = {}
        self.failure = failure.read(context.failure_output)
        self.read_paths: set[str] = set()              # read whole already (the change's test files)
        self.read_about: set[tuple[str, str | None]] = set()  # (path, function) read for that function
        self.trusted: list[ModuleFacts] = []           # in the change, or named by the caller
        self.found: list[tuple[ModuleFacts, str]] = []  # found by searching, with their text
        for pair in pairs:
            if pair.test_file:
                self.trusted.extend(side for side in (pair.before, pair.after) if side is not None)
                if not (pair.after and pair.after.partial):  # a file read in part is read whole when searched
                    self.read_paths.update(path for path in (pair.change.old_path, pair.change.new_path) if path)
        named = [*context.test_files, *(_test_path(test_id) for test_id in context.failing_tests)]
        wanted = [name for name in named if name and name.endswith(guard.suffixes)]
        self.trusted.extend(facts for _path, facts, _text in self._read(wanted))
        self.searched: set[str] = set()

    def _read(self, paths: Iterable[str], word: str | None = None) -> list[tuple[str, ModuleFacts, str]]:
        read: list[tuple[str, ModuleFacts, str]] = []
        if self.lookup is None:
            return read
        for path in paths:
            if path in self.read_paths or (path, word) in self.read_about:
                continue
            self.read_about.add((path, word))
            text = self.lookup.read(path)
            if text is None:
                continue
            try:
                read.append((path, self._about(text, path, word), text))
            except (SyntaxError, ValueError, RecursionError):
                continue
        return read

    def _about(self, text: str, path: str, word: str | None) -> ModuleFacts:
        """The facts of a whole test file, analysing only the tests that mention ``word``
        (every test when None): the others cannot hold a claim about it."""
        if word is None:
            return self.guard.extract(text, path, test_file=True)
        pattern = re.compile(rf"(?<![\w$]){re.escape(word)}(?![\w$])")
        lines = {number for number, row in enumerate(text.split("\n"), start=1)
                 if pattern.search(row) or _COLLECTION.match(row)}
        facts = self.guard.extract(text, path, test_file=True, lines=lines)  # only the tests around them
        return self.guard.extract(text, path, test_file=True) if facts.needs_whole else facts

    def _relevant(self, function: str, path: str) -> list[ModuleFacts]:
        if function not in self.searched and self.lookup is not None:
            self.searched.add(function)
            paths = [found for found in self.lookup.files_mentioning(function, self.guard.test_globs)
                     if self.guard.is_test_path(found)]
            self.found.extend((facts, text) for _path, facts, text in self._read(paths[:MAX_LOOKUPS], function))
        module = _module_word(path)
        return self.trusted + [facts for facts, text in self.found
                               if module and re.search(rf"(?<![\w$]){re.escape(module)}(?![\w$])", text)]

    def expectations(self, function: str, path: str) -> list[Expectation]:
        claims = [claim for facts in self._relevant(function, path) for claim in facts.expectations
                  if claim.callee == function]
        return claims + [claim for claim in self.failure.expectations if claim.callee == function]

    def raises(self, function: str, path: str) -> list[tuple[str, str]]:
        return [(exception, where) for facts in self._relevant(function, path)
                for callee, exception, where in facts.raises if callee == function]

    def tested(self, path: str) -> bool:
        """A new file is code under test when a test mentions its module (the test files of
        the change, or the repository's): a script nothing tests is not."""
        module = _module_word(path)
        if not module or not re.fullmatch(r"[A-Za-z_$][\w$]*", module):
            return False
        changed = [pair for pair in self.pairs if pair.test_file and pair.change.after is not None]
        if any(re.search(rf"(?<![\w$]){re.escape(module)}(?![\w$])", pair.change.after or "") for pair in changed):
            return True
        return self.lookup is not None and bool(self.lookup.files_mentioning(module, self.guard.test_globs))

    def same_test_elsewhere(self, test: TestFacts) -> str | None:
        """Where a test with ``test``'s name and body still is (another file, or the same
        file outside the change): a duplicate removed, or a test moved earlier."""
        word = self.guard.search_word(test)
        body = [line for line in test.fingerprint.split("\n") if line]
        for pair in self.pairs:  # a patch alone: the same body among the lines its hunks keep
            if not pair.change.complete and body and pair.change.new_path:
                kept = {" ".join(line[1:].split()) for hunk in pair.change.hunks for line in hunk.lines
                        if line[:1] in (" ", "+")}
                if all(line in kept for line in body):
                    return pair.change.new_path
        changed = {path: pair.change.after for pair in self.pairs
                   for path in (pair.change.old_path, pair.change.new_path) if path}
        found = self.lookup.files_mentioning(word, self.guard.test_globs)[:MAX_LOOKUPS] if self.lookup else []
        for path in dict.fromkeys([*(path for path, text in changed.items() if text and word in text), *found]):
            if not self.guard.is_test_path(path):
                continue
            facts = self._whole(path, changed, word)
            if facts is None:
                continue
            others = [other for other in facts.tests.values() if not other.light]
            if any(other.fingerprint == test.fingerprint for other in others):
                return path
            if test.atoms and any(follow(test, Pool([other], set()), set()) is not None for other in others):
                return path  # another test already checks all it checked (a duplicate with more)
        return None

    def _whole(self, path: str, changed: dict[str, str | None], word: str) -> ModuleFacts | None:
        """The facts of the tests that mention ``word`` in the whole file at ``path`` as the
        change leaves it."""
        if (path, word) not in self.whole:
            text = changed[path] if path in changed else self.lookup.read(path) if self.lookup is not None else None
            try:
                self.whole[path, word] = None if text is None else self._about(text, path, word)
            except (SyntaxError, ValueError, RecursionError):
                self.whole[path, word] = None
        return self.whole[path, word]


def _removed_code(pairs: list[FilePair]) -> set[str]:
    """Functions the change removed from code (not tests): defined before, nowhere after."""
    before = {name for pair in pairs if pair.before and not pair.test_file for name in pair.before.definitions}
    after = {name for pair in pairs if pair.after for name in pair.after.definitions}
    return {name for name in before - after if len(name) > 2}


def _module_word(path: str) -> str:
    """How tests refer to the module at ``path``: its name, or its folder's for an index file."""
    parts = path.replace("\\", "/").split("/")
    stem = parts[-1].split(".", 1)[0]
    if stem in ("__init__", "index", "mod") and len(parts) > 1:
        return parts[-2]
    return stem


def _test_path(test_id: str) -> str:
    """``tests/test_x.py::TestA::test_b`` → ``tests/test_x.py``; ``src/a.test.ts > adds`` → the path."""
    return test_id.split("::", 1)[0].split(" > ", 1)[0].strip()
