"""Built-in test adapters: run named tests once, with retries off, and match names exactly.

``pytest`` runs the named files through the project's pytest, with the project's
interpreter (:func:`axpipe.evidence.interpreter.find`), ``-p no:randomly`` and rerun plugins
blocked, reads the JUnit XML report, and matches node ids
(``tests/test_x.py::test_name[param]``). ``vitest`` runs ``vitest run`` from the project's
own ``node_modules`` with ``--retry=0`` and the JSON reporter, and matches ``fullName``
(the describe titles and the test title joined by spaces) within the named file.

A name is never matched by prefix: ``test_total`` does not match ``test_total[1]``. A name
that matches several executions is reported with their count, and a regression needs
exactly one.

Both also narrow the gate's test phase (``gate_command``, ``gate_finish``): the gate learns
which tests failed from a ``pytest`` or ``vitest`` command as the user wrote it
(:mod:`axpipe_builtin.gate_python`, :mod:`axpipe_builtin.gate_node`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

# The interfaces and pathlib load when tests run: `plugins list` imports every plugin, and
# these would be most of its start-up.
from axpipe import interfaces

if TYPE_CHECKING:
    from pathlib import Path

    from axpipe.interfaces import GateTestEnding, GateTestRun

_NODEID_PLUGIN = "axpipe_pytest_nodeids"


def _fold(statuses: list[interfaces.NamedTestStatus]) -> interfaces.NamedTestStatus:
    if not statuses:
        return interfaces.NamedTestStatus.MISSING
    if interfaces.NamedTestStatus.FAILED in statuses:
        return interfaces.NamedTestStatus.FAILED
    if all(status is interfaces.NamedTestStatus.SKIPPED for status in statuses):
        return interfaces.NamedTestStatus.SKIPPED
    if all(status is interfaces.NamedTestStatus.PASSED for status in statuses):
        return interfaces.NamedTestStatus.PASSED
    return interfaces.NamedTestStatus.FAILED  # some passed, some skipped: not one clean pass


def _prefix_note(name: str, names: Iterable[str], separators: tuple[str, ...]) -> str:
    similar = sorted({other for other in names if other != name and other.startswith(name)
                      and other[len(name):len(name) + 1] in separators})
    if not similar:
        return ""
    shown = ", ".join(similar[:3]) + (", ..." if len(similar) > 3 else "")
    return (f"not run under this exact name; {len(similar)} test(s) share it as a prefix ({shown}): "
            "name one exactly")


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


class PytestAdapter:
    """pytest through JUnit XML, node ids matched exactly."""

    suffixes = (".py",)

    def command(self, request: interfaces.TestRunRequest, files: list[str], junit: Path, python: str) -> list[str]:
        """The pytest command line: the project's interpreter and its pytest."""
        return [python, "-m", "pytest", "-p", _NODEID_PLUGIN, "-p", "no:randomly", "-p", "no:rerunfailures",
                "-p", "no:flaky", "--maxfail=0", f"--rootdir={request.workspace}", f"--junitxml={junit}",
                "-o", "junit_family=xunit2", "-q", *files]

    def gate_command(self, command: str | list[str], junit: Path) -> GateTestRun | None:
        from axpipe_builtin.gate_python import pytest_command

        return pytest_command(command, junit)

    def gate_finish(self, run: GateTestRun, junit: Path, output: str, exit_code: int | None,
                    cwd: Path) -> GateTestEnding:
        from axpipe_builtin.gate_python import pytest_finish

        return pytest_finish(run, junit, output, exit_code, cwd)

    def run(self, request: interfaces.TestRunRequest) -> interfaces.TestRunReport:
        from axpipe import process

        workspace = request.workspace
        request.artifacts_dir.mkdir(parents=True, exist_ok=True)
        plugin_dir = request.artifacts_dir / "pytest-plugin"
        plugin_dir.mkdir(exist_ok=True)
        with open(os.path.join(os.path.dirname(__file__), "pytest_nodeids.py"), encoding="utf-8") as handle:
            source = handle.read()
        (plugin_dir / f"{_NODEID_PLUGIN}.py").write_text(source, encoding="utf-8")
        junit = request.artifacts_dir / "junit.xml"
        junit.unlink(missing_ok=True)
        files = [file for file in _unique(test.file for test in request.tests) if (workspace / file).is_file()]
        if not files:
            return interfaces.TestRunReport([self._result(test, {}, workspace) for test in request.tests])
        from axpipe.evidence.interpreter import InterpreterNotFound, find

        try:
            python = find(workspace, request.python, named_by="the interpreter named for the tests")
        except InterpreterNotFound as error:
            return interfaces.TestRunReport([], [], error.message)
        command = self.command(request, files, junit, python.path)
        inherited = {**os.environ, **request.env}
        path = os.pathsep.join(part for part in (str(plugin_dir), inherited.get("PYTHONPATH", "")) if part)
        result = process.run(command, cwd=workspace, env={**request.env, "PYTHONPATH": path},
                             timeout=request.timeout, on_output=request.on_output)
        shown = process.command_text(command)
        if result.timed_out:
            return interfaces.TestRunReport([], [shown], f"pytest {result.describe()} with {python.describe()}",
                                            result.output[-4000:])
        if not junit.is_file() and "No module named pytest" in result.output:
            return interfaces.TestRunReport([], [shown], f"pytest is not installed for {python.describe()}: install "
                                                         "it there, or name another interpreter with --python "
                                                         "(receipts.python in a recipe)", result.output[-4000:])
        if not junit.is_file():
            ending = " / ".join(result.output.strip().splitlines()[-3:])
            return interfaces.TestRunReport([], [shown], f"pytest wrote no JUnit report ({result.describe()}) with "
                                                         f"{python.describe()}; its output ends: {ending}",
                                            result.output[-4000:])
        observed = self._parse(junit)
        return interfaces.TestRunReport([self._result(test, observed, workspace) for test in request.tests],
                                        [shown], None, result.output[-4000:])

    @staticmethod
    def _parse(junit: Path) -> dict[str, list[interfaces.NamedTestStatus]]:
        """Statuses per node id, one per execution (the test cases of one execution are folded)."""
        import xml.etree.ElementTree as ElementTree

        runs: dict[str, dict[str, list[interfaces.NamedTestStatus]]] = {}
        for case in ElementTree.parse(junit).getroot().iter("testcase"):
            props = {prop.get("name"): prop.get("value") for prop in case.iter("property")}
            nodeid = props.get("axpipe_nodeid")
            if nodeid is None:
                continue  # a collection error: no test ran
            tags = {child.tag for child in case}
            if tags & {"failure", "error"}:
                status = interfaces.NamedTestStatus.FAILED
            elif "skipped" in tags:
                status = interfaces.NamedTestStatus.SKIPPED
            else:
                status = interfaces.NamedTestStatus.PASSED
            run = props.get("axpipe_run") or f"case-{id(case)}"
            runs.setdefault(nodeid, {}).setdefault(run, []).append(status)
        return {nodeid: [_fold(statuses) for statuses in by_run.values()] for nodeid, by_run in runs.items()}

    def _result(self, test: interfaces.NamedTest, observed: dict[str, list[interfaces.NamedTestStatus]],
                workspace: Path) -> interfaces.NamedTestResult:
        statuses = observed.get(test.full_name, [])
        note = ""
        if not (workspace / test.file).is_file():
            statuses, note = [], "the file does not exist"
        elif test.full_name.split("::", 1)[0] != test.file:
            statuses, note = [], f"the node id does not start with the file {test.file}::"
        elif not statuses:
            note = _prefix_note(test.full_name, observed, ("[", ":")) or "no test ran under this node id"
        return interfaces.NamedTestResult(test, _fold(statuses), len(statuses), note)


