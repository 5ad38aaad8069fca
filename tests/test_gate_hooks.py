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


def install_hook(git_dir: Path, output: Path) -> None:
    """A pre-commit hook in ``git_dir`` running the gate and writing what it said to ``output``."""
    test = "python -m pytest -q -p no:cacheprovider --junitxml={junit_xml} tests"
    axpipe = " ".join(shlex.quote(part) for part in [sys.executable, "-m", "axpipe"])
    hook = git_dir / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f"#!/bin/sh\nexec {axpipe} gate --baseline HEAD --test {shlex.quote(test)} "
                    f"--report-dir .axpipe/hook-report > {shlex.quote(str(output))} 2>&1\n")
    hook.chmod(0o755)


@pytest.fixture
def hooked(repo: Path) -> Path:
    """A repository whose HEAD has one failing test, and a pre-commit hook running the gate."""
    (repo / "tests").mkdir()
    (repo / "tests" / "test_a.py").write_text(TESTS)
    (repo / "data.txt").write_text("v1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a failing test at HEAD")
    install_hook(repo / ".git", repo / ".git" / "hook-output.txt")
    return repo


def commit(repo: Path, *args: str, config: tuple[str, ...] = (),
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *config, "commit", "-q", *args], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, **GIT_IDENTITY, **(env or {})})


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


# A test suite that makes a repository of its own, as many do, and one that reads a `git -c` setting.
OWN_REPOSITORY = """import os
import subprocess
import tempfile


def test_known_broken():
    assert 1 == 2


def test_makes_a_repository():
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run(["git", "init", "-q", folder], check=True)
        with open(os.path.join(folder, "fixture.txt"), "w") as handle:
            handle.write("x")
        subprocess.run(["git", "add", "fixture.txt"], cwd=folder, check=True)
        listed = subprocess.run(["git", "ls-files"], cwd=folder, capture_output=True, text=True).stdout
        assert listed == "fixture.txt\\n"


def test_fails_under_the_marker():
    marker = subprocess.run(["git", "config", "axpipe.marker"], capture_output=True, text=True).stdout
    assert marker.strip() != "set"
"""


def test_a_test_suite_run_by_the_hook_does_not_write_into_the_commit(hooked: Path) -> None:
    """`commit -a` gives the hook GIT_INDEX_FILE=.git/index.lock (absolute): a test's own
    `git add` in its temporary repository would add its files to the user's commit."""
    (hooked / "tests" / "test_a.py").write_text(OWN_REPOSITORY)
    git(hooked, "commit", "-qam", "tests that make repositories")
    (hooked / "data.txt").write_text("v3\n")
    done = commit(hooked, "-am", "v3")
    output = (hooked / ".git" / "hook-output.txt").read_text()
    assert done.returncode == 0, output
    assert "test_makes_a_repository" not in output  # it passed: its repository had its own index
    assert git(hooked, "show", "--format=", "--name-only", "HEAD").split() == ["data.txt"]
    assert git(hooked, "ls-files").split() == ["README.md", "data.txt", "tests/test_a.py"]


def test_git_c_settings_apply_at_the_baseline_too(hooked: Path) -> None:
    """`git -c axpipe.marker=set commit`: the setting reaches the hook as GIT_CONFIG_PARAMETERS;
    a test failing under it fails at the baseline under it too, so it is pre-existing."""
    (hooked / "tests" / "test_a.py").write_text(OWN_REPOSITORY)
    git(hooked, "commit", "-qam", "a test that reads a setting")
    (hooked / "data.txt").write_text("v3\n")
    done = commit(hooked, "-am", "v3", config=("-c", "axpipe.marker=set"))
    output = (hooked / ".git" / "hook-output.txt").read_text()
    assert done.returncode == 0, output
    assert "pre-existing: tests.test_a::test_fails_under_the_marker" in output, output
    assert git(hooked, "show", "HEAD:data.txt") == "v3\n"


def test_a_repository_kept_apart_from_its_work_tree_is_found_for_the_baseline(tmp_path: Path) -> None:
    """GIT_DIR and GIT_WORK_TREE set by the user (a dotfiles-style repository): without them
    `git worktree add` finds no repository, and the baseline run could not happen."""
    work, git_dir = tmp_path / "work", tmp_path / "repo.git"
    work.mkdir()
    apart = {"GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(work)}
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True, env={**os.environ, **apart})
    (work / "tests").mkdir()
    (work / "tests" / "test_a.py").write_text(TESTS)
    (work / "data.txt").write_text("v1\n")
    for step in (["add", "-A"], ["commit", "-qm", "a failing test at HEAD"]):
        subprocess.run(["git", *step], cwd=work, check=True, env={**os.environ, **GIT_IDENTITY, **apart})
    assert not (work / ".git").exists()
    output = tmp_path / "hook-output.txt"
    install_hook(git_dir, output)
    (work / "data.txt").write_text("v3\n")
    done = commit(work, "-am", "v3", env=apart)
    said = output.read_text()
    assert done.returncode == 0, said
    assert "pre-existing: tests.test_a::test_known_broken" in said, said
    assert "not a git repository" not in said
    shown = subprocess.run(["git", "show", "HEAD:data.txt"], cwd=work, capture_output=True, text=True,
                           env={**os.environ, **apart})
    assert shown.stdout == "v3\n"
