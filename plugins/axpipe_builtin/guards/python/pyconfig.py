"""pytest's configuration files: settings a change added that stop tests from running.

pytest reads ``[pytest]`` in ``pytest.ini``/``.pytest.ini``/``tox.ini``, ``[tool:pytest]``
in ``setup.cfg`` and ``[tool.pytest.ini_options]`` (or ``[tool.pytest]``) in
``pyproject.toml``. Both versions of the file are parsed and those settings compared, so
only what the change added counts, and other sections (``[tool.ruff]``, ``[testenv]``)
never do. What hides failures:

* in ``addopts`` (and ``-o``/``PYTEST_ADDOPTS`` wherever set in these files): options that
  run nothing (``--collect-only``, ``--setup-only``, ``--fixtures``, ``--help``...), that
  deselect (``-k``, ``-m``, ``--deselect``, ``--ignore``, ``--ignore-glob``, ``-p no:python``),
  or that choose tests from pytest's cache, which no diff shows (``--lf``, ``--sw``,
  ``--sw-skip``, ``--lfnf``). ``-x``, ``--maxfail``, ``-q``, ``-ra`` and the like do not:
  a failure still fails the run;
* ``testpaths`` set or changed so that a test file of the repository it collected is left
  out; ``python_files``/``python_classes``/``python_functions`` losing a pattern;
  ``norecursedirs`` gaining one the old list did not cover.

A side that cannot be read is judged by its added lines instead (see ``lines``).
"""

from __future__ import annotations

import configparser
import fnmatch
import re
import shlex
import tomllib
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from axpipe.interfaces import ChangedFile, GuardClass

from ..suffixes import PYTHON_CONFIG_FILES

Found = tuple[str, str, int, str]
CONFIG_FILES = PYTHON_CONFIG_FILES

_RUNS_NOTHING = {"--co", "--collect-only", "--collectonly", "--setup-only", "--setup-plan", "--fixtures",
                 "--funcargs", "--fixtures-per-test", "--markers", "-h", "--help", "-V", "--version"}
_DESELECTS = {"-k", "-m", "--deselect", "--ignore", "--ignore-glob"}
_FROM_CACHE = {"--lf", "--last-failed", "--lfnf", "--last-failed-no-failures", "--sw", "--stepwise",
               "--sw-skip", "--stepwise-skip"}
_WITH_VALUE = {"-k", "-m", "-p", "-o", "-c", "-W", "-r", "-n", "--deselect", "--ignore", "--ignore-glob",
               "--lfnf", "--last-failed-no-failures", "--override-ini"}
_SHORT_WITH_VALUE = "kmpocWrn"
_COLLECTION = ("python_files", "python_classes", "python_functions")
_DEFAULTS = {"python_files": ["test_*.py", "*_test.py"], "python_classes": ["Test"], "python_functions": ["test"],
             "norecursedirs": ["*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}"]}
_LINE_RULE = re.compile(r"--deselect\b|--ignore(?:-glob)?\b|(?:^|[\s'\"=])-[km]\s|\bcollect_ignore\b|--co\b|"
                        r"--collect-?only|--setup-(?:only|plan)|--lf\b|--last-failed|--sw\b|--stepwise|no:python")


def config_findings(item: ChangedFile, test_files: Callable[[], list[str]]) -> list[Found]:
    """What the change to one of pytest's configuration files added that hides tests.
    ``test_files`` lists the repository's test files, asked only when ``testpaths`` changed."""
    if item.after is None:
        return []
    before, after = _settings(item.before or "", item.path), _settings(item.after, item.path)
    if before is None or after is None or (item.before is None and item.old_path is not None):
        return lines(item)
    found: list[Found] = []
    for option in _new(_options(before), _options(after)):
        found.append((GuardClass.SKIPPED_TEST, item.path, _line_of(item.after, option),
                      f"pytest's options now include `{option}`, which {_why(option)}"))
    for name, old, new in _narrowed(before, after):
        found.append((GuardClass.SKIPPED_TEST, item.path, _line_of(item.after, name),
                      f"pytest's `{name}` changed from {old} to {new}: fewer tests are collected"))
    stranded = _outside_testpaths(item.path, before.get("testpaths", []), after.get("testpaths", []), test_files)
    if stranded:
        found.append((GuardClass.SKIPPED_TEST, item.path, _line_of(item.after, "testpaths"),
                      f"pytest's `testpaths` is now {' '.join(after['testpaths'])}: {len(stranded)} test file(s) "
                      f"are no longer collected, e.g. {stranded[0]}"))
    return found


def _outside_testpaths(path: str, old: list[str], new: list[str], test_files: Callable[[], list[str]]) -> list[str]:
    """Test files under the config's folder that the old ``testpaths`` (all when unset)
    collected and the new one does not. A new project's ``testpaths = tests`` strands nothing."""
    if not new or old == new:
        return []
    folder = path.rpartition("/")[0]
    prefix = f"{folder}/" if folder else ""
    relative = [name[len(prefix):] for name in test_files() if name.startswith(prefix)]
    return [prefix + name for name in relative if (not old or _under(name, old)) and not _under(name, new)]


