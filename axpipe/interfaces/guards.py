"""Repair guards (``axpipe.guards``): find cheating fixes in a change."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from axpipe.records import record

# -- guards (axpipe.guards) -------------------------------------------------------------
#
# A guard looks at one change (the files an agent touched, before and after) and reports
# the ways it made a check pass without fixing anything: a test deleted or skipped, an
# assertion loosened, the error swallowed, the expected value hardcoded. The repair loop
# runs every guard on each iteration's diff; `axpipe guard` runs them on any change.
#
# How the repair loop (or any caller) uses them:
#
#     from axpipe.guard.run import find_cheating, snapshot
#     before = snapshot(root)                  # a tree id of the whole working tree, untracked files too
#     ...the agent edits, may even commit...
#     findings = find_cheating(root, before, GuardContext(failure_output=tail, command=target),
#                              guards=recipe.repair.guards)    # None: every installed guard
#     if findings: revert to `before`, count the attempt, tell the agent findings[i].describe()
#
# `before` also makes the revert exact and limited to the iteration's edit:
# `git restore --source=<before> --worktree -- .` puts back every file it holds, and files
# the fix created are the paths in `git diff --name-only --diff-filter=A <before>` plus
# untracked ones not in `git ls-tree -r --name-only <before>`. find_cheating raises
# InputError (unknown base, not a repository), PluginError (unknown guard) or GuardError
# (a guard crashed: never read that as "honest"). Only the changed files are read and
# parsed, so the cost follows the size of the change, not of the repository.


class GuardClass(StrEnum):
    """What a cheating fix did. Built-in guards report these; a plugin may add its own."""

    DELETED_TEST = "deleted-test"              # a test removed, or renamed so it is not collected
    SKIPPED_TEST = "skipped-test"              # skipped, expected to fail, todo, or `.only` elsewhere
    LOOSENED_ASSERTION = "loosened-assertion"  # assertions removed, weakened, tolerance widened
    SWALLOWED_ERROR = "swallowed-error"        # the error caught and discarded
    HARDCODED_EXPECTED = "hardcoded-expected"  # the expected value returned, or a branch on the test input


@record(frozen=True)
class Hunk:
    """One ``@@ -old_start,old_count +new_start,new_count @@`` block of a unified diff.

    ``lines`` keep their diff prefix: ``" "`` context, ``"-"`` removed, ``"+"`` added."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: tuple[str, ...]

    def removed(self) -> list[tuple[int, str]]:
        """``(line number in the old file, text)`` of every removed line."""
        return [(number, text) for kind, number, text in self._walk() if kind == "-"]

    def added(self) -> list[tuple[int, str]]:
        """``(line number in the new file, text)`` of every added line."""
        return [(number, text) for kind, number, text in self._walk() if kind == "+"]

    def _walk(self) -> list[tuple[str, int, str]]:
        old, new = self.old_start, self.new_start
        walked: list[tuple[str, int, str]] = []
        for line in self.lines:
            kind, text = line[:1], line[1:]
            if kind == "-":
                walked.append(("-", old, text))
                old += 1
            elif kind == "+":
                walked.append(("+", new, text))
                new += 1
            else:
                old += 1
                new += 1
        return walked


@record
class ChangedFile:
    """One file of a change, as a guard sees it.

    ``before``/``after`` are the whole old and new texts when they are known: always from a
    git repository, and from a patch when it applies to the files on disk (or is a new or
    deleted file). A patch alone knows only its hunks: then ``complete`` is False and the
    texts are None, and guards fall back to what the hunks show.
    """

    old_path: str | None      # None: the file is new
    new_path: str | None      # None: the file was deleted
    before: str | None
    after: str | None
    hunks: list[Hunk] = field(default_factory=list)
    complete: bool = True
    binary: bool = False

    @property
    def path(self) -> str:
        """The path findings name: the new path, or the old one for a deleted file."""
        return self.new_path or self.old_path or ""

    @property
    def status(self) -> str:
        """``added``, ``deleted``, ``renamed`` or ``modified``."""
        if self.old_path is None:
            return "added"
        if self.new_path is None:
            return "deleted"
        return "renamed" if self.old_path != self.new_path else "modified"

    def added_lines(self) -> list[tuple[int, str]]:
        return [pair for hunk in self.hunks for pair in hunk.added()]

    def removed_lines(self) -> list[tuple[int, str]]:
        return [pair for hunk in self.hunks for pair in hunk.removed()]


