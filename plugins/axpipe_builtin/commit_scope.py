"""Commit-scope evidence (DESIGN §8): what every commit since the baseline changed, all of it.

A ``git log <baseline>..HEAD -- <paths>`` that prints something only proves that one commit
touched one of the paths: it hides unrelated files in that commit and every other commit.
This check looks at everything instead:

- the baseline is an ancestor of HEAD, and the range ``baseline..HEAD`` is not empty;
- every changed path of every commit, with no path filter, is in scope: added, modified and
  deleted files, and both sides of renames and copies (``-M -C``);
- merge commits are rejected unless ``allow_merges``; then each is checked against each of
  its parents (everything a merge brings in must be in scope);
- each commit's subject matches ``subject`` when given (``^T-\\d{3}: ``), and the current
  branch's name matches ``branch`` when given.

Every failure names the commit and the path (or subject), not only the first one found.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import field
from pathlib import Path

from axpipe import git
from axpipe.names import printable
from axpipe.records import record
from axpipe.unit.scope import Scope
from axpipe.workspace import from_top


class CommitScopeError(Exception):
    """The question cannot be answered (not a repository, unknown baseline): no evidence either way."""


@record
class Violation:
    commit: str | None
    path: str | None
    message: str

    def describe(self) -> str:
        where = f"commit {self.commit[:12]}" if self.commit else "range"
        path = f": {self.path}" if self.path else ""
        return f"{where}{path}: {self.message}"


@record
class CommitScopeReport:
    baseline: str
    head: str
    commits: list[str] = field(default_factory=list)
    paths: int = 0
    violations: list[Violation] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return git.run(root, *args, optional_locks=False)


def _commit(root: Path, revision: str) -> str | None:
    if not revision or revision.startswith("-"):
        return None
    return git.resolve_commit(root, revision, optional_locks=False)


def _changes(root: Path, parent: str, commit: str) -> list[tuple[str, list[str]]]:
    """``(status, paths)`` of every change from ``parent`` to ``commit`` (both paths of R and C)."""
    listed = _git(root, "diff-tree", "-r", "-z", "--no-commit-id", "--name-status", "-M", "-C", parent, commit)
    if listed.returncode != 0:
        raise CommitScopeError(f"git diff-tree {parent[:12]} {commit[:12]} failed: "
                               f"{listed.stderr.decode(errors='replace').strip()}")
    return _pairs([os.fsdecode(part) for part in listed.stdout.split(b"\0") if part])


def _pairs(fields: list[str]) -> list[tuple[str, list[str]]]:
    """``--name-status -z`` fields as ``(status, paths)``: two paths for renames and copies."""
    changes, index = [], 0
    while index < len(fields):
        status = fields[index]
        count = 2 if status[:1] in ("R", "C") else 1
        changes.append((status, fields[index + 1:index + 1 + count]))
        index += 1 + count
    return changes


_WORDS = {"A": "added", "M": "modified", "D": "deleted", "T": "type changed", "R": "renamed", "C": "copied"}


def check(root: Path, *, baseline: str, scope: Scope, subject: str | None = None, allow_merges: bool = False,
          branch: str | None = None) -> CommitScopeReport:
    """Judge ``baseline..HEAD`` in the repository at ``root``."""
    inside, _, prefix = os.fsdecode(_git(root, "rev-parse", "--is-inside-work-tree", "--show-prefix").stdout
                                    ).partition("\n")
    if inside.strip() != "true":
        raise CommitScopeError(f"{root} is not inside a git work tree")
    prefix = prefix.rstrip("\n")  # git prints paths from the top; scopes are relative to root
    head = _commit(root, "HEAD")
    if head is None:
        raise CommitScopeError("the repository has no commit (HEAD does not name one)")
    base = _commit(root, baseline)
    if base is None:
        shallow = _git(root, "rev-parse", "--is-shallow-repository").stdout.decode().strip() == "true"
        hint = " (this is a shallow clone: it may lack the commit; fetch more history)" if shallow else ""
        raise CommitScopeError(f"the baseline {baseline!r} does not name a commit here{hint}")
    report = CommitScopeReport(base, head)
    if _git(root, "merge-base", "--is-ancestor", base, head).returncode != 0:
        report.violations.append(Violation(None, None, f"the baseline {base[:12]} is not an ancestor of HEAD "
                                                       f"{head[:12]}: the range does not measure this work"))
        return report
    # One `git log` lists every commit with its changes (merges list none: they are diffed
    # against each parent below), so the cost is one process, not one per commit.
    listed = _git(root, "log", "--reverse", "--topo-order", "-z", "--format=%x1e%H%x1f%P%x1f%s", "--name-status",
                  "--no-relative", "-M", "-C", f"{base}..{head}")
    if listed.returncode != 0:
        raise CommitScopeError(f"git log {base[:12]}..{head[:12]} failed: "
                               f"{listed.stderr.decode(errors='replace').strip()}")
    commits = [entry for entry in os.fsdecode(listed.stdout).split("\x1e") if entry.strip()]
    if not commits:
        report.violations.append(Violation(None, None, f"no commit in {base[:12]}..{head[:12]}: the range is empty"))
        return report
    pattern = re.compile(subject) if subject else None
    for entry in commits:
        header, _, changes = entry.partition("\0")
        sha, parents_text, title = header.split("\x1f", 2)
        report.commits.append(sha)
        parents = parents_text.split()
        if pattern is not None and not pattern.search(title):
            report.violations.append(Violation(sha, None, f"subject {title!r} does not match {subject!r}"))
        if len(parents) > 1 and not allow_merges:
            report.violations.append(Violation(sha, None, f"a merge of {len(parents)} parents "
                                                          f"({', '.join(p[:12] for p in parents)}); merges are "
                                                          "rejected unless allow_merges is true"))
            continue
        diffs: list[tuple[str | None, list[tuple[str, list[str]]]]]
        if len(parents) > 1:
            diffs = [(parent, _changes(root, parent, sha)) for parent in parents]
        elif parents:
            diffs = [(None, _pairs([field for field in changes.lstrip("\n").split("\0") if field]))]
        else:  # a root commit inside the range: everything in it is new
            diffs = [(None, _changes(root, git.EMPTY_TREE, sha))]
        for parent, listed_changes in diffs:
            for status, paths in listed_changes:
                report.paths += len(paths)
                _judge(report, scope, sha, parent, status, [from_top(path, prefix) for path in paths])
    if branch is not None:
        # A branch name is bytes, like a file name: one that is not UTF-8 keeps them (os.fsdecode),
        # is matched as such, and is shown as \xe9 (axpipe.names).
        name = os.fsdecode(_git(root, "symbolic-ref", "-q", "--short", "HEAD").stdout).strip()
        if not name:
            report.violations.append(Violation(None, None, f"HEAD is detached; a branch matching {branch!r} "
                                                           "is required"))
        elif not re.fullmatch(branch, name):
            report.violations.append(Violation(None, None, f"branch {_quoted(name)} does not match {branch!r}"))
    return report


def _quoted(name: str) -> str:
    """``name`` as ``repr`` shows it, with a byte that is not UTF-8 as ``\\xe9`` (not ``\\udce9``)."""
    return repr(name) if name == printable(name) else f"'{printable(name)}'"


def _judge(report: CommitScopeReport, scope: Scope, sha: str, parent: str | None, status: str,
           paths: list[str]) -> None:
    word = _WORDS.get(status[:1], status)
    against = f" (against parent {parent[:12]})" if parent else ""
    for position, path in enumerate(paths):
        if scope.allows(path):
            continue
        if len(paths) == 2:
            side = "source" if position == 0 else "destination"
            other = paths[1 - position]
            message = f"{word} {'to' if position == 0 else 'from'} {other}; its {side} is outside scope"
        else:
            message = f"{word}, outside scope"
        report.violations.append(Violation(sha, path, message + against))
