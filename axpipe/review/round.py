"""Run one review round: every reviewer on the same commit, receipts kept on disk.

A round is first built as an **attempt** under ``<root>/attempts/round-<n>/attempt-<k>/``.
Only when every reviewer exited 0 with exactly one final verdict, and the checkout did not
move or change meanwhile, is the attempt renamed (atomically) to ``<root>/round-<n>/``. A
failed attempt stays where it is, with ``attempt.json`` saying why, for diagnosis: it is
never turned into a completed round, and the next round reuses its number.

Layout of a completed round::

    round-<n>/revision.txt          the reviewed commit (full SHA)
    round-<n>/base.txt              the commit the diff is taken from
    round-<n>/diff.patch            the change the reviewers were shown
    round-<n>/<reviewer>/exit.txt   the CLI's exit code (0 here, always)
    round-<n>/<reviewer>/stdout.txt | stdout.jsonl, stderr.txt, prompt.md
"""

from __future__ import annotations

import fcntl
import json
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import field
from pathlib import Path
from typing import Any

from axpipe import templates
from axpipe.errors import AxpipeError, ConfigError, ExitCode, InputError
from axpipe.interfaces import ReviewInvocation, ReviewRequest
from axpipe.plugin import calls as plugin_calls
from axpipe.plugin import registry
from axpipe.recipe import schema
from axpipe.recipe import typed as validation
from axpipe.records import record
from axpipe.review import revisions
from axpipe.review.runner import PlannedReviewer, ReviewerRun, check_programs, prompt_context, run_reviewer
from axpipe.run.events import EventLog
from axpipe.workspace import ensure_state_dir

ROUND_FOLDER = re.compile(r"round-(\d+)")
REVIEWER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
"""A reviewer's name is its folder name in every round: no dots, so never a round's file."""
DEFAULT_ROOT = ".axpipe/review"
MAX_DIFF_BYTES = 4 * 1024 * 1024


@record
class RoundResult:
    """A finished round (``completed``) or a failed attempt, and where it is on disk."""

    number: int
    revision: str
    base: str
    completed: bool
    folder: Path
    reviewers: list[ReviewerRun] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"round": self.number, "status": "completed" if self.completed else "failed",
                "revision": self.revision, "base": self.base, "folder": str(self.folder),
                "reviewers": [run.to_json() for run in self.reviewers], "problems": self.problems}


def round_numbers(root: Path) -> list[int]:
    """Numbers of the completed ``round-<n>`` folders under ``root``, in order."""
    if not root.is_dir():
        return []
    return sorted(int(match.group(1)) for item in root.iterdir()
                  if item.is_dir() and (match := ROUND_FOLDER.fullmatch(item.name)))


def plan(specs: list[schema.ReviewerSpec], only: list[str] | None) -> list[PlannedReviewer]:
    """Load the plugins of ``specs`` (all, or the ones named in ``only``, in that order)."""
    by_name = {spec.name: spec for spec in specs}
    if not by_name:
        raise InputError("no reviewers to run: the recipe declares no `reviewers:`")
    chosen = list(by_name) if only is None else only
    unknown = [name for name in chosen if name not in by_name]
    if unknown:
        raise InputError(f"--reviewers: unknown reviewer(s) {', '.join(unknown)}; the recipe declares "
                         f"{', '.join(by_name)}")
    bad = [name for name in chosen if not REVIEWER_NAME.fullmatch(name)]
    if bad:
        raise InputError(f"reviewer name(s) {', '.join(repr(name) for name in bad)} cannot be folder names: use "
                         "letters, digits, '_' and '-' (starting with a letter or digit)")
    planned = []
    for name in chosen:
        spec = by_name[name]
        plugin = registry.load("axpipe.reviewers", spec.kind)
        params = spec.params
        if isinstance(params, dict):  # not yet validated (a recipe validates them when composed)
            params, problems = validation.load_plugin_params(plugin, params, f"reviewers.{name}", None)
            if problems:
                raise ConfigError(problems)
        planned.append(PlannedReviewer(spec, plugin, params))
    return planned


@contextmanager
def _round_lock(root: Path) -> Iterator[None]:
    path = root / ".lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise AxpipeError(f"another review round is running in {root} (it holds {path})",
                              exit_code=ExitCode.LOCKED) from None
        yield
    finally:
        os.close(fd)


def _choose_base(workspace: Path, root: Path, revision: str, base: str | None) -> str:
    if base is not None:
        resolved = revisions.resolve(workspace, base)
        if resolved is None:
            raise InputError(f"--base: {base!r} does not name a commit in {workspace}")
        return resolved
    # Later rounds show the whole change since the first round's base, not only the fixes.
    for number in round_numbers(root):
        recorded = root / f"round-{number}" / "base.txt"
        if recorded.is_file():
            previous = recorded.read_text(encoding="utf-8").strip()
            if previous == revisions.EMPTY_TREE or revisions.resolve(workspace, previous):
                return previous
        break
    return revisions.parent(workspace, revision) or revisions.EMPTY_TREE


