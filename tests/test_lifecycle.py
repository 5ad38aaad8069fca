"""The lifecycle's orchestration, with stand-in phases (no processes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from axpipe.errors import AxpipeError, ExitCode
from axpipe.recipe.validation import validate_recipe
from axpipe.run.events import EventLog
from axpipe.run.lifecycle import DEFAULT_PHASES, execute
from axpipe.run.phases import PHASES, PhaseResult, RunContext


def context(tmp_path: Path, config: dict | None = None) -> RunContext:
    recipe, variables = validate_recipe(config or {"name": "r"}, config or {"name": "r"})
    return RunContext(recipe=recipe, config={}, variables=variables, root=tmp_path, run_dir=tmp_path / "run",
                      run_id="run-1", events=EventLog(goal="g"))


def test_the_default_phases_are_the_designed_order() -> None:
    assert [name for name, _ in DEFAULT_PHASES] == list(PHASES) == [
        "lock", "probe", "plan", "work", "gate", "verify", "review", "settle"]


def test_phases_run_in_order_until_one_stops(tmp_path: Path) -> None:
    ran: list[str] = []

    def phase(name: str, result: PhaseResult):  # type: ignore[no-untyped-def]
        def run(_: RunContext) -> PhaseResult:
            ran.append(name)
            return result
        return name, run

    ctx = context(tmp_path)
    code, summary = execute(ctx, [phase("a", PhaseResult("passed", "fine")),
                                  phase("b", PhaseResult("failed", "probe said no", stop=ExitCode.ENVIRONMENT)),
                                  phase("c", PhaseResult("passed", "never"))])
    assert ran == ["a", "b"]
    assert (code, summary) == (ExitCode.ENVIRONMENT, "b: probe said no")
    kinds = [(event["type"], event.get("phase")) for event in ctx.events.history]
    assert kinds == [("phase.started", "a"), ("phase.finished", "a"), ("phase.started", "b"), ("phase.finished", "b")]
    assert all(event["goal"] == "g" and event["ts"].endswith("Z") for event in ctx.events.history)


def test_a_phase_error_becomes_its_exit_code(tmp_path: Path) -> None:
    def broken(_: RunContext) -> PhaseResult:
        raise AxpipeError("the agent binary vanished", exit_code=ExitCode.ENVIRONMENT)

    ctx = context(tmp_path)
    assert execute(ctx, [("work", broken)]) == (ExitCode.ENVIRONMENT, "work: the agent binary vanished")
    assert ctx.events.history[-1]["status"] == "error"


def test_undeclared_phases_are_reported_as_skipped(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    code, _ = execute(ctx, [("gate", lambda _: PhaseResult("not-declared", "no gate declared"))])
    assert code == ExitCode.OK
    assert ctx.events.history[-1]["type"] == "phase.skipped"


def test_all_passing_ends_ok_with_the_last_summary(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    assert execute(ctx, [("settle", lambda _: PhaseResult("passed", "all 2 checks passed"))]) == (
        ExitCode.OK, "all 2 checks passed")



def test_a_run_that_crashes_is_recorded_as_failed_not_interrupted(repo: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from axpipe.recipe.resolve import ComposedRecipe
    from axpipe.run import lifecycle, pipeline
    from axpipe.run.phases import RunOptions

    def crash(*_: object) -> tuple[ExitCode, str]:
        raise RuntimeError("boom")

    monkeypatch.setattr(lifecycle, "execute", crash)
    recipe, variables = validate_recipe({"name": "r"}, {"name": "r"})
    run_dir = repo / ".axpipe" / "runs" / "2026-11-30" / "crash"
    with pytest.raises(RuntimeError, match="boom"):  # the edge reports it (an internal error, exit 1)
        pipeline.run_pipeline(ComposedRecipe(recipe, variables, {"name": "r"}), recipe_name="r", run_dir=run_dir,
                              options=RunOptions(), invocation_root=repo)
    finished = json.loads((run_dir / "events.jsonl").read_text().splitlines()[-1])
    assert (finished["type"], finished["status"], finished["exit_code"]) == ("run.finished", "failed", 1)
    assert finished["summary"] == "internal error: RuntimeError: boom"
