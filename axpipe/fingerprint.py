"""The source fingerprint a receipt is bound to (DESIGN §4).

SHA-256 over the real bytes of the files under a goal's ``source_paths``:

* in git: tracked files and untracked, non-ignored files under folder paths (git's ignore
  rules hold), every explicitly named file even when ignored, and the files the agent
  edited during the goal;
* outside git: a recursive walk of the source paths, missing paths included.

Anything that could make the evidence lie gives **no fresh evidence** instead of a digest,
with the reason: symlinks, nested git repositories, special files, paths escaping the
workspace, files changing while hashed, unreadable files, and trees over the limits
(20,000 entries, 128 MiB). ``.axpipe/`` is never part of the source.

A stat cache (``.axpipe/fingerprint.cache``) spares re-reading unchanged files. Like git's
index it trusts an entry only when the file's stat matches *and* its mtime is older than
the moment the cache was started: a file modified within the file system's timestamp
granularity of being hashed would otherwise look unchanged ("racy" entries).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import stat
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from axpipe.workspace import STATE_DIR

MAX_ENTRIES = 20_000
MAX_BYTES = 128 * 1024 * 1024
CACHE_NAME = "fingerprint.cache"
_CACHE_VERSION = 1
_MISSING = "missing"


@dataclass
class Fingerprint:
    """A digest of the source, or the reasons there is none."""

    digest: str | None
    reasons: list[str] = field(default_factory=list)
    entries: int = 0
    bytes: int = 0
    hashed: int = 0  # files read this time (not taken from the cache)

    @property
    def fresh(self) -> bool:
        return self.digest is not None

    def describe(self) -> str:
        if self.digest is not None:
            return f"{self.digest[:12]} ({self.entries} files, {self.bytes} bytes)"
        return "no fresh evidence: " + "; ".join(self.reasons)


class _NoEvidence(Exception):
    """Stops the walk: the limits are exceeded and nothing further would help."""


class _Walk:
    def __init__(self, root: Path, max_entries: int, max_bytes: int) -> None:
        self.root = root
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.entries: dict[str, tuple[str, int, str]] = {}  # path → (kind, size, digest)
        self.reasons: list[str] = []
        self.bytes = 0
        self.hashed = 0

    def reason(self, text: str) -> None:
        if text not in self.reasons:
            self.reasons.append(text)

    def add(self, relative: str, kind: str, size: int, digest: str) -> None:
        if relative in self.entries:
            return
        if len(self.entries) >= self.max_entries:
            self.reason(f"more than {self.max_entries} entries under the source paths")
            raise _NoEvidence
        self.bytes += size
        if self.bytes > self.max_bytes:
            self.reason(f"more than {self.max_bytes} bytes of content under the source paths")
            raise _NoEvidence
        self.entries[relative] = (kind, size, digest)


def _inside(relative: str) -> bool:
    normalized = os.path.normpath(relative)
    return not (os.path.isabs(normalized) or normalized == ".." or normalized.startswith(".." + os.sep))


def _is_state(relative: str) -> bool:
    return relative == STATE_DIR or relative.startswith(STATE_DIR + "/")


def compute(root: Path, source_paths: Iterable[str], *, extra_files: Iterable[str] = (),
            max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES,
            use_cache: bool = True) -> Fingerprint:
    """Fingerprint ``source_paths`` (relative to ``root``) plus ``extra_files``."""
    root = root.resolve()
    walk = _Walk(root, max_entries, max_bytes)
    cache = _Cache(root / STATE_DIR / CACHE_NAME) if use_cache else None
    folders: list[str] = []
    files: list[str] = []
    for source in source_paths:
        if not _inside(source):
            walk.reason(f"path escapes the workspace: {source}")
            continue
        relative = os.path.normpath(source)
        real = os.path.realpath(root / relative)
        if real != str(root) and not real.startswith(str(root) + os.sep):
            walk.reason(f"path escapes the workspace: {source} (resolves to {real})")
            continue
        (folders if relative == "." or (root / relative).is_dir() else files).append(relative)
    for extra in extra_files:
        if _inside(extra):
            files.append(os.path.normpath(extra))
        else:
            walk.reason(f"path escapes the workspace: {extra}")
    try:
        candidates = _git_candidates(root, folders, walk) if (root / ".git").exists() \
            else _walk_candidates(root, folders, walk)
        for relative in files:
            if not _is_state(relative):
                candidates.setdefault(relative, "explicit")
        for relative in sorted(candidates):
            _hash_one(root, relative, walk, cache)
    except _NoEvidence:
        pass
    if cache is not None:
        cache.save()
    if walk.reasons:
        return Fingerprint(None, walk.reasons, len(walk.entries), walk.bytes, walk.hashed)
    summary = hashlib.sha256()
    for relative in sorted(walk.entries):
        kind, _, digest = walk.entries[relative]
        summary.update(f"{relative}\0{kind}\0{digest}\n".encode())
    return Fingerprint(summary.hexdigest(), [], len(walk.entries), walk.bytes, walk.hashed)


def _git(root: Path, *args: str) -> bytes:
    completed = subprocess.run(["git", *args], cwd=root, capture_output=True,
                               env={**os.environ, "GIT_LITERAL_PATHSPECS": "1"})
    if completed.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {completed.stderr.decode(errors='replace').strip()}")
    return completed.stdout


def _git_candidates(root: Path, folders: list[str], walk: _Walk) -> dict[str, str]:
    candidates: dict[str, str] = {}
    if not folders:
        return candidates
    specs = ["--", *folders]
    for record in _git(root, "ls-files", "-z", "-s", "--cached", *specs).split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        relative = os.fsdecode(name)
        mode = meta.split(b" ", 1)[0]
        if mode == b"160000":
            walk.reason(f"nested git repository: {relative}")
        elif mode == b"120000":
            walk.reason(f"symlink: {relative}")
        elif not _is_state(relative):
            candidates[relative] = "tracked"
    for name in _git(root, "ls-files", "-z", "--others", "--exclude-standard", *specs).split(b"\0"):
        if not name:
            continue
        relative = os.fsdecode(name)
        if relative.endswith("/"):  # git lists a nested repository as an opaque folder
            walk.reason(f"nested git repository: {relative.rstrip('/')}")
        elif not _is_state(relative):
            candidates[relative] = "untracked"
    return candidates


def _walk_candidates(root: Path, folders: list[str], walk: _Walk) -> dict[str, str]:
    candidates: dict[str, str] = {}
    for folder in folders:
        top = root / folder
        for directory, subdirs, names in os.walk(top):
            relative_dir = os.path.relpath(directory, root)
            if _is_state(relative_dir):
                subdirs[:] = []
                continue
            for sub in list(subdirs):
                sub_path = os.path.join(directory, sub)
                relative = os.path.normpath(os.path.join(relative_dir, sub))
                if _is_state(relative):
                    subdirs.remove(sub)
                elif os.path.islink(sub_path):
                    walk.reason(f"symlink: {relative}")
                    subdirs.remove(sub)
                elif os.path.exists(os.path.join(sub_path, ".git")):
                    walk.reason(f"nested git repository: {relative}")
                    subdirs.remove(sub)
            for name in names:
                candidates[os.path.normpath(os.path.join(relative_dir, name))] = "walked"
            if len(candidates) > walk.max_entries:
                walk.reason(f"more than {walk.max_entries} entries under the source paths")
                raise _NoEvidence
    return candidates


def _hash_one(root: Path, relative: str, walk: _Walk, cache: _Cache | None) -> None:
    path = root / relative
    real_parent = os.path.realpath(path.parent)
    if real_parent != str(root) and not real_parent.startswith(str(root) + os.sep):
        walk.reason(f"path escapes the workspace: {relative} (through a symlinked folder)")
        return
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        walk.add(relative, _MISSING, 0, "")
        return
    except OSError as error:
        walk.reason(f"unreadable file: {relative} ({error.strerror})")
        return
    if stat.S_ISLNK(info.st_mode):
        walk.reason(f"symlink: {relative}")
        return
    if not stat.S_ISREG(info.st_mode):
        walk.reason(f"special file: {relative}")
        return
    kind = "x" if info.st_mode & 0o111 else "f"
    cached = cache.lookup(relative, info) if cache is not None else None
    if cached is not None:
        walk.add(relative, kind, info.st_size, cached)
        return
    digest = _read_digest(path, relative, info, walk)
    if digest is None:
        return
    walk.hashed += 1
    walk.add(relative, kind, info.st_size, digest)
    if cache is not None:
        cache.store(relative, info, digest)


def _read_digest(path: Path, relative: str, info: os.stat_result, walk: _Walk) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as error:
        walk.reason(f"unreadable file: {relative} ({error.strerror})")
        return None
    try:
        before = os.fstat(fd)
        digest = hashlib.sha256()
        read = 0
        # Read at most one byte past the size seen: a file that grows is caught, not chased.
        while read <= before.st_size:
            chunk = os.read(fd, before.st_size + 1 - read)
            if not chunk:
                break
            read += len(chunk)
            digest.update(chunk)
        after = os.fstat(fd)
    except OSError as error:
        walk.reason(f"unreadable file: {relative} ({error.strerror})")
        return None
    finally:
        os.close(fd)
    if (read != before.st_size or after.st_size != before.st_size or after.st_mtime_ns != before.st_mtime_ns
            or before.st_ino != info.st_ino or before.st_mtime_ns != info.st_mtime_ns):
        walk.reason(f"file changed while hashing: {relative}")
        return None
    return digest.hexdigest()


class _Cache:
    """Per-path stat and digest, trusted only for entries older than the cache's start."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.old: dict[str, tuple[int, int, int, int, str]] = {}
        self.old_stamp = 0
        self.new: dict[str, tuple[int, int, int, int, str]] = {}
        self.stamp = 0
        try:
            with path.open("rb") as handle:
                version, stamp, entries = pickle.load(handle)
            if version == _CACHE_VERSION:
                self.old, self.old_stamp = entries, stamp
        except (OSError, EOFError, ValueError, TypeError, pickle.UnpicklingError):
            pass  # no cache, or one we cannot read: hash everything
        self._begin()

    def _begin(self) -> None:
        # The cache's own time, taken on the file system (not the wall clock) before any file
        # is read: files modified after this moment carry an mtime at or above it.
        self.tmp = self.path.with_name(self.path.name + f".{os.getpid()}.tmp")
        try:
            self.tmp.parent.mkdir(parents=True, exist_ok=True)
            self.tmp.write_bytes(b"")
            self.stamp = os.stat(self.tmp).st_mtime_ns
        except OSError:
            self.stamp = 0

    def lookup(self, relative: str, info: os.stat_result) -> str | None:
        entry = self.old.get(relative)
        if entry is None:
            return None
        size, mtime, ctime, inode, digest = entry
        if (size, mtime, ctime, inode) != (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino):
            return None
        if mtime >= self.old_stamp:  # racy: could have changed within the timestamp granularity
            return None
        self.new[relative] = entry
        return digest

    def store(self, relative: str, info: os.stat_result, digest: str) -> None:
        self.new[relative] = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, digest)

    def save(self) -> None:
        if not self.stamp:
            return
        try:
            with self.tmp.open("wb") as handle:
                pickle.dump((_CACHE_VERSION, self.stamp, self.new), handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(self.tmp, self.path)
        except OSError:
            self.tmp.unlink(missing_ok=True)