class RepoLookup(Protocol):
    """The repository around a change, for guards that need files the change did not touch
    (the test that asserts what a changed function returns). Reads the new state."""

    def read(self, path: str) -> str | None:
        """The text of ``path`` (relative to the root) as it is now, or None."""
        ...

    def files_mentioning(self, word: str, globs: tuple[str, ...]) -> list[str]:
        """Paths matching one of ``globs`` (``**/test_*.py``: ``**`` spans folders, ``*``
        does not) whose text contains ``word`` as a whole word."""
        ...


@record
class ChangeSet:
    """Everything that changed, with where it came from (``git diff <rev>``, ``patch x.diff``)."""

    files: list[ChangedFile]
    source: str
    root: Path | None = None
    lookup: RepoLookup | None = None
    notes: list[str] = field(default_factory=list)
    """What the guards could not see (a patch that does not apply, an unreadable file)."""

    def matching(self, suffixes: tuple[str, ...]) -> list[ChangedFile]:
        """The changed files whose path (old or new) ends with one of ``suffixes``."""
        return [item for item in self.files if not item.binary and
                any((path or "").endswith(suffixes) for path in (item.old_path, item.new_path))]


@record
class CollectedTests:
    """What the project's runner collected at the base and after the change (see
    :mod:`axpipe.guard.runner_tests`): ``(file, name)`` -> ``run``, ``skip``, ``xfail`` or
    ``listed`` (the runner lists without a status), files from the repository's top, names
    as the guards spell them (``TestCalc.test_add``, ``cart > adds``, a jest file's path).
    ``error`` says why the runner could not list the tests; then both sides are empty and the
    guards judge from the change's text, and say so."""

    runner: str
    before: dict[tuple[str, str], str] = field(default_factory=dict)
    after: dict[tuple[str, str], str] = field(default_factory=dict)
    error: str | None = None

    @property
    def known(self) -> bool:
        return self.error is None

    def runs(self, path: str, name: str) -> bool:
        """Does the runner collect (and not skip) ``name`` in ``path`` after the change?"""
        return self.known and self.after.get((path, name)) in ("run", "listed")


@record
class GuardContext:
    """What the caller knows about the failure the change was meant to fix.

    All optional: without it guards still judge the change from the diff and the
    repository's tests. With it, the hardcoded-expected and swallowed-error classes also
    see the values and errors the failing run expected."""

    failure_output: str = ""
    """The failing run's output (its tail is enough): pytest/unittest/jest assertion lines."""
    failing_tests: list[str] = field(default_factory=list)
    """Ids of the failing tests: ``tests/test_x.py::test_y`` or ``path > describe > title``."""
    test_files: list[str] = field(default_factory=list)
    """Repository-relative test files the failure names (read in their current state)."""
    command: str | None = None
    """The command whose failure the change was meant to fix."""
    commands: list[str] = field(default_factory=list)
    """Every command the success condition runs (a repair's target and its phases'). The
    ``condition`` guard protects the files that define them; empty: ``command`` alone."""
    workdir: str = ""
    """Where the commands run, relative to the repository's top (``pkg/``); ``""``: the top."""
    collected: CollectedTests | None = None
    """The runner's view of the tests before and after the change (``check_change(...,
    runner=...)`` fills it in); None: the guards judge from the change's text alone."""


@dataclass(frozen=True, order=True)
class GuardFinding:
    """One thing a guard caught. ``to_json`` is the pinned shape (DESIGN §13)."""

    file: str
    line: int
    """1-based line in the new file; in the old file when the thing is gone (a deleted test)."""
    guard: str
    """The guard class (a :class:`GuardClass` value for the built-ins)."""
    evidence: str
    plugin: str = ""
    """The guard plugin that reported it (``python``, ``javascript``); not part of the JSON."""

    def to_json(self) -> dict[str, Any]:
        return {"guard": self.guard, "file": self.file, "line": self.line, "evidence": self.evidence}

    def describe(self) -> str:
        """One line for people and agents: ``tests/test_x.py:12: skipped-test: ...``."""
        return f"{self.file}:{self.line}: {self.guard}: {self.evidence}"


@runtime_checkable
class Guard(Protocol):
    """A repair guard (``axpipe.guards``): finds cheating fixes in a change.

    ``check`` must not raise for a file it cannot parse (note it in ``changes.notes`` and
    judge what it can): an exception is reported as an error of the guard run, never
    read as "nothing found"."""

    params_schema: type | None
    """Dataclass of the guard's parameters, or None when it takes none."""

    suffixes: tuple[str, ...]
    """File name endings the guard inspects (``.py``); it is not run when none changed,
    and only these files are read."""

    def describe(self) -> str:
        """What the guard covers, in one line (``plugins list``, docs)."""
        ...

    def check(self, changes: ChangeSet, context: GuardContext) -> list[GuardFinding]:
        """Every finding in ``changes``; an empty list when the change is honest."""
        ...
