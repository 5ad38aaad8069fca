"""Keeping a run's processes tied to the run: a subreaper, a parent-death signal, a marker.

Three things a run's processes can do to outlive it, and what catches each:

* a check starts a process in a session of its own (``setsid``) and exits: the process is
  re-parented to init and no process-group kill reaches it. The process that runs the
  checks (``axpipe run``, a launcher) declares itself a *child subreaper*
  (``prctl(PR_SET_CHILD_SUBREAPER)``, Linux 3.4+), so such orphans are re-parented to it
  and :func:`end_descendants` finds and ends them when the run ends;
* the launcher of a scheduled run is SIGKILLed (the OOM killer): ``axpipe run`` asks the
  kernel for SIGTERM when its parent dies (``PR_SET_PDEATHSIG``, :func:`end_with_parent`),
  so it ends as if cancelled, releases the checkout's lock and records ``interrupted``;
* everything dies but some processes of the run (or the platform is not Linux, where
  neither ``prctl`` exists): every process of a scheduled run inherits
  :data:`MARK_ENV` with the run's dispatch token, and recovery ends whatever still carries
  it (:func:`axpipe.runtime.processes.marked`), besides the pid the store records.

Where none of these holds — another operating system (no ``prctl``), a process that both
leaves its session and clears its environment, a run on another host — the orphan is not
found; docs/operations.md says so.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from axpipe.runtime.processes import kill_tree

#: Environment variable every process of a scheduled run inherits: the run's dispatch token.
MARK_ENV = "AXPIPE_SCHEDULE_DISPATCH"
#: Environment variable naming the launcher pid ``axpipe run`` must end with.
PARENT_ENV = "AXPIPE_END_WITH_PARENT"

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


def _prctl(option: int, value: int) -> bool:
    """``prctl(option, value)``; False where there is no ``prctl`` or it refuses."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # here, not at the top: ~3 ms that only Linux runs need, and only here

    try:
        # The running program's own symbols include libc's; ctypes.util.find_library would
        # start ldconfig (tens of milliseconds) to find the same library.
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def become_subreaper() -> bool:
    """Make orphaned descendants re-parent to this process (Linux); whether it holds.

    Adopted orphans that exit stay zombies until this process ends: reaping them with
    ``waitpid(-1)`` could take the exit status of a child ``subprocess`` is waiting for
    (which then reads 0, a wrong "pass"), so they are only ever killed, never reaped."""
    return _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def end_with_parent() -> None:
    """When :data:`PARENT_ENV` names our parent (a launcher started us), have the kernel
    send SIGTERM when that parent dies; if it died already, end now the same way."""
    expected = os.environ.pop(PARENT_ENV, "")  # not inherited further: checks have other parents
    if not expected.isdigit():
        return
    _prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM))
    if os.getppid() != int(expected):  # the parent died before the request took effect
        os.kill(os.getpid(), signal.SIGTERM)


def end_descendants(*, grace: float = 2.0) -> list[int]:
    """End every process below this one (adopted orphans included, with a subreaper)."""
    return kill_tree(os.getpid(), grace=grace)


@contextmanager
def ends_what_it_starts() -> Iterator[None]:
    """Within: orphans of what this process starts come back to it (a subreaper); on leaving,
    however it leaves (Ctrl-C, SIGTERM, an error, success), every process still below it is
    ended: what a check or an agent left running — ``setsid`` included — ends with the run.

    Not in a thread: jobs of a multirun on a threading backend share the process, and one
    must not end another's checks."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    become_subreaper()
    try:
        yield
    finally:
        end_descendants()
