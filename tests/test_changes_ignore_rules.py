"""Snapshots under captured ignore rules (:mod:`axpipe.change.ignore_rules`) and with git's index flags.

The rules git reads from ``core.excludesFile``, ``info/exclude`` and every ``.gitignore``
are written as one exclude file; it must classify a tree exactly as git does, and a
snapshot taken under it must not change when the ``.gitignore`` files change afterwards."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from helpers import git

from axpipe.change import ignore_rules
from axpipe.change.from_git import snapshot


def files(root: Path, tree: str) -> list[str]:
    return git(root, "ls-tree", "-r", "--name-only", tree).split("\n")[:-1]


def listing(root: Path, *args: str) -> list[str]:
    return sorted(git(root, "ls-files", "--others", *args).splitlines())


@pytest.fixture
def tricky(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A tree whose rules use every form: nested files, negations, anchors, folder-only
    patterns, escapes, odd folder names, info/exclude and a global excludes file."""
    rules = {
        ".gitignore": "*.log\n!keep.log\nbuild/\n/top-only.txt\n# a comment\n\\#hash\ntrailing.txt   \n",
        "src/.gitignore": "*.tmp\n/anchored.txt\ndeep/inner.txt\n!important.log\ncache/\nout/   \n",
        "src/deep/.gitignore": "!*.tmp\nlocal\\ space \n",
        "a[1] *?/.gitignore": "x.txt\n",
        "crlf/.gitignore": "\ufeffwin.txt\r\n",
    }
    for name, text in rules.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_bytes(text.encode())
    present = ["a.log", "keep.log", "build/out.o", "top-only.txt", "src/top-only.txt", "#hash", "trailing.txt",
               "src/x.tmp", "src/anchored.txt", "src/sub/anchored.txt", "src/deep/inner.txt", "src/deep/x.tmp",
               "src/important.log", "src/cache/c.bin", "src/deep/local ", "src/deep/local", "a[1] *?/x.txt",
               "a1 xy/x.txt", "crlf/win.txt",
               "src/sub/y.tmp", "src/sub/cache/c.bin", "src/sub/out/o.bin",
               "excluded.txt", "global.txt", "plain.txt", "src/deep/new/x.tmp"]
    for name in present:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(name + "\n")
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("excluded.txt\n")
    global_file = tmp_path / "global-ignore"
    global_file.write_text("global.txt\n")
    git(repo, "config", "core.excludesFile", str(global_file))
    return repo


def test_the_captured_rules_classify_the_tree_as_git_does(tricky: Path, tmp_path: Path) -> None:
    captured = tmp_path / "captured"
    captured.write_bytes(ignore_rules.capture(tricky).patterns)
    for args in ([], ["--ignored"], ["--ignored", "--directory"]):
        assert listing(tricky, *args, f"--exclude-from={captured}") == listing(tricky, *args, "--exclude-standard")
    shown = listing(tricky, "--exclude-standard")
    assert "src/deep/x.tmp" in shown and "a1 xy/x.txt" in shown  # a negation, a literal folder name
    assert "src/sub/y.tmp" not in shown and "src/sub/anchored.txt" in shown  # any depth, anchored
    assert "src/sub/out/o.bin" not in shown  # `out/` followed by spaces is still a folder name


def test_a_snapshot_under_captured_rules_ignores_later_rule_edits(tricky: Path) -> None:
    rules = ignore_rules.capture(tricky)
    before = snapshot(tricky, rules)
    assert before == snapshot(tricky)  # the same tree git's own rules give
    for name in (".gitignore", "src/.gitignore", "src/deep/.gitignore"):
        (tricky / name).write_text("")
    (tricky / ".git" / "info" / "exclude").write_text("plain.txt\n")
    after = snapshot(tricky, rules)
    changed = git(tricky, "diff", "--name-only", before, after).split()
    assert changed == [".gitignore", "src/.gitignore", "src/deep/.gitignore"]
    assert "plain.txt" in files(tricky, after)  # the new exclude hides nothing


def test_tracked_files_the_rules_match_stay_and_force_added_ones_do_not(repo: Path) -> None:
    (repo / ".gitignore").write_text("*.env\n")
    (repo / "tracked.env").write_text("committed anyway\n")
    git(repo, "add", ".gitignore")
    git(repo, "add", "-f", "tracked.env")
    git(repo, "commit", "-q", "-m", "tracked despite the rules")
    (repo / "local.env").write_text("TOKEN=1\n")
    rules = ignore_rules.capture(repo)
    assert rules.tracked == frozenset({"tracked.env"})
    before = snapshot(repo, rules)
    git(repo, "add", "-f", "local.env")
    assert snapshot(repo, rules) == before
    assert "tracked.env" in files(repo, before) and "local.env" not in files(repo, before)


@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
def test_a_snapshot_sees_through_index_flags_and_leaves_the_index_alone(repo: Path, flag: str) -> None:
    (repo / "setup.cfg").write_text("[metadata]\n")
    git(repo, "add", "setup.cfg")
    git(repo, "commit", "-q", "-m", "metadata")
    clean = snapshot(repo)
    git(repo, "update-index", flag, "setup.cfg")
    (repo / "setup.cfg").write_text("[metadata]\nname = hidden\n")
    index = (repo / ".git" / "index").read_bytes()
    assert git(repo, "status", "--porcelain") == ""  # git itself no longer sees the edit
    edited = snapshot(repo)
    assert git(repo, "diff", "--name-only", clean, edited).split() == ["setup.cfg"]
    assert (repo / ".git" / "index").read_bytes() == index
    tag = subprocess.run(["git", "ls-files", "-v", "setup.cfg"], cwd=repo, capture_output=True, text=True).stdout
    assert tag.startswith("h " if flag == "--assume-unchanged" else "S ")
