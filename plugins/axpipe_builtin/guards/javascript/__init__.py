"""The ``javascript`` guard: jest, vitest, mocha and node:test tests and the code they
test, in .js, .jsx, .ts, .tsx, .mjs and .cjs files, compared through tokens."""

from __future__ import annotations

import re

from axpipe.interfaces import ChangedFile, RepoLookup

from ..base import LanguageGuard
from ..hunks import JAVASCRIPT
from ..judge_tests import Found
from ..model import ModuleFacts, TestFacts
from ..suffixes import JAVASCRIPT_FILES
from . import jscode, jsconfig

_TEST = re.compile(r"(?:^|/)(?:__tests__|tests?|spec)/|\.(?:test|spec)\.[cm]?[jt]sx?$")
# What the runners collect by default: jest's testMatch, vitest's include, mocha's ./test,
# node --test's patterns. A test file renamed out of all of them no longer runs.
_COLLECTED = re.compile(r"(?:^|/)__tests__/.*\.[cm]?[jt]sx?$|[./](?:test|spec)\.[cm]?[jt]sx?$"
                        r"|(?:^|/)test/[^/]*\.[cm]?js$|(?:^|/)test/.*\.[cm]?[jt]sx?$"
                        r"|(?:^|/)(?:test[-_][^/]*|[^/]*[-_]test|test)\.[cm]?[jt]sx?$")
_WORD = re.compile(r"[A-Za-z_$][\w$]{3,}")


class JavaScriptGuard(LanguageGuard):
    """JavaScript and TypeScript tests and code, by tokens."""

    name = "javascript"
    suffixes = JAVASCRIPT_FILES
    runners = ("vitest", "jest")
    test_globs = ("**/*.test.*", "**/*.spec.*", "**/__tests__/**", "**/test/**", "**/tests/**", "**/spec/**")
    hunk_rules = JAVASCRIPT

    def describe(self) -> str:
        return ("JavaScript/TypeScript (tokens): deleted, skipped, todo or .only tests, fewer or weaker "
                "expect() assertions, empty catch blocks, hardcoded expected values")

    def is_test_path(self, path: str) -> bool:
        return bool(_TEST.search(path))

    def extra_findings(self, item: ChangedFile, lookup: RepoLookup | None) -> list[Found]:
        """What a change to a runner's configuration excludes (:mod:`.jsconfig`); a change
        to a file that is not JavaScript (package.json) is judged only there."""
        if not jsconfig.is_config(item.path):
            return []

        def test_files() -> list[str]:
            listing = getattr(lookup, "files", None)
            return [path for path in listing(self.test_globs) if self.collects(path)] if listing else []

        found = jsconfig.findings(item, test_files)
        if not found and not item.path.endswith(self.code_suffixes()):
            return []
        return found

    def code_suffixes(self) -> tuple[str, ...]:
        return (".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs")

    def collects(self, path: str) -> bool:
        return bool(_COLLECTED.search(path))

    def search_word(self, test: TestFacts) -> str:
        """What a copy of ``test`` under another title calls too (its longest callee), else
        the longest word of its title."""
        called = [name for name in test.calls if len(name) > 3 and _WORD.fullmatch(name)]
        words = called or _WORD.findall(test.name.rsplit(" > ", 1)[-1])
        return max(sorted(words), key=len) if words else "it"

    def sources(self, text: str, lines: set[int] | None, *, test_file: bool) -> dict[str, str]:
        return jscode.sources(text, lines, test_file=test_file)

    def extract(self, text: str, path: str, *, test_file: bool, lines: set[int] | None = None,
                unchanged: frozenset[str] = frozenset()) -> ModuleFacts:
        return jscode.extract(text, path, test_file=test_file, lines=lines, unchanged=unchanged)
