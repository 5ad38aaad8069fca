"""Processes a check starts outside its process group (issue 25 item 7): a ``setsid``
grandchild ends with the run, whether the run is interrupted or ends by itself."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
from helpers import AXPIPE, interrupts_as_default, wait_for, write_recipe

from axpipe.process import pid_alive

# The check leaves a grandchild in a session of its own (out of reach of a process-group
# kill), writes its pid, then either waits (to be interrupted) or exits at once.
DAEMON = """
name: daemon
goal:
  objective: "leave a process behind"
  acceptance:
    AC1: {tag: closes, text: "left", check: leave}
  checks:
    - id: leave
      acceptance: [AC1]
      command: "setsid sleep 300 < /dev/null > /dev/null 2>&1 & echo $! > .axpipe/daemon.pid; ${then}"
      timeout: 5m
then: "echo done"
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, None])
def test_a_setsid_grandchild_of_a_check_ends_with_the_run(repo: Path, signum: int | None) -> None:
    write_recipe(repo / "recipes", "daemon", DAEMON)
    (repo / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    pid_file = repo / ".axpipe" / "daemon.pid"
    waits = [] if signum is None else ["then='sleep 300'"]
    run = subprocess.Popen([*AXPIPE, "run", "recipe=daemon", *waits], cwd=repo, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, preexec_fn=interrupts_as_default)
    try:
        daemon = int(wait_for(lambda: pid_file.exists() and pid_file.read_text().strip(), what="the daemon"))
        if signum is not None:
            run.send_signal(signum)
        output, _ = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == (0 if signum is None else 130), output
    survived = pid_alive(daemon)
    if survived:
        os.kill(daemon, signal.SIGKILL)  # not left behind by a failing test either
    assert not survived, f"the check's setsid grandchild {daemon} outlived the run"
