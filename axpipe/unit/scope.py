"""Scope: the paths a unit of work may change, and the contract that checks it (DESIGN §8).

A recipe's ``scope:`` is a list of paths and globs relative to the project root (the
repository root, or the project's folder when its ``axpipe.yaml`` is in a subfolder of
the work tree, as in a monorepo):

- a plain path (``src/lib/bookmarks.ts``, ``docs``) matches itself and, when it names a
  folder, everything under it;
- ``*`` and ``?`` match within one path component, ``**`` across folders
  (``src/invoices/**``, ``**/*.test.ts``), ``[abc]`` one of the characters.

After the work phase, every path committed in ``baseline..HEAD`` and every path the unit
made dirty or created (untracked, not ignored) must match. The paths come from git: both
sides of a rename, deletions, and files outside git's ignore rules as they stood when the
unit started (:mod:`axpipe.change.ignore_rules`: an edited ``.gitignore`` is a changed path, not a
way to expose or hide others). ``.axpipe/`` (axpipe's own state, which git never sees) is
not the unit's work. In a subfolder project, a change
outside its folder is outside every scope: it shows as ``../<path>``.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from axpipe import git
from axpipe.change.globs import glob_regex
from axpipe.errors import InputError
from axpipe.git import EMPTY_TREE
from axpipe.records import record
from axpipe.workspace import from_top, git_prefix, git_top

_GLOB_CHARS = re.compile(r"[*?\[]")


class ScopeError(InputError):
    """The scope contract cannot be evaluated (not a repository, unknown baseline): it fails closed."""


def pattern_problem(pattern: object) -> str | None:
    """Why ``pattern`` is not a usable scope entry, or None."""
    if not isinstance(pattern, str) or not pattern.strip():
        return "a scope entry must be a non-empty path or glob"
    cleaned = _clean(pattern)
    if pattern.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", pattern):
        return f"{pattern!r} is absolute; scope paths are relative to the project root"
    if ".." in cleaned.split("/"):
        return f"{pattern!r} leaves the repository ('..')"
    if cleaned.startswith("!"):
        return f"{pattern!r}: exclusions are not supported; list what may change instead"
    try:
        re.compile(_regex(cleaned))
    except re.error as error:
        return f"{pattern!r} is not a valid glob ({error})"
    return None


def _clean(pattern: str) -> str:
    cleaned = pattern.strip().replace("\\", "/")
    while cleaned.startswith("./"):
        cleaned = cleaned[2:]
    return cleaned.rstrip("/") or "."


def _regex(pattern: str) -> str:
    """A scope glob as a regular expression over a whole repository-relative path."""
    if pattern == ".":
        return ".*"
    if not _GLOB_CHARS.search(pattern):
        return re.escape(pattern) + "(?:/.*)?"  # a file, or a folder and everything in it
    # A glob naming folders (`src/*`) also covers what is inside them.
    return glob_regex(pattern) + "(?:/.*)?"


class Scope:
    """A compiled scope: which repository-relative paths it allows."""

    def __init__(self, patterns: list[str] | tuple[str, ...]) -> None:
        self.patterns = tuple(patterns)
        bad = [problem for pattern in self.patterns if (problem := pattern_problem(pattern))]
        if bad:
            raise InputError("scope: " + "; ".join(bad))
        self._compiled = re.compile("|".join(f"(?:{_regex(_clean(pattern))})" for pattern in self.patterns)
                                    or "(?!)")

    def allows(self, path: str) -> bool:
        """Whether the project-relative ``path`` may change (never one outside the project)."""
        return not path.startswith("../") and self._compiled.fullmatch(path) is not None

    def outside(self, paths: list[str] | set[str]) -> list[str]:
        """The paths this scope does not allow, sorted."""
        return sorted(path for path in set(paths) if not self.allows(path))

    def describe(self) -> str:
        return ", ".join(self.patterns) if self.patterns else "(nothing)"


# -- the contract ---------------------------------------------------------------------------


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return git.run(root, *args, optional_locks=False)


def _names(output: bytes) -> set[str]:
    return set(git.names(output))


def resolve_commit(root: Path, revision: str | None) -> str | None:
    """The commit ``revision`` names (full SHA), or None."""
    if not revision or revision.startswith("-"):
        return None
    return git.resolve_commit(root, revision, optional_locks=False)


def committed_paths(root: Path, baseline: str | None) -> set[str]:
    """Every path that differs between ``baseline`` (None: the empty tree, a goal planned
    before the first commit) and HEAD, both sides of renames included."""
    head = resolve_commit(root, "HEAD")
    if head is None:
        return set()
    base = EMPTY_TREE if baseline is None else resolve_commit(root, baseline)
    if base is None:
        raise ScopeError(f"the baseline {baseline!r} does not name a commit here (an unknown ref, or a shallow "
                         "clone without it): the scope contract cannot tell what was committed, so it fails closed")
    # --no-relative: with a user's diff.relative, git would leave out changes outside a subfolder
    listed = _git(root, "diff", "--name-only", "--no-relative", "--no-renames", "-z", base, head)
    if listed.returncode != 0:
        raise ScopeError(f"git diff {base[:12]} {head[:12]} failed: {listed.stderr.decode(errors='replace').strip()}")
    return _names(listed.stdout)


def changed_between_trees(root: Path, before: str, after: str) -> set[str]:
    """Paths that differ between two trees (snapshots of the working tree)."""
    if before == after:
        return set()
    listed = _git(root, "diff", "--name-only", "--no-relative", "--no-renames", "-z", before, after)
    if listed.returncode != 0:
        raise ScopeError(f"cannot compare the working tree with its state before the unit: "
                         f"{listed.stderr.decode(errors='replace').strip()}")
    return _names(listed.stdout)


@record
class ScopeReport:
    """What the scope contract saw: the paths it judged and those outside the scope."""

    scope: Scope
    committed: list[str]
    dirty: list[str]
    outside: list[str]

    @property
    def ok(self) -> bool:
        return not self.outside

    def summary(self) -> str:
        judged = len(set(self.committed) | set(self.dirty))
        if self.ok:
            return f"scope held: {judged} changed path(s) inside {self.scope.describe()}"
        shown = ", ".join(self.outside[:10]) + (f" and {len(self.outside) - 10} more" if len(self.outside) > 10 else "")
        return f"{len(self.outside)} path(s) outside scope ({self.scope.describe()}): {shown}"


def check_contract(root: Path, scope: Scope, *, baseline: str | None, start_tree: str | None,
                   end_tree: str | None) -> ScopeReport:
    """Judge the unit: committed paths since ``baseline`` and paths changed in the working tree
    since ``start_tree`` (both snapshots include untracked files) must all be in ``scope``."""
    if start_tree is None or end_tree is None:
        raise ScopeError("the scope contract needs a git repository (no snapshot of the tree before the unit)")
    top = git_top(root)
    prefix = git_prefix(root, top) if top is not None else ""
    committed = {from_top(path, prefix) for path in committed_paths(root, baseline)}
    dirty = {from_top(path, prefix) for path in changed_between_trees(root, start_tree, end_tree)}
    return ScopeReport(scope, sorted(committed), sorted(dirty), scope.outside(committed | dirty))
