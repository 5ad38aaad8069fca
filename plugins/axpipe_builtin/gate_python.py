"""The gate's test phase for Python runners: pytest and ``python -m unittest``.

**pytest** (``pytest``, ``py.test``, ``python -m pytest``, ``coverage run -m pytest``, behind
``uv run``, ``poetry run`` and the like): ``--junitxml=PATH`` is added unless the command
names its own; ``-x``/``--exitfirst`` (also inside ``-xq``), ``--maxfail``, ``--sw`` and
``--sw-skip`` are taken out, and ``--maxfail=0 --continue-on-collection-errors`` appended,
so an ``addopts = -x`` in the project's configuration loses too and one module that fails
to import does not hide the others. pytest's exit code says how the run ended: 2
(interrupted), 3 (internal error) and 4 (usage error) are runs that stopped before their
end.

**unittest** (``python -m unittest``, with ``discover`` or names): ``-f``/``--failfast`` is
taken out. unittest writes no report, so its output is read: each ``FAIL:`` and ``ERROR:``
block names a test (``test_x (pkg.mod.Class.test_x)``) and ends with the exception's last
line, and ``Ran N tests`` says the run reached its end. Only failing tests are named.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING
from xml.sax.saxutils import quoteattr

from axpipe_builtin import gate_commands

if TYPE_CHECKING:
    from axpipe.interfaces import GateTestEnding, GateTestRun, TestRunReport, TestRunRequest

_PYTHON = re.compile(r"^(python|pypy)(\d+(\.\d+)?)?$")
_PYTEST = re.compile(r"^(pytest|py\.test)(-?3(\.\d+)?)?$")
_WRAPPERS = {"uv": "run", "poetry": "run", "pipenv": "run", "pdm": "run", "hatch": "run", "rye": "run"}
_PYTHON_VALUED = ("-W", "-X", "-Q")
# pytest's one-letter flags that take no value, and those that do (the rest of the word is it)
_PYTEST_FLAGS, _PYTEST_VALUED = "xqvslhV", "kmpcoWnr"
_UNITTEST_FLAGS, _UNITTEST_VALUED = "hvqfcb", "kspt"


def _module_after(values: list[str], at: int) -> tuple[str, int] | None:
    """``-m module`` among a Python interpreter's options starting at ``at``: the module and
    the index after it."""
    number = at
    while number < len(values) and values[number].startswith("-"):
        word = values[number]
        if word == "-m" and number + 1 < len(values):
            return values[number + 1], number + 2
        if word.startswith("-m") and len(word) > 2:
            return word[2:], number + 1
        if word.startswith("-c"):
            return None
        number += 2 if word in _PYTHON_VALUED else 1
    return None


def _runner(values: list[str], at: int) -> tuple[str, int] | None:
    """Which Python runner the words from ``at`` start (``pytest`` or ``unittest``), and the
    index of its first argument."""
    if at >= len(values):
        return None
    name = gate_commands.program_name(values[at])
    if name in _WRAPPERS and at + 1 < len(values) and values[at + 1] == _WRAPPERS[name]:
        for number in range(at + 2, len(values)):
            found = _runner(values, number)
            if found is not None:
                return found
            if not values[number].startswith("-") and (number == at + 2 or not values[number - 1].startswith("-")):
                return None  # a program that is not a Python runner
        return None
    if _PYTEST.match(name):
        return "pytest", at + 1
    module: tuple[str, int] | None = None
    if _PYTHON.match(name):
        module = _module_after(values, at + 1)
    elif name == "coverage" and at + 1 < len(values) and values[at + 1] == "run":
        module = _module_after(values, at + 2)
    if module is not None and module[0] == "coverage" and module[1] < len(values) and values[module[1]] == "run":
        module = _module_after(values, module[1] + 1)  # python -m coverage run -m pytest
    if module is not None and module[0] in ("pytest", "unittest"):
        return module
    return None


def _matcher(wanted: str) -> gate_commands.Matcher:
    def match(values: list[str], at: int) -> int | None:
        found = _runner(values, at)
        return found[1] if found is not None and found[0] == wanted else None

    return match


def pytest_command(command: str | list[str], junit: Path) -> GateTestRun | None:
    from axpipe.interfaces import GateTestRun

    invocation = gate_commands.find(command, _matcher("pytest"))
    if invocation is None:
        return None
    removed = gate_commands.without_flag(invocation, "x", ("--exitfirst",), _PYTEST_FLAGS, _PYTEST_VALUED)
    removed += gate_commands.without_option(invocation, ("--maxfail",), value="required")
    removed += gate_commands.without_option(invocation, ("--sw", "--stepwise", "--sw-skip", "--stepwise-skip"),
                                            value="none")
    added = ["--maxfail=0", "--continue-on-collection-errors"]
    if gate_commands.has_option(invocation, ("--junitxml", "--junit-xml")) is None:
        added.append(f"--junitxml={junit}")  # else the gate reads the file the command names
    invocation.append(added)
    return GateTestRun("pytest", invocation.result(), removed, added, language="python")


_PYTEST_ENDINGS = {2: "pytest was interrupted (exit code 2: Ctrl-C, pytest.exit() or an error it stopped at)",
                   3: "pytest stopped on an internal error (exit code 3)",
                   4: "pytest refused its command line (exit code 4: a usage error)"}


# pytest's own words when a session ends early, for a command that hides its exit code (`|| true`)
_PYTEST_STOPPED = re.compile(r"^!{3,} ((?:Interrupted|KeyboardInterrupt|_pytest\.outcomes\.Exit|stopping after)"
                             r"[^\n]*?) !{3,}$", re.MULTILINE)


def pytest_finish(run: GateTestRun, junit: Path, output: str, exit_code: int | None, cwd: Path) -> GateTestEnding:
    from axpipe.interfaces import GateTestEnding

    stopped = _PYTEST_ENDINGS.get(exit_code, "") if exit_code is not None else ""
    said = _PYTEST_STOPPED.search(output)
    if not stopped and said is not None:
        stopped = f"pytest said `{said[1]}`"
    return GateTestEnding(stopped_early=stopped)


def unittest_command(command: str | list[str], junit: Path) -> GateTestRun | None:
    from axpipe.interfaces import GateTestRun

    invocation = gate_commands.find(command, _matcher("unittest"))
    if invocation is None:
        return None
    removed = gate_commands.without_flag(invocation, "f", ("--failfast",), _UNITTEST_FLAGS, _UNITTEST_VALUED)
    return GateTestRun("unittest", invocation.result(), removed, [], language="python", lists_every_test=False)


_BLOCK = re.compile(r"^={60,}\n(?P<kind>FAIL|ERROR|UNEXPECTED SUCCESS): (?P<title>[^\n]+)\n"
                    r"(?:(?!-{60,})[^\n]*\n)?-{60,}\n(?P<body>.*?)"
                    r"(?=^={60,}\n|^-{60,}\nRan \d+ tests?|\Z)", re.MULTILINE | re.DOTALL)
_TITLE = re.compile(r"^(?P<method>\S+) \((?P<where>[^)]+)\)(?P<rest>.*)$")
_RAN = re.compile(r"^Ran (\d+) tests? in ", re.MULTILINE)


def unittest_finish(run: GateTestRun, junit: Path, output: str, exit_code: int | None,
                    cwd: Path) -> GateTestEnding:
    """JUnit XML from unittest's failure blocks (only failing tests are named)."""
    from axpipe.interfaces import GateTestEnding

    cases = []
    for block in _BLOCK.finditer(output):
        title = _TITLE.match(block["title"].strip())
        if title is None:
            test_id = block["title"].strip()
        else:  # Python 3.11+ prints the full name; 3.10 and older the class, then the method
            where, method = title["where"], title["method"]
            test_id = (where if where.endswith("." + method) else f"{where}.{method}") + title["rest"]
        exception, message = _exception(block["body"])
        tag = "error" if block["kind"] == "ERROR" else "failure"
        cases.append(f'  <testcase classname="" name={quoteattr(test_id)}><{tag} type={quoteattr(exception)} '
                     f'message={quoteattr(message)}/></testcase>')
    ran = _RAN.search(output)
    if ran is not None or cases:
        junit.write_text('<?xml version="1.0" encoding="utf-8"?>\n<testsuite name="unittest">\n'
                         + "".join(case + "\n" for case in cases) + "</testsuite>\n", encoding="utf-8")
    if ran is None:
        return GateTestEnding(stopped_early="unittest never printed `Ran N tests`: the run ended before its end "
                                            "(a crash, or an error before any test ran)")
    return GateTestEnding()


