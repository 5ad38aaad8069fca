"""Standing rules (DESIGN §15): one Markdown file, copied into every agent instruction file.

``rules.standing`` (a project path) is the source. :func:`sync` copies it between the lines
:data:`BEGIN` and :data:`END` of each target (``rules.targets``; by default the instruction
file of each agent preset the recipe uses: :data:`DEFAULT_TARGETS`), adding the block at the
end of a file that has none and leaving every other line of the file as it was.
:func:`drift` compares every copy with the source and names the first differing line; the
runner calls it before every unit and stops (exit 2) on any drift, before an agent runs.

Bad input is a config problem (:func:`problems`): a source that does not exist, a path that
leaves the project, a target that is a symlink pointing out of it.
"""

from __future__ import annotations

import os
from pathlib import Path

from axpipe.recipe import schema

BEGIN = "<!-- axpipe:standing-rules:begin -->"
END = "<!-- axpipe:standing-rules:end -->"
DEFAULT_TARGETS = {"command": "AGENTS.md", "codex": "AGENTS.md", "claude-code": "CLAUDE.md",
                   "gemini-cli": "GEMINI.md", "aider": "CONVENTIONS.md"}


def agent_kinds(recipe: schema.Recipe) -> list[str]:
    """Every agent plugin the recipe's roles and repairs use, in order, once each."""
    specs = [recipe.agent]
    if recipe.roles is not None:
        specs += [recipe.roles.planner, recipe.roles.prototype, recipe.roles.implementer]
    repairs = recipe.repair if isinstance(recipe.repair, list) else [recipe.repair] if recipe.repair else []
    specs += [repair.agent for repair in repairs if repair is not None]
    return list(dict.fromkeys(spec.kind for spec in specs if spec is not None))


def targets(recipe: schema.Recipe) -> list[str]:
    """The instruction files to keep in sync (project paths)."""
    assert recipe.rules is not None
    if recipe.rules.targets is not None:
        return list(recipe.rules.targets)
    return list(dict.fromkeys(DEFAULT_TARGETS[kind] for kind in agent_kinds(recipe) if kind in DEFAULT_TARGETS))


def _inside(root: Path, shown: str) -> str | None:
    if os.path.isabs(shown) or ".." in Path(shown).parts:
        return f"{shown!r} is not a project path (relative, inside the project)"
    resolved = (root / shown).resolve()
    if root.resolve() not in resolved.parents:
        return f"{shown!r} leads outside the project (to {resolved})"
    return None


def problems(recipe: schema.Recipe, root: Path) -> list[tuple[str, str]]:
    """``(config path, message)`` for every reason the standing rules cannot be kept."""
    rules = recipe.rules
    if rules is None:
        return []
    found = []
    if rules.standing is None:
        if rules.targets:
            found.append(("rules.standing", "targets need a source: name the standing rules' file"))
        return found
    problem = _inside(root, rules.standing)
    if problem is None and not (root / rules.standing).is_file():
        problem = f"{rules.standing!r} does not exist (the standing rules' source)"
    if problem:
        found.append(("rules.standing", problem))
    for index, target in enumerate(targets(recipe)):
        problem = _inside(root, target)
        if problem:
            found.append((f"rules.targets[{index}]" if rules.targets is not None else "rules.targets", problem))
    return found


def _block(source: str) -> str:
    return f"{BEGIN}\n{source.rstrip(chr(10))}\n{END}\n"


def _span(text: str) -> tuple[int, int] | None:
    """Where the block (its begin line to its end line, inclusive) lies in ``text``."""
    lines = text.splitlines(keepends=True)
    begin = next((index for index, line in enumerate(lines) if line.rstrip("\r\n") == BEGIN), None)
    if begin is None:
        return None
    end = next((index for index in range(begin + 1, len(lines)) if lines[index].rstrip("\r\n") == END), None)
    if end is None:
        return None
    start = sum(len(line) for line in lines[:begin])
    return start, start + sum(len(line) for line in lines[begin:end + 1])


def synced_text(current: str | None, source: str) -> str:
    """``current`` (a target's text, None when missing) with the block holding ``source``."""
    block = _block(source)
    if current is None or not current:
        return block
    span = _span(current)
    if span is None:
        joint = "" if current.endswith("\n\n") else ("\n" if current.endswith("\n") else "\n\n")
        return current + joint + block
    return current[:span[0]] + block + current[span[1]:]


def sync(recipe: schema.Recipe, root: Path) -> list[str]:
    """Write the block into every target; return the targets that changed."""
    assert recipe.rules is not None and recipe.rules.standing is not None
    source = (root / recipe.rules.standing).read_text(encoding="utf-8")
    changed = []
    for target in targets(recipe):
        path = root / target
        current = path.read_text(encoding="utf-8") if path.exists() else None
        text = synced_text(current, source)
        if text != current:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            changed.append(target)
    return changed


def drift(recipe: schema.Recipe, root: Path) -> list[str]:
    """One message per target whose copy differs from the source or is missing, naming the
    file and the first differing line."""
    rules = recipe.rules
    if rules is None or rules.standing is None:
        return []
    source = (root / rules.standing).read_text(encoding="utf-8")
    found = []
    for target in targets(recipe):
        path = root / target
        if not path.exists():
            found.append(f"{target}: missing (run `axpipe rules sync`)")
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        span = _span(text)
        if span is None:
            found.append(f"{target}: no standing-rules block (run `axpipe rules sync`)")
            continue
        copy = text[span[0]:span[1]].splitlines()
        wanted = _block(source).splitlines()
        first_line = text[:span[0]].count("\n") + 1
        for offset, (have, want) in enumerate(zip(copy, wanted, strict=False)):
            if have != want:
                found.append(f"{target}:{first_line + offset}: differs from {rules.standing}: {have!r} (the source "
                             f"says {want!r})")
                break
        else:
            if len(copy) != len(wanted):
                line = first_line + min(len(copy), len(wanted)) - 1
                found.append(f"{target}:{line}: differs from {rules.standing}: the copy has {len(copy) - 2} "
                             f"line(s), the source {len(wanted) - 2}")
    return found
