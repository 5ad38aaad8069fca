"""The ``pytest`` check kind: pytest ran, nothing failed, and enough tests really passed.

``command: pytest`` passes whenever pytest exits 0, and pytest exits 0 when every test it
collected was skipped: a check that cannot fail. This kind reads pytest's own JUnit XML
report instead and passes only when the exit code is 0, no test failed or errored, at
least ``min_passed`` tests passed, and (when set) at most ``max_skipped`` were skipped.
The counts go into the receipt's details.

The check's ``command`` is the pytest invocation (``pytest -q``, ``.venv/bin/python -m
pytest tests``); axpipe appends its report options to it, so a shell string must end with
the pytest command. As a repair's success condition it judges the repair's target. The
report is written outside the workspace, and pytest's cache is switched off, so the check
leaves the source it verifies as it was.
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Any

from axpipe import interfaces
from axpipe.errors import ExecutableNotFound
from axpipe.records import record

if TYPE_CHECKING:
    from pathlib import Path

    from axpipe.process import CommandSpec

NO_TESTS_COLLECTED = 5  # pytest's exit code when nothing was collected or everything was deselected


@record
class PytestParams:
    """Parameters of the ``pytest`` check kind."""

    min_passed: int = field(default=1, metadata={"doc": "tests that must pass (skipped and xfailed ones do not "
                                                         "count)", "min": 1})
    max_skipped: int | None = field(default=None, metadata={"doc": "most tests that may be skipped (default: "
                                                                   "no limit)", "min": 0})


@record
class Counts:
    """What pytest's JUnit report says it ran."""

    tests: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0

    @property
    def passed(self) -> int:
        return self.tests - self.failed - self.errors - self.skipped

    def describe(self) -> str:
        parts = [f"{self.passed} passed"]
        parts += [f"{count} {word}" for count, word in ((self.failed, "failed"), (self.errors, "errors"),
                                                        (self.skipped, "skipped")) if count]
        return ", ".join(parts)


def read_report(path: Path) -> Counts:
    """Count the test cases of a JUnit XML report by how each ended. Raises ``ValueError``
    when the file is not a report."""
    import xml.etree.ElementTree as ElementTree

    try:
        root = ElementTree.parse(path).getroot()
    except ElementTree.ParseError as error:
        raise ValueError(f"not XML: {error}") from error
    if root.tag not in ("testsuites", "testsuite"):
        raise ValueError(f"the root element is <{root.tag}>, not <testsuites>")
    counts = Counts()
    for case in root.iter("testcase"):
        tags = {child.tag for child in case}
        counts.tests += 1
        if "failure" in tags:
            counts.failed += 1
        elif "error" in tags:
            counts.errors += 1
        elif "skipped" in tags:
            counts.skipped += 1
    return counts


def invocation(command: CommandSpec, report: Path) -> CommandSpec:
    """The pytest command with axpipe's report options appended."""
    options = [f"--junitxml={report}", "-o", "junit_family=xunit2", "-p", "no:cacheprovider"]
    if isinstance(command, str):
        import shlex

        return f"{command} {shlex.join(options)}"
    return [*command, *options]


class PytestCheck:
    """Passes when pytest exits 0, nothing failed, at least ``min_passed`` tests passed and
    no more than ``max_skipped`` were skipped (read from pytest's JUnit XML report)."""

    params_schema = PytestParams
    needs_command = True

    def describe(self, params: PytestParams) -> str:
        skips = f", at most {params.max_skipped} skipped" if params.max_skipped is not None else ""
        return f"pytest exits 0 with no failure and at least {params.min_passed} test(s) passed{skips}"

    def run(self, request: interfaces.CheckRequest) -> interfaces.CheckOutcome:
        import shutil  # here, not at the top: `plugins list` imports every plugin module
        import tempfile
        from pathlib import Path

        from axpipe import process

        params: PytestParams = request.params
        scratch = Path(tempfile.mkdtemp(prefix="axpipe-pytest-"))
        try:
            report = scratch / "junit.xml"
            assert request.command is not None
            try:
                result = process.run(invocation(request.command, report), cwd=request.cwd, env=request.env,
                                     timeout=request.timeout, on_output=request.on_output)
            except ExecutableNotFound as error:
                return interfaces.CheckOutcome(interfaces.CheckStatus.ERROR, error.message,
                                               missing_program=error.program)
            return self._judge(params, result, report)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    @staticmethod
    def _judge(params: PytestParams, result: Any, report: Path) -> interfaces.CheckOutcome:
        failed, passed = interfaces.CheckStatus.FAILED, interfaces.CheckStatus.PASSED
        if result.timed_out or result.signal is not None:
            return interfaces.CheckOutcome.from_process(failed, result.describe(), result)
        if result.exit_code == NO_TESTS_COLLECTED:
            return interfaces.CheckOutcome.from_process(
                failed, f"no tests ran: none collected, or all deselected ({result.describe()})", result)
        try:
            counts = read_report(report)
        except FileNotFoundError:
            return interfaces.CheckOutcome.from_process(
                interfaces.CheckStatus.ERROR, f"pytest wrote no report ({result.describe()}): is the command "
                "pytest, and does it end with the pytest invocation?", result)
        except ValueError as error:
            return interfaces.CheckOutcome.from_process(
                interfaces.CheckStatus.ERROR, f"pytest's report could not be read: {error}", result)
        details = {"tests": counts.tests, "passed": counts.passed, "failed": counts.failed,
                   "errors": counts.errors, "skipped": counts.skipped}
        if counts.failed or counts.errors or not result.ok:
            return interfaces.CheckOutcome.from_process(failed, f"{counts.describe()} ({result.describe()})", result,
                                                        details=details)
        if counts.passed < params.min_passed:
            return interfaces.CheckOutcome.from_process(
                failed, f"{counts.describe()}: fewer than min_passed {params.min_passed} test(s) passed", result,
                details=details)
        if params.max_skipped is not None and counts.skipped > params.max_skipped:
            return interfaces.CheckOutcome.from_process(
                failed, f"{counts.describe()}: more than max_skipped {params.max_skipped} skipped", result,
                details=details)
        return interfaces.CheckOutcome.from_process(passed, f"{counts.describe()} ({result.describe()})", result,
                                                    details=details)
