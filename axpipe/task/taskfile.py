"""The task file (DESIGN §14): Markdown with a YAML front matter and ``##`` sections.

The parser keeps every byte: :attr:`TaskFile.text` is the file as read, and each part
(front matter, title block, every section, every ``### Review`` block inside ``Plan`` and
``Prototype``) is a slice of it, so writing one section back leaves every other byte as it
was (:meth:`TaskFile.with_section`). Headings inside fenced code blocks are text, not
sections. A file that is not UTF-8, whose front matter is not a YAML mapping with an
``id``, or that names a section twice does not parse (:class:`TaskFileError`, saying where).

The API other modules use (delivery reads ``id``, ``title`` and ``criteria``):

- :func:`parse` (text) and :func:`read` (path) → :class:`TaskFile`;
- ``TaskFile.front`` (the front matter as a dict), ``.id``, ``.title``, ``.sections``
  (name → body text), ``.parts()`` (part name → exact text, for comparisons);
- ``TaskFile.with_section(name, body)`` and ``.with_front(**values)`` → new text;
- :func:`new_text` → the text of a new task file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from axpipe.errors import ConfigError, Problem
from axpipe.records import record

SECTIONS = ("Goal", "Plan", "Scope", "Acceptance criteria", "Prototype", "Implementation notes", "QA", "Verdict",
            "Journal")
FRONT = "front matter"
TITLE = "title"
REVIEW = "Review"  # ### Review blocks inside Plan and Prototype belong to people
REVIEWED = ("Plan", "Prototype")

_HEADING = re.compile(r"^## (?P<name>.+?)[ \t]*$")
_SUBHEADING = re.compile(r"^### (?P<name>.+?)[ \t]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)")


class TaskFileError(ConfigError):
    """A task file that does not parse; the message names the file and what is wrong."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__([Problem(path, message)])
        self.path, self.reason = path, message


@record
class TaskFile:
    """A parsed task file: the exact text and where each part of it lies."""

    text: str
    front: dict[str, Any]
    front_text: str  # the front matter with its --- lines
    title_text: str  # from the end of the front matter to the first section
    section_texts: dict[str, str]  # name -> heading line and body, exactly as in the file

    @property
    def id(self) -> str:
        return str(self.front["id"])

    @property
    def title(self) -> str:
        for line in self.title_text.splitlines():
            if line.startswith("# "):
                heading = line[2:].strip()
                prefix = f"{self.id}:"
                return heading[len(prefix):].strip() if heading.startswith(prefix) else heading
        return ""

    @property
    def sections(self) -> dict[str, str]:
        """Section name → its body (the text after the heading line)."""
        return {name: text.split("\n", 1)[1] if "\n" in text else "" for name, text in self.section_texts.items()}

    def parts(self) -> dict[str, str]:
        """Every owned part → its exact text: the front matter, the title block, each section
        (without its ``### Review`` block) and each review block (``Plan / Review``)."""
        # Trailing blank lines are layout, not content: a section appended after another
        # leaves it with or without a blank line, and neither is a write to it.
        found = {FRONT: self.front_text, TITLE: self.title_text.rstrip()}
        for name, text in self.section_texts.items():
            own, review = split_review(text) if name in REVIEWED else (text, None)
            found[name] = own.rstrip()
            if review is not None:
                found[f"{name} / {REVIEW}"] = review.rstrip()
        return found

    def with_section(self, name: str, body: str) -> str:
        """The file's text with section ``name``'s body replaced (the section appended when
        missing); every other byte stays."""
        body = body if body.endswith("\n") or not body else body + "\n"
        if name in self.section_texts:
            old = self.section_texts[name]
            heading = old.split("\n", 1)[0]
            texts = dict(self.section_texts)
            texts[name] = f"{heading}\n{body}"
            return self.front_text + self.title_text + "".join(texts.values())
        # Whatever comes before the new heading belongs to the section above it: add nothing
        # there but the line break a file without a final newline lacks.
        tail = self.title_text + "".join(self.section_texts.values())
        joint = "" if not tail or tail.endswith("\n") else "\n"
        return self.front_text + tail + joint + f"## {name}\n\n{body}"

    def with_front(self, **values: Any) -> str:
        """The text with front-matter keys changed (``bounces=0``); the rest of the front
        matter's lines stay as written where the key is a plain ``key: value`` line."""
        lines = self.front_text.split("\n")
        for key, value in values.items():
            rendered = f"{key}: {yaml.safe_dump(value, default_flow_style=True).strip().removesuffix('...').strip()}"
            for index, line in enumerate(lines):
                if re.match(rf"^{re.escape(key)}\s*:", line):
                    lines[index] = rendered
                    break
            else:
                lines.insert(len(lines) - 2, rendered)  # before the closing ---
        return "\n".join(lines) + self.title_text + "".join(self.section_texts.values())


