"""A one-line suppression added exactly where the failing run complains.

``import os  # noqa: F401`` on the line ruff reported, ``# type: ignore`` on the line mypy
reported, ``// eslint-disable-next-line`` or ``// @ts-ignore`` above the line eslint or tsc
reported: the condition holds because the finding is hidden, not fixed. A suppression is
judged only against the locations the failing run printed (``GuardContext.failure_output``),
so one added elsewhere (a re-export the linter did not complain about) passes. When the
suppression names rules (``# noqa: E501``), it counts only if one of them is what was
reported there.

Reported locations are read from the usual diagnostic shapes: ``path:line:col: ...`` (ruff,
flake8, pylint, eslint's unix format, pyright), ``  --> path:line:col`` (ruff's full
format), ``path:line: error|warning|note: ...`` (mypy), ``path(line,col): error`` (tsc) and
eslint's stylish blocks. A test's traceback (``calc.py:12: AssertionError``) is not one.
Lines are mapped from the old file (where the run reported them) to the new one through the
change's hunks.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from axpipe.interfaces import ChangedFile, Hunk

_PATH = r"(?P<path>[^\s:()'\"<>|]+\.[A-Za-z0-9]+)"
_WITH_COLUMN = re.compile(rf"^\s*(?:-->\s*)?{_PATH}:(?P<line>\d+):\d+(?:[:\s]|$)")
_MYPY = re.compile(rf"^\s*{_PATH}:(?P<line>\d+):\s*(?:error|warning|note)\b")
_TSC = re.compile(rf"^\s*{_PATH}\((?P<line>\d+),\d+\):\s*(?:error|warning)\b")
_STYLISH_FILE = re.compile(rf"^{_PATH}$")
_STYLISH_ROW = re.compile(r"^\s+(?P<line>\d+):\d+\s+(?:error|warning)\s")

# (pattern, scope): "line" the line it is on, "next" the line after it, "file" every line
_SUPPRESSIONS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"#\s*noqa\b(?:\s*:\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?"), "line"),
    (re.compile(r"#\s*type:\s*ignore\b(?:\[(?P<codes>[^\]]*)\])?"), "line"),
    (re.compile(r"#\s*pyright:\s*ignore\b(?:\[(?P<codes>[^\]]*)\])?"), "line"),
    (re.compile(r"#\s*pylint:\s*disable-next\s*=\s*(?P<codes>[\w\-, ]+)"), "next"),
    (re.compile(r"#\s*pylint:\s*disable\s*=\s*(?P<codes>[\w\-, ]+)"), "line"),
    (re.compile(r"#\s*nosec\b(?:\s+(?P<codes>B\d+(?:[\s,]+B\d+)*))?"), "line"),
    (re.compile(r"(?://|/\*)\s*eslint-disable-line\b(?P<codes>[^*\n]*)"), "line"),
    (re.compile(r"(?://|/\*)\s*eslint-disable-next-line\b(?P<codes>[^*\n]*)"), "next"),
    (re.compile(r"(?://|/\*)\s*@ts-(?:ignore|expect-error)\b"), "next"),
    (re.compile(r"(?://|/\*)\s*@ts-nocheck\b"), "file"),
]
_TRAILING_COMMENT = re.compile(r"\s*(?:#|//|/\*).*$")
Found = list[tuple[int, str]]


@dataclass
class Report:
    """Where the failing run complained: path as printed → line → the diagnostic's text."""

    lines: dict[str, dict[int, str]]

    def for_file(self, path: str) -> dict[int, str]:
        """The reported lines of ``path`` (repository-relative): a printed path matches when
        one is the other's trailing part (absolute paths, or a run from a sub-folder)."""
        found: dict[int, str] = {}
        for printed, lines in self.lines.items():
            shown = posixpath.normpath(printed).lstrip("./") if not printed.startswith("/") else printed
            if shown == path or shown.endswith("/" + path) or path.endswith("/" + shown):
                for number, text in lines.items():
                    found[number] = f"{found[number]}\n{text}" if number in found else text
        return found


