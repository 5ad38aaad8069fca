"""Silencing the linter a success condition runs: its configuration loosened, or a
file-level suppression added to a source file.

Each linter's settings are read from both versions of a changed configuration file and
compared (:mod:`.condition_rules` for ruff and flake8); only what makes the linter check
less is reported. ``judge`` returns ``(line, evidence)`` pairs for one changed file.
"""

from __future__ import annotations

import configparser
import json
import posixpath
import re
import tomllib
from collections.abc import Callable
from typing import Any

from axpipe.interfaces import ChangedFile

from . import condition_eslint as eslint
from .condition_rules import RuleView, codes_in, loosened

RUFF_FILES = ("ruff.toml", ".ruff.toml")
RUFF_DEFAULT_SELECT = ["E4", "E7", "E9", "F"]
RUFF_DEFAULT_INCLUDE = ["*.py", "*.pyi", "*.ipynb", "**/pyproject.toml"]
FLAKE8_DEFAULT_IGNORE = ["E121", "E123", "E126", "E226", "E24", "E704", "W503", "W504"]
FLAKE8_DEFAULT_EXCLUDE = [".svn", "CVS", ".bzr", ".hg", ".git", "__pycache__", ".tox", ".nox", ".eggs", "*.egg"]
MYPY_FILES = ("mypy.ini", ".mypy.ini", "setup.cfg", "pyproject.toml")
_STRICT = ("disallow_", "warn_", "strict", "check_", "no_", "extra_checks", "local_partial_types")
_LOOSE = ("allow_", "implicit_", "ignore_")
_NOQA_FILE = re.compile(r"#\s*(ruff|flake8)\s*:\s*noqa\b", re.IGNORECASE)
_ISORT_SKIP = re.compile(r"#\s*isort\s*:\s*skip_file\b")
_MYPY_INLINE = re.compile(r"#\s*mypy\s*:\s*(?P<settings>.*)")
_MYPY_LOOSE = re.compile(r"ignore[-_]errors|disable[-_]error[-_]code|\ballow[-_]|\bno[-_]|follow[-_]imports\s*=\s*"
                         r"['\"]?(skip|silent)")
_TYPE_IGNORE = re.compile(r"^#\s*type:\s*ignore\b")
Found = list[tuple[int, str]]


def judge(item: ChangedFile, linters: dict[str, set[str]], codes: set[str], notes: list[str],
          parent_ruff: Callable[[str], str | None]) -> Found:
    """Every way ``item`` silences one of ``linters``."""
    name = posixpath.basename(item.path)
    found: Found = []
    explicit = {linter for linter, configs in linters.items() if item.path in configs}
    if "ruff" in linters and (name in RUFF_FILES or name == "pyproject.toml" or "ruff" in explicit):
        found += _ruff(item, codes, notes, parent_ruff)
    if "flake8" in linters and (name in (".flake8", "setup.cfg", "tox.ini") or "flake8" in explicit):
        found += _flake8(item, codes)
    if "mypy" in linters and (name in MYPY_FILES or "mypy" in explicit):
        found += _mypy(item, notes)
    if "eslint" in linters:
        found += eslint.judge(item, "eslint" in explicit)
    if item.path.endswith((".py", ".pyi")):
        found += _python_directives(item, linters)
    return found


def _toml(text: str | None, item: ChangedFile, notes: list[str], side: str) -> dict[str, Any] | None:
    try:
        return tomllib.loads(text or "")
    except tomllib.TOMLDecodeError as error:
        if side == "new":
            notes.append(f"{item.path}: the new version is not valid TOML ({error}); the condition guard did not "
                         "judge its linter settings (the linter refuses it too)")
            return None
        return {}


def _ruff_table(data: dict[str, Any], item: ChangedFile, pyproject: bool) -> dict[str, Any] | None:
    if pyproject or posixpath.basename(item.path) == "pyproject.toml":
        tool = data.get("tool")
        table = tool.get("ruff") if isinstance(tool, dict) else None
        return table if isinstance(table, dict) else None
    return data


