"""The sweep on a real store, SQLite and PostgreSQL (``store_location``): what each due
occurrence becomes (on time, missed with run_once or skip, overlap, back-off), the failure
policy, and atomic claims across processes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from axpipe.schedule import policy
from axpipe.schedule.sweep import MAX_FOLD, sweep
from axpipe.schedule.tasks import add, from_flags
from axpipe.store import Store
from axpipe.store import dispatch as runs
from axpipe.store import schedule as queries


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.fixture
def store(store_location: Path | str) -> Iterator[Store]:
    with Store(store_location) as opened:
        yield opened


def add_task(store: Store, task_id: str, *, cron: str = "0 * * * *", catch_up: str = "run_once",
             grace: str = "5m", created: str = "2026-05-01T09:30", kind: str = "cron") -> dict[str, Any]:
    spec = from_flags(kind=kind, expression=cron, tz="UTC", recipe="ok", overrides=["who=me"], title=None,
                      catch_up=catch_up, grace=grace, max_run_duration="1h", task_id=task_id, now=utc(created))
    return add(store, spec, utc(created))


def statuses(rows: list[dict[str, Any]]) -> list[tuple[str, str, int, str | None]]:
    return [(row["status"], row["scheduled_for"][11:16], row["folded"], row["reason"]) for row in rows]


def test_an_on_time_occurrence_queues_one_run_and_advances_the_task(store: Store) -> None:
    add_task(store, "hourly")
    result = sweep(store, backend="b1", now=utc("2026-05-01T10:02"))
    assert (result.tasks, statuses(result.runs)) == (1, [("queued", "10:00", 1, None)])
    run = queries.get_run(store, result.runs[0]["id"])
    assert run is not None
    assert (run["trigger"], run["recipe"], json.loads(run["overrides"]), run["backend"]) == (
        "schedule", "ok", ["who=me"], "b1")
    assert queries.get_task(store, "hourly")["next_run"] == "2026-05-01T11:00:00.000000Z"  # type: ignore[index]
    assert sweep(store, backend="b1", now=utc("2026-05-01T10:03")).runs == []  # nothing twice


def test_nothing_is_due_before_its_time(store: Store) -> None:
    add_task(store, "hourly")
    assert sweep(store, backend="b1", now=utc("2026-05-01T09:59:59")).tasks == 0


def finish_open_runs(store: Store) -> None:
    with store.transaction() as db:
        db.execute("UPDATE schedule_runs SET status = 'succeeded' WHERE status = 'queued'")


def test_grace_decides_what_counts_as_missed(store: Store) -> None:
    add_task(store, "late-but-fine", grace="5m")
    add_task(store, "too-late", grace="5m", catch_up="skip")
    runs = sweep(store, backend="b1", now=utc("2026-05-01T10:05")).runs  # exactly 5 minutes late
    assert [(row["task_id"], row["status"]) for row in runs] == [("late-but-fine", "queued"), ("too-late", "queued")]
    finish_open_runs(store)
    add_task(store, "later", grace="5m", catch_up="skip", created="2026-05-01T10:30")
    runs = sweep(store, backend="b1", now=utc("2026-05-01T11:05:01")).runs
    # 11:00 found 5m01s late: missed. run_once still runs it (as a catch-up); skip does not.
    assert [(row["task_id"], row["status"], row["trigger"]) for row in runs] == [
        ("late-but-fine", "queued", "catch_up"), ("later", "skipped", "catch_up"), ("too-late", "skipped", "catch_up")]


def test_an_occurrence_found_within_grace_and_one_sweep_interval_is_on_time(store: Store) -> None:
    # A backend sweeping every minute finds an occurrence up to a minute late when nothing
    # is wrong: with grace 0 that must still be an ordinary run, not a missed one.
    add_task(store, "strict", grace="0s", catch_up="skip")
    runs = sweep(store, backend="b1", now=utc("2026-05-01T10:00:59"), cadence=60).runs
    assert [(row["task_id"], row["status"], row["trigger"]) for row in runs] == [("strict", "queued", "schedule")]
    finish_open_runs(store)
    runs = sweep(store, backend="b1", now=utc("2026-05-01T11:01:01"), cadence=60).runs  # a sweep was missed
    assert statuses(runs) == [("skipped", "11:00", 1, "missed: 1 occurrence found beyond the grace of 0s and "
                                                      "the sweep interval of 1m, from 2026-05-01T11:00:00Z; "
                                                      "catch_up is skip")]


def test_run_once_folds_missed_occurrences_into_one_run(store: Store) -> None:
    add_task(store, "hourly", catch_up="run_once")
    runs = sweep(store, backend="b1", now=utc("2026-05-01T14:02")).runs
    assert statuses(runs) == [("queued", "10:00", 5, "catch-up: one run for 5 occurrences (4 found beyond the grace "
                                                     "of 5m), from 2026-05-01T10:00:00Z to 2026-05-01T14:00:00Z")]
    assert runs[0]["trigger"] == "catch_up"
    assert runs[0]["last_scheduled"] == "2026-05-01T14:00:00.000000Z"
    assert queries.get_task(store, "hourly")["next_run"] == "2026-05-01T15:00:00.000000Z"  # type: ignore[index]


def test_skip_records_missed_occurrences_and_still_runs_the_on_time_one(store: Store) -> None:
    add_task(store, "hourly", catch_up="skip")
    runs = sweep(store, backend="b1", now=utc("2026-05-01T14:02")).runs
    assert statuses(runs) == [
        ("skipped", "10:00", 4, "missed: 4 occurrences found beyond the grace of 5m, from 2026-05-01T10:00:00Z "
                                "to 2026-05-01T13:00:00Z; catch_up is skip"),
        ("queued", "14:00", 1, None)]
    assert runs[0]["finished_at"] == "2026-05-01T14:02:00.000000Z"


def test_skip_with_nothing_on_time_only_records_the_skip(store: Store) -> None:
    add_task(store, "hourly", catch_up="skip")
    runs = sweep(store, backend="b1", now=utc("2026-05-01T14:30")).runs
    assert [(row["status"], row["folded"]) for row in runs] == [("skipped", 5)]  # 10:00 to 14:00, all late


def test_a_long_outage_folds_at_most_max_fold_and_says_at_least(store: Store) -> None:
    add_task(store, "minutely", cron="* * * * *", created="2026-05-01T00:00:30")
    runs = sweep(store, backend="b1", now=utc("2026-05-03T00:00:30")).runs
    assert runs[0]["folded"] == MAX_FOLD
    assert runs[0]["reason"].startswith(f"catch-up: one run for at least {MAX_FOLD} occurrences")
    assert queries.get_task(store, "minutely")["next_run"] == "2026-05-03T00:01:00.000000Z"  # type: ignore[index]


def test_occurrences_faster_than_the_sweep_fold_into_one_run(store: Store) -> None:
    add_task(store, "minutely", cron="* * * * *", created="2026-05-01T09:59:30", grace="10m")
    runs = sweep(store, backend="b1", now=utc("2026-05-01T10:03:10")).runs
    assert statuses(runs) == [("queued", "10:00", 4, "4 occurrences since the last sweep, folded into one run (the "
                                                     "schedule is faster than the sweep), from 2026-05-01T10:00:00Z "
                                                     "to 2026-05-01T10:03:00Z")]


def test_an_occurrence_while_the_previous_run_is_open_is_skipped_as_overlap(store: Store) -> None:
    add_task(store, "hourly")
    first = sweep(store, backend="b1", now=utc("2026-05-01T10:00")).runs[0]
    second = sweep(store, backend="b1", now=utc("2026-05-01T11:00")).runs
    assert statuses(second) == [("skipped", "11:00", 1, f"overlap: run {first['id']} of this task is still waiting "
                                                        "for the checkout; 1 occurrence not run")]
    assert [run["status"] for run in queries.list_runs(store, "hourly")] == ["skipped", "queued"]


def test_a_task_backing_off_skips_occurrences_until_the_back_off_ends(store: Store) -> None:
    add_task(store, "hourly")
    with store.transaction() as db:
        db.execute("UPDATE schedule_tasks SET consecutive_failures = 2, backoff_until = ? WHERE id = 'hourly'",
                   ("2026-05-01T10:30:00.000000Z",))
    assert statuses(sweep(store, backend="b1", now=utc("2026-05-01T10:00")).runs) == [
        ("skipped", "10:00", 1, "backing off after 2 consecutive failure(s) until 2026-05-01T10:30:00Z; "
                                "1 occurrence not run")]
    assert statuses(sweep(store, backend="b1", now=utc("2026-05-01T11:00")).runs) == [("queued", "11:00", 1, None)]


def test_a_one_shot_fires_once_and_is_done(store: Store) -> None:
    add_task(store, "once", kind="at", cron="2026-05-01T10:00")
    runs = sweep(store, backend="b1", now=utc("2026-05-01T10:01")).runs
    assert statuses(runs) == [("queued", "10:00", 1, None)]
    task = queries.get_task(store, "once")
    assert task is not None and (task["status"], task["next_run"]) == ("done", None)
    assert sweep(store, backend="b1", now=utc("2026-06-01T00:00")).runs == []


def test_a_task_whose_schedule_cannot_be_computed_is_paused_with_a_row(store: Store) -> None:
    add_task(store, "broken")
    with store.transaction() as db:
        db.execute("UPDATE schedule_tasks SET tz = 'Nowhere/Land' WHERE id = 'broken'")
    add_task(store, "fine")
    runs = sweep(store, backend="b1", now=utc("2026-05-01T10:00")).runs
    assert [(row["task_id"], row["status"]) for row in runs] == [("broken", "skipped"), ("fine", "queued")]
    assert "the schedule cannot be computed (unknown IANA time zone 'Nowhere/Land'" in runs[0]["reason"]
    assert queries.get_task(store, "broken")["status"] == "paused"  # type: ignore[index]


# -- failure policy ---------------------------------------------------------------------


def test_backoff_doubles_from_a_minute_to_an_hour() -> None:
    assert [policy.backoff_seconds(n) for n in range(1, 9)] == [60, 120, 240, 480, 960, 1920, 3600, 3600]


def test_failures_back_off_then_pause_after_five_and_success_resets() -> None:
    now = utc("2026-05-01T10:00")
    decide = policy.after_run(now)
    task = {"id": "t", "status": "active", "consecutive_failures": 0}
    changes, note = decide(task, "failed")
    assert changes == {"consecutive_failures": 1, "backoff_until": "2026-05-01T10:01:00.000000Z"}
    assert note == "1 consecutive failure: backing off 1m, until 2026-05-01T10:01:00Z"
    changes, note = decide({**task, "consecutive_failures": 4}, "failed")
    assert (changes["status"], changes["next_run"], changes["status_reason"]) == (
        "paused", None, "paused after 5 consecutive failures")
    assert note == "5 consecutive failures: task paused (`axpipe schedule resume t` to start it again)"
    assert decide({**task, "consecutive_failures": 4}, "succeeded") == (
        {"consecutive_failures": 0, "backoff_until": None}, "")
    assert decide({**task, "consecutive_failures": 4}, "cancelled") == ({}, "")


def test_finishing_a_run_records_it_once_and_updates_the_task(store: Store) -> None:
    add_task(store, "hourly")
    run = sweep(store, backend="b1", now=utc("2026-05-01T10:00")).runs[0]
    dispatched = runs.dispatch_next(store, backend="b1", host="h", token="tok", now_real=0.0)
    assert dispatched is not None and dispatched["id"] == run["id"]
    assert runs.dispatch_next(store, backend="b2", host="h", token="t2", now_real=0.0) is None  # one at a time
    assert runs.start_run(store, run["id"], token="wrong", pid=1, started_at="x", now_real=0.0, run_dir="d",
                          log="l") is None
    assert runs.start_run(store, run["id"], token="tok", pid=1, started_at="x", now_real=0.0, run_dir="d",
                          log="l") is not None
    finish = dict(expect=("running",), token="tok", status="failed", reason="exit code 1", exit_code=1,
                  finished_at="2026-05-01T10:01:00.000000Z", policy=policy.after_run(utc("2026-05-01T10:01")))
    first = runs.finish_run(store, run["id"], **finish)  # type: ignore[arg-type]
    again = runs.finish_run(store, run["id"], **finish)  # type: ignore[arg-type]
    assert first is not None and again is None
    assert first["reason"] == "exit code 1; 1 consecutive failure: backing off 1m, until 2026-05-01T10:02:00Z"
    task = queries.get_task(store, "hourly")
    assert task is not None and (task["consecutive_failures"], task["backoff_until"]) == (
        1, "2026-05-01T10:02:00.000000Z")


# -- claims across processes ------------------------------------------------------------

CLAIMER = """
import sys
from datetime import datetime, UTC
from axpipe.schedule.sweep import sweep
from axpipe.store import Store
from pathlib import Path
store = Store(sys.argv[1] if sys.argv[1].startswith("postgresql://") else Path(sys.argv[1]))
sys.stdin.readline()  # start together
result = sweep(store, backend=sys.argv[2], now=datetime.fromisoformat(sys.argv[3]), batch=int(sys.argv[4]))
print(result.tasks)
"""


@pytest.mark.parametrize("processes", [2, 4])
def test_processes_sweeping_one_store_claim_each_task_exactly_once(store_location: Path | str,
                                                                  processes: int) -> None:
    path = store_location
    tasks = 1500
    with Store(path) as store, store.transaction() as db:
        created = "2026-05-01T09:00:00.000000Z"
        db.executemany(
            "INSERT INTO schedule_tasks (id, kind, expression, tz, recipe, catch_up, grace, max_run_duration, "
            "source, next_run, created_at, updated_at) VALUES (?, 'cron', '*/5 * * * *', 'UTC', 'ok', 'run_once', "
            "300, 60, 'test', ?, ?, ?)",
            [(f"t{n:05d}", f"2026-05-01T10:{n % 60:02d}:00.000000Z", created, created) for n in range(tasks)])
    workers = [subprocess.Popen([sys.executable, "-c", CLAIMER, str(path), f"b{n}", "2026-05-01T11:00:00+00:00", "25"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for n in range(processes)]
    for worker in workers:
        assert worker.stdin is not None
        worker.stdin.write("go\n")
        worker.stdin.flush()
    claimed = [int(worker.communicate(timeout=120)[0]) for worker in workers]
    assert all(worker.returncode == 0 for worker in workers)
    assert sum(claimed) == tasks
    with Store(path) as store:
        rows = store.connection.execute("SELECT task_id, COUNT(*) FROM schedule_runs GROUP BY task_id").fetchall()
        assert len(rows) == tasks and all(count == 1 for _, count in rows)
        due_left = store.connection.execute("SELECT COUNT(*) FROM schedule_tasks WHERE next_run <= ?",
                                            ("2026-05-01T11:00:00.000000Z",)).fetchone()[0]
        assert due_left == 0


def test_registering_the_same_task_twice_is_refused_by_id(store: Store) -> None:
    add_task(store, "hourly")
    from axpipe.errors import InputError

    with pytest.raises(InputError, match="a task 'hourly' already exists"):
        add_task(store, "hourly")
    assert len(queries.list_tasks(store)) == 1


def test_tasks_without_an_id_are_named_after_their_recipe(store: Store) -> None:
    now = utc("2026-05-01T09:00")
    ids = []
    for _ in range(3):
        spec = from_flags(kind="daily", expression="09:30", tz="UTC", recipe="nightly batch", overrides=[],
                          title=None, catch_up="run_once", grace="5m", max_run_duration="1h", task_id=None, now=now)
        ids.append(add(store, spec, now + timedelta(seconds=1))["id"])
    assert ids == ["nightly-batch", "nightly-batch-2", "nightly-batch-3"]
