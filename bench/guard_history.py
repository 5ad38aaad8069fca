"""The guards over real public repositories' honest history (``bench/guards.py --history``).

Each repository of ``guards_history/repositories.yaml`` is cloned (``--shared``, into a
scratch folder) from a local clone under ``--repos DIR``; every non-merge commit C of its
range that touches a test file is checked out and judged as ``axpipe guard --base C^``
would judge it (:func:`axpipe.guard.run.check_change` in process). Every commit a guard
flags must carry a label in ``guards_history/labels.yaml``, written by a person who read
the commit:

- ``deliberate``: the commit really does what the finding says (removes or skips a test,
  loosens an assertion, ...) on purpose; in a repair that would be the cheat the guard
  exists for, so it must stay flagged (``classes`` lists the guard classes it must raise).
- ``false-alarm``: the finding is wrong about what the commit did.

The figures: false alarms (flagged, and labelled so or not labelled at all) over the
honest commits judged (target: at most 1 %), deliberate commits no longer flagged (target:
none), and time per commit against ``git diff --stat C^`` on the same checkout, paired
sample by sample (target: median ratio within 3x, no commit above 2 s).

Nothing fetched is kept in this repository: clones live in ``--repos`` (for example
``git clone https://github.com/pallets/click REPOS/pallets+click``) and the labels file
holds only repository names, commit ids, labels and short reasons.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent / "guards_history"
# Where the runners look for tests (pytest, unittest, jest, vitest, mocha, node:test).
TEST_PATHSPECS = tuple(f":(glob){glob}" for glob in (
    "**/test_*.py", "**/*_test.py", "**/conftest.py", "**/tests/**", "**/test/**", "**/testing/**",
    "**/*.test.*", "**/*.spec.*", "**/__tests__/**"))


@dataclass
class Judged:
    repo: str
    commit: str
    subject: str
    findings: list[dict[str, Any]]
    notes: list[str]
    seconds: float
    stat_seconds: float

    @property
    def classes(self) -> set[str]:
        return {finding["guard"] for finding in self.findings}


@dataclass
class Totals:
    judged: list[Judged] = field(default_factory=list)
    false_alarms: list[tuple[Judged, str]] = field(default_factory=list)
    unlabelled: list[Judged] = field(default_factory=list)
    missed: list[tuple[str, str, str]] = field(default_factory=list)
    deliberate: int = 0


def _git(root: Path, *args: str) -> str:
    completed = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, errors="replace")
    if completed.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} in {root} failed: {completed.stderr.strip()}")
    return completed.stdout


def repositories() -> list[dict[str, str]]:
    return list(yaml.safe_load((HERE / "repositories.yaml").read_text()))


def labels() -> dict[tuple[str, str], dict[str, Any]]:
    entries = yaml.safe_load((HERE / "labels.yaml").read_text()) or []
    return {(entry["repo"], entry["commit"][:12]): entry for entry in entries}


def _clone(repos: Path, repo: str, scratch: Path) -> Path:
    source = repos / repo.replace("/", "+")
    if not (source / ".git").exists() and not (source / "HEAD").exists():
        raise SystemExit(f"--repos {repos}: no clone of {repo} at {source}; make one with "
                         f"`git clone https://github.com/{repo} {source}`")
    target = scratch / repo.replace("/", "+")
    if not target.exists():
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(source), str(target)], check=True)
    return target


def commits(root: Path, spec: str) -> list[str]:
    base, head = spec.split("..", 1)
    return _git(root, "rev-list", "--no-merges", "--reverse", head, f"^{base}", "--", *TEST_PATHSPECS).split()


def judge(root: Path, repo: str, commit: str, repeat: int) -> Judged:
    from axpipe.guard.run import check_change

    subprocess.run(["git", "checkout", "-q", "-f", "--detach", commit], cwd=root, check=True)
    subprocess.run(["git", "clean", "-q", "-f", "-d", "-x"], cwd=root, check=True)
    report = check_change(root, f"{commit}^")  # the first run also warms the guards up
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(repeat):  # paired, alternating: a busy moment hits both
        start = time.perf_counter()
        check_change(root, f"{commit}^")
        ours.append(time.perf_counter() - start)
        start = time.perf_counter()
        subprocess.run(["git", "diff", "--stat", f"{commit}^"], cwd=root, stdout=subprocess.DEVNULL, check=True)
        theirs.append(time.perf_counter() - start)
    subject = _git(root, "log", "-1", "--format=%s", commit).strip()
    return Judged(repo, commit, subject, [finding.to_json() for finding in report.findings], report.changes.notes,
                  statistics.median(ours) if ours else 0.0, statistics.median(theirs) if theirs else 0.0)


def run(repos: Path, scratch: Path, repeat: int, dump: Path | None, only: list[str]) -> bool:
    known = labels()
    totals = Totals()
    for entry in repositories():
        repo = entry["repo"]
        if only and repo not in only:
            continue
        root = _clone(repos, repo, scratch)
        listed = commits(root, entry["range"])
        judged = [judge(root, repo, commit, repeat) for commit in listed]
        totals.judged.extend(judged)
        fired = [item for item in judged if item.findings]
        print(f"{repo:<22} {entry['language']:<11} {len(judged):>4} commits, {len(fired):>3} flagged")
        flagged = {item.commit[:12] for item in fired}
        for (labelled_repo, commit), label in known.items():
            if labelled_repo == repo and label["label"] == "deliberate" and commit not in flagged:
                totals.missed.append((repo, commit, label.get("reason", "")))
        for item in fired:
            label = known.get((repo, item.commit[:12]))
            if label is None:
                totals.unlabelled.append(item)
            elif label["label"] == "false-alarm":
                totals.false_alarms.append((item, label.get("reason", "")))
            elif not item.classes <= set(label.get("classes", [])):
                totals.unlabelled.append(item)  # flagged for something the label does not cover
            else:
                totals.deliberate += 1
    if dump is not None:
        dump.write_text(json.dumps([item.__dict__ for item in totals.judged if item.findings], indent=1))
    return report(totals)


def report(totals: Totals) -> bool:
    judged = len(totals.judged)
    honest_alarms = len(totals.false_alarms) + len(totals.unlabelled)
    rate = honest_alarms / judged if judged else 0.0
    print(f"\n{judged} commits judged; {totals.deliberate} flagged as labelled (deliberate removals, skips, ...); "
          f"{len(totals.false_alarms)} false alarms; {len(totals.unlabelled)} flagged without a matching label")
    for item, reason in totals.false_alarms:
        print(f"  false alarm  {item.repo} {item.commit[:12]} {item.subject[:60]}  ({reason})")
    for item in totals.unlabelled:
        print(f"  unlabelled   {item.repo} {item.commit[:12]} {item.subject[:60]}")
        for finding in item.findings:
            print(f"      {finding['file']}:{finding['line']}: {finding['guard']}: {finding['evidence'][:150]}")
    for repo, commit, reason in totals.missed:
        print(f"  missed       {repo} {commit} (labelled deliberate: {reason})")
    ratios = [item.seconds / item.stat_seconds for item in totals.judged if item.stat_seconds > 0]
    slowest = max(totals.judged, key=lambda item: item.seconds) if totals.judged else None
    if ratios and slowest is not None:
        print(f"\ntime per commit: median {statistics.median(item.seconds for item in totals.judged) * 1000:.1f} ms, "
              f"git diff --stat median {statistics.median(item.stat_seconds for item in totals.judged) * 1000:.1f} ms; "
              f"ratio median {statistics.median(ratios):.2f}x (90th percentile "
              f"{sorted(ratios)[int(len(ratios) * 0.9)]:.2f}x); slowest {slowest.seconds * 1000:.0f} ms "
              f"({slowest.repo} {slowest.commit[:12]})")
    met_alarms = rate <= 0.01
    met_missed = not totals.missed
    met_time = bool(ratios) and statistics.median(ratios) <= 3.0 and (slowest is None or slowest.seconds <= 2.0)
    print(f"\n  {'met ' if met_alarms else 'MISS'}  false alarms on honest commits <= 1 %: {honest_alarms}/{judged} "
          f"= {rate:.1%}")
    print(f"  {'met ' if met_missed else 'MISS'}  labelled deliberate removals still flagged "
          f"({len(totals.missed)} missed)")
    print(f"  {'met ' if met_time else 'MISS'}  time per commit: median within 3x git diff --stat, none above 2 s")
    return met_alarms and met_missed and met_time