def _under(name: str, entries: list[str]) -> bool:
    parts = name.split("/")
    ancestors = ["/".join(parts[:count]) for count in range(1, len(parts) + 1)]
    return any(fnmatch.fnmatchcase(ancestor, entry.strip("/").removeprefix("./"))
               for entry in entries for ancestor in ancestors)


def lines(item: ChangedFile) -> list[Found]:
    """Without both sides parsed: added lines that look like deselecting options."""
    return [(GuardClass.SKIPPED_TEST, item.path, number, f"pytest's configuration now deselects tests: "
             f"`{text.strip()}`") for number, text in item.added_lines() if _LINE_RULE.search(text)]


def _settings(text: str, path: str) -> dict[str, list[str]] | None:
    """pytest's settings in ``text`` (values as lists of words), plus ``PYTEST_ADDOPTS``
    wherever it is set; None when the file cannot be parsed."""
    settings: dict[str, list[str]] = {}
    try:
        if path.endswith("pyproject.toml"):
            tool = tomllib.loads(text).get("tool", {})
            table: Any = tool.get("pytest", {}) if isinstance(tool, dict) else {}
            raw = {**{k: v for k, v in table.items() if k != "ini_options"}, **table.get("ini_options", {})} \
                if isinstance(table, dict) else {}
        else:
            parser = configparser.ConfigParser(interpolation=None, strict=False)
            parser.read_string(text)
            section = "tool:pytest" if path.endswith("setup.cfg") else "pytest"
            raw = dict(parser[section]) if parser.has_section(section) else {}
        for key, value in raw.items():
            settings[key] = [str(word) for word in value] if isinstance(value, list) else shlex.split(str(value))
    except (tomllib.TOMLDecodeError, configparser.Error, ValueError, AttributeError):
        return None
    for match in re.finditer(r"PYTEST_ADDOPTS\s*[=:]\s*(.+)", text):
        try:
            settings.setdefault("addopts", []).extend(shlex.split(match[1].strip().strip("'\"")))
        except ValueError:
            return None
    return settings


def _options(settings: dict[str, list[str]]) -> list[str]:
    """The options in ``addopts`` (``-k expr`` as one item), and ``-o`` overrides of collection."""
    words = settings.get("addopts", [])
    options: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        name, value = word, None
        if word.startswith("--") and "=" in word:
            name, value = word.split("=", 1)
        elif word.startswith("-") and not word.startswith("--") and len(word) > 2:
            # -qk expr, -kexpr: flags, then maybe one that takes the rest or the next word
            for position, letter in enumerate(word[1:], 1):
                if letter in _SHORT_WITH_VALUE:
                    name, value = f"-{letter}", word[position + 1:] or None
                    break
            else:
                name = word
        if name in _WITH_VALUE and value is None and index + 1 < len(words):
            index += 1
            value = words[index]
        options.append(name if value is None else f"{name} {value}")
        index += 1
    return options


def _hides(option: str) -> bool:
    name, _, value = option.partition(" ")
    if name in ("-o", "--override-ini"):
        return value.split("=", 1)[0].strip() in (*_COLLECTION, "testpaths", "norecursedirs", "addopts")
    if name == "-p":
        return value in ("no:python", "no:runner", "no:main")
    return name in _RUNS_NOTHING or name in _DESELECTS or name in _FROM_CACHE or any(
        len(name) > 2 and not name.startswith("--") and f"-{letter}" in _RUNS_NOTHING for letter in name[1:])


def _new(before: list[str], after: list[str]) -> Iterator[str]:
    seen = Counter(before)
    for option in after:
        if seen[option] > 0:
            seen[option] -= 1
        elif _hides(option):
            yield option


def _why(option: str) -> str:
    name, _, value = option.partition(" ")
    if name in _FROM_CACHE:
        return "selects tests from pytest's cache, which no diff shows"
    if name in ("-o", "--override-ini"):
        return "overrides which tests pytest collects"
    if name == "-p":
        return f"disables pytest's `{value[3:]}` plugin, so no test runs"
    if name in _DESELECTS:
        return "deselects tests"
    return "stops pytest from running any test"


def _narrowed(before: dict[str, list[str]], after: dict[str, list[str]]) -> Iterator[tuple[str, str, str]]:
    for name in _COLLECTION:
        old, new = before.get(name, _DEFAULTS[name]), after.get(name, _DEFAULTS[name])
        if [word for word in old if word not in new]:
            yield name, " ".join(old), " ".join(new)
    old, new = (settings.get("norecursedirs", _DEFAULTS["norecursedirs"]) for settings in (before, after))
    # a pattern an old one already covers (`.venv` under `.*`) skips nothing new
    if any(not any(fnmatch.fnmatchcase(word, pattern) for pattern in old) for word in new):
        yield "norecursedirs", " ".join(old), " ".join(new)


def _line_of(text: str, needle: str) -> int:
    """The first line mentioning ``needle`` (its first word for an option), else 1."""
    word = needle.split(" ", 1)[0]
    for number, line in enumerate(text.splitlines(), 1):
        if word in line:
            return number
    return 1
