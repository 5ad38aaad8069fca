"""Delivery end to end (DESIGN §16): the runner's commits, the branch contract, the push to a
real bare repository over file://, the retry, and the hard stop for an agent that commits."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from goalkit import FIX, Project
from helpers import git

NOTE = {"write": {"notes.md": "first unit: looked at calc\n"}, "say": "a first step"}
DELIVER = "deliver:\n  remote: origin\n"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """calc.py with its bug, on `main`, pushed to a bare repository that is its `origin`."""
    root = tmp_path / "work"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    made = Project(root, tmp_path)
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(root, "remote", "add", "origin", remote.as_uri())
    git(root, "push", "-q", "origin", "main")
    made.remote = remote  # type: ignore[attr-defined]
    return made


def _subjects(root: Path, revisions: str) -> list[str]:
    return git(root, "log", "--reverse", "--format=%s", revisions).splitlines()


def _record(root: Path, goal: str = "calc") -> dict[str, object]:
    data: dict[str, object] = json.loads((root / ".axpipe" / "deliver" / f"{goal}.json").read_text())
    return data


def _remote_branch(remote: Path, name: str = "axpipe/calc") -> str | None:
    listed = git(remote, "for-each-ref", "--format=%(objectname)", f"refs/heads/{name}").strip()
    return listed or None


def test_each_unit_is_one_runner_commit_and_the_branch_is_pushed(project: Project) -> None:
    project.recipe(turns=[NOTE, FIX], extra=DELIVER)
    first = project.run()
    assert first.exit_code == 6, first.stderr
    assert git(project.root, "symbolic-ref", "--short", "HEAD").strip() == "axpipe/calc"
    assert _subjects(project.root, "main..axpipe/calc") == ["calc: calc.add adds its arguments"]
    assert _remote_branch(project.remote) is None  # type: ignore[attr-defined]  # not complete: nothing pushed

    second = project.run()
    assert second.exit_code == 0, second.stderr
    assert _subjects(project.root, "main..axpipe/calc") == ["calc: calc.add adds its arguments"] * 2
    tip = git(project.root, "rev-parse", "axpipe/calc").strip()
    assert _remote_branch(project.remote) == tip  # type: ignore[attr-defined]
    # each commit holds exactly its unit's change, with the unit and the receipts in the trailer
    assert git(project.root, "show", "--format=", "--name-only", "axpipe/calc~1").split() == ["notes.md"]
    assert git(project.root, "show", "--format=", "--name-only", "axpipe/calc").split() == ["calc.py"]
    trailers = git(project.root, "log", "-1", "--format=%(trailers:only,unfold)", "axpipe/calc")
    assert "Axpipe-Unit: 2" in trailers and "Axpipe-Task: calc" in trailers
    (line,) = [line for line in trailers.splitlines() if line.startswith("Axpipe-Receipt:")]
    check, status, digest = line.split(": ", 1)[1].split()
    assert (check, status) == ("unit", "passed")
    # the digest names the receipt the completion gate judged: the newest one, as stored
    newest = project.receipts()[-1]
    canonical = json.dumps(newest, sort_keys=True, separators=(",", ":"), default=str)
    assert digest == "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
    record = _record(project.root)
    assert record["status"] == "delivered" and record["pushed"] == tip
    # the unit's work is all committed; the recipe the test wrote was there before and is not the unit's
    assert git(project.root, "status", "--porcelain").splitlines() == ["?? recipes/calc.yaml"]
