"""Whether a process lives, and how to end a whole tree of them.

A scheduled run is ``axpipe run`` started by the process runner in its own session, and
every check it runs gets a session of its own too, so killing one process group would
leave the checks behind. :func:`kill_tree` collects every descendant first (``/proc`` on
Linux, ``ps`` elsewhere), then signals each of their groups: SIGTERM, a grace period,
SIGKILL.
"""

from __future__ import annotations

import os
import signal
import time

from axpipe import process
from axpipe.process import PROC, pid_alive, proc_stat


def _parents() -> dict[int, int]:
    """Every process's parent: ``{pid: ppid}``."""
    parents: dict[int, int] = {}
    if PROC.is_dir():
        for entry in PROC.iterdir():
            if entry.name.isdigit() and (stat := proc_stat(int(entry.name))) is not None:
                parents[int(entry.name)] = stat[1]
        return parents
    listing = process.run(["ps", "-A", "-o", "pid=,ppid="])
    for line in listing.output.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
            parents[int(parts[0])] = int(parts[1])
    return parents


def descendants(root: int) -> list[int]:
    """Every live descendant of ``root`` (children, their children, …), not ``root`` itself."""
    children: dict[int, list[int]] = {}
    for pid, parent in _parents().items():
        children.setdefault(parent, []).append(pid)
    found: list[int] = []
    pending = list(children.get(root, []))
    while pending:
        pid = pending.pop()
        found.append(pid)
        pending.extend(children.get(pid, []))
    return found


def kill_tree(root: int, *, grace: float = 2.0) -> list[int]:
    """End every descendant of ``root`` and their process groups; returns the pids signalled.

    ``root``'s own process group is spared (the caller usually is ``root``).
    """
    own_group = os.getpgid(root) if pid_alive(root) else None
    pids = descendants(root)
    groups = _groups(pids, own_group)
    _signal(pids, groups, signal.SIGTERM)
    give_up = time.monotonic() + grace
    while time.monotonic() < give_up and any(pid_alive(pid) for pid in pids):
        time.sleep(0.02)
    # Children that were started meanwhile, and whatever ignored SIGTERM.
    late = [pid for pid in descendants(root) if pid not in pids]
    pids.extend(late)
    groups |= _groups(late, own_group)
    _signal(pids, groups, signal.SIGKILL)
    return pids


def marked(name: str, value: str) -> list[int]:
    """Live processes whose environment (as they were started) holds ``name=value``.

    Children inherit the environment, also across ``setsid`` and re-parenting, so this finds
    what a tree walk cannot: every process of a scheduled run whose launcher died.
    Linux only (``/proc/<pid>/environ``); elsewhere, and for processes of other users, none."""
    needle = f"{name}={value}".encode()
    found: list[int] = []
    if not PROC.is_dir():
        return found
    for entry in PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0") and pid_alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def end_processes(pids: list[int], *, grace: float = 2.0) -> list[int]:
    """SIGTERM ``pids`` and their descendants, SIGKILL what is left after ``grace``, and wait
    (a little) until they are gone; returns every pid signalled. Their process groups are
    left alone: a pid of a dead run's list may now lead a group of someone else's."""
    targets = list(dict.fromkeys([*pids, *(child for pid in pids for child in descendants(pid))]))
    targets = [pid for pid in targets if pid != os.getpid()]
    _signal(targets, set(), signal.SIGTERM)
    give_up = time.monotonic() + grace
    while time.monotonic() < give_up and any(pid_alive(pid) for pid in targets):
        time.sleep(0.02)
    _signal(targets, set(), signal.SIGKILL)
    give_up = time.monotonic() + 2.0
    while time.monotonic() < give_up and any(pid_alive(pid) for pid in targets):
        time.sleep(0.02)
    return targets


def _groups(pids: list[int], spare: int | None) -> set[int]:
    groups = set()
    for pid in pids:
        try:
            groups.add(os.getpgid(pid))
        except ProcessLookupError:
            continue
    if spare is not None:
        groups.discard(spare)
    return groups


def _signal(pids: list[int], groups: set[int], sig: int) -> None:
    for group in groups:
        try:
            os.killpg(group, sig)
        except (ProcessLookupError, PermissionError):
            pass
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
