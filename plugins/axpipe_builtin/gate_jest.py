"""The gate's test phase for jest (found as written: ``jest``, ``npx jest``, ``node_modules/.bin/jest``).

jest gets ``--json --outputFile=PATH``, turned into JUnit XML after the run: a test is its
file (from the folder jest ran in) and its titles joined by `` > ``; a file that failed to
run is a failing test named by the file. ``-b``/``--bail`` is taken out and ``--bail=0``
appended, which also beats a ``bail`` in the configuration. jest writes no report when it
bails, and says ``wasInterrupted`` when stopped: both are runs that ended early. A command
that already writes its own ``--outputFile`` is left to ``{junit_xml}``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import quoteattr

from axpipe_builtin import gate_commands
from axpipe_builtin.gate_node import launched

if TYPE_CHECKING:
    from axpipe.interfaces import GateTestEnding, GateTestRun, TestRunReport, TestRunRequest


def _jest(values: list[str], at: int) -> int | None:
    program = launched(values, at, ("jest",))
    return None if program is None else program + 1


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
        return kind, " / ".join([rest, *lines[1:]])[:4000]
    return "", " / ".join(lines)[:4000]


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
