"""A JavaScript runner's configuration that stops test files from running.

vitest's ``exclude``, jest's ``testPathIgnorePatterns``/``modulePathIgnorePatterns`` (in
``jest.config.*`` or ``package.json``'s ``jest`` key) and mocha's ``ignore`` list files the
runner must not run. A change that adds an entry matching a test file of the repository
hides that file's tests as surely as deleting them. The configuration is code or JSON, so
its added lines are read for quoted patterns in such a list (the key on the line or in the
hunk above it), and each pattern is matched against the repository's test files: as a glob
when it has ``*``, as jest's regular expression otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from axpipe.change.globs import glob_regex
from axpipe.interfaces import ChangedFile, GuardClass

from ..judge_tests import Found

CONFIG = re.compile(r"(?:^|/)(?:(?:vitest|vite|jest)\.config\.[cm]?[jt]s|jest\.config\.json|package\.json"
                    r"|\.mocharc\.(?:c?js|json|ya?ml))$")
_KEYS = re.compile(r"\b(?:exclude|testPathIgnorePatterns|modulePathIgnorePatterns|ignore|testIgnore)\b")
_QUOTED = re.compile(r"""(['"`])((?:\\.|(?!\1).)+)\1""")


def is_config(path: str) -> bool:
    return bool(CONFIG.search(path))


def findings(item: ChangedFile, test_files: Callable[[], list[str]]) -> list[Found]:
    """Patterns the change adds to a runner's exclusion lists that match a test file."""
    if item.path.endswith("package.json") and '"jest"' not in (item.after or ""):
        return []
    found: list[Found] = []
    files: list[str] | None = None
    for hunk in item.hunks:
        in_list = False
        old = hunk.new_start
        for line in hunk.lines:
            kind, text = line[:1], line[1:]
            if kind == "-":
                continue
            if _KEYS.search(text):
                in_list = True
            elif in_list and re.search(r"^\s*[\]}]", text):
                in_list = False
            if kind == "+" and (in_list or _KEYS.search(text)):
                for match in _QUOTED.finditer(text):
                    if _KEYS.fullmatch(match[2]):
                        continue  # the key itself, quoted in JSON
                    pattern = _unescaped(match[2], item.path)
                    files = test_files() if files is None else files
                    hit = next((path for path in files if _matches(pattern, path)), None)
                    if hit is not None:
                        found.append((GuardClass.SKIPPED_TEST, item.path, old,
                                      f"the runner's configuration now excludes {hit} (`{pattern}`), so its tests "
                                      "no longer run"))
            old += 1
    return found


def _unescaped(text: str, path: str) -> str:
    """A quoted pattern's value: JSON and JavaScript strings escape backslashes."""
    if "\\" not in text:
        return text
    import json

    try:
        return str(json.loads(f'"{text}"'))
    except ValueError:
        return text


def _matches(pattern: str, path: str) -> bool:
    if pattern.strip("*/. ") in ("", "node_modules", "dist", "build", "coverage"):
        return False
    if "*" in pattern or "{" in pattern:
        glob = pattern.removeprefix("./")
        try:
            return bool(re.fullmatch(glob_regex(glob if glob.startswith("**") else f"**/{glob}"), path)
                        or re.fullmatch(glob_regex(glob), path))
        except re.error:
            return False
    try:
        return bool(re.search(pattern, path))
    except re.error:
        return pattern in path
