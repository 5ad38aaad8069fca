"""Named scripts a runner looks up in a table: package.json ``scripts``, ``[tool.pdm.scripts]``
and hatch's ``[tool.hatch.envs.<env>.scripts]`` (or ``[envs.<env>.scripts]`` of hatch.toml).

Only the entries that run are the condition: the rest of the file (dependencies, other
scripts, other tables) stays free to change. A table is named by where it lives: ``scripts``
in package.json, ``tool.pdm.scripts`` or ``tool.hatch.envs.lint.scripts`` in a TOML file.
"""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any

PDM = "tool.pdm.scripts"


def hatch_table(path: str, env: str) -> str:
    """Where hatch keeps the scripts of ``env``: hatch.toml's ``envs``, else pyproject's."""
    return f"envs.{env}.scripts" if path.endswith("hatch.toml") else f"tool.hatch.envs.{env}.scripts"


def load(text: str | None, path: str, table: str) -> dict[str, str] | None:
    """Each script of ``table`` in ``text`` as one comparable string (a list or a pdm table is
    its JSON); ``{}`` for no such table, None when the file does not parse."""
    if not text:
        return {}
    try:
        data: Any = json.loads(text) if path.endswith(".json") else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError):
        return None
    for key in table.split("."):
        data = data.get(key) if isinstance(data, dict) else None
    if not isinstance(data, dict):
        return {}
    return {str(name): value if isinstance(value, str) else json.dumps(value, sort_keys=True)
            for name, value in data.items()}


def commands(text: str | None, path: str, table: str, name: str) -> tuple[list[str], list[str]]:
    """What script ``name`` runs: ``(command lines, other scripts of the table it runs)``."""
    if not text:
        return [], []
    try:
        data: Any = json.loads(text) if path.endswith(".json") else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError):
        return [], []
    for key in table.split("."):
        data = data.get(key) if isinstance(data, dict) else None
    if not isinstance(data, dict):
        return [], []
    value = data.get(name)
    lines: list[str] = []
    called: list[str] = []
    if isinstance(value, str):
        lines.append(value)
    elif isinstance(value, list):          # hatch: several commands, run in turn
        lines.extend(str(item) for item in value)
    elif isinstance(value, dict):          # pdm: {cmd = ...}, {shell = ...}, {composite = [...]}
        command = value.get("cmd", value.get("shell"))
        if isinstance(command, list):
            lines.append(" ".join(str(part) for part in command))
        elif isinstance(command, str):
            lines.append(command)
        composite = value.get("composite")
        if isinstance(composite, list):
            called.extend(str(item).split()[0] for item in composite if str(item).split())
    # a script may name another script of the same table as its first word (pdm and hatch)
    for line in list(lines):
        first = line.split()[0] if line.split() else ""
        if first in data and first != name:
            called.append(first)
            lines.remove(line)
    return lines, called


def line_of(text: str, table: str, name: str) -> int:
    """The line of script ``name``: its key inside the table (``"name":`` in JSON)."""
    key = re.compile(rf'^\s*"{re.escape(name)}"\s*:' if table == "scripts" else
                     rf"^\s*[\"']?{re.escape(name)}[\"']?\s*=")
    for number, line in enumerate(text.splitlines(), 1):
        if key.search(line):
            return number
    return 1


def describe(path: str, table: str, name: str) -> str:
    """How evidence names a script: ``the package.json script "test"``, ``the pdm script
    "lint" ([tool.pdm.scripts] of pyproject.toml)``..."""
    if table == "scripts":
        return f'the {path} script "{name}"'
    tool = "pdm" if table == PDM else "hatch"
    return f'the {tool} script "{name}" ([{table}] of {path})'