def _vitest_status(reported: object) -> interfaces.NamedTestStatus:
    """vitest's assertion status: passed and failed as they are; pending, todo, skipped and
    anything else did not pass."""
    if reported in ("passed", "failed"):
        return interfaces.NamedTestStatus(reported)
    return interfaces.NamedTestStatus.SKIPPED


class VitestAdapter:
    """``vitest run`` with its JSON reporter, ``fullName`` matched exactly within the file."""

    suffixes = (".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts")

    def gate_command(self, command: str | list[str], junit: Path) -> GateTestRun | None:
        from axpipe_builtin.gate_node import vitest_command

        return vitest_command(command, junit)

    def gate_finish(self, run: GateTestRun, junit: Path, output: str, exit_code: int | None,
                    cwd: Path) -> GateTestEnding:
        from axpipe_builtin.gate_node import vitest_finish

        return vitest_finish(run, junit, output, exit_code, cwd)

    def run(self, request: interfaces.TestRunRequest) -> interfaces.TestRunReport:
        import shutil

        from axpipe import process

        workspace = request.workspace.resolve()
        if shutil.which("node") is None:
            return interfaces.TestRunReport([], [], "Node.js is not installed (no `node` on PATH); vitest needs it")
        request.artifacts_dir.mkdir(parents=True, exist_ok=True)
        groups: dict[Path, list[interfaces.NamedTest]] = {}
        notes: dict[interfaces.NamedTest, str] = {}
        for test in request.tests:
            if not (workspace / test.file).is_file():
                notes[test] = "the file does not exist"
                continue
            package = self._package(workspace, workspace / test.file)
            if package is None:
                notes[test] = ("vitest is not installed for this file: no node_modules/.bin/vitest between its "
                               "folder and the repository root (run npm install)")
                continue
            groups.setdefault(package, []).append(test)
        observed: dict[tuple[str, str], list[interfaces.NamedTestStatus]] = {}
        failures: dict[str, str] = {}
        commands, tails = [], []
        for number, (package, tests) in enumerate(sorted(groups.items())):
            report = request.artifacts_dir / f"vitest-{number}.json"
            report.unlink(missing_ok=True)
            files = _unique(os.path.relpath(workspace / test.file, package) for test in tests)
            command = [str(package / "node_modules" / ".bin" / "vitest"), "run", *files, "--reporter=json",
                       f"--outputFile={report}", "--retry=0"]
            commands.append(process.command_text(command))
            result = process.run(command, cwd=package, env={**request.env, "NO_COLOR": "1", "FORCE_COLOR": "0"},
                                 timeout=request.timeout, on_output=request.on_output)
            tails.append(result.output[-4000:])
            if result.timed_out or not report.is_file():
                detail = " / ".join(result.output.strip().splitlines()[-3:])
                return interfaces.TestRunReport([], commands, f"vitest {result.describe()} and wrote no JSON report; "
                                                              f"its output ends: {detail}", "\n".join(tails))
            self._parse(report, observed, failures)
        results = []
        for test in request.tests:
            key = (str((workspace / test.file).resolve()), test.full_name)
            statuses = observed.get(key, [])
            note = notes.get(test, "")
            if not statuses and not note:
                names = [name for path, name in observed if path == key[0]]
                note = (_prefix_note(test.full_name, names, (" ",)) or failures.get(key[0], "")
                        or "no test ran under this full name in the file")
            results.append(interfaces.NamedTestResult(test, _fold(statuses), len(statuses), note))
        return interfaces.TestRunReport(results, commands, None, "\n".join(tails))

    @staticmethod
    def _package(workspace: Path, file: Path) -> Path | None:
        """The nearest folder from the file up to the repository root with vitest installed."""
        folder = file.parent
        while True:
            if (folder / "node_modules" / ".bin" / "vitest").exists():
                return folder
            if folder == workspace or workspace not in folder.parents:
                return None
            folder = folder.parent

    @staticmethod
    def _parse(report: Path, observed: dict[tuple[str, str], list[interfaces.NamedTestStatus]],
               failures: dict[str, str]) -> None:
        import json

        data: Any = json.loads(report.read_text(encoding="utf-8"))
        for file_result in data.get("testResults", []):
            path = os.path.realpath(file_result.get("name", ""))
            if file_result.get("status") == "failed" and file_result.get("message"):
                failures[path] = f"the file failed: {str(file_result['message']).splitlines()[0][:300]}"
            for assertion in file_result.get("assertionResults", []):
                status = _vitest_status(assertion.get("status"))
                observed.setdefault((path, str(assertion.get("fullName"))), []).append(status)
