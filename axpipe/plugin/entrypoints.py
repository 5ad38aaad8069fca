"""Entry points of installed distributions, with the distribution that declares each.

stevedore loads plugins for runs (:mod:`axpipe.plugin.registry`); this module answers the cheaper
question "what is declared, and by whom", which ``plugins list`` and the recipe search path
need on every start. It reads ``*.dist-info/entry_points.txt`` on ``sys.path`` directly:
``importlib.metadata`` costs 40-80 ms to import on our machines, more than the whole
start-up budget of a subcommand (see docs/performance.md). Like ``importlib.metadata``, the
first distribution of a name on ``sys.path`` wins.
"""

from __future__ import annotations

import os
import re
import sys
from functools import cache
from typing import NamedTuple


class Declared(NamedTuple):
    """One declared entry point."""

    group: str
    name: str
    value: str
    distribution: str

    @property
    def module(self) -> str:
        return self.value.split(":", 1)[0].strip()


def _distribution_name(info_dir: str) -> str | None:
    for metadata in ("METADATA", "PKG-INFO"):
        try:
            with open(os.path.join(info_dir, metadata), encoding="utf-8", errors="replace") as handle:
                for line in handle:
                    if not line.strip():
                        break
                    if line.startswith("Name:"):
                        return line[5:].strip()
        except OSError:
            continue
    return None


def _parse(text: str, distribution: str) -> list[Declared]:
    found: list[Declared] = []
    group = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            group = line[1:-1].strip()
            continue
        if group is None or not group.startswith("axpipe.") or "=" not in line:
            continue
        name, _, value = line.partition("=")
        found.append(Declared(group, name.strip(), value.strip(), distribution))
    return found


def _normalize(name: str) -> str:
    """A distribution name as PEP 503 compares them: runs of ``-``, ``_`` and ``.`` are one ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


@cache
def _all() -> tuple[Declared, ...]:
    found: list[Declared] = []
    seen: set[str] = set()
    for entry in sys.path:
        directory = entry or "."
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            # Folder names carry the distribution's name with "-" escaped to "_" (wheels and
            # eggs alike), which is enough to know what shadows what; METADATA is read only
            # for the few distributions that declare axpipe entry points, for their real name.
            folder_name = name.rsplit(".", 1)[0].split("-")[0]  # "name-1.0.dist-info", "name.egg-info"
            key = _normalize(folder_name)
            if key in seen:
                continue  # shadowed by the same distribution earlier on sys.path, as import would be
            seen.add(key)
            info_dir = os.path.join(directory, name)
            try:
                with open(os.path.join(info_dir, "entry_points.txt"), encoding="utf-8") as handle:
                    text = handle.read()
            except OSError:
                continue
            if "axpipe." not in text:
                continue
            distribution = _distribution_name(info_dir) or folder_name
            found.extend(_parse(text, distribution))
    return tuple(found)


def entry_points(group: str) -> list[Declared]:
    """Entry points declared in ``group``, sorted by name."""
    return sorted((entry for entry in _all() if entry.group == group), key=lambda entry: entry.name)


def clear_cache() -> None:
    """Forget what was read (tests install distributions while running)."""
    _all.cache_clear()
