"""The fingerprint's cache, ``.axpipe/fingerprint.cache`` (see :mod:`axpipe.goal.fingerprint`).

Three parts, each trusted for a different reason:

* **blobs**: a file's SHA-256 and size by git blob id. Content-addressed, so an entry can
  never be stale; it is only filed when the file was last changed before git looked at it.
* **stats**: a file's SHA-256 by path and stat, trusted like git's index trusts an entry:
  the stat matches *and* the file's mtime is older than the moment the cache was started
  ("racy" entries are read again).
* **memo**: the last result, keyed by a hash of everything the list of files to account for
  is computed from (git's answers, byte for byte, and the paths asked about). When the key
  matches, the tracked files git calls clean are the same files with the same blobs, so
  their digests (blob cache hits, content-addressed) are the same too; only the other
  files (changed, untracked, converted, flagged, explicitly named) are looked at again.
  That skips parsing and summarising 20,000 unchanged entries.

The blob table is kept as marshalled bytes inside the file and only decoded when a
fingerprint looks a blob up, so a memo hit does not pay for it.
"""

from __future__ import annotations

import marshal
import os
import sys
from pathlib import Path
from typing import Any, NamedTuple

_CACHE_VERSION = f"3-{sys.version_info[0]}.{sys.version_info[1]}"  # marshal's format follows Python
Stat = tuple[int, int, int, int, str]  # size, mtime, ctime, inode (ns), digest


class Memo(NamedTuple):
    """A fingerprint's result and how to check that it still holds (see the module doc)."""

    key: bytes
    digest: str
    entries: int
    trusted_bytes: int  # content bytes of the tracked files taken from the blob cache
    others: dict[str, tuple[str, str, str]]  # every other file: origin, kind, digest


class Cache:
    """Digests by git blob id, by path and stat (racy-aware), and the last result."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._raw_blobs = b""
        self._blobs: dict[str, tuple[str, int]] | None = None
        self.used_blobs: dict[str, tuple[str, int]] = {}  # what this run saw: all the cache keeps
        self._keep_all_blobs = False
        self.old_stats: dict[str, Stat] = {}
        self.old_stamp = 0
        self.stats: dict[str, Stat] = {}
        self.stamp = 0
        self.old_memo: Memo | None = None
        self.new_memo: Memo | None = None
        if path is None:
            return
        try:
            version, stamp, stats, raw_blobs, memo = marshal.loads(path.read_bytes())
            if version == _CACHE_VERSION and isinstance(raw_blobs, bytes):
                self.old_stats, self.old_stamp, self._raw_blobs = stats, stamp, raw_blobs
                self.old_memo = _memo(memo)
        except (OSError, EOFError, ValueError, TypeError):
            pass  # no cache, or one we cannot read: hash everything
        # The cache's own time, taken on the file system (not the wall clock) before any file
        # is read: files modified after this moment carry an mtime at or above it.
        self.tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
        try:
            self.tmp.parent.mkdir(parents=True, exist_ok=True)
            self.tmp.write_bytes(b"")
            self.stamp = os.stat(self.tmp).st_mtime_ns
        except OSError:
            self.stamp = 0

    @property
    def blobs(self) -> dict[str, tuple[str, int]]:
        """The blob table as loaded (decoded on first use)."""
        if self._blobs is None:
            try:
                loaded = marshal.loads(self._raw_blobs) if self._raw_blobs else {}
            except (EOFError, ValueError, TypeError):
                loaded = {}
            self._blobs = loaded if isinstance(loaded, dict) else {}
        return self._blobs

    def memo(self, key: bytes) -> Memo | None:
        """The last result if it was computed from the same answers (``key``)."""
        return self.old_memo if self.old_memo is not None and self.old_memo.key == key else None

    def remember(self, memo: Memo) -> None:
        self.new_memo = memo

    def keep_blobs(self) -> None:
        """This run used the same tracked files as the memo's: keep the blob table as it is."""
        self._keep_all_blobs = True

    def by_blob(self, blob: str) -> tuple[str, int] | None:
        known = self.blobs.get(blob)
        if known is not None:
            self.used_blobs[blob] = known
        return known

    def by_stat(self, relative: str, info: os.stat_result) -> str | None:
        entry = self.old_stats.get(relative)
        if entry is None:
            return None
        size, mtime, ctime, inode, digest = entry
        if (size, mtime, ctime, inode) != (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino):
            return None
        if mtime >= self.old_stamp:  # racy: could have changed within the timestamp granularity
            return None
        self.stats[relative] = entry
        return digest

    def store(self, relative: str, info: os.stat_result, digest: str, blob: str | None) -> None:
        self.stats[relative] = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, digest)
        if blob is not None:
            self.vouch(blob, info, digest)

    def vouch(self, blob: str, info: os.stat_result, digest: str) -> None:
        """File ``digest``, the current bytes of a file git said is ``blob``, under the blob.
        Only if the file was last changed before the stamp (taken before git looked): one
        changed after may have changed after git's look, and its digest would then be filed
        under a blob whose bytes it is not, for every later file with that blob."""
        if max(info.st_mtime_ns, info.st_ctime_ns) < self.stamp:
            self.used_blobs[blob] = (digest, info.st_size)

    def discard(self) -> None:
        """Forget the stamp file: nothing is saved."""
        if self.stamp:
            self.tmp.unlink(missing_ok=True)

    def save(self) -> None:
        if self.path is None or not self.stamp:
            return
        same_blobs = self._keep_all_blobs or self.used_blobs == self.blobs
        if self.stats == self.old_stats and same_blobs and self.new_memo == self.old_memo and self.old_stamp:
            self.tmp.unlink(missing_ok=True)  # nothing new to remember: keep the older, stricter stamp
            return
        raw_blobs = self._raw_blobs if self._keep_all_blobs else marshal.dumps(self.used_blobs)
        memo = None
        if self.new_memo is not None:  # a plain tuple: marshal writes no named tuples
            key, digest, entries, trusted_bytes, others = self.new_memo
            memo = (key, digest, entries, trusted_bytes, others)
        try:
            self.tmp.write_bytes(marshal.dumps((_CACHE_VERSION, self.stamp, self.stats, raw_blobs, memo)))
            os.replace(self.tmp, self.path)
        except OSError:
            self.tmp.unlink(missing_ok=True)


def _memo(value: Any) -> Memo | None:
    """A memo as loaded, or None when there is none or it has the wrong shape."""
    if isinstance(value, tuple) and len(value) == len(Memo._fields) and isinstance(value[0], bytes) \
            and isinstance(value[4], dict):
        return Memo(*value)
    return None
