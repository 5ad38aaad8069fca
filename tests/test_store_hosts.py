"""Several hosts on one PostgreSQL store, simulated honestly: backend processes in working
folders of their own, one store URL, one of them killed with SIGKILL mid-claim (twice)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from axpipe.store import Store

CLAIMER = """
import os, sys, time
from datetime import datetime
from axpipe import clock
from axpipe.schedule.sweep import plan_claim
from axpipe.store import Store
from axpipe.store import schedule as queries
store = Store(os.environ["AXPIPE_STORE_URL"])
now = datetime.fromisoformat(sys.argv[2])
print("ready", flush=True)
sys.stdin.readline()  # start together
# One batch per transaction, as the sweep claims them (axpipe.schedule.sweep), with a pause
# between batches, so that a SIGKILL lands in the middle of the work.
while True:
    due, claimed, written = queries.claim_due(store, now=clock.iso(now), limit=5, backend=sys.argv[1],
                                              plan=lambda task, open_run: plan_claim(task, open_run, now))
    if due == 0:
        break
    print("claimed", flush=True)  # the test kills it once it is known to be claiming
    time.sleep(float(sys.argv[3]))
"""
DUE = "2026-05-01T10:00:00.000000Z"


def _backend(name: str, url: str, folder: Path, pause: float = 0.02) -> subprocess.Popen[str]:
    """A claiming backend; ``pause`` between its batches (the others claim slowly while the
    killed one restarts, so that there is still work for it to be killed in)."""
    folder.mkdir(exist_ok=True)
    process = subprocess.Popen([sys.executable, "-c", CLAIMER, name, "2026-05-01T11:00:00+00:00", str(pause)],
                               cwd=folder,
                               env={**os.environ, "AXPIPE_STORE_URL": url}, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    return process


def _go(*processes: subprocess.Popen[str]) -> None:
    for process in processes:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()


@pytest.mark.slow
def test_four_backends_one_killed_twice_claim_every_occurrence_exactly_once(pg_url: str, tmp_path: Path) -> None:
    occurrences = 1000
    with Store(pg_url) as store, store.transaction() as db:
        db.executemany(
            "INSERT INTO schedule_tasks (id, kind, expression, tz, recipe, catch_up, grace, max_run_duration, "
            "source, next_run, created_at, updated_at) VALUES (?, 'at', ?, 'UTC', 'ok', 'run_once', 86400, 60, "
            "'test', ?, ?, ?)", [(f"t{n:04d}", DUE, DUE, DUE, DUE) for n in range(occurrences)])
    backends = [_backend(f"host{n}", pg_url, tmp_path / f"host{n}", pause=0.02 if n == 0 else 0.1) for n in range(4)]
    _go(*backends)
    killed = 0
    for round_ in range(2):  # kill host0 mid-claim, start it again, kill it again
        # after its first batch, not after a fixed time: on an idle machine 1,000 claims
        # can be over before a fixed pause ends
        assert backends[0].stdout is not None
        if backends[0].stdout.readline().strip() == "claimed" and backends[0].poll() is None:
            backends[0].send_signal(signal.SIGKILL)
            backends[0].wait()
            killed += 1
        if round_ == 0:
            backends[0] = _backend("host0", pg_url, tmp_path / "host0")
            _go(backends[0])
    for backend in backends[1:]:
        assert backend.wait(timeout=120) == 0
    assert killed == 2  # both kills landed while host0 was claiming
    with Store(pg_url) as store:
        counts = dict(store.connection.execute("SELECT task_id, COUNT(*) FROM schedule_runs GROUP BY task_id"))
        by_backend = dict(store.connection.execute("SELECT backend, COUNT(*) FROM schedule_runs GROUP BY backend"))
        undone = store.connection.execute("SELECT COUNT(*) FROM schedule_tasks WHERE status = 'active'").fetchone()[0]
    assert len(counts) == occurrences and set(counts.values()) == {1}  # 0 lost, 0 duplicates
    assert undone == 0
    assert sum(by_backend.values()) == occurrences and len(by_backend) >= 2, by_backend


@pytest.mark.slow
def test_a_host_killed_mid_run_and_another_host_takes_the_queue(pg_url: str, tmp_path: Path) -> None:
    from helpers import wait_for
    from schedule_helpers import Project

    # Two checkouts ("hosts") with their own folders, one PostgreSQL store, one schedule clock.
    first = Project.create(tmp_path / "host-a", now="2026-05-01T10:00:30", store_url=pg_url)
    second = Project.create(tmp_path / "host-b", now="2026-05-01T10:00:30", store_url=pg_url)
    second.clock_file = first.clock_file
    second.env["AXPIPE_TESTING_CLOCK"] = str(first.clock_file)
    try:
        for task, recipe in (("a-slow", "slow"), ("b-after", "ok")):
            added = first.cli("schedule", "add", "--cron", "* * * * *", "--tz", "UTC", "--recipe", recipe,
                              "--id", task)
            assert added.exit_code == 0, added.stderr
        backend_a = first.start_backend()
        first.set_clock("2026-05-01T10:01:00")
        wait_for(lambda: [run for run in first.runs("a-slow") if run["status"] == "running"], what="a-slow running")
        backend_a.send_signal(signal.SIGKILL)  # host A's backend dies mid-run; its launcher runs on
        backend_a.wait()
        backend_b = second.start_backend()
        wait_for(first.idle, timeout=90, what="host B to run the queue and a-slow to finish")
        runs = {run["task_id"]: run for run in first.runs()}
        assert {task: run["status"] for task, run in runs.items()} == {"a-slow": "succeeded", "b-after": "succeeded"}
        ids = {row["pid"]: row["id"] for row in first.query("SELECT id, pid FROM runtime_backends")}
        assert runs["b-after"]["backend"] == ids[backend_b.pid]  # taken over by the live host
        # Each ran once, in the checkout of the host that dispatched it.
        assert first.fired() == ["a-slow 2026-05-01T10:01:00.000000Z"]
        assert second.fired() == ["b-after 2026-05-01T10:01:00.000000Z"]
        from helpers import git

        assert git(first.root, "status", "--porcelain") == git(second.root, "status", "--porcelain") == ""
    finally:
        second.cleanup()
        first.cleanup()


@pytest.mark.slow
def test_a_backend_whose_server_goes_away_retries_then_exits_5(pg_server: str, tmp_path: Path) -> None:
    # A cluster of its own: this test stops it (the session's cluster serves the other tests).
    folder = f"/tmp/axpipe-pg-lost-{os.getpid()}"
    script = Path(__file__).resolve().parent.parent / ".ci" / "pg-throwaway.sh"
    started = subprocess.run(["bash", str(script), "start", folder], capture_output=True, text=True, check=False)
    assert started.returncode == 0, started.stderr
    url = started.stdout.split("AXPIPE_TEST_PG_URL=")[1].split()[0]
    try:
        from schedule_helpers import Project

        project = Project.create(tmp_path / "host", now="2026-05-01T10:00:30", store_url=url)
        backend = project.start_backend()
        try:
            stopped = subprocess.run(["bash", str(script), "stop", folder], capture_output=True, text=True,
                                     check=False)
            assert stopped.returncode == 0, stopped.stderr
            assert backend.wait(timeout=120) == 5
        finally:
            backend.kill()  # a no-op once it exited
            backend.wait()
        log = project.backend_log()
        assert "the store is unreachable: cannot reach the PostgreSQL store postgresql://axpipe:***@127.0.0.1" in log
        assert url.split(":")[2].split("@")[0] not in log  # never the password
    finally:
        subprocess.run(["bash", str(script), "destroy", folder], capture_output=True, check=False)
