"""The ``javascript`` guard: jest, vitest, mocha and node:test tests and the code they
test, in .js, .jsx, .ts, .tsx, .mjs and .cjs files, compared through tokens."""

from __future__ import annotations

import re

from . import jscode
from .base import LanguageGuard
from .hunks import JAVASCRIPT
from .model import ModuleFacts

_TEST = re.compile(r"(?:^|/)(?:__tests__|tests?|spec)/|\.(?:test|spec)\.[cm]?[jt]sx?$")


class JavaScriptGuard(LanguageGuard):
    """JavaScript and TypeScript tests and code, by tokens."""

    name = "javascript"
    suffixes = (".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs")
    test_globs = ("**/*.test.*", "**/*.spec.*", "**/__tests__/**", "**/test/**", "**/tests/**", "**/spec/**")
    hunk_rules = JAVASCRIPT

    def describe(self) -> str:
        return ("JavaScript/TypeScript (tokens): deleted, skipped, todo or .only tests, fewer or weaker "
                "expect() assertions, empty catch blocks, hardcoded expected values")

    def is_test_path(self, path: str) -> bool:
        return bool(_TEST.search(path))

    def extract(self, text: str, path: str, *, test_file: bool) -> ModuleFacts:
        return jscode.extract(text, path, test_file=test_file)
