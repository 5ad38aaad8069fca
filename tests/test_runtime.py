"""The runtime backend with real processes: backends, launchers and ``axpipe run`` children
on one SQLite store, with schedule time moved through the documented testing clock.

Every scheduled run here is a real ``axpipe run recipe=...`` (about a second each), so the
tests keep the number of runs small; the slow ones are marked."""

from __future__ import annotations

import json
import os
import signal
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import command_line, wait_for
from schedule_helpers import Project, iso

from axpipe.process import pid_alive
from axpipe.runtime.processes import descendants

COMPLETE_SUMMARY = "settle: complete: every check passed on the current source (1 of 1)"


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    made = Project.create(tmp_path / "project", now="2026-05-01T10:00:30")
    yield made
    made.cleanup()


def add(project: Project, task_id: str, *args: str, recipe: str = "ok") -> None:
    result = project.cli("schedule", "add", *args, "--tz", "UTC", "--recipe", recipe, "--id", task_id)
    assert result.exit_code == 0, result.stderr


def statuses(project: Project, task: str) -> list[tuple[str, str, int]]:
    return [(run["status"], run["scheduled_for"][11:16], run["folded"]) for run in project.runs(task)]


# -- start, status, stop ----------------------------------------------------------------


def test_a_backend_starts_reports_and_stops(project: Project) -> None:
    assert project.cli("runtime", "status").exit_code == 1
    backend = project.start_backend()
    status = project.cli("runtime", "status", "--json")
    assert status.exit_code == 0
    report = json.loads(status.stdout)
    assert report["alive"] is True
    assert [(row["pid"], row["alive"]) for row in report["backends"]] == [(backend.pid, True)]
    assert report["backends"][0]["testing"].startswith("AXPIPE_TESTING_CLOCK=")
    text = project.cli("runtime", "status").stdout
    assert f"pid {backend.pid}" in text and "testing switches on" in text
    stopped = project.cli("runtime", "stop")
    assert stopped.exit_code == 0, stopped.stderr
    assert stopped.stdout.startswith("stopped backend ")
    assert backend.wait(timeout=10) == 0
    assert project.query("SELECT * FROM runtime_backends") == []
    assert "stopping: requested by `axpipe runtime stop`" in project.backend_log()
    assert project.cli("runtime", "stop").stdout == "No live runtime backend for this project; nothing to stop.\n"


def test_sigterm_stops_a_backend_cleanly_and_sigint_exits_130(project: Project) -> None:
    first = project.start_backend()
    first.send_signal(signal.SIGTERM)
    assert first.wait(timeout=10) == 0
    second = project.start_backend()
    second.send_signal(signal.SIGINT)
    assert second.wait(timeout=10) == 130
    assert project.query("SELECT * FROM runtime_backends") == []


@pytest.mark.parametrize(("interval", "message"), [
    ("500ms", "--sweep-interval: 500ms is below the minimum 1s"),
    ("2d", "--sweep-interval: 2d is above the maximum 1d"),
    ("often", "--sweep-interval: expected a duration such as 30s, 5m, 2h, 1h30m or integer seconds, got 'often'"),
])
def test_bad_sweep_intervals_exit_2(project: Project, interval: str, message: str) -> None:
    result = project.cli("runtime", "start", "--sweep-interval", interval, env={"AXPIPE_TESTING_FAST": ""})
    assert (result.exit_code, result.stderr) == (2, f"axpipe: error: {message}\n")
    assert not (project.root / ".axpipe").exists()


def test_the_testing_switch_is_needed_for_sub_second_sweeps(project: Project) -> None:
    backend = project.start_backend(sweep="200ms")  # the project env sets AXPIPE_TESTING_FAST=1
    assert "warning: testing switch AXPIPE_TESTING_FAST=1 is on" in project.backend_log()
    project.stop_backends()
    assert backend.returncode == 0


# -- firing -----------------------------------------------------------------------------


