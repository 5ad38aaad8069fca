"""Python's bytecode cache: kept out of the checkout, and never trusted for a changed source.

Python reuses ``__pycache__/<name>.<tag>.pyc`` while the source keeps the size and the
modification time (in whole seconds) recorded in it. An edit that keeps the size (``a - b``
to ``a + b``) made within the second of the last import leaves a cache that still matches,
and the next run executes the old code: a check passes on code that is gone, or a repair
loop spends its budget on a bug that is fixed. Two defences:

* the commands axpipe runs for evidence keep their bytecode in :func:`evidence_prefix`
  (``PYTHONPYCACHEPREFIX``, set by :mod:`axpipe.evidence.env`), outside the checkout, and
  :func:`forget_racy` removes, before each of them, the entries there that such an edit
  could have outdated unseen (git's "racy" rule: the source changed in the same second the
  bytecode was written);
* after an agent's turn (or a loop command, or a reverted fix) :func:`forget` removes the
  cached bytecode of every changed ``.py`` file, wherever it is kept: an edit that also
  keeps the modification time matches any cache.

The cache is derived data; Python writes it again on the next import.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

# A timestamp-based .pyc starts with the magic number, 4 bytes of flags (0), and the
# source's modification time and size, each 4 bytes little-endian (PEP 552); pytest's
# rewritten modules use the same header.
_HEADER = 16


def evidence_prefix() -> Path:
    """Where the commands axpipe runs for evidence keep their bytecode: ``axpipe/pycache`` in
    the user's cache folder (``$XDG_CACHE_HOME``, else ``~/.cache``). Python mirrors each
    source's absolute folder under it, so projects never share an entry, and the standard
    library and installed packages are compiled once, not on every run."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # the XDG rule: a relative value is ignored
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "axpipe" / "pycache"


def _mirrors(folder: Path, prefix: Path) -> list[Path]:
    # Python mirrors the folder as it was imported from, symlinks and all; a process started
    # in the resolved folder would use the resolved path.
    return [prefix / name.lstrip(os.sep) for name in dict.fromkeys([os.path.abspath(folder), str(folder.resolve())])]


def _cache_folders(source: Path) -> list[Path]:
    folders = [source.parent / "__pycache__"]
    prefix = os.environ.get("PYTHONPYCACHEPREFIX")
    if prefix:  # the agents and loop commands axpipe starts inherit it, and keep their caches there
        folders.extend(_mirrors(source.parent, Path(prefix)))
    folders.extend(_mirrors(source.parent, evidence_prefix()))
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


def forget_racy(root: Path) -> list[Path]:
    """Remove the entries of :func:`evidence_prefix` for sources under ``root`` that could
    hide an edit, and those whose source is gone (a removed gate worktree); return them.

    An entry is racy when the source's recorded modification time is not older than the
    second the entry was written: a second edit within that second, keeping the size,
    would still match it. An entry written later than its source's last edit can only
    be matched by an edit that sets the time back, which :func:`forget` covers for agents."""
    removed: list[str] = []
    prefix = evidence_prefix()
    for mirror in _mirrors(root, prefix):
        _scan(str(mirror), os.sep + os.path.relpath(mirror, prefix), removed)
    return [Path(path) for path in removed]


def _scan(folder: str, sources: str, removed: list[str]) -> None:
    """:func:`forget_racy` in one mirrored ``folder`` of the source folder ``sources``
    (strings, not paths: a project has thousands of entries, and this runs before every check)."""
    try:
        entries = list(os.scandir(folder))
    except OSError:  # no cache for this folder (yet)
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            _scan(entry.path, os.path.join(sources, entry.name), removed)
        # <stem>.<tag>[.opt-N].pyc, or pytest's <stem>.<tag>-pytest-<version>.pyc
        elif entry.name.endswith(".pyc") and _outdated(entry, os.path.join(sources, entry.name.split(".")[0] + ".py")):
            try:
                os.unlink(entry.path)
            except OSError:  # another run removed it first
                continue
            removed.append(entry.path)


def _outdated(entry: os.DirEntry[str], source: str) -> bool:
    try:
        written = int(entry.stat(follow_symlinks=False).st_mtime)
        changed = int(os.stat(source).st_mtime)
    except FileNotFoundError:
        return True  # the source is gone (or the entry, which another run removed)
    except OSError:
        return False  # not ours to judge
    if changed < written:
        # Unchanged since the second before the entry was written: the time the entry
        # records is this one, so the entry is not racy (and a later edit will not match it).
        return False
    try:
        with open(entry.path, "rb") as handle:
            header = handle.read(_HEADER)
    except OSError:
        return False
    if len(header) < _HEADER:
        return True
    if int.from_bytes(header[4:8], "little") != 0:
        return False  # hash-based: Python compares the source's hash, not its time
    return int.from_bytes(header[8:12], "little") & 0xFFFFFFFF >= written & 0xFFFFFFFF
