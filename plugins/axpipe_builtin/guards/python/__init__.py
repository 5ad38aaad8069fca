"""The ``python`` guard: pytest and unittest tests and the Python code they test, compared
through the AST of the old and new version of each changed file."""

from __future__ import annotations

import re

from axpipe.interfaces import ChangedFile, RepoLookup

from ..base import LanguageGuard
from ..hunks import PYTHON
from ..judge_tests import Found
from ..model import ModuleFacts, TestFacts
from ..suffixes import PYTHON_FILES
from . import pycode, pyconfig

_TEST_NAME = re.compile(r"(?:^|/)(?:test_[^/]*|[^/]*_test|conftest|tests?)\.py$")
_TEST_DIR = re.compile(r"(?:^|/)tests?/")
_COLLECTED = re.compile(r"(?:^|/)(?:test[^/]*|[^/]*_test)\.py$")
_CONFIG = pyconfig.CONFIG_FILES
_PYTEST_GLOBS = ("**/test_*.py", "**/*_test.py")   # pytest's default python_files


class PythonGuard(LanguageGuard):
    """Python tests (pytest, unittest) and code, by AST."""

    name = "python"
    suffixes = PYTHON_FILES
    runners = ("pytest", "unittest")
    test_globs = ("**/test_*.py", "**/*_test.py", "**/tests/**/*.py", "**/test/**/*.py", "**/tests.py",
                  "**/test.py")
    hunk_rules = PYTHON

    def describe(self) -> str:
        return ("Python (AST): deleted, skipped or xfailed tests, loosened assertions and tolerances, "
                "swallowed errors, hardcoded expected values; pytest hooks and config that skip or deselect")

    def is_test_path(self, path: str) -> bool:
        return bool(_TEST_NAME.search(path) or _TEST_DIR.search(path))

    def collects(self, path: str) -> bool:
        """pytest's default ``python_files`` (``test_*.py``, ``*_test.py``); unittest's
        discovery (``test*.py``) is within them but for ``test.py``-like names."""
        return bool(_COLLECTED.search(path))

    def code_suffixes(self) -> tuple[str, ...]:
        return (".py",)

    def search_word(self, test: TestFacts) -> str:
        """What a copy of ``test`` under another name calls too: its longest callee."""
        called = [name for name in test.calls
                  if len(name) > 3 and name.isidentifier() and not name.startswith("assert")]
        return max(sorted(called), key=len) if called else test.name.rsplit(".", 1)[-1]

    def extract(self, text: str, path: str, *, test_file: bool, lines: set[int] | None = None,
                unchanged: frozenset[str] = frozenset()) -> ModuleFacts:
        return pycode.extract(text, path, test_file=test_file, lines=lines, unchanged=unchanged)

    def sources(self, text: str, lines: set[int] | None, *, test_file: bool) -> dict[str, str]:
        return pycode.sources(text, lines)

    def extra_findings(self, item: ChangedFile, lookup: RepoLookup | None) -> list[Found]:
        """What a change to pytest's configuration added that stops tests from running."""
        if not item.path.endswith(_CONFIG):
            return []
        if not item.complete:
            return pyconfig.lines(item)

        def test_files() -> list[str]:  # `def` is in every test file: the repository's test files
            return [path for path in lookup.files_mentioning("def", _PYTEST_GLOBS) if self.is_test_path(path)] \
                if lookup is not None else []

        return pyconfig.config_findings(item, test_files)
