"""SIGTERM and SIGHUP end ``repair``, ``review round``, ``receipts verify`` and ``gate`` as
Ctrl-C does: the processes they started are gone, the exit code is 130, and what they
record says "interrupted". The signal goes to the real CLI while its child holds."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import AXPIPE, git, interrupts_as_default, wait_for, write_recipe
from review_fixtures import build

from axpipe.process import pid_alive

SIGNALS = [signal.SIGTERM, signal.SIGHUP]


def holder(hold: Path, pid_file: Path) -> list[str]:
    """A command that writes its pid and runs until ``hold`` is removed."""
    return [sys.executable, "-c", "import os, sys, time\nopen(sys.argv[2], 'w').write(str(os.getpid()))\n"
            "while os.path.exists(sys.argv[1]): time.sleep(0.02)", str(hold), str(pid_file)]


def interrupt(root: Path, args: list[str], pid_file: Path, hold: Path, signum: int) -> str:
    """Start ``axpipe ARGS``, signal it once its child runs, and check the child is gone."""
    hold.touch()
    running = subprocess.Popen([*AXPIPE, *args], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, preexec_fn=interrupts_as_default)
    try:
        child = int(wait_for(lambda: pid_file.exists() and pid_file.read_text(), what="the child to start"))
        running.send_signal(signum)
        output, _ = running.communicate(timeout=60)
        # Asserted while `hold` still exists: a child left running would still be holding.
        wait_for(lambda: not pid_alive(child), timeout=10, what="the child to be gone, not orphaned")
    finally:
        hold.unlink(missing_ok=True)
        running.kill()
    assert running.returncode == 130, output
    assert "axpipe: error: interrupted" in output
    return output


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_gate(repo: Path, tmp_path: Path, signum: int) -> None:
    (repo / "app.py").write_text("x = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "app")
    hold, pid_file = tmp_path / "hold", tmp_path / "pid"
    interrupt(repo, ["gate", "--command", subprocess.list2cmdline(holder(hold, pid_file))], pid_file, hold, signum)


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_repair(repo: Path, tmp_path: Path, signum: int) -> None:
    hold, pid_file = tmp_path / "hold", tmp_path / "pid"
    agent = subprocess.list2cmdline([sys.executable, "-c", "pass"])  # never reached: the target holds
    interrupt(repo, ["repair", subprocess.list2cmdline(holder(hold, pid_file)), "--agent-command", agent],
              pid_file, hold, signum)
    (events,) = (repo / ".axpipe" / "runs").glob("*/*-repair/events.jsonl")
    last = json.loads(events.read_text().splitlines()[-1])
    assert (last["type"], last["reason"]) == ("repair.interrupted", f"received {signal.Signals(signum).name}")


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_review_round(repo: Path, tmp_path: Path, signum: int) -> None:
    hold, pid_file = tmp_path / "hold", tmp_path / "pid"
    (repo / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    (repo / ".gitignore").write_text("/review/\n")
    write_recipe(repo / "recipes", "slow-review", f"""
name: slow-review
reviewers:
  - name: slow
    command: {json.dumps(holder(hold, pid_file))}
receipts:
  root: review
""")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "review recipe")
    interrupt(repo, ["review", "round", "--recipe", "slow-review"], pid_file, hold, signum)
    (attempt,) = (repo / "review" / "attempts" / "round-1").iterdir()
    record = json.loads((attempt / "attempt.json").read_text())
    assert (record["status"], record["reasons"]) == ("interrupted",
                                                     [f"interrupted (received {signal.Signals(signum).name})"])
    assert not (repo / "review" / "round-1").exists()


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_receipts_verify(repo: Path, tmp_path: Path, signum: int) -> None:
    receipts = build(repo)
    hold, pid_file = tmp_path / "hold", tmp_path / "pid"
    # The regression test the dispositions name runs under this conftest, which holds.
    receipts.commit("tests/conftest.py", "import subprocess\n"
                    f"subprocess.run({holder(hold, pid_file)!r}, check=True)\n", "a slow test set-up")
    interrupt(repo, ["receipts", "verify", "--root", "review"], pid_file, hold, signum)
