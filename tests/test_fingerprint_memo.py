"""The cache's memo: a re-fingerprint reuses the last result only while git answers the
same and the files git does not vouch for are unchanged. Each test first makes sure the
memo is there and used, then changes the tree in a way a wrong reuse would miss, and
checks the result against a fingerprint that reads every file."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import edit_after_git_answers, git

from axpipe.goal import fingerprint
from axpipe.goal.fingerprint import compute
from axpipe.goal.fingerprint_cache import Cache


def real(root: Path, paths: list[str], extra: tuple[str, ...] = ()) -> str | None:
    """The digest with no cache at all: every file read."""
    return compute(root, paths, extra_files=extra, use_cache=False).digest


def commit(root: Path) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "files")


def memo_of(root: Path) -> object:
    cache = Cache(root / ".axpipe" / "fingerprint.cache")
    cache.discard()
    return cache.old_memo


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times git's answers were parsed (not taken from the memo)."""
    calls: list[int] = []
    parse = fingerprint._git_candidates

    def counting(*args: object) -> dict[str, object]:
        calls.append(1)
        return parse(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(fingerprint, "_git_candidates", counting)
    return calls


def from_memo(root: Path, paths: list[str], parsed: list[int], extra: tuple[str, ...] = ()) -> str:
    """Fingerprint until the cache holds a memo of this tree (a file written in the same
    clock tick as the cache's stamp is racy and keeps it out), then check that the next
    fingerprint takes it without parsing git's answers."""
    for _ in range(20):
        first = compute(root, paths, extra_files=extra)
        if memo_of(root) is not None:
            break
        time.sleep(0.02)
    assert memo_of(root) is not None
    parsed.clear()
    again = compute(root, paths, extra_files=extra)
    assert parsed == [], "an unchanged tree takes the memo"
    assert again.fresh and again.digest == first.digest == real(root, paths, extra)
    assert again.digest is not None
    return again.digest


def changed(root: Path, before: str, paths: list[str], extra: tuple[str, ...] = ()) -> None:
    after = compute(root, paths, extra_files=extra)
    assert after.fresh, after.reasons
    assert after.digest != before
    assert after.digest == real(root, paths, extra)
    assert compute(root, paths, extra_files=extra).digest == after.digest


@pytest.fixture
def tree(repo: Path) -> Path:
    (repo / "src").mkdir()
    for index in range(5):
        (repo / "src" / f"m{index}.py").write_text(f"value = {index}\n")
    (repo / "src" / "edited.py").write_text("committed\n")
    commit(repo)
    (repo / "src" / "edited.py").write_text("edited before\n")  # a modified tracked file
    (repo / "src" / "new.py").write_text("untracked\n")
    return repo


def test_an_unchanged_tree_takes_the_memo_and_a_changed_one_does_not(tree: Path, parsed: list[int]) -> None:
    before = from_memo(tree, ["src"], parsed)
    (tree / "src" / "m1.py").write_text("value = 'one'\n")
    parsed.clear()
    changed(tree, before, ["src"])
    assert parsed, "git's answers changed: they are parsed again"


def test_a_tracked_file_changed_with_its_size_and_mtime_restored(tree: Path, parsed: list[int]) -> None:
    target = tree / "src" / "m2.py"
    old = target.stat().st_mtime_ns - 10**9  # not racy for git or the cache
    os.utime(target, ns=(old, old))
    before = from_memo(tree, ["src"], parsed)
    # git compares whole seconds of ctime (built without USE_NSEC, as Debian's is): the
    # edit has to come in a later second than the index entry's ctime for git to see it.
    time.sleep(1 - time.time() % 1 + 0.05)
    target.write_text("value = 9\n")  # same size
    os.utime(target, ns=(old, old))
    changed(tree, before, ["src"])


def test_an_index_rewritten_by_git_add(tree: Path, parsed: list[int]) -> None:
    before = from_memo(tree, ["src"], parsed)
    git(tree, "add", "src/edited.py")  # the worktree did not change, its blob did
    assert compute(tree, ["src"]).digest == before == real(tree, ["src"])
    (tree / "src" / "edited.py").write_text("edited after\n")
    git(tree, "add", "src/edited.py")
    changed(tree, before, ["src"])


@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
def test_a_file_flagged_after_the_memo(tree: Path, parsed: list[int], flag: str) -> None:
    before = from_memo(tree, ["src"], parsed)
    git(tree, "update-index", flag, "src/m3.py")
    (tree / "src" / "m3.py").write_text("value = 'behind git'\n")
    assert git(tree, "status", "--porcelain", "--", "src/m3.py") == ""
    changed(tree, before, ["src"])


@pytest.mark.parametrize("where", [".git/info/attributes", "src/.gitattributes"])
def test_an_attributes_file_git_does_not_list(tree: Path, parsed: list[int], where: str) -> None:
    # Neither a tracked file nor an untracked one: info/attributes, or a .gitattributes
    # git ignores. With it, git calls the edited file clean: of git's answers only the
    # listing of the files it converts changes.
    (tree / ".gitignore").write_text(".gitattributes\n")
    git(tree, "add", ".gitignore")
    git(tree, "commit", "-q", "-m", "ignore attributes")
    git(tree, "config", "filter.strip.clean", "sed 's/^value = .*/value = 3/'")
    before = from_memo(tree, ["src"], parsed)
    status = git(tree, "status", "--porcelain=v2", "--", "src")
    (tree / where).parent.mkdir(exist_ok=True)
    (tree / where).write_text("m3.py filter=strip\n")
    (tree / "src" / "m3.py").write_text("value = 9\n")  # was "value = 3": same size
    assert git(tree, "status", "--porcelain=v2", "--", "src") == status
    changed(tree, before, ["src"])


def test_core_autocrlf_turned_on(tree: Path, parsed: list[int]) -> None:
    # No change of bytes can hide behind the switch itself (the file's size differs from the
    # one git recorded), so this checks that the switch alone makes the memo go: every file
    # git may now convert is read from disk from here on.
    before = from_memo(tree, ["src"], parsed)
    git(tree, "config", "core.autocrlf", "input")
    parsed.clear()
    assert compute(tree, ["src"]).digest == before
    assert parsed == [1]
    (tree / "src" / "m4.py").write_bytes(b"value = 4\r\n")
    changed(tree, before, ["src"])


@pytest.mark.parametrize("name", ["new.py", "edited.py"])
def test_a_file_git_already_lists_changes_again(tree: Path, parsed: list[int], name: str) -> None:
    # git's answers stay the same (an untracked file is a name; a modified one shows the
    # HEAD and index blobs), so the memo is taken: its own files must be looked at again.
    before = from_memo(tree, ["src"], parsed)
    status = git(tree, "status", "--porcelain=v2", "--", "src")
    target = tree / "src" / name
    info = target.stat()
    time.sleep(0.02)
    target.write_text(target.read_text().upper())  # same size, and the mtime restored
    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert git(tree, "status", "--porcelain=v2", "--", "src") == status
    parsed.clear()
    after = compute(tree, ["src"])
    assert after.hashed == 1 and after.digest != before
    assert parsed == [1], "the memo was taken, then the tracked files were added to the changed one"
    assert after.digest == real(tree, ["src"])
    parsed.clear()
    assert compute(tree, ["src"]).digest == after.digest
    assert parsed == [], "and the new result is the memo now"


def test_a_memo_made_by_another_process_is_taken(tree: Path, parsed: list[int]) -> None:
    # git status lists the cache and its stamp file (named by process id) in .axpipe/; they
    # are not part of the answer, or no later process could take the memo.
    (tree / ".axpipe").mkdir()
    (tree / ".axpipe" / "report.txt").write_text("a check's output\n")
    for _ in range(20):
        subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; "
                        "from axpipe.goal.fingerprint import compute; compute(Path(sys.argv[1]), ['.'])", str(tree)],
                       check=True)
        if memo_of(tree) is not None:
            break
        time.sleep(0.02)
    assert memo_of(tree) is not None
    result = compute(tree, ["."])
    assert parsed == []
    assert result.digest == real(tree, ["."])


