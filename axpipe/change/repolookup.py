"""Reading the repository around a change: a file's current text, and the files that
mention a name (to find the tests that assert what a changed function returns).

In a git repository ``git grep`` answers in milliseconds whatever the size of the tree;
elsewhere a bounded walk does, skipping hidden folders and ``node_modules``.
"""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path

from axpipe import git
from axpipe.change.globs import glob_regex

MAX_FILE_BYTES = 2 * 1024 * 1024   # larger files are not source a guard should parse
WALK_LIMIT = 20_000                 # files a walk looks at before giving up


def decode(data: bytes) -> str | None:
    """Text of a file's bytes; None for binary (NUL bytes) or oversized content."""
    if len(data) > MAX_FILE_BYTES or b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


def read_file(root: Path, path: str) -> str | None:
    """The text of ``root/path``; None when it is missing, a symlink, binary or too large."""
    full = root / path
    try:
        if full.is_symlink() or not full.is_file():
            return None
        return decode(full.read_bytes())
    except OSError:
        return None


class _Reader:
    def __init__(self, root: Path) -> None:
        self.root = root

    @cache  # noqa: B019 - one lookup object per guard run; the cache dies with it
    def read(self, path: str) -> str | None:
        return read_file(self.root, path)


class GitLookup(_Reader):
    """Files of a git work tree: tracked and untracked, ignored ones left out."""

    def files_mentioning(self, word: str, globs: tuple[str, ...]) -> list[str]:
        if not _WORD.fullmatch(word) or not globs:
            return []
        completed = git.run(self.root, "grep", "-l", "-z", "-I", "-w", "-F", "--untracked",
                            "-e", word, "--", *(f":(glob){glob}" for glob in globs))
        if completed.returncode not in (0, 1):  # 1: nothing found
            return []
        # -z and os.fsdecode: a file name that is not UTF-8 keeps its bytes (axpipe.names), so
        # read() opens it; text=True ended the guard with UnicodeDecodeError on such a name.
        return git.names(completed.stdout)


    def files(self, globs: tuple[str, ...]) -> list[str]:
        """Tracked and untracked (not ignored) files matching one of ``globs``."""
        completed = git.run(self.root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--",
                            *(f":(glob){glob}" for glob in globs))
        return git.names(completed.stdout) if completed.returncode == 0 else []


class WalkLookup(_Reader):
    """Files under a folder that is not a git work tree."""

    def files_mentioning(self, word: str, globs: tuple[str, ...]) -> list[str]:
        if not _WORD.fullmatch(word) or not globs:
            return []
        pattern = re.compile(rf"(?<![\w$]){re.escape(word)}(?![\w$])")
        wanted = re.compile("|".join(glob_regex(glob) for glob in globs))
        found: list[str] = []
        seen = 0
        for folder, subfolders, names in os.walk(self.root):
            subfolders[:] = [name for name in subfolders if not name.startswith(".") and name != "node_modules"]
            for name in names:
                seen += 1
                if seen > WALK_LIMIT:
                    return sorted(found)
                relative = os.path.relpath(os.path.join(folder, name), self.root).replace(os.sep, "/")
                if not wanted.fullmatch(relative):
                    continue
                text = self.read(relative)
                if text is not None and pattern.search(text):
                    found.append(relative)
        return sorted(found)


_WORD = re.compile(r"[A-Za-z_$][\w$]*")


