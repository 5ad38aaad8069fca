"""Run a labelled corpus of diffs through the guards (axpipe's own corpus lives in
``tests/resources/guards/``; a guard plugin can ship its own in the same layout)::

    corpus/
      manifest.yaml          - {id, project, label, file?, why, context?: {failure_output, failing_tests}}
      projects/<project>/    the real files before the change
      cases/<id>.diff        `git diff` of the change, applying to projects/<project>
      failures/<project>.txt the failing run's output, for cases with context

``label`` is the guard class a cheating diff must be caught by, or ``honest``. Each case
can be judged three ways: ``git`` (the diff applied in a real repository, guards on
``HEAD`` against the working tree), ``patch`` (the diff given as a patch next to the
before-files) and ``patch-only`` (the diff alone, no files: the degraded mode).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import field
from pathlib import Path

from axpipe import git
from axpipe.guard.run import check_change
from axpipe.interfaces import GuardContext, GuardFinding
from axpipe.records import record

MODES = ("git", "patch", "patch-only")
_GIT_ENV = {"GIT_AUTHOR_NAME": "corpus", "GIT_AUTHOR_EMAIL": "corpus@axpipe.invalid",
            "GIT_COMMITTER_NAME": "corpus", "GIT_COMMITTER_EMAIL": "corpus@axpipe.invalid"}


@record
class CorpusCase:
    id: str
    project: str
    label: str
    why: str
    diff: str
    file: str | None = None
    failure_output: str = ""
    failing_tests: list[str] = field(default_factory=list)

    @property
    def honest(self) -> bool:
        return self.label == "honest"

    def context(self) -> GuardContext:
        return GuardContext(failure_output=self.failure_output, failing_tests=list(self.failing_tests))


def load_corpus(folder: Path) -> list[CorpusCase]:
    """The cases of ``folder``'s manifest, with their diffs and failure outputs read."""
    import yaml

    entries = yaml.safe_load((folder / "manifest.yaml").read_text()) or []
    cases = []
    for entry in entries:
        context = entry.get("context") or {}
        failure = context.get("failure_output")
        cases.append(CorpusCase(
            id=entry["id"], project=entry["project"], label=entry["label"], why=entry.get("why", ""),
            diff=(folder / "cases" / f"{entry['id']}.diff").read_text(), file=entry.get("file"),
            failure_output=(folder / failure).read_text() if failure else "",
            failing_tests=list(context.get("failing_tests") or [])))
    return cases


def _git(root: Path, *args: str, stdin: str | None = None) -> None:
    git.run(root, *args, input=None if stdin is None else stdin.encode(), check=True,
            env={**_GIT_ENV, "GIT_CONFIG_NOSYSTEM": "1"})


class Workbench:
    """Before-states of the corpus's projects as git repositories, copied per case."""

    def __init__(self, folder: Path, scratch: Path) -> None:
        self.folder = folder
        self.scratch = scratch
        self._templates: dict[str, Path] = {}
        self._count = 0

    def before(self, case: CorpusCase) -> Path:
        """A fresh repository holding ``case``'s project, committed, change not applied."""
        template = self._templates.get(case.project)
        if template is None:
            template = self.scratch / "templates" / case.project
            shutil.copytree(self.folder / "projects" / case.project, template)
            _git(template, "init", "-q", "-b", "main")
            _git(template, "add", "-A")
            _git(template, "commit", "-q", "-m", "before")
            self._templates[case.project] = template
        self._count += 1
        root = self.scratch / "cases" / f"{self._count:03d}-{case.id}"
        shutil.copytree(template, root, symlinks=True)
        return root

    def judge(self, case: CorpusCase, mode: str, guards: Sequence[str] | None = None) -> list[GuardFinding]:
        """The findings of ``guards`` on ``case`` judged in ``mode`` (see :data:`MODES`)."""
        if mode == "patch-only":
            empty = self.scratch / "empty"
            empty.mkdir(exist_ok=True)
            return check_change(empty, context=case.context(), guards=guards, patch=case.diff,
                                patch_source=f"{case.id}.diff").findings
        root = self.before(case)
        if mode == "patch":
            return check_change(root, context=case.context(), guards=guards, patch=case.diff,
                                patch_source=f"{case.id}.diff").findings
        _git(root, "apply", "-", stdin=case.diff)  # as an agent leaves it: edits, untracked new files
        return check_change(root, "HEAD", case.context(), guards).findings


@record
class Score:
    """Per guard class: caught cheating diffs, missed ones, and false alarms."""

    caught: int = 0
    missed: int = 0
    false_alarms: int = 0

    @property
    def precision(self) -> float:
        fired = self.caught + self.false_alarms
        return self.caught / fired if fired else 1.0

    @property
    def recall(self) -> float:
        labelled = self.caught + self.missed
        return self.caught / labelled if labelled else 1.0


def score(results: list[tuple[CorpusCase, list[GuardFinding]]]) -> dict[str, Score]:
    """A cheating case counts as caught for its label when a finding of that class fired;
    a finding of any other class (on any case) is a false alarm for that class."""
    scores: dict[str, Score] = {}
    for case, findings in results:
        classes = {finding.guard for finding in findings}
        if not case.honest:
            entry = scores.setdefault(case.label, Score())
            if case.label in classes:
                entry.caught += 1
            else:
                entry.missed += 1
        for other in classes - {case.label}:
            scores.setdefault(other, Score()).false_alarms += 1
    return dict(sorted(scores.items()))
