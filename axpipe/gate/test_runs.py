"""One run of the gate's test command, through the test adapter that knows its runner.

The adapters (``axpipe.test_adapters`` plugins with ``gate_command``/``gate_finish``,
:class:`~axpipe.interfaces.GateTestAdapter`) are asked in turn whether the command is their
runner's; the first that says yes decides how it runs: its report option added, its fail-fast
options out (DESIGN §8). A command no adapter claims runs as written, and its identities
come from ``{junit_xml}``. An adapter that fails to load or raises is passed over for the
choice, and when it fails after its run, that run fails closed (``stopped_early`` names it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import Any

from axpipe.errors import PluginError
from axpipe.gate import junit
from axpipe.gate.report import Attempt
from axpipe.gate.runner import Runner
from axpipe.interfaces.test_adapters import GateTestAdapter, GateTestEnding, GateTestRun
from axpipe.plugin import calls as plugin_calls
from axpipe.plugin import registry
from axpipe.process import CommandSpec, ProcessResult, command_text
from axpipe.records import record

_NAMESPACE = "axpipe.test_adapters"


@record
class Adapter:
    """The adapter that claimed a command (``plugin`` None: none did)."""

    name: str = ""
    plugin: Any = None
    passed_over: list[str] = field(default_factory=list)  # adapters that could not be asked, and why


@record
class TestAttempt:
    """A run of the test command and what it showed."""

    __test__ = False  # not a pytest test class

    attempt: Attempt
    result: ProcessResult | None
    run: GateTestRun | None
    ending: GateTestEnding
    cases: dict[str, junit.TestCase] | None
    problem: str | None  # why there are no test results (``cases`` is None)


def choose(runner: Runner, command: CommandSpec) -> Adapter:
    """The first adapter whose ``gate_command`` claims ``command``."""
    chosen = Adapter()
    for name in registry.names(_NAMESPACE):
        try:
            plugin = registry.load(_NAMESPACE, name)
        except PluginError as error:
            chosen.passed_over.append(error.message)
            continue
        if not isinstance(plugin, GateTestAdapter):
            continue
        try:
            claimed = plugin_calls.call(plugin, "gate_command", runner.substituted(command, "test", "workspace"),
                                        runner.junit("test", "workspace"), returns=(GateTestRun, type(None)))
        except plugin_calls.PluginFault as fault:
            chosen.passed_over.append(fault.message)
            continue
        if claimed is not None:
            chosen.name, chosen.plugin = name, plugin
            return chosen
    return chosen


def run_tests(runner: Runner, adapter: Adapter, command: CommandSpec, where: str, *,
              environment: Callable[[dict[str, str]], dict[str, str]] | None = None) -> TestAttempt:
    """Run the test command ``where`` (``workspace`` or ``baseline``) as ``adapter`` says."""
    ours = runner.junit("test", where)
    run: GateTestRun | None = None
    if adapter.plugin is not None:
        try:
            run = plugin_calls.call(adapter.plugin, "gate_command", runner.substituted(command, "test", where), ours,
                                    returns=GateTestRun)
        except plugin_calls.PluginFault as fault:
            return _failed_adapter(runner, command, where, fault.message)
        if run.report:
            Path(run.report).unlink(missing_ok=True)  # never read a previous run's report
    attempt, result = runner.run("test", run.command if run is not None else command, where, environment=environment)
    ending = GateTestEnding()
    if run is not None and result is not None:
        try:
            ending = plugin_calls.call(adapter.plugin, "gate_finish", run, ours, runner.output(attempt),
                                       result.exit_code, runner.cwd(where), returns=GateTestEnding)
        except plugin_calls.PluginFault as fault:
            ending = GateTestEnding(stopped_early=f"the {adapter.name} test adapter failed reading the run: "
                                                  f"{fault.message}")
        if attempt.junit is None and ours.is_file():
            attempt.junit = str(ours)  # written by the adapter from the runner's own report or output
    cases, problem = _cases(attempt) if result is not None else (None, attempt.result)
    return TestAttempt(attempt, result, run, ending, cases, problem)


def _failed_adapter(runner: Runner, command: CommandSpec, where: str, message: str) -> TestAttempt:
    attempt = Attempt(where, command_text(command), f"not run: {message}", None, 0.0, "-", "")
    return TestAttempt(attempt, None, None, GateTestEnding(stopped_early=message), None, message)


def _cases(attempt: Attempt) -> tuple[dict[str, junit.TestCase] | None, str | None]:
    if attempt.junit is None:
        return None, "it left no JUnit XML"
    try:
        return junit.read(Path(attempt.junit)), None
    except junit.JUnitError as error:
        return None, str(error)
