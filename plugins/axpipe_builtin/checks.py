"""Built-in check kinds: ``command``, ``oracle`` and ``no-match``.

Each runs its command once through the plain process runner and decides from what the
command did, never from what it claims: ``command`` from the exit code, ``oracle`` from a
required output line (the exit code is then not the condition), ``no-match`` from the
absence of a pattern (warnings, deprecations) in the output. An output line too long to
read whole (over 1 MiB) can hide the required line or the pattern, so when the decision
would rest on it the result is an error, never a pass.
"""

from __future__ import annotations

import re
from dataclasses import field
from typing import TYPE_CHECKING, Any

from axpipe import interfaces
from axpipe.errors import ExecutableNotFound
from axpipe.records import record

if TYPE_CHECKING:
    from axpipe.process import LineScanner, ProcessResult


def _run(request: interfaces.CheckRequest, on_line: Any = None) -> ProcessResult:
    return _scan(request, on_line)[0]


def _scan(request: interfaces.CheckRequest, on_line: Any = None) -> tuple[ProcessResult, LineScanner | None]:
    """Run the check's command; with ``on_line``, every output line goes to it too."""
    from axpipe import process  # imported when a check runs, not when `plugins list` loads us

    scanner = process.LineScanner(on_line) if on_line else None

    def on_output(chunk: bytes) -> None:
        if scanner is not None:
            scanner.feed(chunk)
        if request.on_output is not None:
            request.on_output(chunk)

    assert request.command is not None
    result = process.run(request.command, cwd=request.cwd, env=request.env,
                         timeout=request.timeout, on_output=on_output)
    if scanner is not None:
        scanner.close()
    return result, scanner


def _unread(scanner: LineScanner | None) -> str | None:
    """Why the output could not all be read line by line, or None when it could."""
    if scanner is None or not scanner.overlong:
        return None
    return (f"{scanner.overlong} output line(s) longer than 1 MiB (the longest {scanner.longest} bytes) "
            "could not be read as lines")


def _not_found(error: ExecutableNotFound) -> interfaces.CheckOutcome:
    return interfaces.CheckOutcome(status=interfaces.CheckStatus.ERROR, summary=error.message,
                                   missing_program=error.program)


def _ended_abnormally(result: ProcessResult) -> interfaces.CheckOutcome | None:
    if result.timed_out or result.signal is not None:
        return interfaces.CheckOutcome.from_process(interfaces.CheckStatus.FAILED, result.describe(), result)
    missing = _shell_not_found(result)
    if missing is not None:
        return interfaces.CheckOutcome.from_process(interfaces.CheckStatus.ERROR, f"command not found: {missing!r}",
                                                    result, missing_program=missing)
    return None


_SHELL_NOT_FOUND = re.compile(r"^(?:/bin/)?sh: (?:\d+: )?(?:line \d+: )?([^:\s]+): (?:command )?not found", re.M)


def _shell_not_found(result: ProcessResult) -> str | None:
    """The program a shell string could not find (exit 127 with the shell's message)."""
    if result.exit_code != 127:
        return None
    match = _SHELL_NOT_FOUND.search(result.output)
    return match.group(1) if match else None


class CommandCheck:
    """Passes when the command exits with code 0."""

    params_schema = None
    needs_command = True

    def describe(self, params: Any) -> str:
        return "exit code 0"

    def run(self, request: interfaces.CheckRequest) -> interfaces.CheckOutcome:
        try:
            result = _run(request)
        except ExecutableNotFound as error:
            return _not_found(error)
        abnormal = _ended_abnormally(result)
        if abnormal is not None:
            return abnormal
        status = interfaces.CheckStatus.PASSED if result.ok else interfaces.CheckStatus.FAILED
        return interfaces.CheckOutcome.from_process(status, result.describe(), result)


@record
class OracleParams:
    """Parameters of the ``oracle`` check kind."""

    line: str = field(metadata={"doc": "regex a line of the output must match (re.search)", "regex": True})


class OracleCheck:
    """Passes when some output line matches ``line``; the exit code is not the condition."""

    params_schema = OracleParams
    needs_command = True

    def describe(self, params: OracleParams) -> str:
        return f"a line matching {params.line!r} in the output (the exit code is not the condition)"

    def run(self, request: interfaces.CheckRequest) -> interfaces.CheckOutcome:
        pattern = re.compile(request.params.line)
        matched: list[str] = []

        def on_line(line: str) -> None:
            if not matched and pattern.search(line):
                matched.append(line)

        try:
            result, scanner = _scan(request, on_line)
        except ExecutableNotFound as error:
            return _not_found(error)
        abnormal = _ended_abnormally(result)
        if abnormal is not None:
            return abnormal
        if matched:
            return interfaces.CheckOutcome.from_process(
                interfaces.CheckStatus.PASSED, f"required line found: {matched[0]!r} ({result.describe()})",
                result, matched_line=matched[0])
        unread = _unread(scanner)
        if unread is not None:  # the required line may be one of them: no evidence either way
            return interfaces.CheckOutcome.from_process(
                interfaces.CheckStatus.ERROR, f"no line matches {request.params.line!r}, but {unread}", result)
        return interfaces.CheckOutcome.from_process(
            interfaces.CheckStatus.FAILED, f"no line matches {request.params.line!r} ({result.describe()})", result)