def test_the_backend_sweeps_at_start_and_runs_a_due_task_once(project: Project) -> None:
    add(project, "every", "--cron", "* * * * *")
    project.set_clock("2026-05-01T10:01:00")
    project.start_backend()
    wait_for(project.idle, what="the run")  # swept at start
    wait_for(lambda: project.runs("every"), what="a run row")
    run = project.runs("every")[0]
    assert (run["status"], run["trigger"], run["reason"]) == ("succeeded", "schedule",
                                                              "exit code 0: " + COMPLETE_SUMMARY)
    assert project.fired() == ["every 2026-05-01T10:01:00.000000Z"]
    assert Path(run["log"]).read_text().count("Run succeeded") == 1
    assert (Path(run["run_dir"]) / "events.jsonl").exists()
    project.advance("2026-05-01T10:01:40")
    assert len(project.runs("every")) == 1


def run_minutes(project: Project, tasks: list[str], minutes: list[str]) -> None:
    for minute in minutes:
        project.advance(f"2026-05-01T{minute}:00")
        wait_for(lambda minute=minute: all(any(run["scheduled_for"][11:16] == minute for run in project.runs(task))
                                           for task in tasks), what=f"every task at {minute}")
        wait_for(project.idle, timeout=90, what=f"runs at {minute} to finish")


@pytest.mark.slow
@pytest.mark.parametrize("backends", [2, 4])
def test_several_backends_fire_every_occurrence_exactly_once(project: Project, backends: int) -> None:
    tasks = [f"task-{n}" for n in range(4)]
    for task in tasks:
        add(project, task, "--cron", "* * * * *")
    for _ in range(backends):
        project.start_backend()
    minutes = ["10:01", "10:02", "10:03"]
    run_minutes(project, tasks, minutes)
    rows = project.runs()
    assert Counter((row["task_id"], row["scheduled_for"][11:16]) for row in rows) == Counter(
        {(task, minute): 1 for task in tasks for minute in minutes})
    assert {row["status"] for row in rows} == {"succeeded"}
    assert Counter(project.fired()) == Counter(
        {f"{task} 2026-05-01T{minute}:00.000000Z": 1 for task in tasks for minute in minutes})
    claimed = project.query("SELECT SUM(claimed) AS total FROM runtime_backends")[0]["total"]
    assert claimed == len(tasks) * len(minutes)


# -- recovery ---------------------------------------------------------------------------


@pytest.mark.slow
def test_a_backend_killed_mid_run_leaves_work_the_next_backend_recovers(project: Project) -> None:
    add(project, "a-slow", "--cron", "* * * * *", recipe="slow")
    add(project, "b-after", "--cron", "* * * * *")
    first = project.start_backend()
    project.set_clock("2026-05-01T10:01:00")
    wait_for(lambda: [run for run in project.runs("a-slow") if run["status"] == "running"], what="a-slow running")
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    assert statuses(project, "b-after") == [("queued", "10:01", 1)]  # claimed, waiting for the checkout
    wait_for(lambda: project.runs("a-slow")[0]["status"] == "succeeded", what="a-slow to finish on its own")
    time.sleep(0.5)
    assert statuses(project, "b-after") == [("queued", "10:01", 1)]  # nobody runs it while no backend lives
    second = project.start_backend()
    wait_for(project.idle, what="the second backend to run b-after")
    assert statuses(project, "a-slow") == [("succeeded", "10:01", 1)]
    assert statuses(project, "b-after") == [("succeeded", "10:01", 1)]
    assert project.runs("b-after")[0]["backend"] == project.query(
        "SELECT id FROM runtime_backends WHERE pid = ?", second.pid)[0]["id"]
    assert sorted(project.fired()) == ["a-slow 2026-05-01T10:01:00.000000Z", "b-after 2026-05-01T10:01:00.000000Z"]