def _exception(body: str) -> tuple[str, str]:
    """The exception's type and the first line of its message: the first line at the margin
    after the traceback's last (indented) frame."""
    lines = body.rstrip().splitlines()
    frames = [number for number, line in enumerate(lines) if line.startswith(" ")]
    after = lines[frames[-1] + 1:] if frames else lines
    line = next((line for line in after if line.strip()), "")
    exception, colon, message = line.partition(": ")
    if re.match(r"^[A-Za-z_][\w.]*$", exception):
        return exception, message if colon else ""
    return "", line.strip()


class UnittestAdapter:
    """``python -m unittest`` in the gate. It runs no named tests: regressions name pytest's or
    vitest's node ids (DESIGN §9), so it claims no file suffix."""

    suffixes: tuple[str, ...] = ()

    def run(self, request: TestRunRequest) -> TestRunReport:
        from axpipe.interfaces import TestRunReport

        return TestRunReport([], [], "the unittest adapter narrows the gate's `python -m unittest` commands; it "
                                     "does not run named tests (use the pytest adapter: pytest runs unittest tests)")

    def gate_command(self, command: str | list[str], junit: Path) -> GateTestRun | None:
        return unittest_command(command, junit)

    def gate_finish(self, run: GateTestRun, junit: Path, output: str, exit_code: int | None,
                    cwd: Path) -> GateTestEnding:
        return unittest_finish(run, junit, output, exit_code, cwd)