def reported(output: str) -> Report:
    """Every location the failing run's output names as a diagnostic."""
    lines: dict[str, dict[int, str]] = {}
    stylish: str | None = None
    previous = ""
    for raw in output.splitlines():
        text = raw.rstrip()
        match = _WITH_COLUMN.match(text) or _MYPY.match(text) or _TSC.match(text)
        if match:
            shown = f"{previous.strip()} {text.strip()}" if text.lstrip().startswith("-->") else text.strip()
            lines.setdefault(match["path"], {})[int(match["line"])] = shown
        elif stylish is not None and (row := _STYLISH_ROW.match(text)):
            lines.setdefault(stylish, {})[int(row["line"])] = text.strip()
        elif _STYLISH_FILE.match(text):
            stylish = text
        elif not text:
            stylish = None
        if text.strip():
            previous = text
    return Report(lines)


def judge(item: ChangedFile, report: Report) -> Found:
    """Each suppression ``item`` adds on (or above) a line the failing run reported."""
    complaints = report.for_file(item.old_path or item.path) if item.old_path else {}
    if not complaints:
        return []
    new_lines = (item.after or "").splitlines()
    found: Found = []
    for number, text in item.added_lines():
        for pattern, scope in _SUPPRESSIONS:
            match = pattern.search(text)
            if match is None:
                continue
            codes = _codes(match)
            if scope == "file":
                hit = [old for old in complaints if _named(codes, complaints[old])]
            else:
                target = number if scope == "line" else number + 1
                bare = _without(text, match) if scope == "line" else None
                old = _old_line(item, target, bare, new_lines)
                hit = [old] if old is not None and old in complaints and _named(codes, complaints[old]) else []
            if hit:
                where = {"line": "on this line", "next": "on the next line", "file": "in this file"}[scope]
                found.append((number, f"`{match[0].strip()}` hides what the failing run reports {where} "
                                      f"(`{_short(complaints[hit[0]])}`) instead of fixing it"))
            break
    return found


def _codes(match: re.Match[str]) -> list[str]:
    codes = match.groupdict().get("codes") or ""
    codes = re.sub(r"--.*$", "", codes)  # eslint: `-- a reason` after the rules
    return [code for code in re.split(r"[\s,]+", codes) if code]


def _named(codes: list[str], complaint: str) -> bool:
    """True when the suppression covers the complaint: it names no rule, or one reported."""
    return not codes or any(re.search(rf"(?<![\w-]){re.escape(code)}(?![\w-])", complaint, re.IGNORECASE)
                            for code in codes)


def _old_line(item: ChangedFile, new: int, bare: str | None, new_lines: list[str]) -> int | None:
    """The old file's number of new line ``new``: a context line, a line outside every hunk,
    or (``bare``: the added line without its suppression) the removed line it equals."""
    shift = 0
    for hunk in sorted(item.hunks, key=lambda hunk: hunk.new_start):
        # a side with no lines names the line before the change (`@@ -4,0 +5,2 @@`)
        if new < hunk.new_start + (0 if hunk.new_count else 1):
            break
        if new < hunk.new_start + hunk.new_count:
            return _in_hunk(hunk, new, bare if bare is not None else _at(new_lines, new))
        shift = (hunk.old_start + (hunk.old_count or 1)) - (hunk.new_start + (hunk.new_count or 1))
    return new + shift


def _in_hunk(hunk: Hunk, new: int, text: str | None) -> int | None:
    old_number, new_number = hunk.old_start, hunk.new_start
    removed: list[tuple[int, str]] = []
    for line in hunk.lines:
        kind, body = line[:1], line[1:]
        if kind == "-":
            removed.append((old_number, body))
            old_number += 1
            continue
        if new_number == new:
            if kind != "+":
                return old_number
            return next((number for number, old in removed if text is not None and _same(old, text)), None)
        if kind != "+":
            old_number += 1
        new_number += 1
    return None


def _without(text: str, match: re.Match[str]) -> str:
    """The line without its suppression: a ``#``/``//`` comment runs to the end of the line."""
    rest = text[match.start():]
    return text[:match.start()] + (rest.split("*/", 1)[1] if rest.startswith("/*") and "*/" in rest else "")


def _same(old: str, new: str) -> bool:
    return old.strip() == new.strip() or _TRAILING_COMMENT.sub("", old).strip() == _TRAILING_COMMENT.sub(
        "", new).strip() != ""


def _at(lines: list[str], number: int) -> str | None:
    return lines[number - 1] if 0 < number <= len(lines) else None


def _short(complaint: str) -> str:
    first = complaint.splitlines()[0]
    return first if len(first) <= 120 else first[:117] + "..."