@pytest.mark.slow
def test_a_crash_of_backend_and_run_is_recorded_and_the_queue_goes_on(project: Project) -> None:
    add(project, "a-slow", "--cron", "* * * * *", recipe="slow")
    add(project, "b-after", "--cron", "* * * * *")
    first = project.start_backend()
    project.set_clock("2026-05-01T10:01:00")
    running = wait_for(lambda: [run for run in project.runs("a-slow") if run["status"] == "running"],
                       what="a-slow running")[0]
    # The launcher records `running` before it starts `axpipe run`: wait for the check's
    # sleep, or the kill could miss a run that starts just after the snapshot below.
    wait_for(lambda: [pid for pid in descendants(running["launcher_pid"]) if command_line(pid).startswith("sleep")],
             what="a-slow's check to start")
    victims = [first.pid, running["launcher_pid"], *descendants(running["launcher_pid"])]
    for pid in victims:  # everything dies at once, as in a host crash
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:  # already ended with its launcher (PR_SET_PDEATHSIG, docs/operations.md)
            pass
    first.wait()
    project.start_backend()
    wait_for(project.idle, what="recovery and the queued run")
    a_slow = project.runs("a-slow")[0]
    assert a_slow["status"] == "failed"
    assert a_slow["reason"].startswith(f"interrupted: the launcher (pid {running['launcher_pid']} on ")
    assert a_slow["reason"].endswith("1 consecutive failure: backing off 1m, until 2026-05-01T10:02:00Z")
    assert project.task("a-slow")["consecutive_failures"] == 1
    assert statuses(project, "b-after") == [("succeeded", "10:01", 1)]
    assert project.fired() == ["b-after 2026-05-01T10:01:00.000000Z"]


def test_a_dispatch_whose_backend_died_before_the_launcher_started_is_run_again_once(project: Project) -> None:
    import socket
    import subprocess
    import sys
    from datetime import UTC, datetime

    from axpipe.schedule.sweep import sweep
    from axpipe.store import dispatch as runs
    from axpipe.store import runtime as runtime_queries

    add(project, "every", "--cron", "* * * * *")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    with project.store() as store:  # what a backend had done when it was killed: claimed, dispatched, no launcher
        runtime_queries.register_backend(store, {"id": "gone", "pid": dead.pid, "host": socket.gethostname(),
                                                 "root": str(project.root), "started_at": iso("2026-05-01T10:00"),
                                                 "heartbeat_real": time.time(), "sweep_interval": 1.0})
        sweep(store, backend="gone", now=datetime(2026, 5, 1, 10, 1, tzinfo=UTC))
        dispatched = runs.dispatch_next(store, backend="gone", host="h", token="lost", now_real=time.time())
        assert dispatched is not None
    project.set_clock("2026-05-01T10:01:10")
    project.start_backend()
    wait_for(lambda: project.runs("every")[0]["status"] == "succeeded", what="the re-queued run")
    assert statuses(project, "every") == [("succeeded", "10:01", 1)]
    assert project.fired() == ["every 2026-05-01T10:01:00.000000Z"]
    assert "re-queued every run 1: its dispatch by gone never started" in project.backend_log()


# -- catch-up, overlap, max run duration, back-off ---------------------------------------


@pytest.mark.slow
def test_after_downtime_run_once_folds_and_skip_records_the_missed(project: Project) -> None:
    add(project, "once", "--cron", "0 * * * *", "--catch-up", "run_once")
    add(project, "skipper", "--cron", "0 * * * *", "--catch-up", "skip")
    project.set_clock("2026-05-01T14:02:00")  # 11:00..14:00 passed with no backend; 14:00 is within grace
    project.start_backend()
    wait_for(project.idle, what="catch-up runs")
    once = project.runs("once")
    assert [(run["status"], run["trigger"], run["folded"]) for run in once] == [("succeeded", "catch_up", 4)]
    assert once[0]["reason"] == ("catch-up: one run for 4 occurrences (3 found beyond the grace of 5m and the sweep "
                                 "interval of 100ms), from "
                                 "2026-05-01T11:00:00Z to 2026-05-01T14:00:00Z; exit code 0: " + COMPLETE_SUMMARY)
    skipper = project.runs("skipper")
    assert [(run["status"], run["scheduled_for"][11:16], run["folded"]) for run in skipper] == [
        ("skipped", "11:00", 3), ("succeeded", "14:00", 1)]
    assert skipper[0]["reason"] == ("missed: 3 occurrences found beyond the grace of 5m and the sweep interval of "
                                    "100ms, from 2026-05-01T11:00:00Z "
                                    "to 2026-05-01T13:00:00Z; catch_up is skip")
    assert {project.task(task)["next_run"] for task in ("once", "skipper")} == {iso("2026-05-01T15:00")}
    project.advance("2026-05-01T15:04:59")  # late, but within the grace of 5m: an ordinary run for both
    assert [run["trigger"] for run in project.runs("once")] == ["catch_up", "schedule"]
    assert [run["status"] for run in project.runs("skipper")] == ["skipped", "succeeded", "succeeded"]


