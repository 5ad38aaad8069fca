"""The task branch and the runner's commits (DESIGN §16).

:func:`prepare` runs before a goal's unit starts: the checkout goes onto the task branch
(``deliver.branch``, made from ``deliver.base`` the first time), and the first time the
delivery record is written with the remote's branch as it is now (the upstream check compares
with it before any push).

:func:`commit_unit` runs once the unit passed scope and gate and its checks ran: exactly the
paths the unit changed (its snapshot at the start against the working tree now, under the
ignore rules it started with) become one commit on the task branch, whose message is the
subject from ``deliver.subject`` and a trailer naming the task, the unit, the contract and
each receipt's digest. The commit is built in a scratch index and moves the branch only if
it still points where the unit started (compare-and-swap), so nothing else the user staged or
left dirty is taken along, and no hook of the project runs: what the runner commits is exactly
what was checked.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tempfile
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

from axpipe.deliver import record, repo
from axpipe.deliver.repo import DeliverError
from axpipe.deliver.task import Task, branch, subject
from axpipe.recipe import schema

_IDENT = re.compile(r"^\s*(?P<name>[^<>]+?)\s*<(?P<email>[^<>\s]+)>\s*$")


def read_upstream(root: Path, remote: str, name: str, timeout: float) -> str | None:
    """The commit the remote's ``name`` branch points at (None: it has none). Raises
    :class:`DeliverError` when the remote cannot be read."""
    try:
        completed = repo.run(root, "ls-remote", "--end-of-options", remote, f"refs/heads/{name}", timeout=timeout)
    except subprocess.TimeoutExpired as error:
        raise DeliverError(f"reading remote {remote!r} took longer than deliver.timeout ({timeout:g} s)") from error
    if completed.returncode != 0:
        raise DeliverError(f"cannot read remote {remote!r}: {repo.last_line(completed.stderr)}")
    for line in completed.stdout.decode().splitlines():
        sha, _, ref = line.partition("\t")
        if ref == f"refs/heads/{name}":
            return sha
    return None


def prepare(root: Path, spec: schema.Deliver, goal_id: str, task: Task) -> record.Delivery:
    """Put the checkout on the task branch (made from the base the first time); the record."""
    delivery = refreshed(root, spec, goal_id)
    name = delivery.branch if delivery is not None else branch(spec, task)
    if not repo.valid_branch(root, name):
        raise DeliverError(f"deliver.branch: {name!r} is not a valid branch name")
    if delivery is None:
        base = spec.base or repo.current_branch(root)
        if base is None:
            raise DeliverError("HEAD is detached, so there is no branch to make the task branch from: set deliver.base")
        if base == name:
            raise DeliverError(f"the checkout is on the task branch {name} already, so it cannot be its own base: "
                               "set deliver.base")
        base_commit = repo.commit_of(root, base)
        if base_commit is None:
            raise DeliverError(f"deliver.base: {base!r} does not name a commit here")
        try:
            upstream, known = read_upstream(root, spec.remote, name, spec.timeout), True
        except DeliverError:  # no remote yet: delivery says so when it pushes; unknown is judged then
            upstream, known = None, False
        delivery = record.Delivery(goal=goal_id, task=task.name, summary=task.summary, spec=_spec_json(spec),
                                   branch=name, base=base, base_commit=base_commit, remote=spec.remote,
                                   upstream=upstream, upstream_known=known)
    if repo.current_branch(root) != name:
        exists = repo.commit_of(root, f"refs/heads/{name}") is not None
        args = ["switch", name] if exists else ["switch", "-c", name, delivery.base_commit]
        completed = repo.run(root, *repo.NO_HOOKS, *args)
        if completed.returncode != 0:  # git refuses when the tree's changes would be overwritten
            raise DeliverError(f"cannot check out the task branch {name!r}: {repo.last_line(completed.stderr)}")
    record.save(root, delivery)
    return delivery


def refreshed(root: Path, spec: schema.Deliver, goal_id: str) -> record.Delivery | None:
    """The goal's delivery record (None before its first unit) with the recipe's ``deliver:``
    of now: the branch, its base and the remote stay the first unit's; the rest follows the
    recipe (a corrected ``deliver.pr`` or author applies to the next attempt)."""
    delivery = record.load(root, goal_id)
    if delivery is not None:
        kept = {key: delivery.spec.get(key) for key in ("branch", "base", "remote")}
        delivery.spec = {**_spec_json(spec), **kept}
    return delivery


def _spec_json(spec: schema.Deliver) -> dict[str, Any]:
    params = asdict(spec.params) if is_dataclass(spec.params) and not isinstance(spec.params, type) else spec.params
    return {**{key: getattr(spec, key) for key in ("branch", "base", "subject", "subject_pattern", "author",
                                                    "remote", "pr", "timeout")}, "params": dict(params or {})}


def receipt_digest(row: dict[str, Any]) -> str:
    """SHA-256 of a stored receipt (its canonical JSON): what a commit's trailer names."""
    canonical = json.dumps(row, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def message(subject_line: str, *, task: str, unit: int, contract: str | None,
            receipts: list[tuple[str, str, str]]) -> str:
    """The commit message: the subject, then git trailers (``git interpret-trailers --parse`` reads them)."""
    trailers = [f"Axpipe-Task: {task}", f"Axpipe-Unit: {unit}"]
    if contract:
        trailers.append(f"Axpipe-Contract: sha256:{contract}")
    trailers += [f"Axpipe-Receipt: {check} {status} sha256:{digest}" for check, status, digest in receipts]
    return f"{subject_line}\n\n" + "\n".join(trailers) + "\n"


def _identity(root: Path, author: str | None) -> dict[str, str]:
    """The commit's author from ``deliver.author`` (also its committer when git has no identity)."""
    if author is None:
        return {}
    match = _IDENT.match(author)
    if match is None:
        raise DeliverError(f"deliver.author: {author!r} is not `Name <email>`")
    env = {"GIT_AUTHOR_NAME": match["name"], "GIT_AUTHOR_EMAIL": match["email"]}
    if repo.run(root, "var", "GIT_COMMITTER_IDENT").returncode != 0:
        env |= {"GIT_COMMITTER_NAME": match["name"], "GIT_COMMITTER_EMAIL": match["email"]}
    return env


def _nul(output: str) -> list[str]:
    return [name for name in output.split("\0") if name]


def unit_paths(top: Path, start_tree: str, end_tree: str) -> list[str]:
    """The paths (from the top of the work tree) the unit changed, without files git ignores
    that it does not track (a snapshot carries the ignored files test runners read)."""
    changed = _nul(repo.text(top, "diff", "--name-only", "--no-renames", "--no-relative", "-z", start_tree, end_tree))
    if not changed:
        return []
    completed = repo.run(top, "check-ignore", "-z", "--stdin", input=b"\0".join(os.fsencode(p) for p in changed))
    ignored = set(_nul(completed.stdout.decode("utf-8", "surrogateescape"))) if completed.returncode == 0 else set()
    return [path for path in changed if path not in ignored]


def commit_unit(root: Path, top: Path, delivery: record.Delivery, *, start_head: str | None, start_tree: str,
                end_tree: str, unit: int, contract: str | None, receipts: list[tuple[str, str, str]]) -> str | None:
    """Commit the unit's change on the task branch; the new commit, or None when it changed nothing.
    ``root`` is the project (its ``.axpipe/`` holds the record), ``top`` the top of its work tree."""
    paths = unit_paths(top, start_tree, end_tree)
    if not paths:
        return None
    head = repo.commit_of(top, "HEAD")
    if head != start_head or repo.current_branch(top) != delivery.branch:
        raise DeliverError(f"HEAD is no longer where unit {unit} started ({(start_head or 'none')[:12]} on "
                           f"{delivery.branch}): the runner commits nothing it did not check")
    spec = schema.Deliver(**{key: value for key, value in delivery.spec.items() if key != "params"})
    task = Task(delivery.task, delivery.summary)
    text = message(subject(spec, task, unit), task=task.name, unit=unit, contract=contract, receipts=receipts)
    pathspec = b"\0".join(os.fsencode(path) for path in paths) + b"\0"
    with tempfile.TemporaryDirectory(prefix="axpipe-deliver-") as scratch:
        env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        repo.text(top, "read-tree", head or "--empty", env=env)
        # every unit path as the end snapshot has it; a path it lacks was deleted
        listed = repo.run(top, "ls-tree", "-r", "-z", "--full-tree", end_tree, env=env).stdout
        wanted = set(paths)
        entries = [entry for entry in listed.split(b"\0")
                   if entry and os.fsdecode(entry.split(b"\t", 1)[1]) in wanted]
        present = {os.fsdecode(entry.split(b"\t", 1)[1]) for entry in entries}
        gone = [path for path in paths if path not in present]
        if gone:
            repo.text(top, "update-index", "--force-remove", "-z", "--stdin", env=env,
                      input=b"\0".join(os.fsencode(path) for path in gone) + b"\0")
        if entries:
            repo.text(top, "update-index", "-z", "--index-info", env=env, input=b"\0".join(entries) + b"\0")
        tree = repo.text(top, "write-tree", env=env)
    commit = repo.text(top, "commit-tree", tree, *(["-p", head] if head else []), env=_identity(top, spec.author),
                       input=text.encode("utf-8"))
    # compare-and-swap through HEAD's branch: a branch moved meanwhile refuses the commit
    repo.text(top, *repo.NO_HOOKS, "update-ref", "-m", f"axpipe: {delivery.task} unit {unit}", "HEAD", commit,
              head or "")
    # the user's index follows the commit for the unit's paths only: nothing else they staged changes
    repo.run(top, *repo.NO_HOOKS, "reset", "-q", "--pathspec-from-file=-", "--pathspec-file-nul", "--", input=pathspec,
             env={"GIT_LITERAL_PATHSPECS": "1"})
    delivery.commits.append({"unit": unit, "commit": commit, "subject": text.splitlines()[0]})
    record.save(root, delivery)
    return commit
