"""A revert puts back what the agent changed and touches nothing else (DESIGN §8).

A repair's rejected fix and a goal unit's hard stop both undo an agent's edit. Files the
agent did not touch must keep their inode, bytes and mode: a shell redirecting axpipe's
output into the checkout (``axpipe repair ... --json > out.json``) and any other program
holding a file open keep writing to the file that stays, and a revert killed half-way has
deleted or rewritten none of the user's files. Real git repositories, the real CLI."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from goalkit import Project
from helpers import AXPIPE, git, wait_for
from test_repair import CHEAT, FIX, agent_command, make_calc

# axpipe finds the file its stdout writes to through /proc (F_GETPATH on macOS)
pytestmark = pytest.mark.skipif(sys.platform not in ("linux", "darwin"), reason="needs /proc or F_GETPATH")


def user_files(root: Path) -> dict[str, tuple[int, bytes, int]]:
    """The user's own files, which no agent edits: an untracked note kept private, an empty
    placeholder, an executable script and a dirty tracked file."""
    (root / "a-empty.txt").write_text("")  # sorts before the agent's files
    (root / "notes.txt").write_text("my notes\n")
    (root / "notes.txt").chmod(0o600)
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "run.sh").chmod(0o750)
    (root / "README.md").write_text("a project, edited by its user\n")
    return {name: identity(root / name) for name in ("a-empty.txt", "notes.txt", "run.sh", "README.md")}


def identity(path: Path) -> tuple[int, bytes, int]:
    info = path.stat()
    return info.st_ino, path.read_bytes(), stat.S_IMODE(info.st_mode)


def unchanged(root: Path, before: dict[str, tuple[int, bytes, int]]) -> None:
    assert {name: identity(root / name) for name in before} == before


def test_a_rejected_fix_keeps_the_shells_open_file_and_every_file_it_did_not_touch(
        repo: Path, tmp_path: Path) -> None:
    calc = make_calc(repo)
    before = user_files(calc)
    agent = agent_command(tmp_path, [CHEAT, FIX])
    journal = calc / "journal.log"
    # `axpipe repair ... --json > out.json` in the checkout, and a file another program holds
    # open: both opened before the repair and written after it.
    with open(journal, "a") as held, open(calc / "out.json", "w") as shell_stdout:
        # --allow-test-edits: the guards reject the test edit and revert the whole fix
        completed = subprocess.run([*AXPIPE, "repair", "python3 -m unittest -q", "--json", "--allow-test-edits",
                                    "--agent-command", agent],
                                   cwd=calc, stdout=shell_stdout, stderr=subprocess.PIPE, text=True, timeout=120)
        held.write("written after the repair\n")
    assert completed.returncode == 0, completed.stderr
    report = json.loads((calc / "out.json").read_text())  # the report reached the file the shell opened
    assert report["iterations"][0]["guard"] == "skipped-test"
    assert report["final_diff"] == "calc.py (+1 -1)"
    assert journal.read_text() == "written after the repair\n"
    unchanged(calc, before)
    assert "@unittest.skip" not in (calc / "test_calc.py").read_text()


SLOW_SMUDGE = """#!/bin/sh
# git's smudge filter for test_calc.py: the revert is writing the agent's file back
touch "{marker}"
sleep 60
cat
"""


def test_a_revert_killed_half_way_has_touched_none_of_the_users_files(repo: Path, tmp_path: Path) -> None:
    calc = make_calc(repo)
    before = user_files(calc)
    # A smudge filter that waits holds the revert in the middle of writing the agent's
    # changed file back, so the kill lands during the revert and nowhere else.
    marker = tmp_path / "reverting"
    filter_script = tmp_path / "slow-smudge.sh"
    filter_script.write_text(SLOW_SMUDGE.format(marker=marker))
    filter_script.chmod(0o755)
    git(calc, "config", "filter.slow.smudge", str(filter_script))
    (calc / ".git" / "info" / "attributes").write_text("test_calc.py filter=slow\n")
    cheat = {**CHEAT, "write": {"helper.py": "x = 1\n"}}
    agent = agent_command(tmp_path, [cheat, FIX])
    with open(calc / "out.json", "w") as shell_stdout:
        process = subprocess.Popen([*AXPIPE, "repair", "python3 -m unittest -q", "--json", "--allow-test-edits",
                                    "--agent-command", agent],
                                   cwd=calc, stdout=shell_stdout, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            wait_for(marker.exists, timeout=120, what="the revert to write the agent's file back")
        finally:
            os.killpg(process.pid, signal.SIGKILL)  # axpipe, git and the filter, as a crash would
            process.wait()
    assert process.returncode == -signal.SIGKILL
    unchanged(calc, before)
    assert (calc / "out.json").stat().st_size == 0  # the shell's file: still the one it opened
    assert not (calc / "helper.py").exists()  # what the agent created went first


def test_a_hard_stop_keeps_the_shells_open_file_out_of_the_units_change(repo: Path, tmp_path: Path) -> None:
    project = Project(repo, tmp_path)
    root = project.root
    before = user_files(root)
    project.recipe(turns=[{"replace": [["calc.py", "a - b", "a + b"]], "write": {"other.py": "x = 1\n"},
                           "say": "fixed add() and more"}], extra="scope: [calc.py]\n")
    log = root / "run.log"
    # `axpipe run recipe=calc --json > run.log`: the log grows while the unit runs
    with open(log, "w") as shell_stdout:
        completed = subprocess.run([*AXPIPE, "run", "recipe=calc", "--json"], cwd=root, stdout=shell_stdout,
                                   stderr=subprocess.PIPE, text=True, timeout=120,
                                   env={**os.environ, **project.env})
    assert completed.returncode == 3, completed.stderr
    events = [json.loads(line) for line in log.read_text().splitlines()]
    stop = next(event for event in events if event["type"] == "unit.quarantined")
    assert stop["reason"] == "scope: 1 path(s) outside scope (calc.py): other.py"  # not run.log
    assert events[-1]["type"] == "run.finished"  # the whole log, in the file the shell opened
    assert "run.log" not in git(root, "diff", "--name-only", "stash@{0}^1", "stash@{0}").split()
    unchanged(root, before)
    assert not (root / "other.py").exists() and "a - b" in (root / "calc.py").read_text()