def test_an_overrunning_run_is_cancelled_and_its_processes_killed(project: Project) -> None:
    # 6s: the run must reach its check (about 1 s on a loaded machine) well inside the limit.
    add(project, "hang", "--cron", "* * * * *", "--max-run-duration", "6s", recipe="hang")
    project.start_backend()
    started = time.monotonic()
    project.set_clock("2026-05-01T10:01:00")
    pid_file = project.root / ".axpipe" / "hang-1.pid"
    sleeper = int(wait_for(lambda: pid_file.exists() and pid_file.read_text().strip(), what="the hung check"))
    assert pid_alive(sleeper)
    wait_for(project.idle, what="the cancellation")
    run = project.runs("hang")[0]
    assert run["status"] == "failed"
    assert run["reason"] == ("exceeded max_run_duration 6s: cancelled, its process group killed; 1 consecutive "
                             "failure: backing off 1m, until 2026-05-01T10:02:00Z")
    assert time.monotonic() - started < 60  # cancelled, long before the check's `sleep 120` would end
    wait_for(lambda: not pid_alive(sleeper), timeout=5, what="the check's sleep to be killed")


@pytest.mark.slow
def test_an_occurrence_while_the_previous_run_runs_is_skipped_as_overlap(project: Project) -> None:
    add(project, "slowmin", "--cron", "* * * * *", recipe="slow")
    project.start_backend()
    project.set_clock("2026-05-01T10:01:00")
    first = wait_for(lambda: [run for run in project.runs("slowmin") if run["status"] == "running"],
                     what="the first run")[0]
    project.set_clock("2026-05-01T10:02:00")
    wait_for(lambda: len(project.runs("slowmin")) == 2, what="the overlap row")
    assert project.runs("slowmin")[1]["reason"] == (f"overlap: run {first['id']} of this task is still running; "
                                                    "1 occurrence not run")
    wait_for(project.idle, what="the first run to end")
    project.advance("2026-05-01T10:03:00")
    assert statuses(project, "slowmin") == [("succeeded", "10:01", 1), ("skipped", "10:02", 1),
                                            ("succeeded", "10:03", 1)]
    assert len(project.fired()) == 2


@pytest.mark.slow
def test_failures_back_off_and_the_fifth_in_a_row_pauses_the_task(project: Project) -> None:
    add(project, "flaky", "--cron", "* * * * *", recipe="fail")
    project.start_backend()
    for minute in range(1, 18):
        project.advance(f"2026-05-01T10:{minute:02d}:00")
    rows = project.runs("flaky")
    ran = [row["scheduled_for"][14:16] for row in rows if row["status"] == "failed"]
    skipped = [row["scheduled_for"][14:16] for row in rows if row["status"] == "skipped"]
    assert ran == ["01", "02", "04", "08", "16"]  # back-off of 1, 2, 4 and 8 minutes after each failure
    assert skipped == ["03", "05", "06", "07", "09", "10", "11", "12", "13", "14", "15"]
    assert rows[2]["reason"] == ("backing off after 2 consecutive failure(s) until 2026-05-01T10:04:00Z; "
                                 "1 occurrence not run")
    assert rows[-1]["reason"] == ("exit code 6: settle: paused: no new passing evidence in 5 ticks (no agent to "
                                  "guide); 5 consecutive failures: task paused (`axpipe schedule resume flaky` to "
                                  "start it again)")
    task = project.task("flaky")
    assert (task["status"], task["status_reason"], task["next_run"]) == (
        "paused", "paused after 5 consecutive failures", None)
    assert len(rows) == 16  # 10:17 came while paused: no occurrence, no row
    resumed = project.cli("schedule", "resume", "flaky")
    assert "through backend" in resumed.stdout
    assert (project.task("flaky")["consecutive_failures"], project.task("flaky")["status"]) == (0, "active")


# -- DST with a real backend --------------------------------------------------------------


