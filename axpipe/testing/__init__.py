"""Conformance tests every plugin of a kind inherits (like Hydra's launcher test suite).

A plugin author writes one subclass per plugin and supplies the cases::

    from axpipe.testing import CheckCase, CheckKindContract

    class TestLineLimit(CheckKindContract):
        kind = "line-limit"

        def passing_case(self, workspace):
            (workspace / "a.py").write_text("x = 1\\n")
            return CheckCase(params={"paths": ["*.py"], "max_lines": 5})

        def failing_case(self, workspace):
            (workspace / "a.py").write_text("x = 1\\n" * 9)
            return CheckCase(params={"paths": ["*.py"], "max_lines": 5})

The contract loads the plugin through its entry point, exactly as a recipe would.
"""

from __future__ import annotations

import dataclasses
from dataclasses import field
from pathlib import Path
from typing import Any

from axpipe.interfaces import CheckKind, CheckOutcome, CheckRequest, CheckStatus
from axpipe.plugin import registry
from axpipe.process import CommandSpec
from axpipe.recipe import typed as validation
from axpipe.records import record


@record
class CheckCase:
    """One way to run a check kind: its command (if it needs one) and params."""

    command: CommandSpec | None = None
    params: dict[str, Any] = field(default_factory=dict)
    timeout: float = 60.0


class CheckKindContract:
    """Inherit, set ``kind`` and implement ``passing_case`` and ``failing_case``."""

    kind: str = ""

    def passing_case(self, workspace: Path) -> CheckCase:
        raise NotImplementedError

    def failing_case(self, workspace: Path) -> CheckCase:
        raise NotImplementedError

    # -- helpers --------------------------------------------------------------------

    def load(self) -> Any:
        assert self.kind, "set `kind` to the plugin's entry point name"
        registry.forget()
        return registry.load("axpipe.checks", self.kind)

    def run_case(self, case: CheckCase, workspace: Path) -> CheckOutcome:
        plugin = self.load()
        params, problems = validation.load_plugin_params(plugin, case.params, "check", None)
        assert problems == [], [problem.render() for problem in problems]
        outcome = plugin.run(CheckRequest(check_id="contract", command=case.command, params=params,
                                          cwd=workspace, timeout=case.timeout))
        assert isinstance(outcome, CheckOutcome)
        assert isinstance(outcome.summary, str) and outcome.summary.strip()
        return outcome

    # -- the contract ---------------------------------------------------------------

    def test_loads_through_its_entry_point_and_satisfies_the_protocol(self) -> None:
        plugin = self.load()
        assert isinstance(plugin, CheckKind)
        assert isinstance(plugin.needs_command, bool)
        schema = plugin.params_schema
        assert schema is None or dataclasses.is_dataclass(schema)

    def test_passing_case_passes(self, tmp_path: Path) -> None:
        case = self.passing_case(tmp_path)
        assert self.run_case(case, tmp_path).status is CheckStatus.PASSED

    def test_failing_case_fails(self, tmp_path: Path) -> None:
        case = self.failing_case(tmp_path)
        assert self.run_case(case, tmp_path).status is CheckStatus.FAILED

    def test_describe_says_what_is_checked(self, tmp_path: Path) -> None:
        plugin = self.load()
        case = self.passing_case(tmp_path)
        params, _ = validation.load_plugin_params(plugin, case.params, "check", None)
        description = plugin.describe(params)
        assert isinstance(description, str) and description.strip()

    def test_an_unknown_parameter_is_a_config_problem(self) -> None:
        plugin = self.load()
        _, problems = validation.load_plugin_params(plugin, {"no_such_parameter_x": 1}, "check", None)
        assert [problem.path for problem in problems][:1] == ["check.no_such_parameter_x"]
