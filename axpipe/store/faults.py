"""What the store says when the file under it fails: damaged, emptied, read-only or full.

SQLite reports these as error codes from whichever statement meets them, at open or hours
later in a backend. Each becomes one :class:`StoreError` naming the file and what to do,
wherever it is met (the connection's ``fault`` hook, :mod:`axpipe.store.names`), never an
"internal error". Damage is remembered: once a statement has found the file corrupt, the
store refuses every write through that connection, and a marker beside the file
(``state.db.corrupt``) makes every later command refuse it at open, without writing a byte
into it, until the file is moved aside.

An emptied file (0 bytes) where a store existed is not taken for a new store: axpipe keeps
a marker beside each store it created (``state.db.made``), and a 0-byte file with that
marker, or with a non-empty write-ahead log beside it, is refused.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from axpipe.errors import AxpipeError
from axpipe.process import pid_alive

_DAMAGED = ("SQLITE_NOTADB", "SQLITE_CORRUPT")
_MADE_SUFFIX = ".made"
_CORRUPT_SUFFIX = ".corrupt"


class StoreError(AxpipeError):
    """The store cannot be opened or used (exit 1)."""


class StoreCorrupt(StoreError):
    """The store's file is damaged: nothing more is read from or written into it."""


class StoreReadOnly(StoreError):
    """This user cannot write the store (read commands still work on it)."""


def read_only(path: Path, error: object) -> str:
    return (f"cannot write to the store {path}: {error}. Make the file, its folder and any -wal and -shm files "
            "beside it writable for this user; commands that only read (list, show, runs, status) work as they are")


def damaged(path: Path, error: object) -> str:
    return (f"the store {path} cannot be used: {error}. It is axpipe's record of runs, goals and "
            "schedules; move it aside to start a new one (what it recorded is then not seen)")


def classify(path: Path, error: sqlite3.Error, *, remember: bool = True) -> StoreError | None:
    """The store error ``error`` stands for, or None for one that is not about the file.
    Damage is remembered beside the file (``remember``)."""
    name = str(getattr(error, "sqlite_errorname", ""))
    if name.startswith(_DAMAGED):
        if remember:
            remember_corrupt(path, error)
        return StoreCorrupt(damaged(path, error))
    if name.startswith("SQLITE_FULL") or "disk is full" in str(error):
        return StoreError(f"cannot write to the store {path}: {error}. Free space on the file system that holds "
                          "it (or raise the file size limit) and run the command again; what this command could "
                          "not record is closed as failed when the next run starts")
    if name.startswith("SQLITE_READONLY") or (name.startswith("SQLITE_CANTOPEN") and not _writable(path)):
        return StoreReadOnly(read_only(path, error))
    if name.startswith("SQLITE_CANTOPEN") or name.startswith("SQLITE_IOERR"):
        return StoreError(f"cannot use the store {path}: {error}; check that the file and its folder can be "
                          "read and written, that the disk is not full and that no file size limit (ulimit -f) "
                          "is reached")
    return None


def _writable(path: Path) -> bool:
    """Whether this user may write the store file (or make it) and its folder (for -wal, -shm)."""
    return os.access(path.parent, os.W_OK) and (not path.exists() or os.access(path, os.W_OK))


def _identity(path: Path) -> str | None:
    try:
        status = path.stat()
    except OSError:
        return None
    return f"{status.st_dev}:{status.st_ino}"


def remember_corrupt(path: Path, error: object) -> None:
    """Leave the marker that makes later commands refuse this file (best effort: a full or
    read-only disk may refuse it too, and the error is reported anyway)."""
    identity = _identity(path)
    if identity is None:
        return
    try:
        Path(str(path) + _CORRUPT_SUFFIX).write_text(f"{identity}\n{error}\n", encoding="utf-8")
    except OSError:
        pass


def refuse_known_faults(path: Path) -> None:
    """Refuse, before SQLite opens it, a store already found damaged or one emptied."""
    marker = Path(str(path) + _CORRUPT_SUFFIX)
    try:
        identity, _, reason = marker.read_text(encoding="utf-8").partition("\n")
    except OSError:
        identity = reason = ""
    if identity:
        if identity == _identity(path):
            raise StoreCorrupt(damaged(path, f"{reason.strip() or 'damaged'} (found by an earlier command; "
                                             "nothing was read or written since)"))
        try:
            marker.unlink()  # the damaged file was moved aside: this is another one
        except OSError:
            pass
    try:
        size = path.stat().st_size
    except OSError:
        return  # no store yet: a new one is made
    if size:
        return
    wal = Path(str(path) + "-wal")
    made = Path(str(path) + _MADE_SUFFIX).exists()
    if made or (wal.exists() and wal.stat().st_size > 0):
        evidence = f"{path.name}{_MADE_SUFFIX}" if made else f"a write-ahead log ({wal.name})"
        raise StoreCorrupt(f"the store {path} is empty (0 bytes), but {evidence} beside it shows a store was "
                           "there: the file was truncated. Restore it from a backup, or move it aside (with "
                           f"{wal.name} and {path.name}{_MADE_SUFFIX}) to start a new store")


def remember_made(path: Path) -> None:
    """Mark that a store exists at ``path`` (once; best effort on a read-only folder)."""
    marker = Path(str(path) + _MADE_SUFFIX)
    if marker.exists():
        return
    try:
        fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError:
        return
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write("axpipe made a store beside this file; an empty store file here means it was truncated\n")


LEFT_OPEN = "its process (pid {pid}) ended without recording an outcome (a write that failed, a kill)"


def close_left_open(db: sqlite3.Connection, *, now: str) -> None:
    """Close runs and receipts still open whose process is gone: a write that failed (a full
    disk) or a kill left them so. Called in the transaction that records a new run or receipt.
    A receipt closed here is an ``error``, never evidence; rows without a pid (written before
    migration 0006) are left as they are. The store is one checkout's, on this host."""
    own = os.getpid()
    for table, status, column in (("runs", "failed", "summary"), ("receipts", "error", "summary")):
        condition = "finished_at IS NULL" if table == "runs" else "status = 'running'"
        open_rows = db.execute(f"SELECT id, pid FROM {table} WHERE {condition} AND pid IS NOT NULL AND pid != ?",
                               (own,)).fetchall()
        for row_id, pid in open_rows:
            if pid_alive(int(pid)):
                continue
            db.execute(f"UPDATE {table} SET status = ?, {column} = ?, finished_at = ? WHERE id = ? AND {condition}",
                       (status, "left open: " + LEFT_OPEN.format(pid=pid), now, row_id))