@pytest.mark.slow
def test_dst_transitions_with_a_real_backend(project: Project) -> None:
    project.set_clock("2026-03-29T00:40:00")
    assert project.cli("schedule", "add", "--daily", "01:30", "--tz", "Europe/Lisbon", "--recipe", "ok",
                       "--id", "lisbon").exit_code == 0
    project.start_backend()
    project.advance("2026-03-29T00:59:59")
    assert project.runs("lisbon") == []
    project.advance("2026-03-29T01:00:10")  # 02:00:10 WEST: the gap ended, 01:30 fires now, once
    assert statuses(project, "lisbon") == [("succeeded", "01:00", 1)]
    assert project.task("lisbon")["next_run"] == iso("2026-03-30T00:30")
    project.stop_backends()
    project.set_clock("2026-11-01T04:00:00")
    assert project.cli("schedule", "add", "--cron", "30 1 * * *", "--tz", "America/New_York", "--recipe", "ok",
                       "--id", "new-york").exit_code == 0
    project.start_backend()
    project.advance("2026-11-01T05:30:30")  # 01:30 EDT: fires
    project.advance("2026-11-01T06:30:30")  # 01:30 EST, the same wall time again: does not
    assert statuses(project, "new-york") == [("succeeded", "05:30", 1)]
    assert project.task("new-york")["next_run"] == iso("2026-11-02T06:30")


# -- control through a live backend --------------------------------------------------------


def test_pause_resume_and_run_go_through_a_live_backend(project: Project) -> None:
    add(project, "every", "--cron", "0 12 * * *")
    project.start_backend()
    backend_id = project.query("SELECT id FROM runtime_backends")[0]["id"]
    paused = project.cli("schedule", "pause", "every")
    assert paused.stdout == f"paused task every (through backend {backend_id})\n"
    assert project.task("every")["status"] == "paused"
    requests = project.query("SELECT action, task_id, claimed_by, exit_code FROM runtime_requests")
    assert requests == [{"action": "pause", "task_id": "every", "claimed_by": backend_id, "exit_code": 0}]
    assert project.cli("schedule", "resume", "every").stdout.startswith("resumed task every; next run ")
    ran = project.cli("schedule", "run", "every")
    assert ran.stdout == f"queued run 1 of task every (through backend {backend_id})\n"
    wait_for(lambda: project.runs("every") and project.idle(), what="the manual run")
    run = project.runs("every")[0]
    assert (run["status"], run["trigger"], run["reason"]) == (
        "succeeded", "manual", "run now, by request; exit code 0: " + COMPLETE_SUMMARY)


def test_deleting_a_task_cancels_its_running_run(project: Project) -> None:
    add(project, "hang", "--cron", "0 12 * * *", recipe="hang")
    project.start_backend()
    assert project.cli("schedule", "run", "hang").exit_code == 0
    pid_file = project.root / ".axpipe" / "hang-1.pid"
    sleeper = int(wait_for(lambda: pid_file.exists() and pid_file.read_text().strip(), what="the hung check"))
    launcher = project.runs("hang")[0]["launcher_pid"]
    deleted = project.cli("schedule", "delete", "hang")
    assert "its running run 1 is being cancelled" in deleted.stdout
    wait_for(lambda: not pid_alive(sleeper) and not pid_alive(launcher), timeout=10, what="the run to be ended")
    assert project.runs() == []


def test_a_second_manual_run_while_one_runs_is_refused(project: Project) -> None:
    add(project, "hang", "--cron", "0 12 * * *", recipe="hang")
    project.start_backend()
    assert project.cli("schedule", "run", "hang").exit_code == 0
    again = project.cli("schedule", "run", "hang")
    assert again.exit_code == 1
    assert "task hang already has run 1" in again.stderr and "never runs twice at once" in again.stderr
    assert len(project.runs("hang")) == 1


