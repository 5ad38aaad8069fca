"""Silencing eslint: ignore files and patterns, rules turned down, disabling comments.

JSON and YAML configurations (``.eslintrc.json``, ``.eslintrc``, ``.eslintrc.y*ml``,
package.json's ``eslintConfig``) are compared setting by setting, ``overrides`` per file
pattern and rule. JavaScript ones
(``eslint.config.*``, ``.eslintrc.js``) cannot be evaluated here: their added lines are
read instead, and an ``ignores``/``ignorePatterns`` entry or a rule set to ``off``/``warn``
among them is reported.
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import Any

from axpipe.interfaces import ChangedFile

SOURCES = (".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".vue", ".svelte")
_LEVELS = {"off": 0, "warn": 1, "error": 2}
_DISABLE = re.compile(r"(?:/\*|//)\s*eslint-disable(?!-line|-next-line)\b[^*\n]*")
_INLINE_OFF = re.compile(r"/\*\s*eslint\s+[^*]*?[\w/@-]+\s*:\s*(?:[\"']?(?:off|warn)[\"']?|[01])\b")
_IGNORE_KEY = re.compile(r"\b(ignores|ignorePatterns)\b")
_RULE_DOWN = re.compile(r"[\"']?(?P<rule>[\w@/-]+)[\"']?\s*:\s*(?:\[\s*)?(?P<level>[\"'](?:off|warn)[\"']|[01]\b)")
Found = list[tuple[int, str]]


def judge(item: ChangedFile, explicit: bool) -> Found:
    name = posixpath.basename(item.path)
    if name == ".eslintignore" or (explicit and "ignore" in name):
        return [(number, f"`.eslintignore` adds {text.strip()!r}: eslint stops checking what it matches")
                for number, text in item.added_lines() if text.strip() and not text.lstrip().startswith(("#", "!"))]
    if name == "package.json" or name in (".eslintrc", ".eslintrc.json", ".eslintrc.yaml", ".eslintrc.yml") or (
            explicit and name.endswith((".json", ".yaml", ".yml"))):
        return _data_config(item, name)
    if name.startswith((".eslintrc.", "eslint.config.")) or (explicit and name.endswith(SOURCES)):
        return _script_config(item)
    if name.endswith(SOURCES):
        return [(number, f"`{match[0].strip()}` turns eslint off for the rest of the file")
                for number, text in item.added_lines() for match in [_DISABLE.search(text) or
                                                                    _INLINE_OFF.search(text)] if match]
    return []


def _load(text: str | None, name: str) -> dict[str, Any] | None:
    if not text:
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        if not name.endswith((".yaml", ".yml", ".eslintrc")):
            return None
        import yaml

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError:
            return None
    if name == "package.json":
        data = data.get("eslintConfig", {}) if isinstance(data, dict) else {}
    return data if isinstance(data, dict) else None


def _data_config(item: ChangedFile, name: str) -> Found:
    old = _load(item.before if item.old_path else "", name) or {}
    new = _load(item.after if item.new_path else "", name)
    if new is None:
        return []
    text = item.after or ""
    found: Found = []
    before = old.get("ignorePatterns", [])
    for pattern in new.get("ignorePatterns", []) if isinstance(new.get("ignorePatterns"), list) else []:
        if pattern not in (before if isinstance(before, list) else []):
            found.append((_line(text, str(pattern)), f"`ignorePatterns` adds {pattern!r}: eslint stops checking "
                                                     "what it matches"))
    old_rules = old.get("rules") if isinstance(old.get("rules"), dict) else {}
    new_rules = new.get("rules") if isinstance(new.get("rules"), dict) else {}
    assert isinstance(old_rules, dict) and isinstance(new_rules, dict)
    for rule, setting in old_rules.items():
        was, now = _level(setting), _level(new_rules.get(rule, 0))
        if now < was:
            words = {0: "off", 1: "a warning"}
            found.append((_line(text, rule), f"rule {rule} turned from {'an error' if was == 2 else 'a warning'} "
                                             f"to {words[now]}: eslint no longer fails on it"))
    return found + _overrides(old, new, old_rules, text)


def _overrides(old: dict[str, Any], new: dict[str, Any], top: dict[str, Any], text: str) -> Found:
    """An ``overrides`` entry that turns a rule down for some files: compared, per file
    pattern and rule, with what applied to that pattern before (the last old override
    naming it, else the top-level rules)."""
    before: dict[tuple[str, str], int] = {}
    for override in _entries(old):
        for pattern in _files(override):
            before.update(((pattern, rule), _level(setting)) for rule, setting in _rules(override).items())
    found: Found = []
    for override in _entries(new):
        for pattern in _files(override):
            for rule, setting in _rules(override).items():
                was, now = before.get((pattern, rule), _level(top.get(rule, 0))), _level(setting)
                if now < was:
                    words = {0: "off", 1: "a warning"}
                    found.append((_line(text, rule, after=_line(text, pattern)),
                                  f"`overrides` turns rule {rule} from {'an error' if was == 2 else 'a warning'} to "
                                  f"{words[now]} for {pattern!r}: eslint no longer fails on it there"))
    return found


def _entries(config: dict[str, Any]) -> list[dict[str, Any]]:
    overrides = config.get("overrides")
    return [entry for entry in overrides if isinstance(entry, dict)] if isinstance(overrides, list) else []


def _files(override: dict[str, Any]) -> list[str]:
    files = override.get("files", [])
    return [files] if isinstance(files, str) else [str(item) for item in files] if isinstance(files, list) else []


def _rules(override: dict[str, Any]) -> dict[str, Any]:
    rules = override.get("rules")
    return rules if isinstance(rules, dict) else {}


def _level(setting: object) -> int:
    if isinstance(setting, list):
        setting = setting[0] if setting else 0
    if isinstance(setting, str):
        return _LEVELS.get(setting.lower(), 0)
    return setting if isinstance(setting, int) and not isinstance(setting, bool) and 0 <= setting <= 2 else 0


def _script_config(item: ChangedFile) -> Found:
    added = dict(item.added_lines())
    found: Found = []
    inside, depth = False, 0
    for number, text in enumerate((item.after or "").splitlines(), 1):
        key = _IGNORE_KEY.search(text)
        if key and not inside:
            inside, depth = True, 0
        if inside:
            depth += text.count("[") - text.count("]")
            if number in added and text.strip() not in ("", "],", "]", "["):
                found.append((number, f"an eslint ignore pattern is added (`{text.strip()}`): eslint stops checking "
                                      "what it matches"))
            if depth <= 0 and ("]" in text or not key):
                inside = False
            continue
        down = _RULE_DOWN.search(text)
        if number in added and down:
            found.append((number, f"rule {down['rule']} set to {down['level']}: eslint no longer fails on it"))
    return found


def _line(text: str, needle: str, after: int = 1) -> int:
    """The first line from ``after`` on that quotes ``needle`` (JSON or YAML), else ``after``."""
    for number, line in enumerate(text.splitlines(), 1):
        if number >= after and (f'"{needle}"' in line or f"'{needle}'" in line or  # JSON, quoted YAML
                                re.match(rf"^\s*-?\s*{re.escape(needle)}\s*:", line) or  # a YAML key
                                re.search(rf"[\s\[,]{re.escape(needle)}\s*(?:[\],]|$)", line)):  # a YAML list item
            return number
    return after
