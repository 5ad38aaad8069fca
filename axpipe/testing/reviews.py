"""Conformance tests for reviewer plugins and test adapters (like :class:`CheckKindContract`).

A reviewer plugin author writes::

    from axpipe.testing.reviews import ReviewerContract

    class TestMyReviewer(ReviewerContract):
        kind = "my-cli"

        def entry(self):                 # the reviewer's recipe entry, without name and kind
            return {"model": "m-1"}

A test adapter author writes::

    from axpipe.testing.reviews import AdapterCase, NamedTestAdapterContract

    class TestMyAdapter(NamedTestAdapterContract):
        adapter = "my-runner"

        def project(self, folder):       # write a project with one passing and one failing test
            ...
            return AdapterCase(file="tests/x_test.ext", passing="x passes", failing="x fails")

Both load the plugin through its entry point, as a recipe or ``receipts verify`` would.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from axpipe import templates
from axpipe.evidence import env as evidence_env
from axpipe.interfaces import (
    NamedTest,
    NamedTestStatus,
    Reviewer,
    ReviewInvocation,
    ReviewRequest,
    TestAdapter,
    TestRunRequest,
)
from axpipe.plugin import registry
from axpipe.recipe import typed as validation
from axpipe.records import record
from axpipe.review.runner import prompt_context


class ReviewerContract:
    """Inherit, set ``kind`` (the entry point name) and override ``entry`` (its recipe entry)."""

    kind: str = ""

    def entry(self) -> dict[str, Any]:
        """The reviewer's recipe entry without ``name`` and ``kind`` (command, model, params)."""
        return {}

    def load(self) -> Any:
        assert self.kind, "set `kind` to the reviewer's entry point name"
        registry.forget()
        return registry.load("axpipe.reviewers", self.kind)

    def params(self, plugin: Any) -> Any:
        raw = {key: value for key, value in self.entry().items() if key not in ("command", "model")}
        params, problems = validation.load_plugin_params(plugin, raw, "reviewer", None)
        assert problems == [], [problem.render() for problem in problems]
        return params

    def test_loads_through_its_entry_point_and_satisfies_the_protocol(self) -> None:
        assert isinstance(self.load(), Reviewer)

    def test_its_output_format_is_text_or_jsonl(self) -> None:
        plugin = self.load()
        assert plugin.output_format(self.params(plugin)) in ("text", "jsonl")

    def test_its_prompt_renders_with_the_documented_variables(self) -> None:
        plugin = self.load()
        context = {**prompt_context(workspace=Path("/w"), revision="a" * 40, base="b" * 40, number=1,
                                    patch="+x\n", files=["x.py"]), "reviewer": "r", "model": None}
        rendered = templates.render(plugin.prompt_template(self.params(plugin)), context, name="contract")
        assert rendered.strip()

    def test_its_invocation_is_a_command_with_a_timeout(self, tmp_path: Path) -> None:
        plugin = self.load()
        entry = self.entry()
        request = ReviewRequest(name="r", command=entry.get("command"), model=entry.get("model"),
                                params=self.params(plugin), prompt="Review this.", prompt_file=tmp_path / "p.md",
                                workspace=tmp_path)
        invocation = plugin.invocation(request)
        assert isinstance(invocation, ReviewInvocation)
        assert invocation.command and invocation.timeout > 0

    def test_an_unknown_parameter_is_a_config_problem(self) -> None:
        plugin = self.load()
        _, problems = validation.load_plugin_params(plugin, {"no_such_parameter_x": 1}, "reviewer", None)
        assert [problem.path for problem in problems][:1] == ["reviewer.no_such_parameter_x"]


@record
class AdapterCase:
    """A project's test file with one test that passes and one that fails, by full name."""

    file: str
    passing: str
    failing: str


class NamedTestAdapterContract:
    """Inherit, set ``adapter`` and implement ``project``."""

    adapter: str = ""

    def project(self, folder: Path) -> AdapterCase:
        raise NotImplementedError

    def run(self, folder: Path, case: AdapterCase, *names: str) -> list[tuple[str, NamedTestStatus, int]]:
        registry.forget()
        plugin = registry.load("axpipe.test_adapters", self.adapter)
        assert isinstance(plugin, TestAdapter)
        assert case.file.endswith(tuple(plugin.suffixes)), "the case's file must have a suffix the adapter runs"
        # as the receipt verifier asks: with the evidence environment
        report = plugin.run(TestRunRequest(workspace=folder, tests=[NamedTest(case.file, name) for name in names],
                                           timeout=300, artifacts_dir=folder.parent / f"{folder.name}-artifacts",
                                           env=evidence_env.variables(folder)))
        assert report.error is None, report.error
        assert [result.test.full_name for result in report.results] == list(names)
        return [(result.test.full_name, result.status, result.executions) for result in report.results]

    def test_passing_failing_and_missing_tests_are_told_apart(self, tmp_path: Path) -> None:
        folder = tmp_path / "project"
        folder.mkdir()
        case = self.project(folder)
        missing = case.passing + "-no-such-test"
        assert self.run(folder, case, case.passing, case.failing, missing) == [
            (case.passing, NamedTestStatus.PASSED, 1), (case.failing, NamedTestStatus.FAILED, 1),
            (missing, NamedTestStatus.MISSING, 0)]

    def test_the_run_leaves_the_project_as_it_was(self, tmp_path: Path) -> None:
        # DESIGN §8: running tests for evidence leaves no bytecode, cache or report in the checkout
        folder = tmp_path / "project"
        folder.mkdir()
        case = self.project(folder)
        before = sorted(path.relative_to(folder) for path in folder.rglob("*"))
        self.run(folder, case, case.passing)
        assert sorted(path.relative_to(folder) for path in folder.rglob("*")) == before
