"""The ``javascript`` guard: jest, vitest, mocha and node:test tests and the code they
test, in .js, .jsx, .ts, .tsx, .mjs and .cjs files, compared through tokens."""

from __future__ import annotations

import re

from . import jscode
from .base import LanguageGuard
from .hunks import JAVASCRIPT
from .model import ModuleFacts, TestFacts

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
    suffixes = (".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs")
    runners = ("vitest", "jest")
    test_globs = ("**/*.test.*", "**/*.spec.*", "**/__tests__/**", "**/test/**", "**/tests/**", "**/spec/**")
    hunk_rules = JAVASCRIPT

    def describe(self) -> str:
        return ("JavaScript/TypeScript (tokens): deleted, skipped, todo or .only tests, fewer or weaker "
                "expect() assertions, empty catch blocks, hardcoded expected values")

    def is_test_path(self, path: str) -> bool:
        return bool(_TEST.search(path))

    def collects(self, path: str) -> bool:
        return bool(_COLLECTED.search(path))

    def search_word(self, test: TestFacts) -> str:
        words = _WORD.findall(test.name.rsplit(" > ", 1)[-1])
        return max(words, key=len) if words else "it"

    def sources(self, text: str, lines: set[int] | None, *, test_file: bool) -> dict[str, str]:
        return jscode.sources(text, lines, test_file=test_file)

    def extract(self, text: str, path: str, *, test_file: bool, lines: set[int] | None = None,
                unchanged: frozenset[str] = frozenset()) -> ModuleFacts:
        return jscode.extract(text, path, test_file=test_file, lines=lines, unchanged=unchanged)
