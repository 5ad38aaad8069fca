"""A recipe's ``loop:`` inside ``axpipe run`` (DESIGN §3 and §7).

``lock → probe → plan`` run once, as in any run; the loop registers as soon as the run holds
the checkout (:class:`LoopStart`), so it can be seen and stopped during its probe and plan.
Then the ``loop`` phase repeats a tick once per firing of :mod:`axpipe.loop.engine`'s ticker
until the goal settles, the loop is stopped, or ``max_runs`` is reached. A tick is an
ordinary pass of the lifecycle:

``[probe] → work → gate → verify → review → settle``

* **probe** runs again from the second tick on; when it fails, the tick does no work
  (``environment-not-ready``) and the loop goes on: the environment may come back.
* **work** is the goal's agent turn. ``loop.prompt`` *precedes* the rendered work prompt
  (:attr:`GoalDriver.prompt_prefix`). ``loop.command`` *replaces* the agent's turn: the
  command runs where the agent would have worked, after the goal's status and budgets are
  checked as for any turn. Without a goal a tick is the command alone.
* **settle** is the completion gate. A goal that stays ``active`` lets the next tick come;
  any other stop (complete, blocked, budget limited, paused — a non-autonomous agent at a
  permission prompt pauses its goal) ends the loop with that exit code.
"""

from __future__ import annotations

import dataclasses

from axpipe import clock, process
from axpipe.errors import AxpipeError, ExitCode
from axpipe.evidence import bytecode
from axpipe.goal.turn import changed_files, snapshot_files
from axpipe.loop.engine import LoopEnd, LoopRunner, TickOutcome, interrupted
from axpipe.process import command_text
from axpipe.run import lifecycle
from axpipe.run.phases import Phase, PhaseResult, RunContext
from axpipe.store import loops as queries


class LoopStart:
    """The phases of a run with ``loop:`` (:meth:`phases`), sharing its :class:`LoopRunner`.

    The loop registers as soon as the run holds the checkout, before its probe and plan:
    from then on ``loop status`` shows it, and ``loop stop``, a replacing ``loop start`` or
    SIGTERM reach it. A stop requested while the probe or the plan runs lets that step
    finish (``--now``: ends the probe's processes) and ends the loop before its first tick,
    without planning when the probe was running. A run that ends before the loop phase
    (the probe failed, the plan refused, a signal) records the loop's end with the reason.
    """

    def __init__(self) -> None:
        self.runner: LoopRunner | None = None

    def phases(self) -> list[tuple[str, Phase]]:
        return [("lock", self.lock), ("probe", self.probe), ("plan", self.plan), ("loop", self.loop)]

    def lock(self, context: RunContext) -> PhaseResult:
        result = lifecycle.lock_phase(context)
        spec = context.recipe.loop
        assert spec is not None
        record = {"run_id": context.run_id, "workspace": str(context.root), "recipe": context.recipe_name,
                  "goal_id": None, "session_id": None, "prompt": spec.prompt, "command": spec.command}
        runner = self.runner = LoopRunner(
            store=context.store, events=context.events, interval=spec.interval, max_runs=spec.max_runs,
            tick=lambda number: run_tick(context, number, runner), record=record,
            heartbeat=clock.timings().heartbeat)
        runner.register()
        # Pushed after the run lock: the loop records its end before the run releases the checkout.
        context.resources.push(lambda kind, error, trace: self._unwind(error))
        return result

    def probe(self, context: RunContext) -> PhaseResult:
        return self._before_ticks(context, "probe", lifecycle.probe_phase)

    def plan(self, context: RunContext) -> PhaseResult:
        result = self._before_ticks(context, "plan", lifecycle.plan_phase)
        runner, driver = self.runner, context.driver
        assert runner is not None
        if result.stop is None and driver is not None:
            runner.record.update(goal_id=driver.goal.id, session_id=driver.session_id)
            queries.set_goal(context.store, runner.id, goal_id=driver.goal.id, session_id=driver.session_id)
        return result

    def loop(self, context: RunContext) -> PhaseResult:
        """Run the recipe's loop until it ends; the run ends with the loop's exit code."""
        assert self.runner is not None
        return loop_phase(context, self.runner)

    def _before_ticks(self, context: RunContext, name: str, phase: Phase) -> PhaseResult:
        runner = self.runner
        assert runner is not None
        if runner.stop_requested():
            return self._stopped(context, f"{name} not run")
        try:
            result = phase(context)
        except AxpipeError as error:  # run_phase reports it; the loop's row must say why it ended
            runner.finish(LoopEnd(f"the run ended before the first tick: {name}: {error.message}", 0,
                                  runner.ticker.busy_skips, stop=error.exit_code))
            raise
        if result.stop is not None:
            if runner.stop_now:  # the stop ended the probe's processes: the probe did not fail
                return self._stopped(context, f"{name} cut short")
            runner.finish(LoopEnd(f"the run ended before the first tick: {name}: {result.summary}", 0,
                                  runner.ticker.busy_skips, stop=result.stop))
        return result

    def _stopped(self, context: RunContext, what: str) -> PhaseResult:
        runner = self.runner
        assert runner is not None
        reason = f"stopped before the first tick: {runner.stop_reason}"
        runner.finish(LoopEnd(reason, 0, runner.ticker.busy_skips, requested=True))
        # As a loop stopped at its first firing: a goal stays active (6), a goal-less loop
        # has no failed tick (0).
        code = ExitCode.NOT_TERMINAL if context.recipe.goal is not None else ExitCode.OK
        return PhaseResult("stopped", f"{what}: the loop was {reason} (0 run(s))", stop=code)

    def _unwind(self, error: BaseException | None) -> bool:
        runner = self.runner
        if runner is not None and runner.ended is None:  # the run ends before the loop phase did
            if isinstance(error, KeyboardInterrupt):
                end = interrupted(error, 0, runner.ticker.busy_skips)
            else:
                end = LoopEnd(f"the run ended before the first tick: {error or 'no loop phase'}", 0,
                              runner.ticker.busy_skips, stop=ExitCode.FAILED)
            runner.finish(end)
        return False  # the error, if any, goes on