@record
class NoMatchParams:
    """Parameters of the ``no-match`` check kind."""

    pattern: str = field(default="(?i)warning", metadata={"doc": "regex no output line may match", "regex": True})
    require_exit_zero: bool = field(default=True, metadata={"doc": "also require exit code 0"})


class NoMatchCheck:
    """Passes when no output line matches ``pattern`` (and, by default, the command exits 0)."""

    params_schema = NoMatchParams
    needs_command = True

    def describe(self, params: NoMatchParams) -> str:
        also = " and exit code 0" if params.require_exit_zero else ""
        return f"no output line matching {params.pattern!r}{also}"

    def run(self, request: interfaces.CheckRequest) -> interfaces.CheckOutcome:
        pattern = re.compile(request.params.pattern)
        hits: list[str] = []
        count = [0]

        def on_line(line: str) -> None:
            if pattern.search(line):
                count[0] += 1
                if len(hits) < 20:
                    hits.append(line)

        try:
            result, scanner = _scan(request, on_line)
        except ExecutableNotFound as error:
            return _not_found(error)
        abnormal = _ended_abnormally(result)
        if abnormal is not None:
            return abnormal
        details = {"matches": count[0], "examples": hits}
        if count[0]:
            return interfaces.CheckOutcome.from_process(
                interfaces.CheckStatus.FAILED,
                f"{count[0]} line(s) match {request.params.pattern!r}, first: {hits[0]!r}",
                result, matched_line=hits[0], details=details)
        if request.params.require_exit_zero and not result.ok:
            return interfaces.CheckOutcome.from_process(
                interfaces.CheckStatus.FAILED, f"no line matches, but {result.describe()}", result, details=details)
        unread = _unread(scanner)
        if unread is not None:  # a match may hide in them: no evidence either way
            return interfaces.CheckOutcome.from_process(
                interfaces.CheckStatus.ERROR, f"no line read matches {request.params.pattern!r}, but {unread}",
                result, details=details)
        return interfaces.CheckOutcome.from_process(
            interfaces.CheckStatus.PASSED, f"no line matches {request.params.pattern!r} ({result.describe()})",
            result, details=details)


class IdempotentCheck:
    """Passes when the command, run twice, exits 0 both times with the same output and workspace.

    The workspace is compared by its source fingerprint, taken after each run: a formatter
    or code generator that keeps changing files (or its own output) is not idempotent. A
    command that fails the same way twice is not idempotent evidence: each run must exit 0.
    When the fingerprint is unavailable (``request.fingerprint`` returns None: a symlink, a
    file changing while hashed, ...) the workspace cannot be compared, and the outcome is an
    error, never a match.
    """

    params_schema = None
    needs_command = True
    needs_fingerprint = True  # a caller that can tell beforehand refuses a workspace without one

    def describe(self, params: Any) -> str:
        return "idempotent: two runs both exit 0 and give the same output and workspace fingerprint"

    def run(self, request: interfaces.CheckRequest) -> interfaces.CheckOutcome:
        if request.fingerprint is None:
            return interfaces.CheckOutcome(
                status=interfaces.CheckStatus.ERROR,
                summary="cannot verify idempotence: no workspace fingerprint is available here")
        try:
            first = _run(request)
            first_print = request.fingerprint()
            second = _run(request)
            second_print = request.fingerprint()
        except ExecutableNotFound as error:
            return _not_found(error)
        for result in (first, second):
            abnormal = _ended_abnormally(result)
            if abnormal is not None:
                return abnormal
        details = {"first_fingerprint": first_print, "second_fingerprint": second_print}
        runs = (("the first", first), ("the second", second))
        failed = [f"{label} run ended with {result.describe()}" for label, result in runs if not result.ok]
        if failed:
            return interfaces.CheckOutcome.from_process(interfaces.CheckStatus.FAILED,
                                                        "not idempotent: " + "; ".join(failed), second,
                                                        details=details)
        if not first_print or not second_print:
            after = "first" if not first_print else "second"
            return interfaces.CheckOutcome.from_process(
                interfaces.CheckStatus.ERROR,
                f"cannot verify idempotence: no fresh workspace fingerprint after the {after} run", second,
                details=details)
        differences = []
        if first.tail != second.tail or first.total_bytes != second.total_bytes:
            differences.append("the output changed")
        if first_print != second_print:
            differences.append("the workspace changed between the runs")
        if differences:
            return interfaces.CheckOutcome.from_process(interfaces.CheckStatus.FAILED,
                                                        "not idempotent: " + "; ".join(differences),
                                                        second, details=details)
        return interfaces.CheckOutcome.from_process(interfaces.CheckStatus.PASSED,
                                                    f"idempotent over two runs ({second.describe()})",
                                                    second, details=details)
