"""Run one reviewer of a round and keep what it did: prompt, stdout, stderr, exit code.

The reviewer's standard output is the receipt (``stdout.txt`` or ``stdout.jsonl``), so its
standard error is kept apart in ``stderr.txt``: a warning printed on stderr must neither
pass for a verdict nor break a JSON event stream. The verdict is read here, from the file
on disk, never taken from the plugin.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from axpipe import process
from axpipe.errors import ExecutableNotFound, InputError
from axpipe.interfaces import ReviewInvocation, ReviewRequest
from axpipe.plugin import calls as plugin_calls
from axpipe.process import CommandSpec, command_text
from axpipe.recipe import schema
from axpipe.records import record
from axpipe.review import verdicts
from axpipe.run.events import EventLog


@record
class PlannedReviewer:
    """A reviewer of the recipe with its plugin loaded and parameters typed."""

    spec: schema.ReviewerSpec
    plugin: Any
    params: Any


@record
class ReviewerRun:
    """What one reviewer did in a round."""

    name: str
    kind: str
    passed: bool
    exit_code: int | None
    reason: str
    verdict: verdicts.Verdict | None
    output: str
    duration: float

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "status": "passed" if self.passed else "failed",
                "exit_code": self.exit_code, "reason": self.reason,
                "verdict": None if self.verdict is None else {"line": self.verdict.line,
                                                               "findings": list(self.verdict.findings)},
                "output": self.output, "duration": round(self.duration, 3)}


VERDICT_FORMAT = "VERDICT: no findings\nor\nVERDICT: findings F1, F2"
_TIMEOUT_EXIT = 124
OUTPUT_LIMIT_BYTES = 64 * 1024 * 1024


def prompt_context(*, workspace: Path, revision: str, base: str, number: int, patch: str,
                   files: list[str]) -> dict[str, Any]:
    """The variables every review prompt template gets (the reviewer adds ``reviewer``, ``model``)."""
    return {"workspace": str(workspace), "revision": revision, "base": base, "round": number, "diff": patch,
            "files": files, "verdict_format": VERDICT_FORMAT}


def check_programs(workspace: Path, invocations: list[tuple[str, ReviewInvocation]]) -> None:
    """Raise ExecutableNotFound (exit 5) for a reviewer whose program is not installed, before
    any reviewer runs. Shell strings are checked by the shell when they run."""
    for name, invocation in invocations:
        command = invocation.command
        if isinstance(command, str):
            continue
        program = command[0]
        if os.sep in program:  # a path: relative to the repository, where the reviewer runs
            found = os.access(workspace / program, os.X_OK) and (workspace / program).is_file()
        else:
            found = shutil.which(program) is not None
        if not found:
            raise ExecutableNotFound(program, what=f"reviewer {name!r}: program")


def _wrapped(command: CommandSpec) -> list[str]:
    """The command with its stderr sent to ``$AXPIPE_REVIEW_STDERR`` (stdout stays the pipe)."""
    redirect = 'exec 2>>"$AXPIPE_REVIEW_STDERR"\n'
    if isinstance(command, str):
        return ["/bin/sh", "-c", redirect + command]
    return ["/bin/sh", "-c", redirect + 'exec "$@"', "axpipe-reviewer", *command]


class _Capture:
    """Writes the reviewer's stdout to its receipt file, up to OUTPUT_LIMIT_BYTES."""

    def __init__(self, path: Path, limit: int) -> None:
        self._handle = path.open("wb")
        self._room = limit
        self.capped = False

    def write(self, chunk: bytes) -> None:
        if len(chunk) > self._room:
            chunk, self.capped = chunk[:self._room], True
        self._handle.write(chunk)
        self._room -= len(chunk)

    def close(self) -> None:
        self._handle.close()


