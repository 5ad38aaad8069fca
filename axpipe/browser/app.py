"""The application a ``[found]`` criterion is checked on: started before the browser opens
it, stopped (its whole process group) afterwards, whatever happened in between.

Ready means the ``ready`` URL (default: the app's ``url``) answers an HTTP request at all,
even with an error status: the server is listening, and whether the page is right is for
the steps to say. An app that exits before that, or has not answered by its deadline, is
reported with the tail of its output; nothing it started is left running.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

POLL_SECONDS = 0.1
STOP_GRACE_SECONDS = 3.0


class AppNotReady(Exception):
    """The app exited or never answered; the message says which, with its output's tail."""


PR_SET_PDEATHSIG = 1


def _die_with_axpipe() -> None:
    """In the app's process, before it starts (Linux): SIGTERM when axpipe dies without
    stopping it (SIGKILL, a crash). Its own session keeps it out of axpipe's process group,
    so that signals meant for axpipe reach it only through :func:`stop`, and this covers
    the one case ``stop`` cannot."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


def _command(command: Any) -> tuple[list[str] | str, bool]:
    if isinstance(command, str):
        return command, True
    return [str(word) for word in command], False


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1):  # a URL the recipe declares
            return True
    except urllib.error.HTTPError:
        return True  # it answered, with an error status: the server is up
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _tail(log: Path, limit: int = 2000) -> str:
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return text[-limit:].strip()


@contextmanager
def running(command: Any, *, cwd: Path, env: Mapping[str, str], ready: str, timeout: float,
            log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``command`` in its own session, wait until ``ready`` answers, yield, then stop
    the whole process group (SIGTERM, then SIGKILL after a grace)."""
    args, shell = _command(command)
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as output:
        try:
            process = subprocess.Popen(args, shell=shell, cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL,
                                       stdout=output, stderr=subprocess.STDOUT, start_new_session=True,
                                       preexec_fn=_die_with_axpipe if sys.platform == "linux" else None)
        except OSError as error:
            raise AppNotReady(f"the app could not start: {error}") from error
        try:
            deadline = time.monotonic() + timeout
            while not _answers(ready):
                if process.poll() is not None:
                    raise AppNotReady(f"the app exited with code {process.returncode} before {ready} answered; "
                                      f"its output ends: {_tail(log) or '(nothing)'}")
                if time.monotonic() > deadline:
                    raise AppNotReady(f"the app never became ready: {ready} did not answer within {timeout:g} s; "
                                      f"its output ends: {_tail(log) or '(nothing)'}")
                time.sleep(POLL_SECONDS)
            yield process
        finally:
            stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """End the app's process group: politely, then for sure."""
    for sig, wait in ((signal.SIGTERM, STOP_GRACE_SECONDS), (signal.SIGKILL, STOP_GRACE_SECONDS)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(wait)
        except subprocess.TimeoutExpired:
            continue
        # the leader is gone; children that ignored SIGTERM may remain in the group
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        break
    if process.poll() is None:
        process.wait()
