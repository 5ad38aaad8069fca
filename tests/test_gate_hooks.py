"""`axpipe gate` as a pre-commit hook (docs/cli.md recommends `--baseline HEAD` there): git
exports GIT_INDEX_FILE to the hook, and the gate's baseline worktree must not inherit it,
or `git worktree add` writes the baseline's tree into the commit being made. A real hook in
a real repository runs the real CLI."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import GIT_IDENTITY, git

TESTS = """def test_fine():
    assert True


def test_known_broken():
    assert 1 == 2
"""


@pytest.fixture
def hooked(repo: Path) -> Path:
    """A repository whose HEAD has one failing test, and a pre-commit hook running the gate."""
    (repo / "tests").mkdir()
    (repo / "tests" / "test_a.py").write_text(TESTS)
    (repo / "data.txt").write_text("v1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a failing test at HEAD")
    test = "python -m pytest -q -p no:cacheprovider --junitxml={junit_xml} tests"
    axpipe = " ".join(shlex.quote(part) for part in [sys.executable, "-m", "axpipe"])
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\nexec {axpipe} gate --baseline HEAD --test {shlex.quote(test)} "
                    f"--report-dir .axpipe/hook-report > .git/hook-output.txt 2>&1\n")
    hook.chmod(0o755)
    return repo


def commit(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "commit", "-q", *args], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, **GIT_IDENTITY})


@pytest.mark.parametrize("how", ["commit -a", "add, then commit"])
def test_a_hook_commits_the_change_and_a_pre_existing_failure_does_not_block(hooked: Path, how: str) -> None:
    (hooked / "data.txt").write_text("v3\n")
    if how == "add, then commit":
        git(hooked, "add", "data.txt")
        done = commit(hooked, "-m", "v3")
    else:
        done = commit(hooked, "-am", "v3")
    output = (hooked / ".git" / "hook-output.txt").read_text()
    assert done.returncode == 0, output
    assert git(hooked, "show", "--format=", "--name-only", "HEAD").split() == ["data.txt"]
    assert git(hooked, "show", "HEAD:data.txt") == "v3\n"
    assert git(hooked, "status", "--porcelain", "--untracked-files=no") == ""  # nothing left unstaged
    assert "pre-existing: tests.test_a::test_known_broken" in output, output
    assert "index file open failed" not in output
    assert git(hooked, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_a_hook_still_blocks_a_commit_that_breaks_a_test_and_leaves_the_index_alone(hooked: Path) -> None:
    (hooked / "tests" / "test_a.py").write_text(TESTS.replace("assert True", "assert False"))
    git(hooked, "add", "tests/test_a.py")
    staged = git(hooked, "diff", "--cached")
    done = commit(hooked, "-m", "breaks test_fine")
    output = (hooked / ".git" / "hook-output.txt").read_text()
    assert done.returncode != 0
    assert "blamed: tests.test_a::test_fine" in output and "it passes at the baseline" in output, output
    assert "pre-existing: tests.test_a::test_known_broken" in output
    assert git(hooked, "log", "--format=%s") == "a failing test at HEAD\ninitial\n"
    assert git(hooked, "diff", "--cached") == staged  # the staged change is exactly as it was
