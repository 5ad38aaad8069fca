"""Ways to make a machine fail as it does for users, for the fault tests (issue 25).

These tests run as root in CI and here, and root's DAC override reads a mode-000 folder
and writes a read-only file. :func:`without_dac_override` runs a command as a user without
it: root with ``CAP_DAC_OVERRIDE`` and ``CAP_DAC_READ_SEARCH`` dropped from its bounding
set (``setpriv``), which keeps access to this interpreter under ``/root``; or, when not
root, the command as it is."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DROP_DAC = ["--bounding-set", "-dac_override,-dac_read_search", "--"]


def without_dac_override() -> tuple[list[str] | None, str]:
    """``(prefix, "")`` to run a command without DAC override, or ``(None, why not)``."""
    if os.geteuid() != 0:
        return [], ""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None, "running as root and setpriv (util-linux) is not installed to drop CAP_DAC_OVERRIDE"
    with tempfile.TemporaryDirectory() as folder:
        closed = Path(folder) / "closed"
        closed.mkdir(mode=0o000)
        probe = subprocess.run([setpriv, *DROP_DAC, sys.executable, "-c", f"import os; os.listdir({str(closed)!r})"],
                               capture_output=True, text=True)
        closed.chmod(0o700)
    if probe.returncode == 0:
        return None, "setpriv could not drop CAP_DAC_OVERRIDE here (a mode-000 folder stayed readable)"
    if "PermissionError" not in probe.stderr:
        return None, f"setpriv could not run this interpreter: {probe.stderr.strip()[-200:]}"
    return [setpriv, *DROP_DAC], ""


def mount_small_disk(folder: Path, size: str) -> str:
    """Mount a tmpfs of ``size`` at ``folder``; "" on success, else why it could not."""
    folder.mkdir(parents=True, exist_ok=True)
    if shutil.which("mount") is None:
        return "no mount command"
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        return f"mounting a small tmpfs is not permitted here: {done.stderr.strip()}"
    return ""


def unmount(folder: Path) -> None:
    subprocess.run(["umount", "-l", str(folder)], capture_output=True)
