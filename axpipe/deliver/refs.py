"""Only the runner commits (DESIGN §16): what HEAD and the refs were before a unit's agent ran.

With ``deliver:``, the runner alone makes commits and moves refs. :func:`snapshot` records
HEAD (its branch and commit) and every ref under ``refs/`` except the runner's own
(``refs/axpipe/``: quarantined units) before the agent runs; :func:`moved` compares after the
unit's work and review. A new commit, a moved or new branch, tag, stash or remote-tracking ref
(what a ``git push`` leaves behind) is a hard stop: the runner did not make it, so nothing it
checked covers it. A push that updates no local ref (``git push URL``) leaves no trace here;
the upstream check before delivery's own push catches one to the task branch
(:mod:`axpipe.deliver.contract`).
"""

from __future__ import annotations

from pathlib import Path

from axpipe.deliver import repo

RUNNER_REFS = "refs/axpipe/"


def snapshot(root: Path) -> dict[str, str]:
    """HEAD and every ref but the runner's own, name -> commit (``HEAD`` -> ``<branch> <commit>``)."""
    listed = repo.text(root, "for-each-ref", "--format=%(refname) %(objectname)")
    refs = {}
    for line in listed.splitlines():
        name, _, sha = line.partition(" ")
        if name and not name.startswith(RUNNER_REFS):
            refs[name] = sha
    head = repo.commit_of(root, "HEAD") or "(no commit)"
    refs["HEAD"] = f"{repo.current_branch(root) or '(detached)'} {head}"
    return refs


def moved(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """What changed between two snapshots, in words, sorted (empty: nothing)."""
    said = []
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        if old is None:
            said.append(f"{name} created at {_short(new)}")
        elif new is None:
            said.append(f"{name} deleted (was {_short(old)})")
        else:
            said.append(f"{name} moved {_short(old)} -> {_short(new)}")
    return said


def _short(value: str | None) -> str:
    if value is None:
        return "-"
    parts = value.split(" ")
    return " ".join(part[:12] if len(part) == 40 else part for part in parts)