def _ruff(item: ChangedFile, codes: set[str], notes: list[str], parent_ruff: Callable[[str], str | None]) -> Found:
    old_data = _toml(item.before, item, notes, "old") if item.old_path else {}
    new_data = _toml(item.after, item, notes, "new") if item.new_path else {}
    if old_data is None or new_data is None:
        return []
    old = _ruff_table(old_data, item, False) if item.old_path else None
    new = _ruff_table(new_data, item, False) if item.new_path else None
    if new is None and old is None:
        return []
    text = item.after or ""
    section = "tool.ruff" if posixpath.basename(item.path) == "pyproject.toml" else ""
    if old is None and new is not None and "extend" not in new:
        parent = parent_ruff(posixpath.dirname(item.path))
        if parent is not None:
            return [(_line_of(text, section, "", ""), f"a new ruff configuration here replaces {parent} for the files "
                     "under this folder (ruff uses the closest one): the rules it set no longer apply there")]
    found = loosened(_ruff_view(old or {}), _ruff_view(new or {}), codes, "ruff", {"line-length": 88})
    return [(_line_of(text, section, key, value), evidence) for key, value, evidence in found]


def _ruff_view(table: dict[str, Any]) -> RuleView:
    lint = table.get("lint") if isinstance(table.get("lint"), dict) else {}
    form = table.get("format") if isinstance(table.get("format"), dict) else {}
    assert isinstance(lint, dict) and isinstance(form, dict)
    scopes = (("", table), ("lint.", lint))
    select = codes_in(lint.get("select", table.get("select", RUFF_DEFAULT_SELECT)))
    select += [code for prefix, scope in scopes for code in codes_in(scope.get("extend-select", []))]
    view = RuleView(select=select)
    for prefix, scope in scopes:
        for key in ("ignore", "extend-ignore"):
            view.ignore.update((code, prefix + key) for code in codes_in(scope.get(key, [])))
        for key in ("per-file-ignores", "extend-per-file-ignores"):
            mapping = scope.get(key)
            for pattern, listed in (mapping.items() if isinstance(mapping, dict) else []):
                view.per_file.update(((str(pattern), code), prefix + key) for code in codes_in(listed))
    for prefix, scope, key in (("", table, "exclude"), ("", table, "extend-exclude"), ("lint.", lint, "exclude"),
                               ("format.", form, "exclude")):
        values = scope.get(key, [])
        view.excludes.update((str(value), prefix + key) for value in (values if isinstance(values, list) else []))
    include = table.get("include", RUFF_DEFAULT_INCLUDE)
    extra = table.get("extend-include", [])
    view.include = [str(value) for value in [*(include if isinstance(include, list) else []),
                                             *(extra if isinstance(extra, list) else [])]]
    view.numbers = dict(_limits(table, ""))
    extend = table.get("extend")
    view.extend = extend if isinstance(extend, str) else None
    return view


def _limits(table: dict[str, Any], prefix: str) -> list[tuple[str, float]]:
    found: list[tuple[str, float]] = []
    for key, value in table.items():
        if isinstance(value, dict):
            found += _limits(value, f"{prefix}{key}.")
        elif (key == "line-length" or key.startswith("max-")) and isinstance(value, (int, float)) \
                and not isinstance(value, bool):
            found.append((prefix + key, float(value)))
    return found


def _ini(text: str | None) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text or "")
    except configparser.Error:
        pass
    return parser


def _flake8(item: ChangedFile, codes: set[str]) -> Found:
    sides = [_ini(item.before if item.old_path else ""), _ini(item.after if item.new_path else "")]
    if not any(side.has_section("flake8") for side in sides):
        return []
    views = [_flake8_view(dict(side.items("flake8")) if side.has_section("flake8") else {}) for side in sides]
    found = loosened(views[0], views[1], codes, "flake8", {"max-line-length": 79})
    return [(_line_of(item.after or "", "flake8", key, value), evidence) for key, value, evidence in found]


