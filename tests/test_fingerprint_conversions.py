"""The fingerprint follows the real bytes where git's word "clean" does not: files git
converts on the way into the index, mode and stat checks the repository's config turns
off, and a file changing between git's look and the read."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from helpers import edit_after_git_answers, git, run_cli, write_recipe

from axpipe.goal.fingerprint import compute


def real(root: Path, paths: list[str]) -> str | None:
    """The digest with no cache at all: every file read."""
    return compute(root, paths, use_cache=False).digest


def commit(root: Path) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "files")


def assert_follows_the_bytes(root: Path, before: str | None, paths: list[str]) -> None:
    after = compute(root, paths)
    assert after.fresh, after.reasons
    assert after.digest != before
    assert after.digest == real(root, paths)
    assert compute(root, paths).digest == after.digest  # and stays so from the cache


# Each: set-up (attributes, config), the committed bytes, the bytes git calls the same.
CONVERSIONS = {
    "clean filter": ("src/*.cfg filter=strip", {"filter.strip.clean": "sed 's/^port=.*/port=/'"},
                     b"port=8080\n", b"port=9999\n"),
    "ident": ("src/*.cfg ident", {}, b"$Id: 1234 $\nport=1\n", b"$Id: 5678 $\nport=1\n"),
    "text": ("src/*.cfg text", {}, b"a\r\nb\n", b"a\nb\r\n"),
    "text=auto": ("src/*.cfg text=auto", {}, b"a\r\nb\n", b"a\nb\r\n"),
    "eol": ("src/*.cfg eol=lf", {}, b"a\r\nb\n", b"a\nb\r\n"),
    "core.autocrlf": ("", {"core.autocrlf": "input"}, b"a\r\nb\n", b"a\nb\r\n"),
}
# (git reports every change of size, so each pair has one size.)


@pytest.mark.parametrize("name", sorted(CONVERSIONS))
def test_a_change_git_converts_away_changes_the_digest(repo: Path, name: str) -> None:
    attributes, config, committed, same_to_git = CONVERSIONS[name]
    (repo / "src").mkdir()
    if attributes:
        (repo / ".gitattributes").write_text(attributes + "\n")
    for key, value in config.items():
        git(repo, "config", key, value)
    (repo / "src" / "app.cfg").write_bytes(committed)
    (repo / "src" / "plain.txt").write_text("not converted\n")
    commit(repo)
    before = compute(repo, ["src"]).digest
    assert before == real(repo, ["src"])
    (repo / "src" / "app.cfg").write_bytes(same_to_git)
    assert git(repo, "status", "--porcelain", "--", "src") == ""  # git calls it clean
    assert_follows_the_bytes(repo, before, ["src"])


def test_a_converted_file_does_not_borrow_the_digest_of_a_file_with_its_blob(repo: Path) -> None:
    # a.cfg's blob is "port=\n" (the filter strips the value): so is b.txt's, whose real
    # bytes are that. A digest filed under the blob must not stand for a.cfg's bytes.
    (repo / ".gitattributes").write_text("*.cfg filter=strip\n")
    git(repo, "config", "filter.strip.clean", "sed 's/^port=.*/port=/'")
    (repo / "a.cfg").write_text("port=8080\n")
    (repo / "b.txt").write_text("port=\n")
    commit(repo)
    for _ in range(3):
        assert compute(repo, ["."]).digest == real(repo, ["."])


def test_a_lost_executable_bit_counts_when_git_ignores_modes(repo: Path) -> None:
    (repo / "run.sh").write_text("#!/bin/sh\nexit 0\n")
    os.chmod(repo / "run.sh", 0o755)
    commit(repo)
    git(repo, "config", "core.fileMode", "false")
    before = compute(repo, ["."]).digest
    os.chmod(repo / "run.sh", 0o644)
    assert git(repo, "status", "--porcelain", "--", "run.sh") == ""
    assert_follows_the_bytes(repo, before, ["."])


def test_an_executable_added_while_git_ignores_modes_keeps_one_digest(repo: Path) -> None:
    # git records it 100644 (it does not trust the bit); the file on disk is executable.
    git(repo, "config", "core.fileMode", "false")
    (repo / "run.sh").write_text("#!/bin/sh\nexit 0\n")
    os.chmod(repo / "run.sh", 0o755)
    commit(repo)
    assert "100644" in git(repo, "ls-files", "-s", "run.sh")
    digests = {compute(repo, ["."]).digest for _ in range(3)}
    assert digests == {real(repo, ["."])}


@pytest.mark.parametrize("setting", [("core.trustctime", "false"), ("core.checkStat", "minimal")])
def test_a_change_that_keeps_size_and_mtime_counts_when_git_checks_less(repo: Path,
                                                                         setting: tuple[str, str]) -> None:
    (repo / "app.txt").write_text("one\n")
    commit(repo)
    old = (repo / "app.txt").stat().st_mtime_ns - 10**9  # not racy for git or the cache
    os.utime(repo / "app.txt", ns=(old, old))
    git(repo, "config", *setting)
    before = compute(repo, ["."]).digest
    # git compares whole seconds of ctime (built without USE_NSEC, as Debian's is): the
    # edit has to come in a later second than the index entry's ctime for any ctime check.
    time.sleep(1 - time.time() % 1 + 0.05)
    (repo / "app.txt").write_text("two\n")  # same size
    os.utime(repo / "app.txt", ns=(old, old))  # and the old mtime back
    assert git(repo, "status", "--porcelain", "--", "app.txt") == ""
    assert_follows_the_bytes(repo, before, ["."])


def test_a_file_changed_after_git_looked_is_not_filed_under_its_blob(repo: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "app.txt").write_text("committed\n")
    commit(repo)
    edit_after_git_answers(monkeypatch, repo / "app.txt", "edited!!!\n")
    compute(repo, ["."])
    monkeypatch.undo()
    (repo / "app.txt").write_text("committed\n")  # the blob's bytes again: git says clean
    assert git(repo, "status", "--porcelain", "--", "app.txt") == ""
    assert compute(repo, ["."]).digest == real(repo, ["."])


RECIPE = """name: port
goal:
  objective: "the service listens on 8080"
  source_paths: [src]
  acceptance:
    AC1: {tag: closes, text: "port 8080", check: port}
  checks:
    - {id: port, acceptance: [AC1], command: "src/check.sh", purpose: "the port"}