def run_reviewer(reviewer: PlannedReviewer, prompt: str, *, attempt: Path, number: int, revision: str, base: str,
                 workspace: Path, events: EventLog | None,
                 on_output: Callable[[bytes], None] | None) -> ReviewerRun:
    """Run ``reviewer`` once into ``attempt/<name>/`` and judge its receipt."""
    spec = reviewer.spec
    folder = attempt / spec.name
    folder.mkdir()
    prompt_file = folder / "prompt.md"
    prompt_file.write_text(prompt, encoding="utf-8")
    invocation = plugin_calls.call(reviewer.plugin, "invocation", ReviewRequest(
        name=spec.name, command=spec.command, model=spec.model, params=reviewer.params,  # type: ignore[arg-type]
        prompt=prompt, prompt_file=prompt_file, workspace=workspace), returns=ReviewInvocation)
    output_format = plugin_calls.call(reviewer.plugin, "output_format", reviewer.params, returns=str)
    if output_format not in ("text", "jsonl"):
        raise InputError(f"reviewer {spec.name!r}: output format {output_format!r} is not text or jsonl")
    output = folder / ("stdout.jsonl" if output_format == "jsonl" else "stdout.txt")
    stderr = folder / "stderr.txt"
    stderr.touch()
    env = {**invocation.env, "AXPIPE_PROMPT_FILE": str(prompt_file), "AXPIPE_REVIEWER": spec.name,
           "AXPIPE_ROLE": "reviewer", "AXPIPE_REVIEW_ROUND": str(number), "AXPIPE_REVIEW_REVISION": revision,
           "AXPIPE_REVIEW_BASE": base, "AXPIPE_REVIEW_DIR": str(folder), "AXPIPE_REVIEW_STDERR": str(stderr)}
    if events is not None:
        events.emit("review.started", phase="review", round=number, reviewer=spec.name, kind=spec.kind,
                    command=command_text(invocation.command))
    capture = _Capture(output, OUTPUT_LIMIT_BYTES)

    def tee(chunk: bytes) -> None:
        capture.write(chunk)
        if on_output is not None:
            on_output(chunk)

    started = time.monotonic()
    try:
        result = process.run(_wrapped(invocation.command), cwd=workspace, env=env, timeout=invocation.timeout,
                             stdin=invocation.stdin, on_output=tee, tail_bytes=4096)
    finally:
        capture.close()
    duration = time.monotonic() - started
    exit_code = result.exit_code
    if result.timed_out:
        exit_code = _TIMEOUT_EXIT
    elif exit_code is None:
        exit_code = 128 + (result.signal or signal.SIGKILL)
    (folder / "exit.txt").write_text(f"{exit_code}\n", encoding="utf-8")
    verdict, reason = _judge(result, capture.capped, output, stderr, output_format == "jsonl")
    run = ReviewerRun(name=spec.name, kind=spec.kind, passed=verdict is not None, exit_code=exit_code,
                      reason=reason, verdict=verdict, output=str(output), duration=duration)
    if events is not None:
        events.emit("review.finished", phase="review", round=number, reviewer=spec.name,
                    status="passed" if run.passed else "failed", exit_code=exit_code, reason=reason,
                    verdict=verdict.describe() if verdict else None, duration=round(duration, 4))
    return run


def _judge(result: Any, capped: bool, output: Path, stderr: Path,
           jsonl: bool) -> tuple[verdicts.Verdict | None, str]:
    """The verdict of a finished reviewer, or None and why the attempt failed."""
    if result.timed_out or result.signal is not None or result.exit_code != 0:
        last = stderr.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1:]
        return None, result.describe() + (f": {last[0][:300]}" if last else "")
    if capped:
        return None, "its output went over the limit and was cut, so its end (the verdict) is lost"
    try:
        verdict = verdicts.parse_output(output.read_text(encoding="utf-8", errors="replace"), jsonl=jsonl)
    except verdicts.VerdictProblem as problem:
        return None, f"exit code 0 but {problem.message}"
    return verdict, f"verdict: {verdict.describe()}"