def run_round(*, workspace: Path, root: Path, reviewers: list[PlannedReviewer], base: str | None = None,
              max_diff_bytes: int = MAX_DIFF_BYTES, events: EventLog | None = None,
              on_output: Callable[[bytes], None] | None = None) -> RoundResult:
    """Run every reviewer once on HEAD; return the completed round or the failed attempt.

    Input problems (dirty checkout, unknown base, bad prompt, missing program) raise before
    any reviewer runs and leave nothing behind.
    """
    root = root if root.is_absolute() else workspace / root
    revision = revisions.head(workspace)
    dirty = revisions.uncommitted(workspace, ignore=[root, workspace / ".axpipe"])
    if dirty:
        shown = ", ".join(dirty[:10]) + (f" and {len(dirty) - 10} more" if len(dirty) > 10 else "")
        raise InputError(f"the checkout has uncommitted changes ({shown}); a round reviews a commit: "
                         "commit or stash them first")
    base_sha = _choose_base(workspace, root, revision, base)
    patch = revisions.diff(workspace, base_sha, revision)
    size = len(patch.encode("utf-8"))
    if size > max_diff_bytes:
        raise InputError(f"the diff {base_sha[:12]}..{revision[:12]} is {size} bytes, over the limit of "
                         f"{max_diff_bytes}; review a narrower range (--base) or raise --max-diff-bytes")
    number = (round_numbers(root) or [0])[-1] + 1
    context = prompt_context(workspace=workspace, revision=revision, base=base_sha, number=number, patch=patch,
                             files=revisions.changed_files(workspace, base_sha, revision))
    prepared = [_prepare(reviewer, context, workspace) for reviewer in reviewers]
    check_programs(workspace, [(reviewer.spec.name, invocation)
                               for reviewer, (invocation, _) in zip(reviewers, prepared, strict=True)])
    # Everything above only reads: bad input leaves nothing behind. From here on, one round at a time.
    ensure_state_dir(workspace)  # .axpipe/ (the default root's parent) excluded from git before it is written
    root.mkdir(parents=True, exist_ok=True)
    with _round_lock(root):
        if (round_numbers(root) or [0])[-1] + 1 != number:
            raise AxpipeError(f"another review round finished in {root} meanwhile; run this one again",
                              exit_code=ExitCode.LOCKED)
        attempt = _new_attempt(root, number)
        for name, content in (("revision.txt", revision), ("base.txt", base_sha)):
            (attempt / name).write_text(content + "\n", encoding="utf-8")
        (attempt / "diff.patch").write_text(patch, encoding="utf-8")
        runs = []
        try:
            for reviewer, (_, prompt) in zip(reviewers, prepared, strict=True):
                runs.append(run_reviewer(reviewer, prompt, attempt=attempt, number=number, revision=revision,
                                         base=base_sha, workspace=workspace, events=events, on_output=on_output))
        except KeyboardInterrupt as interrupt:  # Ctrl-C, or SIGTERM/SIGHUP (pipeline.sigterm_interrupts)
            reason = f"interrupted ({str(interrupt) or 'received SIGINT'})"
            (attempt / "attempt.json").write_text(json.dumps({
                "round": number, "revision": revision, "base": base_sha, "status": "interrupted",
                "folder": str(attempt), "reasons": [reason]}, indent=2) + "\n", encoding="utf-8")
            raise
        problems = _checkout_moved(workspace, root, revision)
        return _settle(root, attempt, number, revision, base_sha, runs, problems, events)


def _prepare(reviewer: PlannedReviewer, context: dict[str, Any], workspace: Path) -> tuple[ReviewInvocation, str]:
    """Render the prompt and build a trial invocation, so that a bad template or command is an
    input error before any reviewer runs (the real one names the real prompt file)."""
    spec = reviewer.spec
    source = plugin_calls.call(reviewer.plugin, "prompt_template", reviewer.params, returns=str)
    prompt = templates.render(source, {**context, "reviewer": spec.name, "model": spec.model},
                              name=f"reviewer {spec.name!r} prompt")
    request = ReviewRequest(name=spec.name, command=spec.command, model=spec.model,  # type: ignore[arg-type]
                            params=reviewer.params, prompt=prompt, prompt_file=workspace / "prompt.md",
                            workspace=workspace)
    return plugin_calls.call(reviewer.plugin, "invocation", request, returns=ReviewInvocation), prompt


def _new_attempt(root: Path, number: int) -> Path:
    parent = root / "attempts" / f"round-{number}"
    parent.mkdir(parents=True, exist_ok=True)
    taken = [int(item.name.split("-", 1)[1]) for item in parent.iterdir()
             if re.fullmatch(r"attempt-\d+", item.name)]
    folder = parent / f"attempt-{max(taken, default=0) + 1}"
    folder.mkdir()
    return folder


def _checkout_moved(workspace: Path, root: Path, revision: str) -> list[str]:
    problems = []
    now = revisions.head(workspace)
    if now != revision:
        problems.append(f"HEAD moved from {revision[:12]} to {now[:12]} during the round")
    dirty = revisions.uncommitted(workspace, ignore=[root, workspace / ".axpipe"])
    if dirty:
        problems.append(f"the checkout changed during the round: {', '.join(dirty[:10])}")
    return problems


def _settle(root: Path, attempt: Path, number: int, revision: str, base: str, runs: list[ReviewerRun],
            problems: list[str], events: EventLog | None) -> RoundResult:
    failed = [run for run in runs if not run.passed]
    completed = not failed and not problems
    folder = attempt
    if completed:
        folder = root / f"round-{number}"
        os.rename(attempt, folder)  # atomic: a round folder is complete or absent
        try:
            attempt.parent.rmdir()
            attempt.parent.parent.rmdir()
        except OSError:
            pass  # older failed attempts stay for diagnosis
    result = RoundResult(number, revision, base, completed, folder, runs, problems)
    for run in runs:
        run.output = str(folder / run.name / Path(run.output).name)
    if not completed:
        reasons = problems + [f"{run.name}: {run.reason}" for run in failed]
        (attempt / "attempt.json").write_text(json.dumps({**result.to_json(), "reasons": reasons}, indent=2) + "\n",
                                              encoding="utf-8")
    if events is not None:
        events.emit("review.round", phase="review", round=number, status="completed" if completed else "failed",
                    revision=revision, folder=str(folder), problems=problems,
                    failed=[run.name for run in failed])
    return result