"""


def check_status(root: Path) -> str:
    completed = run_cli("goal", "status", "--json", cwd=root)
    return str(json.loads(completed.stdout)["checks"][0]["status"])


@pytest.mark.parametrize("change", ["filtered value", "executable bit"])
def test_goal_status_sees_what_git_calls_clean(repo: Path, change: str) -> None:
    """The audit's cases through the CLI: a completed goal, then a change git does not
    report; the check would now fail, so the receipt is stale."""
    (repo / "src").mkdir()
    (repo / "src" / "app.cfg").write_text("port=8080\n")
    (repo / "src" / "check.sh").write_text("#!/bin/sh\ngrep -qx port=8080 src/app.cfg\n")
    os.chmod(repo / "src" / "check.sh", 0o755)
    (repo / ".gitattributes").write_text("src/*.cfg filter=strip\n")
    (repo / ".gitignore").write_text(".axpipe/\n")
    (repo / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    write_recipe(repo / "recipes", "port", RECIPE)
    git(repo, "config", "filter.strip.clean", "sed 's/^port=.*/port=/'")
    commit(repo)
    git(repo, "config", "core.fileMode", "false")
    completed = run_cli("run", "recipe=port", cwd=repo)
    assert completed.exit_code == 0, completed.stdout + completed.stderr
    assert check_status(repo) == "passed"
    if change == "filtered value":
        (repo / "src" / "app.cfg").write_text("port=9999\n")
    else:
        os.chmod(repo / "src" / "check.sh", 0o644)
    assert git(repo, "status", "--porcelain") == ""
    assert check_status(repo) == "stale"