def test_a_launcher_told_to_stop_records_the_run_cancelled(project: Project) -> None:
    add(project, "hang", "--cron", "0 12 * * *", recipe="hang")
    add(project, "next", "--cron", "0 12 * * *")
    project.start_backend()
    assert project.cli("schedule", "run", "hang").exit_code == 0
    assert project.cli("schedule", "run", "next").exit_code == 0  # waits: one run at a time per checkout
    pid_file = project.root / ".axpipe" / "hang-1.pid"
    sleeper = int(wait_for(lambda: pid_file.exists() and pid_file.read_text().strip(), what="the hung check"))
    assert statuses(project, "next") == [("queued", project.runs("next")[0]["scheduled_for"][11:16], 1)]
    paused = project.cli("schedule", "pause", "next")
    assert "cancelled run 2, which had not started" in paused.stdout
    os.kill(project.runs("hang")[0]["launcher_pid"], signal.SIGTERM)
    wait_for(project.idle, what="the cancellation")
    hang, waiting = project.runs("hang")[0], project.runs("next")[0]
    assert (hang["status"], hang["reason"]) == (
        "cancelled", "run now, by request; cancelled: the launcher received SIGTERM; its processes were ended")
    assert (waiting["status"], waiting["reason"]) == (
        "cancelled", "cancelled: the task was paused before the run started")
    wait_for(lambda: not pid_alive(sleeper), timeout=5, what="the check's sleep to be killed")
    assert project.task("hang")["consecutive_failures"] == 0  # a cancellation is not a failure
    assert project.fired() == []


def test_runtime_stop_says_when_a_backend_does_not_stop(project: Project) -> None:
    import socket

    from axpipe.store import runtime as runtime_queries

    with project.store() as store:  # a live-looking backend (this very test process) that never answers
        runtime_queries.register_backend(store, {"id": "stuck", "pid": os.getpid(), "host": socket.gethostname(),
                                                 "root": str(project.root), "started_at": iso("2026-05-01T10:00"),
                                                 "heartbeat_real": time.time(), "sweep_interval": 60.0})
    result = project.cli("runtime", "stop", "--timeout", "1s", env={"AXPIPE_TESTING_FAST": ""})
    assert result.exit_code == 1
    assert result.stderr == (f"axpipe: error: backend stuck (pid {os.getpid()}) did not stop within 1s; it may be "
                             "busy or hung: stop its process with SIGTERM\n")
    unknown = project.cli("runtime", "stop", "--id", "stuk", env={"AXPIPE_TESTING_FAST": ""})
    assert (unknown.exit_code, unknown.stderr) == (
        2, "axpipe: error: --id: unknown live backend 'stuk' (did you mean 'stuck'?); available: stuck\n")


# -- duties in this process, on a real store -------------------------------------------


