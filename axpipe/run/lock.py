"""One run per checkout: an OS file lock (``flock``) on ``.axpipe/run.lock``.

The lock is the kernel's, released when the holder exits however it exits (crash, SIGKILL),
so a stale lock cannot block a checkout. Who holds it is written into the lock file after
it is taken, so a refused run can name the pid.

This uses ``fcntl.flock`` directly rather than the ``filelock`` package: filelock 3.x/4.x
imports asyncio and costs 40-120 ms at start-up on our machines, more than the whole
start-up budget of a run (docs/performance.md). axpipe needs POSIX anyway (ptys).
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from types import TracebackType

from axpipe.errors import LockHeld

LOCK_NAME = "run.lock"


class RunLock:
    """``with RunLock(state_dir, run_id):`` holds the checkout's run lock, or raises LockHeld."""

    def __init__(self, state_dir: Path, run_id: str) -> None:
        self.path = state_dir / LOCK_NAME
        self.run_id = run_id
        self._fd: int | None = None

    def acquire(self) -> None:
        # No O_TRUNC: a refused process must not wipe the holder's pid from the file.
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise LockHeld(str(self.path), self.holder_pid()) from None
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "run": self.run_id}).encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        os.ftruncate(self._fd, 0)
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    def holder_pid(self) -> int | None:
        """The pid recorded by the current holder (None when it cannot be read)."""
        try:
            owner = json.loads(self.path.read_text(encoding="utf-8"))
            return int(owner["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()