def split_review(text: str) -> tuple[str, str | None]:
    """A section's text without its ``### Review`` block, and that block (None without one).
    The block runs to the next ``###`` heading or the end of the section."""
    lines = text.splitlines(keepends=True)
    start = next((index for index, line in enumerate(lines)
                  if (match := _SUBHEADING.match(line.rstrip("\n"))) and match["name"] == REVIEW), None)
    if start is None:
        return text, None
    end = next((index for index in range(start + 1, len(lines)) if _SUBHEADING.match(lines[index].rstrip("\n"))),
               len(lines))
    return "".join(lines[:start] + lines[end:]), "".join(lines[start:end])


def parse(text: str, where: str = "task file") -> TaskFile:
    """Parse ``text``; :class:`TaskFileError` naming ``where`` when it does not parse."""
    if not text.startswith("---\n"):
        raise TaskFileError(where, "no front matter: the file must start with a '---' line, then YAML with `id`")
    close = text.find("\n---\n", 3)
    if close < 0:
        raise TaskFileError(where, "the front matter has no closing '---' line")
    front_text = text[:close + 5]
    try:
        front = yaml.safe_load(text[4:close + 1])
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f" (line {mark.line + 2})" if mark is not None else ""
        raise TaskFileError(where, f"the front matter is not valid YAML{line}: "
                                   f"{getattr(error, 'problem', None) or error}") from error
    if not isinstance(front, dict) or not front.get("id"):
        raise TaskFileError(where, "the front matter must be a mapping with an `id`")
    bounces = front.get("bounces", 0)
    if not isinstance(bounces, int) or isinstance(bounces, bool) or bounces < 0:
        raise TaskFileError(where, f"front matter `bounces`: {bounces!r} is not a count (0 or more)")
    rest = text[close + 5:]
    title_text, sections = _sections(rest, where)
    return TaskFile(text, front, front_text, title_text, sections)


def _sections(rest: str, where: str) -> tuple[str, dict[str, str]]:
    lines = rest.splitlines(keepends=True)
    starts: list[tuple[int, str]] = []
    fenced = False
    for index, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line.rstrip("\r\n"))
        if match is None:
            continue
        name = match["name"]
        first = next((at for at, seen in starts if seen == name), None)
        if first is not None:
            raise TaskFileError(where, f"section '## {name}' appears twice (lines {first + 1} and {index + 1} "
                                       "after the front matter)")
        starts.append((index, name))
    title = "".join(lines[:starts[0][0]]) if starts else rest
    sections: dict[str, str] = {}
    for position, (index, name) in enumerate(starts):
        end = starts[position + 1][0] if position + 1 < len(starts) else len(lines)
        sections[name] = "".join(lines[index:end])
    return title, sections


def read(path: Path, shown: str | None = None) -> TaskFile:
    """Read and parse the task file at ``path`` (``shown`` names it in messages)."""
    where = shown or str(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError as error:
        raise TaskFileError(where, "the task file does not exist") from error
    except OSError as error:
        raise TaskFileError(where, f"cannot read the task file: {error.strerror}") from error
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise TaskFileError(where, f"not UTF-8 (byte {error.start})") from error
    return parse(text, where)


def new_text(task_id: str, title: str, sections: Mapping[str, str]) -> str:
    """A new task file: front matter, ``# <id>: <title>``, and every section of
    :data:`SECTIONS` in order (``sections`` fills some; the rest stay empty)."""
    front = yaml.safe_dump({"id": task_id, "status": "open", "bounces": 0}, sort_keys=False)
    text = f"---\n{front}---\n# {task_id}: {title}\n"
    for name in SECTIONS:
        body = sections.get(name, "").rstrip("\n")
        text += f"\n## {name}\n" + (f"\n{body}\n" if body else "")
    return text
