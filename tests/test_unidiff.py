"""Parsing git's unified diffs and applying them in memory, on diffs git itself wrote."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import git

from axpipe.change import unidiff


def diff_of(repo: Path, *args: str) -> str:
    git(repo, "add", "-A")
    return git(repo, "diff", "--cached", "-M", *args, "HEAD")


def test_modified_added_deleted_and_renamed_files(repo: Path) -> None:
    (repo / "keep.py").write_text("a = 1\nb = 2\nc = 3\n")
    (repo / "gone.py").write_text("x = 1\n")
    (repo / "moved.py").write_text("".join(f"line {n}\n" for n in range(20)))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "files")
    (repo / "keep.py").write_text("a = 1\nb = 20\nc = 3\n")
    (repo / "gone.py").unlink()
    (repo / "moved.py").rename(repo / "renamed.py")
    (repo / "new.py").write_text("fresh = True\n")
    patches = {(patch.old_path, patch.new_path): patch for patch in unidiff.parse(diff_of(repo))}
    assert set(patches) == {("keep.py", "keep.py"), ("gone.py", None), ("moved.py", "renamed.py"),
                            (None, "new.py")}
    keep = patches[("keep.py", "keep.py")]
    assert keep.hunks[0].removed() == [(2, "b = 2")] and keep.hunks[0].added() == [(2, "b = 20")]
    assert keep.old_blob is not None and len(keep.old_blob) >= 7
    assert patches[("moved.py", "renamed.py")].hunks == []  # a pure rename has no hunk
    assert unidiff.side_text(patches[(None, "new.py")].hunks, "+") == "fresh = True\n"
    assert unidiff.side_text(patches[("gone.py", None)].hunks, "-") == "x = 1\n"


def test_binary_files_are_marked(repo: Path) -> None:
    (repo / "image.bin").write_bytes(b"\0\1\2binary")
    patch, = unidiff.parse(diff_of(repo))
    assert patch.binary and patch.new_path == "image.bin" and patch.hunks == []
    patch, = unidiff.parse(diff_of(repo, "--binary"))
    assert patch.binary


def test_quoted_paths_with_spaces_and_non_ascii(repo: Path) -> None:
    (repo / "dir with space").mkdir()
    (repo / "dir with space" / "tést.py").write_text("x = 1\n")
    patch, = unidiff.parse(diff_of(repo))  # git quotes the path with octal escapes
    assert patch.new_path == "dir with space/tést.py"
    assert unidiff.unquote('"a\\tb\\\\c\\"d"') == 'a\tb\\c"d'


def test_no_newline_at_end_of_file_round_trips(repo: Path) -> None:
    (repo / "f.py").write_text("one\ntwo")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "f")
    (repo / "f.py").write_text("one\nthree")
    patch, = unidiff.parse(diff_of(repo))
    assert patch.old_no_newline and patch.new_no_newline
    after = unidiff.apply("one\ntwo", patch.hunks, no_newline=patch.new_no_newline)
    assert after == "one\nthree"
    assert unidiff.apply(after, patch.hunks, reverse=True, no_newline=True) == "one\ntwo"


def test_apply_finds_a_hunk_that_moved(repo: Path) -> None:
    original = "".join(f"line {n}\n" for n in range(30))
    (repo / "f.txt").write_text(original)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "f")
    (repo / "f.txt").write_text(original.replace("line 20\n", "line twenty\n"))
    patch, = unidiff.parse(diff_of(repo))
    shifted = "extra\nextra\n" + original  # the same change applies two lines further down
    assert unidiff.apply(shifted, patch.hunks) == "extra\nextra\n" + original.replace("line 20\n", "line twenty\n")
    with pytest.raises(unidiff.ApplyError):
        unidiff.apply(original.replace("line 21\n", "changed\n"), patch.hunks)


def test_plain_diff_u_output_without_git_headers() -> None:
    text = ("--- a/calc.py\t2024-01-01\n+++ b/calc.py\t2024-01-02\n"
            "@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n")
    patch, = unidiff.parse(text)
    assert (patch.old_path, patch.new_path) == ("calc.py", "calc.py")
    assert unidiff.apply("def f():\n    return 1\n", patch.hunks) == "def f():\n    return 2\n"


@pytest.mark.parametrize(("text", "message"), [
    ("hello, this is not a diff\n", "no file header"),
    ("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n", "cut short"),
    ("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ bogus @@\n", "malformed hunk header"),
])
def test_text_that_is_not_a_diff_is_refused(text: str, message: str) -> None:
    with pytest.raises(unidiff.PatchFormatError, match=message):
        unidiff.parse(text)


def test_empty_text_is_an_empty_change() -> None:
    assert unidiff.parse("") == []
    assert unidiff.parse("\n\n") == []
