"""Which rules a linter runs, where, and how strictly: one view for ruff and flake8, compared
before and after a change so that only *loosening* is reported.

Rules are code prefixes (``E``, ``E501``, ``ALL``). A rule runs when some selected prefix
matches it and no ignored prefix at least as specific does (ruff's and flake8's own
precedence). Since the full list of rule codes is not known here, the comparison probes
every code either version mentions, plus the codes the failing run printed: a probe that
ran before and does not now is a rule turned off. Selecting more rules, ignoring fewer,
narrowing an exclusion or a lower limit all pass.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass
class RuleView:
    select: list[str]
    ignore: dict[str, str] = field(default_factory=dict)          # code → the setting that ignores it
    excludes: dict[str, str] = field(default_factory=dict)        # pattern → setting
    per_file: dict[tuple[str, str], str] = field(default_factory=dict)  # (pattern, code) → setting
    include: list[str] | None = None
    numbers: dict[str, float] = field(default_factory=dict)       # line-length, max-complexity...
    extend: str | None = None


def runs(code: str, select: Iterable[str], ignore: Iterable[str]) -> bool:
    """True when ``code`` is checked under ``select``/``ignore`` (ties go to ignore)."""
    def best(prefixes: Iterable[str]) -> int:
        return max((0 if prefix == "ALL" else len(prefix) for prefix in prefixes
                    if prefix == "ALL" or code.startswith(prefix)), default=-1)

    chosen = best(select)
    return chosen >= 0 and best(ignore) < chosen


def loosened(old: RuleView, new: RuleView, probes: Iterable[str], linter: str,
             defaults: dict[str, float]) -> list[tuple[str, str, str]]:
    """``(setting, value, evidence)`` for each way ``new`` checks less than ``old``: the
    setting (``lint.ignore``) and value (``F401``) find its line."""
    found: list[tuple[str, str, str]] = []
    codes = {code for code in [*old.select, *new.select, *old.ignore, *new.ignore, *probes] if code != "ALL"}

    def ran(code: str) -> bool:
        return runs(code, old.select, old.ignore)

    lost = sorted(code for code in codes if ran(code) and not runs(code, new.select, new.ignore))
    for code in lost:
        if any(other != code and code.startswith(other) for other in lost):
            continue  # reported through the more general code
        by = max((ignored for ignored in new.ignore if code.startswith(ignored) or ignored == "ALL"), key=len,
                 default=None)
        if by is not None:
            found.append((new.ignore[by], by, f"`{new.ignore[by]}` adds {by}: {linter} no longer reports {code}"))
        else:
            found.append(("select", code, f"{code} is no longer selected: {linter} no longer reports it"))
    for pattern, setting in new.excludes.items():
        if pattern not in old.excludes:
            found.append((setting, pattern, f"`{setting}` adds {pattern!r}: {linter} stops checking what it matches"))
    for (pattern, code), setting in new.per_file.items():
        if (pattern, code) in old.per_file or not (ran(code) or any(ran(probe) for probe in codes
                                                                    if probe.startswith(code))):
            continue
        found.append((setting, pattern, f"`{setting}` ignores {code} in {pattern!r}: {linter} no longer reports it "
                                        "there"))
    if old.include is not None and new.include is not None:
        for pattern in old.include:
            if pattern not in new.include:
                found.append(("include", "", f"`include` no longer has {pattern!r}: {linter} stops checking those "
                                             "files"))
    for key, value in new.numbers.items():
        before = old.numbers.get(key, defaults.get(key))
        if before is not None and value > before:
            found.append((key, "", f"`{key}` raised from {before:g} to {value:g}: a looser limit"))
    if new.extend and old.extend is not None and new.extend != old.extend:
        found.append(("extend", "", f"`extend` now takes its settings from {new.extend!r}"))
    return found


def codes_in(values: object) -> list[str]:
    """Rule codes of a TOML list (or a comma/space separated string)."""
    if isinstance(values, str):
        values = values.replace(",", " ").split()
    return [str(value).strip().upper() for value in values if str(value).strip()] if isinstance(values, list) else []
