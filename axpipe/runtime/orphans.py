"""What recovery does with a scheduled run whose launcher died: end what is left of it, then
record how it really ended.

A launcher that dies (SIGKILL, the OOM killer) cannot record its run. Its ``axpipe run``
gets SIGTERM from the kernel when that happens (:mod:`axpipe.runtime.reaper`), but on a
loaded machine it may still be finishing, and a check may have left its session. Recovery
therefore ends, on this host, every process of the run — the launcher if it only hung, the
``axpipe run`` whose pid the launcher stored, their descendants, and every process carrying
the run's dispatch token — and waits for them to go *before* it records the run, so the
checkout's run lock is free when the next run is dispatched: another task never pays for it.

The outcome is the run's own when ``axpipe run`` recorded one (a run that finished its work
just before its launcher died is not called interrupted); otherwise the run failed,
interrupted.
"""

from __future__ import annotations

from pathlib import Path

from axpipe.process import pid_alive
from axpipe.runtime import reaper
from axpipe.runtime.liveness import HOST
from axpipe.runtime.processes import end_processes, marked
from axpipe.store import Store
from axpipe.store import dispatch as runs
from axpipe.store.rows import Row


def _launcher_of(run: Row, pid: int) -> bool:
    """Whether ``pid`` is still the launcher of ``run`` (not a process that reused its pid)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"axpipe.runtime.launcher" in argv and str(run["dispatch_token"]).encode() in argv


def end(run: Row) -> list[int]:
    """End every process of ``run`` that lives on this host; the pids that were ended."""
    if run["host"] != HOST or not run["dispatch_token"]:
        return []  # another host's processes: its own backend recovers them
    pids = marked(reaper.MARK_ENV, run["dispatch_token"])
    launcher = run["launcher_pid"]
    if launcher and pid_alive(int(launcher)) and _launcher_of(run, int(launcher)):
        pids.append(int(launcher))  # alive but silent (stopped, hung): it is given up, so it goes too
    child = run.get("child_pid")
    if child and not Path("/proc").is_dir() and pid_alive(int(child)):
        pids.append(int(child))  # no /proc to read its mark from: the stored pid is all there is
    return end_processes(pids) if pids else []


def outcome(store: Store, run: Row, now_real: float, ended: list[int]) -> tuple[str, str]:
    """``(status, reason)`` to record for ``run``, whose launcher died."""
    beat = run["heartbeat_real"]
    silent = f"{now_real - beat:.1f} s" if beat else "ever"
    launcher = f"the launcher (pid {run['launcher_pid']} on {run['host']})"
    cleanup = f"; its remaining processes were ended (pids {', '.join(map(str, sorted(ended)))})" if ended else ""
    child = runs.child_record(store, run["run_dir"]) if run["run_dir"] else None
    if child is not None and child["finished_at"] and child["status"] != "interrupted":
        status = "succeeded" if child["exit_code"] == 0 else "failed"
        return status, (f"exit code {child['exit_code']}: {child['summary']} ({launcher} died before recording "
                        f"it; no heartbeat for {silent}){cleanup}")
    return "failed", (f"interrupted: {launcher} stopped without recording an outcome; no heartbeat for "
                      f"{silent}{cleanup}")
