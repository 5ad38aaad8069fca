"""Python's bytecode cache, made to forget source files that a program just changed.

Python reuses ``__pycache__/<name>.<tag>.pyc`` while the source keeps the size and the
modification time (in whole seconds) recorded in it. An agent's same-size edit (``a - b``
to ``a + b``) made within the second after the last import leaves a cache that still
matches, and the next run executes the old code: the fix seems not to work, and a repair
loop spends its budget on a bug that is gone. After an agent's turn (or a loop command,
or a reverted fix) axpipe removes the cached bytecode of every changed ``.py`` file. The
cache is derived data; Python writes it again on the next import.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


def _cache_folders(source: Path) -> list[Path]:
    folders = [source.parent / "__pycache__"]
    prefix = os.environ.get("PYTHONPYCACHEPREFIX")
    if prefix:  # the processes axpipe starts inherit it, and then keep their caches there
        # Python mirrors the folder as it was imported from, symlinks and all; a process
        # started in the resolved folder would use the resolved path.
        for folder in dict.fromkeys([os.path.abspath(source.parent), str(source.parent.resolve())]):
            folders.append(Path(prefix) / folder.lstrip(os.sep))
    return folders


def forget(root: Path, paths: Iterable[str]) -> list[Path]:
    """Remove the cached bytecode of the ``.py`` files among ``paths`` (relative to
    ``root``, deleted ones included); return the cache files removed."""
    removed: list[Path] = []
    for relative in paths:
        if not relative.endswith(".py"):
            continue
        source = root / relative
        stem = source.name[:-len(".py")]
        for folder in _cache_folders(source):
            try:
                names = os.listdir(folder)
            except OSError:
                continue
            for name in names:
                # <stem>.<tag>.pyc and <stem>.<tag>.opt-1.pyc, and pytest's rewritten
                # <stem>.<tag>-pytest-<version>.pyc; a module named <stem>.x.py shares the
                # prefix and loses its cache too, which only costs a recompile.
                if name.startswith(stem + ".") and name.endswith(".pyc"):
                    cached = folder / name
                    try:
                        cached.unlink()
                    except OSError:
                        continue
                    removed.append(cached)
    return removed
