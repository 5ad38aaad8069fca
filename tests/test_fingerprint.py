"""The source fingerprint: what it covers, every no-fresh-evidence case, and the stat cache."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from helpers import git

from axpipe.goal import fingerprint
from axpipe.goal.fingerprint import compute


@pytest.fixture
def project(repo: Path) -> Path:
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("print('app')\n")
    (repo / "config.local.yaml").write_text("secret: no\n")
    (repo / ".gitignore").write_text("config.local.yaml\nbuild/\n*.log\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "app")
    return repo


def test_same_tree_same_digest_and_an_edit_changes_it(project: Path) -> None:
    first = compute(project, ["."])
    assert first.fresh and first.digest == compute(project, ["."]).digest
    (project / "src" / "app.py").write_text("print('changed')\n")
    assert compute(project, ["."]).digest != first.digest


def test_untracked_non_ignored_files_count_and_ignored_ones_do_not(project: Path) -> None:
    before = compute(project, ["src"]).digest
    (project / "src" / "new.py").write_text("x = 1\n")
    with_untracked = compute(project, ["src"]).digest
    assert with_untracked != before
    (project / "src" / "debug.log").write_text("noise\n")
    assert compute(project, ["src"]).digest == with_untracked


def test_an_explicitly_named_ignored_file_is_included(project: Path) -> None:
    named = compute(project, ["src", "config.local.yaml"])
    (project / "config.local.yaml").write_text("secret: yes\n")
    assert compute(project, ["src", "config.local.yaml"]).digest != named.digest
    assert compute(project, ["src"]).entries == 1


def test_files_outside_source_paths_do_not_count(project: Path) -> None:
    before = compute(project, ["src"]).digest
    (project / "README.md").write_text("changed readme\n")
    assert compute(project, ["src"]).digest == before


def test_agent_edited_files_join_the_scope(project: Path) -> None:
    (project / "notes.txt").write_text("v1\n")
    git(project, "add", "notes.txt")
    base = compute(project, ["src"], extra_files=["notes.txt"]).digest
    (project / "notes.txt").write_text("v2\n")
    assert compute(project, ["src"], extra_files=["notes.txt"]).digest != base


def test_deleting_a_tracked_file_changes_the_digest(project: Path) -> None:
    before = compute(project, ["."]).digest
    (project / "src" / "app.py").unlink()
    after = compute(project, ["."])
    assert after.fresh and after.digest != before


@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
def test_files_git_is_told_not_to_look_at_are_read_from_disk(project: Path, flag: str) -> None:
    # git status is silent about such a file and its index blob is the old content: the
    # fingerprint must still follow the bytes a check will see.
    git(project, "update-index", flag, "src/app.py")
    before = compute(project, ["src"]).digest
    (project / "src" / "app.py").write_text("print('changed behind git')\n")
    assert git(project, "status", "--porcelain", "--", "src") == ""  # git does not see it
    assert compute(project, ["src"]).digest != before


def test_a_file_name_that_is_not_utf8_is_fingerprinted_by_its_bytes(project: Path) -> None:
    name = os.fsdecode(b"data-\xff\xfe.txt")
    (project / "src" / name).write_text("one\n")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "odd name")
    first = compute(project, ["src"])
    assert first.fresh and first.digest == compute(project, ["src"]).digest
    (project / "src" / name).write_text("two\n")
    assert compute(project, ["src"]).digest != first.digest


def test_the_state_folder_is_never_part_of_the_source(project: Path) -> None:
    before = compute(project, ["."], extra_files=[".axpipe/report.txt"]).digest
    (project / ".axpipe").mkdir(exist_ok=True)
    (project / ".axpipe" / "report.txt").write_text("written by a check\n")
    assert compute(project, ["."], extra_files=[".axpipe/report.txt"]).digest == before


def test_executable_bit_changes_the_digest(project: Path) -> None:
    before = compute(project, ["src"]).digest
    os.chmod(project / "src" / "app.py", 0o755)
    assert compute(project, ["src"]).digest != before


def test_outside_git_a_walk_counts_missing_paths(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.txt").write_text("1")
    first = compute(tmp_path, ["a", "b.txt"])
    assert first.fresh and first.entries == 2  # b.txt is missing and still an entry
    (tmp_path / "b.txt").write_text("now here")
    assert compute(tmp_path, ["a", "b.txt"]).digest != first.digest


# -- no fresh evidence ----------------------------------------------------------------------


def no_evidence(root: Path, paths: list[str], **kwargs: object) -> list[str]:
    result = compute(root, paths, **kwargs)  # type: ignore[arg-type]
    assert result.digest is None
    return result.reasons


def test_symlink_gives_no_fresh_evidence(project: Path) -> None:
    (project / "src" / "link.py").symlink_to(project / "src" / "app.py")
    assert no_evidence(project, ["src"]) == ["symlink: src/link.py"]


def test_tracked_symlink_gives_no_fresh_evidence(project: Path) -> None:
    (project / "src" / "link.py").symlink_to("app.py")
    git(project, "add", "src/link.py")
    assert no_evidence(project, ["src"]) == ["symlink: src/link.py"]


def test_symlink_outside_git(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "f").write_text("x")
    (tmp_path / "linked").symlink_to(tmp_path / "real")
    assert no_evidence(tmp_path, ["."]) == ["symlink: linked"]


def test_nested_repository_gives_no_fresh_evidence(project: Path) -> None:
    nested = project / "src" / "vendored"
    nested.mkdir()
    git(nested, "init", "-q")
    (nested / "lib.py").write_text("x")
    assert no_evidence(project, ["src"]) == ["nested git repository: src/vendored"]


def test_nested_repository_outside_git(tmp_path: Path) -> None:
    (tmp_path / "inner").mkdir()
    git(tmp_path / "inner", "init", "-q")
    assert no_evidence(tmp_path, ["."]) == ["nested git repository: inner"]


def test_special_file_gives_no_fresh_evidence(project: Path) -> None:
    os.mkfifo(project / "src" / "pipe")
    assert no_evidence(project, ["src"], extra_files=["src/pipe"]) == ["special file: src/pipe"]


def test_escaping_paths_give_no_fresh_evidence(project: Path, tmp_path: Path) -> None:
    assert no_evidence(project, ["../elsewhere"]) == ["path escapes the workspace: ../elsewhere"]
    assert no_evidence(project, ["/etc"]) == ["path escapes the workspace: /etc"]
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "door").symlink_to(outside)
    assert no_evidence(project, ["door"])[0].startswith("path escapes the workspace: door (resolves to")


def test_unreadable_file_gives_no_fresh_evidence(project: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads every file; an unreadable file cannot be made here")
    target = project / "src" / "app.py"
    target.chmod(0)
    try:
        assert no_evidence(project, ["src"]) == ["unreadable file: src/app.py (Permission denied)"]
    finally:
        target.chmod(0o644)


def test_unreadable_file_as_root_through_a_directory_file(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Root can read anything, so make the open itself fail the way an unreadable file does.
    real_open = os.open

    def failing_open(path: object, flags: int, *args: object) -> int:
        if str(path).endswith("app.py"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(fingerprint.os, "open", failing_open)
    assert no_evidence(project, ["src"], use_cache=False) == ["unreadable file: src/app.py (Permission denied)"]


def test_file_changed_while_hashing_gives_no_fresh_evidence(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_read = os.read
    target = project / "src" / "app.py"

    def read_then_append(fd: int, size: int) -> bytes:
        data = real_read(fd, size)
        if data and os.fstat(fd).st_ino == target.stat().st_ino:
            with target.open("a") as handle:  # another process writes while we hash
                handle.write("more\n")
        return data

    monkeypatch.setattr(fingerprint.os, "read", read_then_append)
    assert no_evidence(project, ["src"], use_cache=False) == ["file changed while hashing: src/app.py"]


def test_entry_limit(project: Path) -> None:
    for index in range(5):
        (project / "src" / f"m{index}.py").write_text(str(index))
    assert no_evidence(project, ["src"], max_entries=3) == ["more than 3 entries under the source paths"]


def test_byte_limit(project: Path) -> None:
    (project / "src" / "big.bin").write_bytes(b"x" * 5000)
    assert no_evidence(project, ["src"], max_bytes=4096) == ["more than 4096 bytes of content under the source paths"]


# -- stat cache -----------------------------------------------------------------------------


def test_second_fingerprint_reads_only_what_changed(project: Path) -> None:
    for index in range(20):
        (project / "src" / f"m{index}.py").write_text(f"value = {index}\n")
    old = time.time() - 10  # files older than the cache are trusted on the next run
    for path in (project / "src").iterdir():
        os.utime(path, (old, old))
    first = compute(project, ["src"])
    assert first.hashed == 21
    again = compute(project, ["src"])
    assert again.hashed == 0 and again.digest == first.digest
    (project / "src" / "m3.py").write_text("value = 'changed'\n")
    changed = compute(project, ["src"])
    assert changed.hashed == 1 and changed.digest != first.digest


def test_racy_entries_are_rehashed(project: Path) -> None:
    first = compute(project, ["src"])  # app.py was just written: as new as the cache itself
    assert first.hashed == 1
    target = project / "src" / "app.py"
    info = target.stat()
    target.write_text("PRINT('app')\n")  # same size, and maybe the same coarse timestamp
    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
    second = compute(project, ["src"])
    assert second.hashed == 1, "an entry as new as the cache must not be trusted"
    assert second.digest != first.digest


def test_a_corrupt_cache_is_ignored(project: Path) -> None:
    first = compute(project, ["src"])
    (project / ".axpipe" / "fingerprint.cache").write_bytes(b"not a pickle")
    assert compute(project, ["src"]).digest == first.digest