def test_an_explicitly_named_ignored_file(tree: Path, parsed: list[int]) -> None:
    (tree / ".gitignore").write_text("local.cfg\n")
    (tree / "local.cfg").write_text("a\n")
    commit(tree)
    before = from_memo(tree, ["src"], parsed, ("local.cfg",))
    assert before != real(tree, ["src"])
    (tree / "local.cfg").write_text("b\n")
    changed(tree, before, ["src"], ("local.cfg",))


def test_other_source_paths_do_not_take_the_memo(tree: Path, parsed: list[int]) -> None:
    from_memo(tree, ["src"], parsed)
    assert compute(tree, ["src"], extra_files=["README.md"]).digest == real(tree, ["src"], ("README.md",))
    from_memo(tree, ["src"], parsed)
    assert compute(tree, ["."]).digest == real(tree, ["."])


def test_a_memo_does_not_hide_a_lower_limit(tree: Path, parsed: list[int]) -> None:
    from_memo(tree, ["src"], parsed)
    assert compute(tree, ["src"], max_entries=3).reasons == ["more than 3 entries under the source paths"]
    assert compute(tree, ["src"], max_bytes=20).reasons == ["more than 20 bytes of content under the source paths"]
    assert compute(tree, ["src"]).fresh


def test_a_file_racy_for_the_blob_cache_makes_no_memo(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "app.txt").write_text("committed\n")
    commit(repo)
    edit_after_git_answers(monkeypatch, repo / "app.txt", "edited!!!\n")
    compute(repo, ["."])
    monkeypatch.undo()
    assert memo_of(repo) is None  # app.txt's digest is not its blob's: nothing to vouch for it
    (repo / "app.txt").write_text("committed\n")  # the blob's bytes again: git says clean
    assert compute(repo, ["."]).digest == real(repo, ["."])


def test_an_executable_bit_git_does_not_record_gives_one_digest(repo: Path) -> None:
    # git records 100755 only for the owner's bit: 654 is 100644 and clean to git. Read or
    # taken from the blob cache, the file has the kind git gives it.
    (repo / "tool.sh").write_text("#!/bin/sh\n")
    commit(repo)
    os.chmod(repo / "tool.sh", 0o654)
    assert git(repo, "status", "--porcelain") == ""
    assert compute(repo, ["."]).digest == real(repo, ["."])  # read: the blob cache had nothing
    (repo / "other.txt").write_text("new\n")  # git's answers change: no memo, the blob cache answers
    assert compute(repo, ["."]).digest == real(repo, ["."])
