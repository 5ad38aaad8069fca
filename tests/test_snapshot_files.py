"""What a turn, a loop command or a repair changed (axpipe.goal.turn.snapshot_files and
changed_files), in a real repository. A clean tracked file whose stat moved is read again
(git may take a same-size edit that keeps its times for clean: tests/test_loops.py's
same-second fix shows it); a rewrite with the same bytes is no change."""

from __future__ import annotations

from pathlib import Path

from helpers import git

from axpipe.goal.turn import changed_files, snapshot_files


def test_a_rewrite_with_the_same_bytes_is_no_change(repo: Path) -> None:
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    git(repo, "add", "calc.py")
    git(repo, "commit", "-q", "-m", "calc")
    before = snapshot_files(repo)
    (repo / "calc.py").write_text((repo / "calc.py").read_text())  # new change time, same content
    assert changed_files(repo, before, snapshot_files(repo)) == []