def _flake8_view(settings: dict[str, str]) -> RuleView:
    values = {key.replace("_", "-"): value for key, value in settings.items()}

    def listed(key: str) -> list[str]:
        return [part for part in re.split(r"[\s,]+", values.get(key, "")) if part]

    view = RuleView(select=codes_in(values.get("select", "E F W C90")) + codes_in(values.get("extend-select", "")))
    ignore = codes_in(values["ignore"]) if "ignore" in values else FLAKE8_DEFAULT_IGNORE
    view.ignore = {code: "ignore" for code in ignore} | {code: "extend-ignore"
                                                          for code in codes_in(values.get("extend-ignore", ""))}
    excludes = listed("exclude") if "exclude" in values else FLAKE8_DEFAULT_EXCLUDE
    view.excludes = {pattern: "exclude" for pattern in excludes} | {pattern: "extend-exclude"
                                                                    for pattern in listed("extend-exclude")}
    for line in re.split(r"\n|(?<=\d)\s+(?=\S+:)", values.get("per-file-ignores", "")):
        if ":" in line:
            pattern, listed_codes = line.split(":", 1)
            view.per_file.update(((pattern.strip(), code), "per-file-ignores") for code in codes_in(listed_codes))
    view.include = listed("filename") or ["*.py"]
    for key in ("max-line-length", "max-doc-length", "max-complexity"):
        if re.fullmatch(r"-?\d+", values.get(key, "").strip()):
            view.numbers[key] = float(values[key])
    return view


def _mypy(item: ChangedFile, notes: list[str]) -> Found:
    scopes = [_mypy_scopes(item.path, text if path else "", item, notes)
              for text, path in ((item.before, item.old_path), (item.after, item.new_path))]
    if scopes[1] is None:
        return []
    old, new = scopes[0] or {}, scopes[1]
    section = "tool.mypy" if item.path.endswith(".toml") else "mypy"
    found: list[tuple[str, str, str]] = []
    for scope, settings in new.items():
        before = old.get(scope, {})
        where = f" for {scope}" if scope else ""
        for key, value in settings.items():
            was = before.get(key)
            if value is True and was is not True and key.startswith(_LOOSE):
                found.append((key, "", f"`{key} = true`{where}: mypy checks less"))
            elif key == "follow_imports" and value in ("skip", "silent") and was != value:
                found.append((key, "", f"`follow_imports = {value}`{where}: mypy stops reporting errors in imports"))
            elif key in ("exclude", "disable_error_code"):
                for entry in _entries(value):
                    if entry not in _entries(was):
                        found.append((key, entry, f"`{key}` adds {entry!r}{where}: mypy checks less"))
        for key, was in before.items():
            value = settings.get(key)
            if was is True and value is not True and key.startswith(_STRICT):
                found.append((key, "", f"`{key}` no longer true{where}: mypy checks less"))
            elif key in ("enable_error_code", "files"):
                for entry in _entries(was):
                    if entry not in _entries(value):
                        found.append((key, "", f"`{key}` loses {entry!r}{where}: mypy checks less"))
    return [(_line_of(item.after or "", section, key, value), evidence) for key, value, evidence in found]


def _entries(value: object) -> list[str]:
    if isinstance(value, list):
        return [str(entry) for entry in value]
    return [part.strip() for part in re.split(r"[,\n]", value) if part.strip()] if isinstance(value, str) else []


def _mypy_scopes(path: str, text: str | None, item: ChangedFile, notes: list[str]) -> dict[str, dict[str, Any]] | None:
    """Settings per scope: ``""`` global, else the module pattern of an override section."""
    if path.endswith(".toml"):
        data = _toml(text, item, notes, "new" if text is item.after else "old")
        if data is None:
            return None
        tool = data.get("tool", {})
        table = tool.get("mypy", {}) if isinstance(tool, dict) else {}
        table = table if isinstance(table, dict) else {}
        scopes = {"": {key.replace("-", "_"): value for key, value in table.items() if key != "overrides"}}
        for override in table.get("overrides", []) if isinstance(table.get("overrides"), list) else []:
            if isinstance(override, dict):
                modules = override.get("module", [])
                for module in [modules] if isinstance(modules, str) else modules:
                    scopes.setdefault(str(module), {}).update((key.replace("-", "_"), value)
                                                              for key, value in override.items() if key != "module")
        return scopes
    parser = _ini(text)
    scopes = {}
    for section in parser.sections():
        if section == "mypy" or section.startswith("mypy-"):
            settings = {key.replace("-", "_"): _ini_value(value) for key, value in parser.items(section)}
            for module in ([""] if section == "mypy" else section[5:].split(",")):
                scopes.setdefault(module.strip(), {}).update(settings)
    return scopes


