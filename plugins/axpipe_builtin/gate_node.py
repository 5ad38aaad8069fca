"""The gate's test phase for Node runners: vitest, jest and ``node --test``.

Each is found as written (``vitest``, ``vitest run``, ``node_modules/.bin/jest``, behind
``npx``, ``pnpm``, ``yarn`` or ``npm exec``) and narrowed without report flags from the user:

- **vitest**: ``--reporter=junit --outputFile.junit=PATH`` (and ``--reporter=default``
  when the command names no reporter, so the output stays as it was); ``--bail`` is taken
  out and ``--bail=0`` appended, which also beats a ``bail`` in the configuration. Errors
  vitest reports outside any test ("Vitest caught N unhandled errors") fail the run.
- **jest**: ``--json --outputFile=PATH``, turned into JUnit XML after the run (a test is
  its file and its titles joined by ``>``; a file that failed to run is a failing test named
  by the file); ``-b``/``--bail`` is taken out and ``--bail=0`` appended. jest writes no
  report when it bails, and says ``wasInterrupted`` when stopped.
- **node --test**: axpipe's reporter (``node_reporter.mjs``) writes the JUnit XML, beside
  the ``spec`` reporter on standard output; Node's own junit reporter names neither the file
  nor the suites of a test.

A command that already sends a report to a file of its own (``--outputFile``) is left to
``{junit_xml}``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import quoteattr

from axpipe_builtin import gate_commands

if TYPE_CHECKING:
    from axpipe.interfaces import GateTestEnding, GateTestRun, TestRunReport, TestRunRequest

_LAUNCHERS = {"npx": (), "bunx": (), "pnpm": ("exec", "dlx"), "yarn": ("exec", "dlx"), "npm": ("exec",)}
REPORTER = Path(__file__).with_name("node_reporter.mjs")


def _launched(values: list[str], at: int, programs: tuple[str, ...]) -> int | None:
    """The index of the program word (one of ``programs``) at ``at`` or behind a launcher."""
    if at >= len(values):
        return None
    name = gate_commands.program_name(values[at])
    if name in programs:
        return at
    if name not in _LAUNCHERS:
        return None
    number = at + 1
    if number < len(values) and values[number] in _LAUNCHERS[name]:
        number += 1
    while number < len(values) and values[number].startswith("-"):
        number += 1  # npx --yes, npm exec --
    if number < len(values) and gate_commands.program_name(values[number]) in programs:
        return number
    return None


def _vitest(values: list[str], at: int) -> int | None:
    program = _launched(values, at, ("vitest",))
    if program is None:
        return None
    following = values[program + 1] if program + 1 < len(values) else ""
    return program + 2 if following == "run" else program + 1


def _jest(values: list[str], at: int) -> int | None:
    program = _launched(values, at, ("jest",))
    return None if program is None else program + 1


def _node_test(values: list[str], at: int) -> int | None:
    if at >= len(values) or gate_commands.program_name(values[at]) not in ("node", "nodejs"):
        return None
    for number in range(at + 1, len(values)):
        if values[number] == "--test":
            return number + 1
        if not values[number].startswith("-"):
            return None  # a script: node's options end before it
    return None


def vitest_command(command: str | list[str], junit: Path) -> GateTestRun | None:
    from axpipe.interfaces import GateTestRun

    invocation = gate_commands.find(command, _vitest)
    if invocation is None:
        return None
    given = gate_commands.has_option(invocation, ("--outputFile", "--outputFile.junit"))
    if given is not None and given != str(junit):
        return None  # a report file of the command's own, not {junit_xml}: only it knows what it holds
    removed = gate_commands.without_option(invocation, ("--bail",), value="required")
    reporters = gate_commands.has_option(invocation, ("--reporter",)) is not None
    added = ["--bail=0"] if given is not None else [
        *([] if reporters else ["--reporter=default"]), "--reporter=junit", f"--outputFile.junit={junit}", "--bail=0"]
    invocation.append(added)
    return GateTestRun("vitest", invocation.result(), removed, added, language="node")


_UNHANDLED = re.compile(r"Vitest caught (\d+) unhandled errors? during the test run")


def vitest_finish(run: GateTestRun, junit: Path, output: str, exit_code: int | None, cwd: Path) -> GateTestEnding:
    from axpipe.interfaces import GateTestEnding

    caught = _UNHANDLED.search(output)
    return GateTestEnding(outside_tests=f"vitest caught {caught[1]} unhandled error(s) outside any test" if caught
                          else "")


def jest_command(command: str | list[str], junit: Path) -> GateTestRun | None:
    from axpipe.interfaces import GateTestRun

    invocation = gate_commands.find(command, _jest)
    if invocation is None or gate_commands.has_option(invocation, ("--outputFile",)) is not None:
        return None
    removed = gate_commands.without_flag(invocation, "b", (), "b", "")
    removed += gate_commands.without_option(invocation, ("--bail",), value="optional")
    report = junit.with_name(junit.name + ".jest.json")
    added = [*([] if gate_commands.has_option(invocation, ("--json",)) is not None else ["--json"]),
             f"--outputFile={report}", "--bail=0"]
    invocation.append(added)
    return GateTestRun("jest", invocation.result(), removed, added, language="node", report=str(report))


def jest_finish(run: GateTestRun, junit: Path, output: str, exit_code: int | None, cwd: Path) -> GateTestEnding:
    """JUnit XML from jest's JSON report."""
    from axpipe.interfaces import GateTestEnding

    try:
        data: Any = json.loads(Path(run.report or "").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return GateTestEnding(stopped_early="jest wrote no JSON report (it bailed, crashed or refused its "
                                            "configuration), so which tests ran is not known")
    cases = []
    for suite in data.get("testResults", []):
        file = os.path.relpath(str(suite.get("name", "")), cwd)
        assertions = suite.get("assertionResults", [])
        for test in assertions:
            name = " > ".join([*test.get("ancestorTitles", []), str(test.get("title", ""))])
            status = test.get("status")
            body = ""
            if status == "failed":
                kind, message = _jest_failure("\n".join(test.get("failureMessages") or []))
                body = f"<failure type={quoteattr(kind)} message={quoteattr(message)}/>"
            elif status != "passed":
                body = "<skipped/>"
            cases.append(f"  <testcase classname={quoteattr(file)} name={quoteattr(name)}>{body}</testcase>")
        if suite.get("status") == "failed" and (suite.get("testExecError") or not any(
                test.get("status") == "failed" for test in assertions)):
            kind, message = _jest_failure(_suite_message(str(suite.get("message", ""))))
            cases.append(f"  <testcase classname={quoteattr(file)} name={quoteattr(file)}><error "
                         f"type={quoteattr(kind)} message={quoteattr(message)}/></testcase>")
    junit.write_text('<?xml version="1.0" encoding="utf-8"?>\n<testsuite name="jest">\n'
                     + "".join(case + "\n" for case in cases) + "</testsuite>\n", encoding="utf-8")
    if data.get("wasInterrupted"):
        return GateTestEnding(stopped_early="jest says the run was interrupted")
    return GateTestEnding()


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _jest_failure(text: str) -> tuple[str, str]:
    """The error's type and its message on one line (up to the stack): jest's first line is
    the matcher (``expect(received).toBe(expected)``), the values are on the lines after."""
    lines = []
    for line in _ANSI.sub("", text).splitlines():
        if re.match(r"^\s+at ", line):
            break
        if line.strip():
            lines.append(line.strip())
    first = lines[0] if lines else ""
    kind, colon, rest = first.partition(": ")
    if colon and re.match(r"^[A-Za-z_$][\w$.]*$", kind):
        return kind, " / ".join([rest, *lines[1:]])[:300]
    return "", " / ".join(lines)[:300]


def _suite_message(text: str) -> str:
    """Why a test file failed to run: jest's message without its ``● Test suite failed to
    run`` heading and the code frame."""
    lines = [line for line in _ANSI.sub("", text).splitlines() if line.strip() and "●" not in line]
    kept = []
    for line in lines:
        if re.match(r"^\s*(>?\s*\d+ \||\|)", line):
            break
        kept.append(line)
    return "\n".join(kept)


def node_test_command(command: str | list[str], junit: Path) -> GateTestRun | None:
    from axpipe.interfaces import GateTestRun

    invocation = gate_commands.find(command, _node_test)
    if invocation is None:
        return None
    test = invocation.first - 1
    options = _node_options(invocation, test)
    theirs = [(number, value) for number, value in options if value.split("=", 1)[0] == "--test-reporter"]
    places = [value for _, value in options if value.split("=", 1)[0] == "--test-reporter-destination"]
    # Node pairs the n-th reporter with the n-th destination: each pair is written side by side.
    added = [f"--test-reporter={REPORTER}", f"--test-reporter-destination={junit}"]
    if not theirs:
        added = ["--test-reporter=spec", "--test-reporter-destination=stdout", *added]
    elif len(theirs) == 1 and not places:
        number, value = theirs[0]
        invocation.insert_after(number if "=" in value else number + 1, ["--test-reporter-destination=stdout"])
    elif len(theirs) != len(places):
        return None
    invocation.insert_after(test, added)
    return GateTestRun("node --test", invocation.result(), [], added, language="node")


def _node_options(invocation: gate_commands.Invocation, test: int) -> list[tuple[int, str]]:
    """node's options around ``--test`` (index, value): back to the program, on to the first file."""
    before = test - 1
    while before >= 0 and invocation.words[before].value.startswith("-") and not invocation.words[before].operator:
        before -= 1
    options = [(number, invocation.words[number].value) for number in range(before + 1, test)]
    valued = False
    for number, value in invocation.arguments:
        if not value.startswith("-") and not valued:
            break
        options.append((number, value))
        valued = value in ("--test-reporter", "--test-reporter-destination")
    return options


class JestAdapter:
    """jest in the gate. It runs no named tests (DESIGN §9 names pytest and vitest for
    regressions), so it claims no file suffix."""

    suffixes: tuple[str, ...] = ()

    def run(self, request: TestRunRequest) -> TestRunReport:
        from axpipe.interfaces import TestRunReport

        return TestRunReport([], [], "the jest adapter narrows the gate's jest commands; it does not run named tests")

    def gate_command(self, command: str | list[str], junit: Path) -> GateTestRun | None:
        return jest_command(command, junit)

    def gate_finish(self, run: GateTestRun, junit: Path, output: str, exit_code: int | None,
                    cwd: Path) -> GateTestEnding:
        return jest_finish(run, junit, output, exit_code, cwd)


class NodeTestAdapter:
    """``node --test`` in the gate; like jest, no named tests."""

    suffixes: tuple[str, ...] = ()

    def run(self, request: TestRunRequest) -> TestRunReport:
        from axpipe.interfaces import TestRunReport

        return TestRunReport([], [], "the node-test adapter narrows the gate's `node --test` commands; it does not "
                                     "run named tests")

    def gate_command(self, command: str | list[str], junit: Path) -> GateTestRun | None:
        return node_test_command(command, junit)

    def gate_finish(self, run: GateTestRun, junit: Path, output: str, exit_code: int | None,
                    cwd: Path) -> GateTestEnding:
        from axpipe.interfaces import GateTestEnding

        return GateTestEnding()