def due_every_minute(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """A task due at the testing clock's now, and this process on that clock (for duties
    run in the test's own process)."""
    add(project, "every", "--cron", "* * * * *")
    project.set_clock("2026-05-01T10:01:00")
    for name, value in project.env.items():
        monkeypatch.setenv(name, value)


def test_a_launcher_that_dies_before_starting_its_run_is_recorded(project: Project,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    from axpipe.runtime.backend import Backend
    from axpipe.runtime.duties import Dispatch, Sweep

    due_every_minute(project, monkeypatch)
    broken = project.root.parent / "broken-python"
    broken.write_text("#!/bin/sh\necho 'cannot start' >&2\nexit 3\n")
    broken.chmod(0o755)
    with project.store() as store:
        backend = Backend(store=store, root=project.root, sweep_interval=60.0, out=io.StringIO())
        Sweep(60.0).run(backend)
        monkeypatch.setattr(sys, "executable", str(broken))  # the launcher's interpreter is gone
        Dispatch().run(backend)
        child = next(iter(backend.children.values()))
        child.process.wait(timeout=10)
        Dispatch().run(backend)  # reaps it
    run = project.runs("every")[0]
    assert run["status"] == "failed"
    assert run["reason"].startswith("the launcher exited with code 3 before starting the run (see ")
    assert "cannot start" in child.log.read_text()


def test_a_stop_request_keeps_the_queue_even_before_the_next_heartbeat(project: Project,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from axpipe.runtime.backend import Backend
    from axpipe.runtime.duties import Dispatch, Sweep
    from axpipe.store import runtime as runtime_queries

    due_every_minute(project, monkeypatch)
    with project.store() as store:
        backend = Backend(store=store, root=project.root, sweep_interval=60.0, out=io.StringIO())
        runtime_queries.register_backend(store, {"id": backend.id, "pid": os.getpid(), "host": "here",
                                                 "root": str(project.root), "started_at": iso("2026-05-01T10:00"),
                                                 "heartbeat_real": time.time(), "sweep_interval": 60.0})
        Sweep(60.0).run(backend)
        assert [run["status"] for run in project.runs("every")] == ["queued"]
        runtime_queries.request_stop(store, [backend.id], "requested by `axpipe runtime stop`")
        Dispatch().run(backend)  # the heartbeat has not read the request yet
        assert backend.children == {}
    assert [run["status"] for run in project.runs("every")] == ["queued"]


def test_the_loop_reads_a_stop_request_without_a_heartbeat(project: Project) -> None:
    import io
    import threading

    from axpipe.runtime.backend import Backend
    from axpipe.store import runtime as runtime_queries

    class Counting:
        """A duty that only counts its rounds; no heartbeat duty runs in this backend."""

        name = "counting"
        rounds = 0

        def interval(self, backend: Backend) -> float:
            return 0.01

        def run(self, backend: Backend) -> None:
            self.rounds += 1

    counting = Counting()
    with project.store() as store:
        out = io.StringIO()
        backend = Backend(store=store, root=project.root, sweep_interval=60.0, out=out, duties=[counting])
        served: list[int] = []
        thread = threading.Thread(target=lambda: served.append(backend.serve()), daemon=True)
        thread.start()
        try:
            wait_for(lambda: counting.rounds >= 3, timeout=10)
            with project.store() as other:  # as `axpipe runtime stop` does, from another connection
                runtime_queries.request_stop(other, [backend.id], "requested by `axpipe runtime stop`")
                rounds_then = counting.rounds
            thread.join(timeout=10)
            assert not thread.is_alive()
        finally:
            backend.stop("test over")
            thread.join(timeout=10)
    assert served == [0]
    assert counting.rounds <= rounds_then + 1  # at most the round already under way
    assert "stopping: requested by `axpipe runtime stop`" in out.getvalue()


def test_a_request_no_backend_answers_is_withdrawn_and_written_directly(project: Project,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    from axpipe.errors import EnvironmentNotReady
    from axpipe.schedule.control import submit
    from axpipe.store import runtime as runtime_queries

    add(project, "every", "--cron", "0 12 * * *")
    monkeypatch.setenv("AXPIPE_TESTING_CLOCK", str(project.clock_file))
    with project.store() as store:
        runtime_queries.register_backend(store, {"id": "deaf", "pid": os.getpid(), "host": socket.gethostname(),
                                                 "root": str(project.root), "started_at": iso("2026-05-01T10:00"),
                                                 "heartbeat_real": time.time(), "sweep_interval": 60.0})
        answer = submit(store, "pause", "every", timeout=0.3)
        assert (answer.exit_code, answer.backend) == (0, None)
        assert answer.message == "paused task every (no backend answered within 0.3 s; written to the store directly)"
        with pytest.raises(EnvironmentNotReady, match="did not answer request"):
            submit(store, "run", "every", timeout=0.3)
    assert project.task("every")["status"] == "paused"
    assert project.query("SELECT * FROM runtime_requests") == []
    assert project.runs() == []


def test_a_stalled_backend_waits_a_round_before_judging_others(project: Project,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import socket
    import subprocess
    import sys
    from datetime import UTC, datetime

    from axpipe.runtime.backend import Backend
    from axpipe.runtime.duties import Recovery
    from axpipe.schedule.sweep import sweep
    from axpipe.store import dispatch as runs

    add(project, "every", "--cron", "* * * * *")
    for name, value in project.env.items():
        monkeypatch.setenv(name, value)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    with project.store() as store:  # a run whose launcher has died
        sweep(store, backend="b", now=datetime(2026, 5, 1, 10, 1, tzinfo=UTC))
        assert runs.dispatch_next(store, backend="b", host=socket.gethostname(), token="t", now_real=time.time())
        assert runs.start_run(store, 1, token="t", pid=gone.pid, started_at=iso("2026-05-01T10:01"),
                              now_real=time.time() - 100, run_dir="d", log="l")
        out = io.StringIO()
        backend = Backend(store=store, root=project.root, sweep_interval=60.0, out=out)
        recovery = Recovery()
        recovery.last_round = time.time() - 100  # as if this backend had been suspended
        recovery.run(backend)
        assert "this backend was stalled for 100" in out.getvalue()
        assert project.runs("every")[0]["status"] == "running"
        recovery.run(backend)
    run = project.runs("every")[0]
    assert run["status"] == "failed" and run["reason"].startswith(f"interrupted: the launcher (pid {gone.pid} on ")
