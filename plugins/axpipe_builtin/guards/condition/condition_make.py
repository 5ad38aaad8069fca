"""Following ``make TARGET`` into its recipes: what they run, and the files the Makefile includes.

The Makefile itself is protected whole (a variable, a prerequisite or a pattern rule can
change what a target runs as surely as its recipe); this only finds what the recipes run,
so ``make lint`` → ``ruff check .`` protects ruff's configuration too. Variables assigned
in the Makefile are expanded once; functions (``$(shell ...)``) are not evaluated.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_RULE = re.compile(r"^(?P<targets>[^\t:=#][^:=#]*?)\s*::?(?![=])\s*(?P<prereqs>[^;#]*)(?:;(?P<recipe>.*))?$")
_ASSIGN = re.compile(r"^(?:export\s+|override\s+)?(?P<name>[A-Za-z_][\w.]*)\s*(?:[:?+!]|::)?=\s*(?P<value>.*)$")
_INCLUDE = re.compile(r"^-?s?include\s+(?P<files>.+)$")


def follow(text: str, targets: list[str], visit: Callable[[str], None]) -> list[str]:
    """Call ``visit`` with each recipe line of ``targets`` (default: the first target) and of
    their prerequisites; return the files the Makefile includes."""
    lines = _logical_lines(text)
    variables: dict[str, str] = {}
    recipes: dict[str, list[str]] = {}
    prerequisites: dict[str, list[str]] = {}
    includes: list[str] = []
    first: str | None = None
    current: list[str] = []
    for line in lines:
        if line.startswith("\t"):
            for target in current:
                recipes.setdefault(target, []).append(line.strip().lstrip("@-+").strip())
            continue
        stripped = line.split("#", 1)[0].rstrip()
        if not stripped.strip():
            continue
        if (include := _INCLUDE.match(stripped)) is not None:
            includes.extend(include["files"].split())
            current = []
        elif (assign := _ASSIGN.match(stripped)) is not None:
            variables[assign["name"]] = assign["value"].strip()
            current = []
        elif (rule := _RULE.match(stripped)) is not None:
            current = rule["targets"].split()
            for target in current:
                prerequisites.setdefault(target, []).extend(rule["prereqs"].split())
                if rule["recipe"]:
                    recipes.setdefault(target, []).append(rule["recipe"].strip())
            if first is None:
                first = next((target for target in current if not target.startswith(".")), None)
    wanted = list(targets) or ([first] if first else [])
    seen: set[str] = set()
    while wanted:
        target = wanted.pop(0)
        if target in seen:
            continue
        seen.add(target)
        wanted.extend(prerequisites.get(target, []))
        for recipe in recipes.get(target, []):
            visit(_expand(recipe, variables))
    return [_expand(name, variables) for name in includes]


def _logical_lines(text: str) -> list[str]:
    joined: list[str] = []
    pending = ""
    for raw in text.splitlines():
        if raw.endswith("\\"):
            pending += raw[:-1] + " "
            continue
        joined.append(pending + raw)
        pending = ""
    if pending:
        joined.append(pending)
    return joined


def _expand(text: str, variables: dict[str, str]) -> str:
    def value(match: re.Match[str]) -> str:
        name = match[1] or match[2]
        return "make" if name == "MAKE" else variables.get(name, match[0])

    return re.sub(r"\$\((\w+)\)|\$\{(\w+)\}", value, text)