def phases() -> list[tuple[str, Phase]]:
    """The phases of one run with ``loop:`` (a new :class:`LoopStart` per run)."""
    return LoopStart().phases()


def loop_phase(context: RunContext, runner: LoopRunner) -> PhaseResult:
    """Run the registered loop until it ends; the run ends with the loop's exit code."""
    spec = context.recipe.loop
    assert spec is not None
    driver = context.driver
    if driver is not None and spec.command is not None:
        driver.recipe = dataclasses.replace(context.recipe, agent=None)  # the command replaces the agent's turn
    elif driver is not None and spec.prompt:
        driver.prompt_prefix = spec.prompt
    if driver is not None:  # an agent killed by `loop stop --now` did not fail: no hard stop
        runner.on_stop_now = lambda reason: setattr(driver, "interrupted", f"the loop was stopped now: {reason}")
    return _result(context, runner.run())


def _result(context: RunContext, end: LoopEnd) -> PhaseResult:
    counts = f"{end.runs} run(s), {end.busy_skips} busy-skip(s)"
    if end.stop is not None:
        assert end.last is not None
        return PhaseResult(end.last.status, f"{end.reason} ({counts})", stop=end.stop)
    if context.driver is not None:  # stopped or capped while the goal is still active
        return PhaseResult("stopped", f"{end.reason}; the goal is still active ({counts})",
                           stop=ExitCode.NOT_TERMINAL)
    # Without a goal the loop's outcome is its last tick's; one cut short by a stop is no failure.
    failed = end.last is not None and end.last.status not in ("passed", "interrupted")
    last = f"; the last tick {end.last.status}" if end.last is not None else ""
    return PhaseResult("failed" if failed else "passed", f"{end.reason}{last} ({counts})",
                       stop=ExitCode.FAILED if failed else ExitCode.OK)


def run_tick(context: RunContext, number: int, runner: LoopRunner) -> TickOutcome:
    """One tick: the lifecycle's phases after ``plan``, with each phase's events tagged."""
    steps: list[tuple[str, Phase]] = []
    if number > 1 and context.recipe.probe is not None:
        steps.append(("probe", lifecycle.probe_phase))
    steps += [("work", lambda ctx: _work(ctx, number, runner.id)),
              *(step for step in lifecycle.UNIT_PHASES if step[0] != "work")]
    work = last = PhaseResult("not-declared", "nothing ran")
    for name, phase in steps:
        last = lifecycle.run_phase(context, name, phase, detail=_detail(context, name), tick=number)
        if name == "work":
            work = last
        if runner.stop_now:
            return TickOutcome("interrupted", f"{name}: interrupted")
        if last.stop is not None:
            if name == "probe":
                return TickOutcome("environment-not-ready", f"no work this tick: {last.summary}")
            return TickOutcome(last.status, f"{name}: {last.summary}", stop=last.stop)
    if context.driver is None:  # without a goal the tick is its command
        return TickOutcome(work.status, work.summary)
    return TickOutcome(last.status, last.summary)


def _detail(context: RunContext, name: str) -> str:
    loop = context.recipe.loop
    if name == "probe" and context.recipe.probe is not None:
        return command_text(context.recipe.probe)  # type: ignore[arg-type]
    if name == "work" and loop is not None and loop.command is not None:
        return command_text(loop.command)  # type: ignore[arg-type]
    return ""


def _work(context: RunContext, tick: int, loop_id: str) -> PhaseResult:
    loop = context.recipe.loop
    assert loop is not None
    if loop.command is None:
        return lifecycle.work_phase(context)
    env = {"AXPIPE_LOOP_ID": loop_id, "AXPIPE_LOOP_TICK": str(tick)}
    if context.driver is not None:
        step = context.driver.work()  # the goal's status and budgets, as for any turn
        if step.stop is not None:
            return PhaseResult(step.status, step.summary, stop=step.stop)
        env["AXPIPE_GOAL_ID"] = context.driver.goal.id
    # With a goal, its checks run right after the command: forget the bytecode of what the
    # command changed (axpipe.evidence.bytecode). Goal-less command loops skip the two git calls.
    before = snapshot_files(context.root) if context.driver is not None else None
    result = process.run(loop.command, cwd=context.root, env=env,  # type: ignore[arg-type]
                         timeout=context.recipe.limits.unit_timeout, on_output=context.on_output)
    if before is not None:
        bytecode.forget(context.root, changed_files(context.root, before, snapshot_files(context.root)))
    return PhaseResult("passed" if result.ok else "failed", f"loop command {result.describe()}")
