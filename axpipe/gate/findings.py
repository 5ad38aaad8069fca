"""Lint and type-check findings read from a tool's output, whatever the tool.

Understood formats, tried in this order:

- JSON as ruff (``--output-format json``), eslint (``-f json``) and flake8-json
  (``--format=json``) write it: one document, possibly after a few lines of other output;
- JSON lines as mypy writes them (``-O json``): one object per line;
- text, one finding a line: ``path:line[:col]: message`` (ruff concise, flake8, pylint
  parseable, mypy, eslint ``-f unix``, gcc/clang) and ``path(line,col): message``
  (tsc). A severity word at the start of the message (``error:``, ``warning:``,
  ``note:``) and a leading code (``F401``, ``E501``) are recognised;
- text in blocks: a ``CODE message`` header followed by `` --> path:line:col`` (ruff's
  default ``full`` format, rustc), and eslint's default ``stylish`` format (a file name,
  then indented ``line:col  severity  message  rule`` lines).

A path may hold anything but a line break (``app/(auth)/page.py``, ``C:\\src\\a.py``):
it ends at the first ``:<digits>`` that is followed by ``:`` (or, for tsc, at the first
``(<digits>,<digits>):``). Lines that are not findings (summaries, progress, blank lines)
are ignored, but a text line holding ``:<digits>:`` that reads as no finding is kept in
:attr:`Parsed.unread`: a failing tool's line that looks like a place and cannot be read
must not be dropped silently. The caller decides what a failing command without any
recognisable finding, or with unread lines, means.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from axpipe.records import record

_TEXT = re.compile(r"^(?P<path>\S.*?):(?P<line>\d+)(?::(?P<col>\d+))?:\s*(?P<rest>.+)$")
_TSC = re.compile(r"^(?P<path>\S.*?)\((?P<line>\d+),(?P<col>\d+)\):\s*(?P<rest>.+)$")
_PLACE = re.compile(r":\d+:")  # what a finding's place looks like in a line no pattern read
_SEVERITY = re.compile(r"^(?P<severity>error|warning|note|info|hint)(?:\s+(?P<tscode>TS\d+))?\s*:\s*(?P<rest>.*)$",
                       re.IGNORECASE)
_CODE = re.compile(r"^(?P<code>[A-Z]{1,4}\d{2,5}|[A-Z]\d{3,4})\b:?\s*(?P<rest>.*)$")
_MYPY_CODE = re.compile(r"^(?P<rest>.*?)\s+\[(?P<code>[a-z][a-z0-9-]*)\]$")
_SYNTAX_CODES = {"E999", "invalid-syntax", "syntax", "E0001", "syntax-error"}  # ruff/flake8, mypy, pylint
_SYNTAX_MESSAGE = re.compile(r"^(?:invalid-syntax\b|SyntaxError\b|IndentationError\b|TabError\b|Parsing error\b)")
_ARROW = re.compile(r"^\s*-->\s*(?P<path>.+?):(?P<line>\d+)(?::(?P<col>\d+))?\s*$")
_STYLISH = re.compile(r"^\s+(?P<line>\d+):(?P<col>\d+)\s+(?P<severity>error|warning)\s+(?P<rest>.+?)"
                      r"(?:\s{2,}(?P<code>[\w@/-]+))?\s*$")


@record(frozen=True)
class Finding:
    """One thing a lint or type-check tool reported about a place in a file."""

    path: str
    line: int
    column: int | None
    message: str
    code: str | None = None
    severity: str | None = None

    @property
    def counts(self) -> bool:
        """Notes and hints explain other findings; they never fail a gate on their own."""
        return (self.severity or "error").lower() not in ("note", "info", "hint")

    @property
    def syntax(self) -> bool:
        """A syntax error: the tool could not read the file past it, so the line it names is
        where reading stopped, not necessarily what broke it (a deleted body shows up on the
        next definition)."""
        return (self.code or "") in _SYNTAX_CODES or _SYNTAX_MESSAGE.match(self.message) is not None

    def key(self) -> tuple[str, str, str]:
        """What identifies a finding across two versions of a file, whose line numbers shift."""
        return self.path, self.code or "", self.message

    def where(self) -> str:
        return f"{self.path}:{self.line}" + (f":{self.column}" if self.column is not None else "")

    def describe(self) -> str:
        code = f"{self.code} " if self.code else ""
        return f"{self.where()}: {code}{self.message}"


@record
class Parsed:
    """The findings read from a tool's output, and its text lines that look like a place
    (``:<digits>:``) but read as no finding."""

    found: list[Finding]
    unread: list[str]


def parse(output: str, root: Path) -> list[Finding]:
    """Every finding in ``output``, paths made relative to ``root`` (where the tool ran)."""
    return read(output, root).found


def read(output: str, root: Path) -> Parsed:
    """:func:`parse`, keeping the lines that look like a place and read as no finding."""
    from_json = _parse_json(output)
    if from_json:
        return Parsed([_relative(finding, root) for finding in from_json], [])
    found, unread = _parse_text(output)
    return Parsed([_relative(finding, root) for finding in found], unread)


def _relative(finding: Finding, root: Path) -> Finding:
    path = finding.path.replace("\\", "/")
    if os.path.isabs(path):
        try:
            path = os.path.relpath(os.path.realpath(path), os.path.realpath(root))
        except ValueError:
            pass
    while path.startswith("./"):
        path = path[2:]
    return Finding(path, finding.line, finding.column, finding.message, finding.code, finding.severity)


def _place(line: str) -> re.Match[str] | None:
    """The ``path:line[:col]:`` or ``path(line,col):`` reading of ``line`` whose path is the
    shorter: a tsc message may quote ``a.py:3:``, a path may hold ``(1,2):``."""
    matches = [match for match in (_TEXT.match(line), _TSC.match(line)) if match is not None]
    return min(matches, key=lambda match: len(match["path"]), default=None)


def _parse_text(output: str) -> tuple[list[Finding], list[str]]:
    found, unread = [], []
    header = ""  # the last line that starts a block (a `CODE message` header, an eslint file name)
    for raw in output.splitlines():
        line = raw.rstrip()
        match = _place(line)
        if match is not None:
            found.append(_finding(match["path"].strip(), match["line"], match["col"], match["rest"]))
            continue
        arrow = _ARROW.match(line)
        if arrow is not None and header:
            found.append(_finding(arrow["path"].strip(), arrow["line"], arrow["col"], header))
            continue
        stylish = _STYLISH.match(line)
        if stylish is not None and header:
            found.append(Finding(header, int(stylish["line"]), int(stylish["col"]), stylish["rest"].strip(),
                                 stylish["code"], stylish["severity"].lower()))
            continue
        if _PLACE.search(line):
            unread.append(line.strip())
        if line and not line[0].isspace():
            header = line.strip()
    return found, unread


def _finding(path: str, line: str, column: str | None, text: str) -> Finding:
    rest, severity, code = text.strip(), None, None
    severity_match = _SEVERITY.match(rest)
    if severity_match:
        severity, code, rest = severity_match["severity"].lower(), severity_match["tscode"], severity_match["rest"]
    code_match = _CODE.match(rest) if code is None else None
    if code_match:
        code, rest = code_match["code"], code_match["rest"]
    mypy_code = _MYPY_CODE.match(rest) if code is None else None
    if mypy_code:
        code, rest = mypy_code["code"], mypy_code["rest"]
    rest = rest.removeprefix("[*]").strip()
    return Finding(path, int(line), int(column) if column else None, rest, code, severity)


def _json_document(output: str) -> Any:
    """The JSON document in ``output``: all of it, or from the first line that opens one."""
    text = output.strip()
    if not text:
        return None
    starts = [0] + [index + 1 for index, char in enumerate(text) if char == "\n"]
    for start in starts:
        if text[start:start + 1] in ("[", "{"):
            try:
                return json.loads(text[start:])
            except ValueError:
                continue
    return None


def _parse_json(output: str) -> list[Finding] | None:
    document = _json_document(output)
    if isinstance(document, list) and all(isinstance(item, dict) for item in document):
        if all("filePath" in item for item in document):
            return _eslint(document)
        if all("filename" in item and "location" in item for item in document):
            return _ruff(document)
        if not document:
            return []
    if isinstance(document, dict) and document and all(isinstance(value, list) for value in document.values()):
        return _flake8(document)
    return _mypy_lines(output)


def _ruff(items: list[dict[str, Any]]) -> list[Finding]:
    return [Finding(str(item["filename"]), int((item.get("location") or {}).get("row") or 0),
                    (item.get("location") or {}).get("column"), str(item.get("message", "")),
                    item.get("code"), "error") for item in items]


def _eslint(items: list[dict[str, Any]]) -> list[Finding]:
    found = []
    for item in items:
        for message in item.get("messages") or []:
            severity = "error" if message.get("severity") == 2 else "warning"
            found.append(Finding(str(item["filePath"]), int(message.get("line") or 0), message.get("column"),
                                 str(message.get("message", "")), message.get("ruleId"), severity))
    return found


def _flake8(document: dict[str, list[Any]]) -> list[Finding]:
    return [Finding(path, int(item.get("line_number") or 0), item.get("column_number"), str(item.get("text", "")),
                    item.get("code"), "error")
            for path, items in document.items() for item in items if isinstance(item, dict)]


def _mypy_lines(output: str) -> list[Finding] | None:
    found = []
    for line in output.splitlines():
        if not line.startswith("{"):
            continue
        try:
            item = json.loads(line)
        except ValueError:
            return None
        if not isinstance(item, dict) or "file" not in item or "line" not in item:
            return None
        found.append(Finding(str(item["file"]), int(item["line"]), item.get("column"), str(item.get("message", "")),
                             item.get("code"), item.get("severity")))
    return found or None
