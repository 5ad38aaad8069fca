"""The gate's test phase for Node runners: vitest and ``node --test`` (jest: ``gate_jest``).

Each is found as written (``vitest``, ``vitest run``, ``node_modules/.bin/jest``, behind
``npx``, ``pnpm``, ``yarn`` or ``npm exec``) and narrowed without report flags from the user:

- **vitest**: ``--reporter=junit --outputFile.junit=PATH`` (and ``--reporter=default``
  when the command names no reporter, so the output stays as it was); ``--bail`` is taken
  out and ``--bail=0`` appended, which also beats a ``bail`` in the configuration. Errors
  vitest reports outside any test ("Vitest caught N unhandled errors") fail the run.
- **jest**: :mod:`axpipe_builtin.gate_jest`.
- **node --test**: axpipe's reporter (``node_reporter.mjs``) writes the JUnit XML, beside
  the ``spec`` reporter on standard output; Node's own junit reporter names neither the file
  nor the suites of a test.

A command that already sends a report to a file of its own (``--outputFile``) is left to
``{junit_xml}``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from axpipe_builtin import gate_commands

if TYPE_CHECKING:
    from axpipe.interfaces import GateTestEnding, GateTestRun, TestRunReport, TestRunRequest

_LAUNCHERS = {"npx": (), "bunx": (), "pnpm": ("exec", "dlx"), "yarn": ("exec", "dlx"), "npm": ("exec",)}
REPORTER = Path(__file__).with_name("node_reporter.mjs")


def launched(values: list[str], at: int, programs: tuple[str, ...]) -> int | None:
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
    program = launched(values, at, ("vitest",))
    if program is None:
        return None
    following = values[program + 1] if program + 1 < len(values) else ""
    return program + 2 if following == "run" else program + 1


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
