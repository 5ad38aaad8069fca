"""A recipe's ``loop:`` inside ``axpipe run`` (DESIGN §3 and §7).

``lock → probe → plan`` run once, as in any run; then the ``loop`` phase repeats a tick once
per firing of :mod:`axpipe.looping`'s ticker until the goal settles, the loop is stopped, or
``max_runs`` is reached. A tick is an ordinary pass of the lifecycle:

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

from axpipe import lifecycle
from axpipe.errors import ExitCode
from axpipe.lifecycle import Phase, PhaseResult, RunContext
from axpipe.looping import LoopEnd, LoopRunner, TickOutcome


def loop_phase(context: RunContext) -> PhaseResult:
    """Run the recipe's loop until it ends; the run ends with the loop's exit code."""
    from axpipe.scheduling import clock

    spec = context.recipe.loop
    assert spec is not None
    driver = context.driver
    if driver is not None and spec.command is not None:
        driver.recipe = dataclasses.replace(context.recipe, agent=None)  # the command replaces the agent's turn
    elif driver is not None and spec.prompt:
        driver.prompt_prefix = spec.prompt
    record = {"run_id": context.run_id, "workspace": str(context.root), "recipe": context.recipe_name,
              "goal_id": driver.goal.id if driver else None, "session_id": driver.session_id if driver else None,
              "prompt": spec.prompt, "command": spec.command}
    runner = LoopRunner(store=context.store, events=context.events, interval=spec.interval, max_runs=spec.max_runs,
                        tick=lambda number: run_tick(context, number, runner), record=record,
                        heartbeat=clock.timings().heartbeat)
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
    from axpipe.process import command_text

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
    from axpipe import bytecode, process
    from axpipe.work import changed_files, snapshot_files

    # With a goal, its checks run right after the command: forget the bytecode of what the
    # command changed (axpipe.bytecode). Goal-less command loops skip the two git calls.
    before = snapshot_files(context.root) if context.driver is not None else None
    result = process.run(loop.command, cwd=context.root, env=env,  # type: ignore[arg-type]
                         timeout=context.recipe.limits.unit_timeout, on_output=context.on_output)
    if before is not None:
        bytecode.forget(context.root, changed_files(context.root, before, snapshot_files(context.root)))
    return PhaseResult("passed" if result.ok else "failed", f"loop command {result.describe()}")


PHASES: list[tuple[str, Phase]] = [
    ("lock", lifecycle.lock_phase),
    ("probe", lifecycle.probe_phase),
    ("plan", lifecycle.plan_phase),
    ("loop", loop_phase),
]