def _ini_value(value: str) -> object:
    lowered = value.strip().lower()
    return {"true": True, "yes": True, "on": True, "1": True, "false": False, "no": False, "off": False,
            "0": False}.get(lowered, value.strip())


def _python_directives(item: ChangedFile, linters: dict[str, set[str]]) -> Found:
    found: Found = []
    lines = (item.after or "").splitlines()
    first_code = next((number for number, text in enumerate(lines, 1) if text.strip()
                       and not text.lstrip().startswith("#")), len(lines) + 1)
    for number, text in item.added_lines():
        noqa = _NOQA_FILE.search(text)
        if noqa and ("ruff" in linters or (noqa[1].lower() == "flake8" and "flake8" in linters)):
            found.append((number, f"`{noqa[0].strip()}` exempts the whole file from "
                                  f"{'ruff' if 'ruff' in linters else 'flake8'}"))
        if "ruff" in linters and _ISORT_SKIP.search(text):
            found.append((number, "`# isort: skip_file` exempts the whole file from ruff's import rules"))
        if "mypy" in linters:
            inline = _MYPY_INLINE.search(text)
            if inline and _MYPY_LOOSE.search(inline["settings"]):
                found.append((number, f"`{inline[0].strip()}` makes mypy check this file less"))
            elif number < first_code and _TYPE_IGNORE.match(text.strip()):
                found.append((number, "`# type: ignore` before any code: mypy ignores the whole file"))
    return found


def _line_of(text: str, section: str, setting: str, value: str) -> int:
    """The line where ``setting`` (``lint.ignore``: its last part is the key) takes ``value``
    inside ``section`` (a TOML table or INI section prefix, ``""`` anywhere): the value's line
    within the setting, else the setting's line, else the section's first line, else 1."""
    key = re.compile(rf"^\s*[\"']?{re.escape(setting.rsplit('.', 1)[-1])}[\"']?\s*[=:]") if setting else None
    assignment = re.compile(r"^\s*[\"']?[\w.-]+[\"']?\s*[=:]")
    current, in_setting, key_line, first = "", False, 0, 0
    for number, line in enumerate(text.splitlines(), 1):
        header = re.match(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*$", line)
        if header:
            current = header[1].strip().strip('"')
            in_setting = bool(setting) and current.endswith("." + setting.rsplit(".", 1)[-1])  # a table of its own
            key_line = key_line or (number if in_setting else 0)
            first = first or (number if section and current.startswith(section) else 0)
            continue
        if section and not current.startswith(section):
            continue
        if key is not None and key.match(line):
            in_setting, key_line = True, key_line or number
        elif assignment.match(line) and not (value and line.lstrip().startswith(("'", '"'))):
            in_setting = False
        if in_setting and value and (value in line):
            return number
    return key_line or first or 1


def parent_config_finder(read: Callable[[str], str | None]) -> Callable[[str], str | None]:
    """For a folder, the nearest ruff configuration above it (as it was), or None."""
    def find(folder: str) -> str | None:
        while folder:
            folder = posixpath.dirname(folder)
            for name in (*RUFF_FILES, "pyproject.toml"):
                path = posixpath.join(folder, name) if folder else name
                text = read(path)
                if text is not None and (name != "pyproject.toml" or re.search(r"(?m)^\s*\[tool\.ruff", text)):
                    return path
        return None

    return find


def json_object(text: str | None) -> dict[str, Any] | None:
    try:
        data = json.loads(text) if text else None
    except ValueError:
        return None
    return data if isinstance(data, dict) else None
