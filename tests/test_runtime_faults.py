"""Faults around scheduled runs (issue 25): a launcher that dies, reasons that say why.

Real backends, launchers and ``axpipe run`` children on one SQLite store, as in
test_runtime.py; the faults are real signals sent to real processes."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import AXPIPE, wait_for, write_recipe
from schedule_helpers import RECIPES, Project, iso

from axpipe.process import pid_alive
from axpipe.runtime.processes import descendants


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    made = Project.create(tmp_path / "project", now="2026-05-01T10:00:30")
    yield made
    made.cleanup()


def add(project: Project, task_id: str, *args: str, recipe: str = "ok") -> None:
    result = project.cli("schedule", "add", *args, "--tz", "UTC", "--recipe", recipe, "--id", task_id)
    assert result.exit_code == 0, result.stderr


def test_a_killed_launcher_takes_its_run_with_it_and_the_next_task_runs(project: Project) -> None:
    add(project, "a-hang", "--cron", "* * * * *", "--max-run-duration", "30s", recipe="hang")
    add(project, "b-after", "--cron", "* * * * *")
    project.start_backend()
    project.set_clock("2026-05-01T10:01:00")
    pid_file = project.root / ".axpipe" / "hang-1.pid"
    sleeper = int(wait_for(lambda: pid_file.exists() and pid_file.read_text().strip(), what="the hung check"))
    run = project.runs("a-hang")[0]
    launcher = run["launcher_pid"]
    child = run["child_pid"]
    assert child in descendants(launcher)  # the store knows the `axpipe run` the launcher started
    os.kill(launcher, signal.SIGKILL)  # what the OOM killer does: the launcher alone
    # The run ends with its launcher, long before its max_run_duration of 30 s, and the next
    # task gets the checkout: it is not refused by a lock an orphan still holds (exit 7).
    wait_for(lambda: not pid_alive(child) and not pid_alive(sleeper), timeout=10,
             what="the orphaned run and its check to end")
    wait_for(project.idle, what="recovery and b-after")
    hung = project.runs("a-hang")[0]
    assert hung["status"] == "failed"
    assert hung["reason"].startswith(f"interrupted: the launcher (pid {launcher} on ")
    after = project.runs("b-after")[0]
    assert (after["status"], after["exit_code"]) == ("succeeded", 0), after["reason"]
    assert project.task("b-after")["consecutive_failures"] == 0


def test_a_run_that_finished_before_its_launcher_died_keeps_its_outcome(project: Project) -> None:
    from axpipe.schedule.sweep import sweep
    from axpipe.store import dispatch as runs

    add(project, "every", "--cron", "* * * * *")
    gone = subprocess.Popen(["true"])
    gone.wait()
    run_dir = project.root / ".axpipe" / "runs" / "schedule" / "every" / "1"
    with project.store() as store:  # the launcher claimed the run, its `axpipe run` finished and
        # recorded success, then the launcher was killed before it recorded the run
        from datetime import UTC, datetime

        sweep(store, backend="b", now=datetime(2026, 5, 1, 10, 1, tzinfo=UTC))
        runs.dispatch_next(store, backend="b", host=socket.gethostname(), token="t0k", now_real=time.time())
        runs.start_run(store, 1, token="t0k", pid=gone.pid, started_at=iso("2026-05-01T10:01:01"),
                       now_real=time.time(), run_dir=str(run_dir), log=f"{run_dir}.log")
        store.start_run(run_id="r1", recipe="ok", workspace=str(project.root), run_dir=str(run_dir), pid=gone.pid)
        store.finish_run("r1", status="succeeded", exit_code=0, summary="settle: complete")
    project.set_clock("2026-05-01T10:01:10")
    project.start_backend()
    wait_for(project.idle, what="recovery")
    run = project.runs("every")[0]
    assert run["status"] == "succeeded"
    assert run["reason"].startswith(f"exit code 0: settle: complete (the launcher (pid {gone.pid} on ")
    assert "died before recording it" in run["reason"]


def test_a_failed_run_records_the_error_axpipe_printed_whole(project: Project) -> None:
    write_recipe(project.root / "recipes", "later", RECIPES["ok"].replace("name: ok", "name: later"))
    add(project, "locked", "--cron", "* * * * *", recipe="fail")
    add(project, "broken", "--cron", "* * * * *", recipe="later")
    # `later` breaks after its task was added; the checkout is held by a run started by hand.
    write_recipe(project.root / "recipes", "later", RECIPES["ok"].replace("name: ok", "name: later")
                 + "nonsense: 1\n")
    holder = subprocess.Popen([*AXPIPE, "run", "recipe=hang"], cwd=project.root, env={**os.environ, **project.env},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: (project.root / ".axpipe" / "hang-.pid").exists(), what="the run holding the checkout")
        refused = project.cli("run", "recipe=ok")
        assert refused.exit_code == 7
        held = (f"another axpipe run holds this checkout: pid {holder.pid} has {project.root}/.axpipe/run.lock. "
                "Wait for it to finish, or stop it, then try again.")
        assert refused.stderr == f"axpipe: error: {held}\n"  # on stderr, like every other error
        project.start_backend()
        project.set_clock("2026-05-01T10:01:00")
        wait_for(lambda: len([run for run in project.runs() if run["finished_at"]]) == 2, what="both runs")
    finally:
        holder.send_signal(signal.SIGTERM)
        holder.wait(timeout=30)
    reasons = {run["task_id"]: run["reason"] for run in project.runs()}
    assert reasons["locked"].startswith(f"exit code 7: {held}; 1 consecutive failure"), reasons["locked"]
    assert reasons["broken"].startswith(
        "exit code 2: recipe 'later' is invalid (1 problem):\n"
        "  - nonsense: unknown key; a top-level scalar is allowed only as a variable that some value interpolates "
        "as ${nonsense}  (from recipes/later.yaml)\n"
        "Nothing was run and nothing was written.; 1 consecutive failure"), reasons["broken"]
    shown = project.cli("schedule", "runs", "broken").stdout
    assert "recipe 'later' is invalid (1 problem):" in shown
    assert "  - nonsense: unknown key;" in shown
