"""Loops end to end with real processes: busy-skips, the run cap, interval bounds, one loop per
checkout, `loop status` and `loop stop` from other processes, and goals driven by loop ticks."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from goalkit import FIX, UNIT_CHECK, Project
from helpers import backdate, wait_for, write_recipe
from loopkit import (
    FAST,
    Background,
    Gate,
    HeldProbe,
    command_recipe,
    events,
    loop_section,
    loop_status,
    of_type,
    running_loop,
)

from axpipe.process import pid_alive


@pytest.fixture
def project(repo: Path, tmp_path: Path) -> Project:
    made = Project(repo, tmp_path)
    made.env.update(FAST)
    return made


@pytest.fixture
def gate(tmp_path: Path) -> Iterator[Gate]:
    made = Gate(tmp_path / "gate")
    yield made
    made.release("all")  # a tick left open by a failed test ends


Spawn = Callable[..., Background]


@pytest.fixture
def spawn(project: Project) -> Iterator[Spawn]:
    """Start ``axpipe ARGS`` in the background; whatever a test leaves running is killed."""
    started: list[Background] = []

    def start(*args: str) -> Background:
        background = Background(project, *args)
        started.append(background)
        return background

    yield start
    for background in started:
        background.kill()


# -- busy-skips ---------------------------------------------------------------------------


def test_a_tick_that_fires_while_the_previous_one_runs_is_skipped_and_counted_never_queued(
        project: Project, gate: Gate, spawn: Spawn) -> None:
    command_recipe(project, "gated", command=gate.command, interval="100ms", max_runs=2)
    loop = spawn("run", "recipe=gated", "--json")
    # Seen from another process while tick 1 is held open: firings are counted, no tick starts.
    held = wait_for(lambda: running_loop(project, lambda row: row["busy_skips"] >= 5), what="5 busy-skips")
    assert held["tick"]["n"] == 1 and held["runs"] == 0
    assert held["command"] == gate.command and held["max_runs"] == 2
    assert gate.started() == [1]
    gate.release(1)
    wait_for(lambda: gate.started() == [1, 2], what="tick 2's command")
    second = loop_status(project)["loop"]
    assert (second["tick"]["n"], second["runs"]) == (2, 1)
    assert second["last_tick"]["n"] == 1 and second["last_tick"]["status"] == "passed"
    gate.release(2)
    result = loop.wait()
    assert result.exit_code == 0, result.stderr
    found = events(result.stdout)
    finished = of_type(found, "loop.tick_finished")
    assert [event["tick"] for event in finished] == [1, 2]
    first = finished[0]
    assert first["skipped_during"] >= 5
    # One skip per interval the tick held the loop, give or take the firings at its two ends.
    assert abs(first["skipped_during"] - first["duration"] / 0.1) <= 2
    assert finished[1]["busy_skips"] == first["skipped_during"] + finished[1]["skipped_during"]
    # Tick 2 came from the first firing after tick 1 ended: every firing in between was
    # skipped, none was kept for later.
    started = of_type(found, "loop.tick_started")
    assert started[0]["firing"] == 1
    assert started[1]["firing"] == 1 + first["skipped_during"] + 1
    order = [(line.split()[0], line.split()[1]) for line in gate.lines()]
    assert order == [("started", "1"), ("finished", "1"), ("started", "2"), ("finished", "2")]  # never overlapping
    stopped = of_type(found, "loop.stopped")[0]
    assert stopped["runs"] == 2 and stopped["busy_skips"] == finished[1]["busy_skips"]


def test_the_ticker_keeps_no_firing_for_later() -> None:
    from axpipe.loop.ticker import Ticker

    ticker = Ticker(0.02)
    ticker.begin()
    try:
        assert ticker.next_firing(lambda: False) and ticker.firing == 1
        time.sleep(0.3)  # a long tick
        fired, skipped = ticker.counts()
        assert skipped == fired - 1 >= 5  # every firing since the first was skipped
        ticker.done()
        assert ticker.next_firing(lambda: False)
        assert ticker.firing > fired  # a firing that came after the tick, not one kept from during it
        ticker.done()
        time.sleep(0.1)  # a firing is waiting now
        assert ticker.next_firing(lambda: True) is False  # a stop wins over it
    finally:
        ticker.close()


# -- the run cap --------------------------------------------------------------------------


def test_max_runs_stops_the_loop_with_a_warning(project: Project) -> None:
    command_recipe(project, "three", command="true", interval="10ms", max_runs=3)
    result = project.cli("run", "recipe=three")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.count("tick 3 passed") == 1 and "tick 4" not in result.stdout
    assert "warning: the loop reached its cap of 3 runs and stopped" in result.stdout
    last = loop_status(project)["last"]
    assert (last["state"], last["runs"], last["end_reason"]) == (
        "ended", 3, "the loop reached its cap of 3 runs and stopped")


def test_the_hard_cap_of_500_runs_is_the_default_and_ends_the_loop(project: Project) -> None:
    write_recipe(project.root / "recipes", "endless", 'name: endless\nloop:\n  interval: 10ms\n  command: "true"\n')
    result = project.cli("run", "recipe=endless", "--json", timeout=300)
    assert result.exit_code == 0, result.stderr
    found = events(result.stdout)
    assert len(of_type(found, "loop.tick_finished")) == 500
    cap = of_type(found, "loop.cap_reached")
    assert [event["warning"] for event in cap] == [
        "the loop reached its cap of 500 runs and stopped (the hard cap is 500)"]
    assert loop_status(project)["last"]["runs"] == 500


@pytest.mark.parametrize("how", ["recipe", "override", "cli"])
def test_more_than_500_runs_is_refused_even_with_the_testing_switch(project: Project, how: str) -> None:
    if how == "recipe":
        command_recipe(project, "many", command="true", max_runs=501)
        result = project.run("many")
        message = "loop.max_runs: 501 is above the maximum 500"
    elif how == "override":
        command_recipe(project, "many", command="true")
        result = project.run("many", "loop.max_runs=501")
        message = "loop.max_runs: 501 is above the maximum 500"
    else:
        write_recipe(project.root / "recipes", "bare", "name: bare\n")
        result = project.cli("loop", "start", "100ms", "--command", "true", "--recipe", "bare", "--max-runs", "501")
        message = "--max-runs: 501 is outside 1..500 (the hard cap is 500 runs)"
    assert result.exit_code == 2
    assert message in result.stderr
    assert not (project.root / ".axpipe" / "state.db").exists()  # nothing ran, nothing was written


def test_the_engine_enforces_the_hard_cap_itself() -> None:
    from axpipe.loop.engine import LoopRunner

    for runs in (0, 501):
        with pytest.raises(ValueError, match=r"max_runs must be 1\.\.500"):
            LoopRunner(store=None, events=None, interval=1.0, max_runs=runs,  # type: ignore[arg-type]
                       tick=lambda _: None, record={}, heartbeat=1.0)  # type: ignore[arg-type, return-value]



def test_a_stop_recorded_during_a_tick_ends_the_loop_before_the_watch_beats(tmp_path: Path) -> None:
    """The watch passes requests on only at its next beat; the loop must not wait for it.
    A request left while a tick runs stops the loop when that tick ends, however soon."""
    from axpipe.loop.engine import LoopRunner, TickOutcome
    from axpipe.run.events import EventLog
    from axpipe.store import Store
    from axpipe.store import loops as queries

    ticks: list[int] = []

    def tick(number: int) -> TickOutcome:
        ticks.append(number)
        with Store(store_path) as other:  # another connection, as `axpipe loop stop` would use
            assert queries.request_stop(other, runner.id, "asked during tick 1", now=False)
        return TickOutcome("passed", f"tick {number} passed")

    store_path = tmp_path / "state.db"
    with Store(store_path) as store:
        runner = LoopRunner(store=store, events=EventLog(), interval=0.01, max_runs=5, tick=tick,
                            record={"workspace": str(tmp_path), "recipe": "bare"}, heartbeat=3600.0)
        end = runner.run()
        row = queries.get_loop(store, runner.id)
    assert ticks == [1]
    assert (end.reason, end.runs, end.requested) == ("stopped: asked during tick 1", 1, True)
    assert row is not None and (row["status"], row["runs"]) == ("ended", 1)

# -- interval bounds ----------------------------------------------------------------------


@pytest.mark.parametrize(("interval", "message"), [
    ("10s", "INTERVAL: 10s is below the minimum 30s"),
    ("29s", "INTERVAL: 29s is below the minimum 30s"),
    ("25h", "INTERVAL: 25h is above the maximum 1d"),
    ("soon", "INTERVAL: expected a duration such as 30s, 5m, 2h, 1h30m or integer seconds, got 'soon'"),
])
def test_loop_start_refuses_an_interval_out_of_bounds(repo: Path, tmp_path: Path, interval: str,
                                                      message: str) -> None:
    project = Project(repo, tmp_path)  # without the testing switch
    write_recipe(project.root / "recipes", "bare", "name: bare\n")
    result = project.cli("loop", "start", interval, "--command", "true", "--recipe", "bare")
    assert result.exit_code == 2
    assert result.stderr == f"axpipe: error: {message}\n"
    assert not (project.root / ".axpipe").exists()


@pytest.mark.parametrize(("interval", "message"), [
    ("10s", "loop.interval: 10s is below the minimum 30s"),
    ("25h", "loop.interval: 25h is above the maximum 1d"),
])
def test_a_recipe_loop_interval_out_of_bounds_is_a_config_error(repo: Path, tmp_path: Path, interval: str,
                                                                 message: str) -> None:
    project = Project(repo, tmp_path)
    command_recipe(project, "ticking", command="true", interval="1m")
    result = project.run("ticking", f"loop.interval={interval}")
    assert result.exit_code == 2
    assert message in result.stderr
    assert not (project.root / ".axpipe").exists()


def test_the_testing_switch_allows_short_intervals_down_to_10ms_only(repo: Path, tmp_path: Path) -> None:
    project = Project(repo, tmp_path)
    command_recipe(project, "quick", command="true", interval="50ms", max_runs=1)
    refused = project.run("quick")
    assert refused.exit_code == 2 and "loop.interval: 50ms is below the minimum 30s" in refused.stderr
    project.env.update(FAST)
    assert project.run("quick").exit_code == 0
    too_short = project.run("quick", "loop.interval=5ms")
    assert too_short.exit_code == 2 and "loop.interval: 5ms is below the minimum 10ms" in too_short.stderr
    cli = project.cli("loop", "start", "5ms", "--command", "true", "--recipe", "quick")
    assert cli.exit_code == 2 and cli.stderr == "axpipe: error: INTERVAL: 5ms is below the minimum 10ms\n"


@pytest.mark.parametrize(("args", "message"), [
    (["30s"], "give the tick's PROMPT or --command CMD (one of them)"),
    (["30s", "fix it", "--command", "true"], "give the tick's PROMPT or --command CMD (one of them)"),
    (["30s", "  "], "PROMPT is empty"),
    (["30s", "--command", ""], "--command is empty"),
    (["30s", "--command", "true", "--max-runs", "0"], "--max-runs: 0 is outside 1..500 (the hard cap is 500 runs)"),
])
def test_loop_start_refuses_bad_arguments(project: Project, args: list[str], message: str) -> None:
    result = project.cli("loop", "start", *args, "--recipe", "placeholder")
    assert (result.exit_code, result.stderr) == (2, f"axpipe: error: {message}\n")


def test_loop_start_needs_one_goal_to_drive(project: Project) -> None:
    result = project.cli("loop", "start", "30s", "fix it")
    assert result.exit_code == 2
    assert "no goal to loop on" in result.stderr and "--recipe NAME" in result.stderr
    for name in ("calc", "calc-two"):
        project.recipe(name=name, turns=[{"say": "looking"}])
        assert project.run(name).exit_code == 6
    result = project.cli("loop", "start", "30s", "fix it")
    assert result.exit_code == 2
    assert result.stderr.startswith("axpipe: error: several resumable goals: ")
    assert "calc (active)" in result.stderr and "calc-two (active)" in result.stderr
    assert result.stderr.endswith("; choose one with --goal ID\n")
    unknown = project.cli("loop", "start", "30s", "fix it", "--goal", "nope")
    assert unknown.exit_code == 2 and "nope" in unknown.stderr


# -- one loop per checkout ----------------------------------------------------------------


def test_a_new_loop_replaces_the_running_one_after_its_tick(project: Project, gate: Gate, spawn: Spawn) -> None:
    write_recipe(project.root / "recipes", "bare", "name: bare\n")
    first = spawn("loop", "start", "100ms", "--command", gate.command, "--recipe", "bare")
    old = wait_for(lambda: running_loop(project, lambda row: row["tick"] is not None), what="the first loop's tick")
    blocked = project.run("bare")
    assert blocked.exit_code == 7 and f"pid {first.pid}" in blocked.stdout  # `axpipe run` never replaces
    refused = project.cli("loop", "start", "100ms", "fix it", "--recipe", "bare")  # a prompt needs a goal
    assert refused.exit_code == 2 and "loop.prompt" in refused.stderr
    assert running_loop(project)["stop_requested"] is None  # a refused loop replaces nothing
    project.recipe(turns=[FIX])  # a goal: its event log must stay out of the work tree
    logged = project.cli("loop", "start", "100ms", "fix it", "--recipe", "calc", "--event-log", "events.jsonl")
    assert logged.exit_code == 2 and "--event-log: " in logged.stderr and "inside the goal's source" in logged.stderr
    assert running_loop(project)["stop_requested"] is None and not (project.root / "events.jsonl").exists()
    second = spawn("loop", "start", "100ms", "--command", "true", "--recipe", "bare",
                   "--max-runs", "2")
    stopping = wait_for(lambda: running_loop(project, lambda row: row["state"] == "stopping"), what="stopping")
    assert stopping["id"] == old["id"] and "replaced by a new loop" in stopping["stop_requested"]
    assert first.process.poll() is None and second.process.poll() is None  # the old tick still runs
    gate.release(1)
    old_result, new_result = first.wait(), second.wait()
    assert old_result.exit_code == 0, old_result.stdout + old_result.stderr
    assert "ended: stopped: replaced by a new loop" in old_result.stdout
    assert gate.started() == [1]  # no tick of the old loop after the replacement
    assert f"Replacing loop {old['id']}" in new_result.stderr
    assert new_result.exit_code == 0 and "tick 2 passed" in new_result.stdout
    last = loop_status(project)["last"]
    assert last["id"] != old["id"] and last["runs"] == 2


def test_a_loop_its_goal_would_refuse_leaves_the_running_one_alone(project: Project, gate: Gate,
                                                                   spawn: Spawn) -> None:
    # The plan's refusals (an edited frozen contract: exit 2; an exhausted budget: exit 4)
    # are checked before the running loop is asked to make way, not after it stopped.
    project.recipe(turns=[FIX])
    assert project.run("calc").exit_code == 0  # the goal is complete: its contract is frozen
    project.recipe(turns=[FIX], checks=UNIT_CHECK.replace("unittest", "unittest -v"))
    project.recipe(name="spent", goal_extra="  budget: {tokens: 100}\n", default={"tokens": 120},
                   checks='    - {id: unit, acceptance: [AC1], command: "false"}\n')
    ends = [project.run("spent").exit_code for _ in range(2)]  # a turn, then the wrap-up turn
    assert ends[-1] == 4, ends
    assert project.status("--goal", "spent")["goal"]["status"] == "budget_limited"
    write_recipe(project.root / "recipes", "bare", "name: bare\n")
    first = spawn("loop", "start", "100ms", "--command", gate.command, "--recipe", "bare")
    wait_for(lambda: running_loop(project, lambda row: row["tick"] is not None), what="the first loop's tick")
    edited = project.cli("loop", "start", "100ms", "fix it", "--recipe", "calc")
    assert edited.exit_code == 2 and "contract mismatch" in edited.stderr, edited.stdout + edited.stderr
    spent = project.cli("loop", "start", "100ms", "fix it", "--recipe", "spent")
    assert spent.exit_code == 4 and "goal 'spent' is budget_limited" in spent.stderr, spent.stdout + spent.stderr
    assert running_loop(project)["stop_requested"] is None and "Replacing" not in edited.stderr + spent.stderr
    project.cli("loop", "stop", "--now")
    gate.release(1)
    first.wait()


# -- status and stop from another process -------------------------------------------------


def test_loop_stop_waits_for_the_tick_in_progress(project: Project, gate: Gate, spawn: Spawn) -> None:
    command_recipe(project, "gated", command=gate.command, interval="100ms")
    loop = spawn("run", "recipe=gated")
    wait_for(lambda: running_loop(project, lambda row: row["tick"] is not None), what="tick 1")
    asked = project.cli("loop", "stop", "--timeout", "300ms")
    assert asked.exit_code == 0
    assert "will stop when its tick in progress ends (tick 1 running since" in asked.stdout
    assert loop_status(project)["loop"]["state"] == "stopping"
    gate.release(1)
    result = loop.wait()
    assert result.exit_code == 0
    status = loop_status(project)
    assert status["loop"] is None and status["last"]["state"] == "ended"
    assert status["last"]["end_reason"] == "stopped: requested by `axpipe loop stop`"
    assert gate.started() == [1]


def test_loop_stop_now_ends_the_tick_in_progress(project: Project, gate: Gate, spawn: Spawn) -> None:
    command_recipe(project, "gated", command=gate.command, interval="100ms")
    loop = spawn("run", "recipe=gated", "--json")
    wait_for(lambda: gate.started() == [1], what="tick 1's command")
    tick_pid = gate.pid(1)
    stopped = project.cli("loop", "stop", "--now")
    assert stopped.exit_code == 0 and stopped.stdout.startswith("Stopped loop ")
    result = loop.wait()
    assert result.exit_code == 0
    tick = of_type(events(result.stdout), "loop.tick_finished")[0]
    assert (tick["status"], tick["summary"]) == ("interrupted", "interrupted: requested by `axpipe loop stop --now`")
    assert not pid_alive(tick_pid)
    assert "finished 1" not in gate.lines()


def test_loop_stop_during_the_runs_probe_stops_the_loop_before_its_first_tick(
        project: Project, gate: Gate, spawn: Spawn, tmp_path: Path) -> None:
    # The loop is visible from the moment its run holds the checkout: a stop asked while
    # the probe still runs is honoured when the probe ends, and no tick ever starts.
    probe = HeldProbe(tmp_path / "probe")
    write_recipe(project.root / "recipes", "probed", f"name: probed\nprobe: {json.dumps(probe.command)}\n")
    loop = spawn("loop", "start", "100ms", "--command", gate.command, "--recipe", "probed")
    try:
        wait_for(probe.pid, what="the run's probe")
        starting = running_loop(project)
        assert starting is not None, "a loop in its run's probe must be visible to `loop status`"
        assert (starting["state"], starting["pid"], starting["tick"], starting["runs"]) == ("running", loop.pid,
                                                                                             None, 0)
        assert "now:       starting: its run's probe and plan come before tick 1" in project.cli(
            "loop", "status").stdout
        asked = project.cli("loop", "stop", "--timeout", "300ms")
        assert (asked.exit_code, asked.stdout) == (0, f"Loop {starting['id']} (pid {loop.pid}) is still in its "
                                                      "run's probe or plan; it stops when that step ends, before "
                                                      "its first tick.\n")
    finally:
        probe.release()
    result = loop.wait()
    assert result.exit_code == 0, result.stdout + result.stderr
    assert gate.started() == []
    last = loop_status(project)["last"]
    assert (last["id"], last["state"], last["runs"], last["end_reason"]) == (
        starting["id"], "ended", 0, "stopped before the first tick: requested by `axpipe loop stop`")


def test_loop_stop_now_during_the_probe_ends_it_and_plans_nothing(project: Project, spawn: Spawn,
                                                                  tmp_path: Path) -> None:
    probe = HeldProbe(tmp_path / "probe")
    project.recipe(turns=[FIX], extra=f"probe: {json.dumps(probe.command)}\n")
    loop = spawn("loop", "start", "100ms", "fix calc", "--recipe", "calc")
    try:
        probe_pid = wait_for(probe.pid, what="the run's probe")
        stopped = project.cli("loop", "stop", "--now")
        assert stopped.exit_code == 0 and stopped.stdout.startswith("Stopped loop "), stopped.stdout
        result = loop.wait()
        # Asserted while the probe is not released: a probe left running would still be holding.
        assert not pid_alive(probe_pid)
    finally:
        probe.release()
    assert result.exit_code == 6, result.stdout + result.stderr  # stopped, the goal not complete
    assert "probe cut short: the loop was stopped before the first tick: requested by `axpipe loop stop --now`" \
        in result.stdout
    assert "environment not ready" not in result.stdout
    with sqlite3.connect(project.root / ".axpipe" / "state.db") as db:
        assert db.execute("SELECT count(*) FROM sessions").fetchone() == (0,)  # the plan never ran
    assert project.prompts() == []
    assert loop_status(project)["last"]["end_reason"] == (
        "stopped before the first tick: requested by `axpipe loop stop --now`")


def test_loop_stop_with_no_loop_running(project: Project) -> None:
    result = project.cli("loop", "stop")
    assert (result.exit_code, result.stdout) == (0, f"No loop is running in {project.root}; nothing to stop.\n")
    status = project.cli("loop", "status")
    assert status.exit_code == 1 and status.stdout.startswith(f"No loop is running in {project.root}.")


def test_a_loop_whose_process_was_killed_is_reported_dead(project: Project, gate: Gate, spawn: Spawn) -> None:
    command_recipe(project, "gated", command=gate.command, interval="100ms")
    loop = spawn("run", "recipe=gated")
    wait_for(lambda: running_loop(project, lambda row: row["tick"] is not None), what="tick 1")
    os.kill(loop.pid, signal.SIGKILL)
    loop.wait()
    status = project.cli("loop", "status", "--json")
    assert status.exit_code == 1
    last = loop_status(project)["last"]
    assert last["state"] == "died"
    assert "a loop lives only in the process that runs it" in last["end_reason"]
    text = project.cli("loop", "status").stdout
    assert f"last loop {last['id']} died" in text


def test_sigterm_stops_the_loop_and_its_tick(project: Project, gate: Gate, spawn: Spawn) -> None:
    command_recipe(project, "gated", command=gate.command, interval="100ms")
    loop = spawn("run", "recipe=gated")
    wait_for(lambda: gate.started() == [1], what="tick 1's command")
    tick_pid = gate.pid(1)
    os.kill(loop.pid, signal.SIGTERM)
    result = loop.wait()
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "ended: stopped: SIGTERM" in result.stdout
    assert not pid_alive(tick_pid)
    assert loop_status(project)["last"]["state"] == "ended"


# -- each tick is an ordinary run ---------------------------------------------------------


def test_a_recipe_loop_drives_its_goal_to_completion(project: Project) -> None:
    project.recipe(turns=[{"say": "looking"}, FIX], extra=loop_section(prompt="keep calc green"))
    result = project.cli("run", "recipe=calc", "--json")
    assert result.exit_code == 0, result.stderr
    found = events(result.stdout)
    ticks = of_type(found, "loop.tick_finished")
    assert [(tick["tick"], tick["status"]) for tick in ticks] == [(1, "failed"), (2, "passed")]
    assert ticks[1]["summary"].startswith("settle: complete: every check passed")
    assert [event["phase"] for event in found if event["type"] == "phase.started" and event.get("tick") == 1] == [
        "work", "gate", "verify", "review", "settle"]
    status = project.status()
    assert status["goal"]["status"] == "complete" and status["budget"]["steps_used"] == 2
    prompts = project.prompts()
    assert len(prompts) == 2
    assert all(prompt.startswith("keep calc green\n\n---\n\n# Goal `calc` (turn ") for prompt in prompts)
    assert loop_status(project)["last"]["end_reason"].startswith("tick 2 ended the loop: settle: complete:")


def test_a_loop_commands_same_second_fix_is_checked_as_it_is_now(project: Project,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # Tick 1's checks import calc.py and Python caches its bytecode; tick 2's command fixes
    # it without changing its size or modification time (as an edit within the same second
    # looks). The checks of tick 2 must run the fixed code (axpipe.evidence.bytecode).
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    fixer = project.scratch / "fix_on_tick_2.py"
    fixer.write_text("import os\n"
                     "if os.environ['AXPIPE_LOOP_TICK'] == '2':\n"
                     "    times = os.stat('calc.py')\n"
                     "    text = open('calc.py').read().replace('a - b', 'a + b')\n"
                     "    open('calc.py', 'w').write(text)\n"
                     "    os.utime('calc.py', ns=(times.st_atime_ns, times.st_mtime_ns))\n")
    command = f"{sys.executable} {fixer}"
    backdate(project.root / "calc.py")  # so the cache is not racy: only forgetting it after the command helps
    project.recipe(agent=False, extra=loop_section(command=command, max_runs=4))
    result = project.cli("run", "recipe=calc", "--json")
    assert result.exit_code == 0, result.stdout[-2000:] + result.stderr
    ticks = of_type(events(result.stdout), "loop.tick_finished")
    assert [(tick["tick"], tick["status"]) for tick in ticks] == [(1, "failed"), (2, "passed")]
    assert project.status()["goal"]["status"] == "complete"


def test_loop_start_drives_the_projects_goal(project: Project) -> None:
    project.recipe(turns=[{"say": "looking"}, FIX])
    assert project.run().exit_code == 6  # one pass leaves the goal active
    prompt = "it's \"quoted\", C:\\path\\ and ${not_a_variable} \\"
    result = project.cli("loop", "start", "100ms", prompt)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert project.status()["goal"]["status"] == "complete"
    assert project.prompts()[-1].startswith(prompt + "\n\n---\n\n")  # verbatim through Hydra's quoting
    last = loop_status(project)["last"]
    assert (last["goal"], last["prompt"], last["runs"]) == ("calc", prompt, 1)


def test_loop_status_shows_runs_busy_skips_and_the_prompt(project: Project, spawn: Spawn) -> None:
    project.recipe(turns=[{"say": "looking"}, {"sleep": 60}])
    assert project.run().exit_code == 6  # the goal is planned and active
    loop = spawn("loop", "start", "100ms", "fix calc.add")
    row = wait_for(lambda: running_loop(project, lambda item: item["busy_skips"] >= 2 and item["tick"] is not None),
                   what="a tick with busy-skips")
    assert (row["prompt"], row["goal"], row["recipe"], row["runs"]) == ("fix calc.add", "calc", "calc", 0)
    text = project.cli("loop", "status")
    assert text.exit_code == 0
    assert "each tick: prompt: fix calc.add" in text.stdout and "counts:    runs 0/500, busy-skips" in text.stdout
    assert "A loop lives only in the process that runs it" in text.stdout
    assert project.cli("loop", "stop", "--now").exit_code == 0
    result = loop.wait()
    assert result.exit_code == 6  # stopped with the goal still active
    assert project.status()["goal"]["status"] == "active"


def test_a_non_autonomous_agent_at_a_permission_prompt_stops_the_tick_and_the_loop(project: Project) -> None:
    project.recipe(turns=[{"ask": "Allow editing calc.py? [y/N]"}], agent_extra="  autonomous: false\n",
                   extra=loop_section())
    result = project.cli("run", "recipe=calc", "--json")
    assert result.exit_code == 6
    found = events(result.stdout)
    ticks = of_type(found, "loop.tick_finished")
    assert len(ticks) == 1 and ticks[0]["status"] == "stopped"
    assert "the agent stopped at a permission prompt: 'Allow editing calc.py? [y/N]'" in ticks[0]["summary"]
    assert [event["phase"] for event in of_type(found, "phase.started") if event.get("tick") == 1] == ["work"]
    status = project.status()
    assert status["goal"]["status"] == "paused"
    assert not project.receipts()  # the tick stopped before verify


def test_the_goals_step_cap_counts_every_tick_and_pauses_the_loop(project: Project) -> None:
    project.recipe(default={"say": "still looking"}, goal_extra="  budget: {steps: 2}\n",
                   extra=loop_section(max_runs=50))
    result = project.cli("run", "recipe=calc", "--json")
    assert result.exit_code == 6
    ticks = of_type(events(result.stdout), "loop.tick_finished")
    assert len(ticks) == 3  # two ticks reach the cap, the third pauses the goal before any turn
    assert ticks[-1]["summary"] == "work: paused: step cap (2 of 2 steps) reached; raise goal.budget.steps to resume"
    status = project.status()
    assert status["goal"]["status"] == "paused" and status["budget"]["steps_used"] == 2
    assert len(project.prompts()) == 2 and "## Steps" in project.prompts()[-1]


def test_a_loop_command_replaces_the_agents_turn(project: Project) -> None:
    fix = f"{sys.executable} -c \"import pathlib; p = pathlib.Path('calc.py'); " \
          "p.write_text(p.read_text().replace('a - b', 'a + b'))\""
    project.recipe(default={"say": "the agent ran"}, extra=loop_section(command=fix))
    result = project.cli("run", "recipe=calc", "--json")
    assert result.exit_code == 0, result.stderr
    assert project.status()["goal"]["status"] == "complete"
    assert project.prompts() == []  # the command worked where the agent would have
    assert len(of_type(events(result.stdout), "loop.tick_finished")) == 1


def test_the_probe_runs_again_each_tick_and_a_failing_one_skips_the_work(project: Project, tmp_path: Path) -> None:
    count = tmp_path / "probes"
    probe = tmp_path / "probe.py"
    probe.write_text("import pathlib, sys\np = pathlib.Path(sys.argv[1])\nn = int(p.read_text()) + 1 if p.exists() "
                     "else 1\np.write_text(str(n))\nsys.exit(1 if n == 2 else 0)\n")
    ran = tmp_path / "ran"
    probe_line = f"probe: {sys.executable} {probe} {count}\n"
    command_recipe(project, "probed", command=f"echo tick >> {ran}", max_runs=3, extra=probe_line)
    result = project.cli("run", "recipe=probed", "--json")
    assert result.exit_code == 0, result.stderr
    ticks = of_type(events(result.stdout), "loop.tick_finished")
    assert [tick["status"] for tick in ticks] == ["passed", "environment-not-ready", "passed"]
    assert ticks[1]["summary"].startswith("no work this tick: environment not ready: probe exit code 1")
    assert ran.read_text().splitlines() == ["tick", "tick"]
    assert count.read_text() == "3"  # once before the loop, then before ticks 2 and 3
