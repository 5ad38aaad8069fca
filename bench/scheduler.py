"""Scheduler claims and sweeps, as ratios against a bare claim loop on the same store in the same run.

    .venv/bin/python bench/scheduler.py [--tasks 10000] [--repeat 5] [--processes 1,2,4,8]
    .venv/bin/python bench/scheduler.py --pg-url "$AXPIPE_TEST_PG_URL"   # the same on PostgreSQL

With ``--pg-url`` the store is a PostgreSQL schema made for each sample (``.ci/pg-throwaway.sh
start`` prints a URL), and the bare loop is the same claim in PostgreSQL's terms (``UPDATE …
WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED) RETURNING``, the run rows, ``COMMIT``).

What it measures (issue 5):
- claims per second with 1, 2, 4 and 8 backend processes sweeping one store that holds
  ``--tasks`` due tasks (daily, weekly, cron and one-shot, in three time zones), each
  process running axpipe's real sweep (``axpipe.schedule.sweep.sweep``);
- the time of one sweep over ``--tasks`` scheduled tasks of which none is due (what every
  backend pays every sweep interval);
- the baseline: the same processes running a bare claim loop with the same SQL shape
  (``BEGIN IMMEDIATE``, ``UPDATE … RETURNING`` of a batch, one run row inserted per claim,
  ``COMMIT``) and no schedule arithmetic; for the idle sweep, the bare due query.

Subject and baseline alternate sample by sample; the ratio is the median of the per-pair
ratios. After every claim sample the store is checked: each task claimed exactly once,
or the benchmark fails.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)  # a Friday
ZONES = ("UTC", "Europe/Lisbon", "America/New_York")
BATCH = 100
TASKS = [10_000]  # set from --tasks: PostgreSQL samples build their store each time


def pg_schema(url: str, name: str) -> str:
    """A URL whose connections land in a fresh, empty schema ``name``."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS bench_{name} CASCADE")
        conn.execute(f"CREATE SCHEMA bench_{name}")
    return f"{url}{'&' if '?' in url else '?'}options=-csearch_path%3Dbench_{name}"

WORKER = """
import sys, time
from pathlib import Path
from datetime import datetime
mode, now = sys.argv[1], datetime.fromisoformat(sys.argv[3])
path = sys.argv[2] if sys.argv[2].startswith("postgresql://") else Path(sys.argv[2])
if mode == "axpipe":
    from axpipe.schedule.sweep import sweep
    from axpipe.store import Store
    store = Store(path)
    sys.stdout.write("ready\\n"); sys.stdout.flush(); sys.stdin.readline()
    print(sweep(store, backend=sys.argv[4], now=now, batch=int(sys.argv[5])).tasks)
elif isinstance(path, str):
    import psycopg
    db = psycopg.connect(path, autocommit=True)
    stamp = now.isoformat(timespec="microseconds").replace("+00:00", "Z")
    sys.stdout.write("ready\\n"); sys.stdout.flush(); sys.stdin.readline()
    claimed = 0
    while True:
        with db.transaction():
            rows = db.execute("UPDATE schedule_tasks SET next_run = '9999-12-31T00:00:00.000000Z' WHERE id IN "
                              "(SELECT id FROM schedule_tasks WHERE status = 'active' AND next_run <= %s "
                              "ORDER BY next_run, id LIMIT %s FOR UPDATE SKIP LOCKED) "
                              "RETURNING id, recipe, overrides, max_run_duration", (stamp, int(sys.argv[5]))).fetchall()
            with db.cursor() as cursor:
                cursor.executemany("INSERT INTO schedule_runs (task_id, scheduled_for, last_scheduled, trigger, "
                                   "status, recipe, overrides, max_run_duration, queued_at, backend) VALUES "
                                   "(%s, %s, %s, 'schedule', 'queued', %s, %s, %s, %s, %s)",
                                   [(r[0], stamp, stamp, r[1], r[2], r[3], stamp, sys.argv[4]) for r in rows])
        claimed += len(rows)
        if not rows:
            break
    print(claimed)
else:
    import sqlite3
    db = sqlite3.connect(path, timeout=10, isolation_level=None)
    db.execute("PRAGMA busy_timeout = 10000"); db.execute("PRAGMA synchronous = NORMAL")
    stamp = now.isoformat(timespec="microseconds").replace("+00:00", "Z")
    sys.stdout.write("ready\\n"); sys.stdout.flush(); sys.stdin.readline()
    claimed = 0
    while True:
        db.execute("BEGIN IMMEDIATE")
        rows = db.execute("UPDATE schedule_tasks SET next_run = '9999-12-31T00:00:00.000000Z' WHERE id IN "
                          "(SELECT id FROM schedule_tasks WHERE status = 'active' AND next_run <= ? "
                          "ORDER BY next_run, id LIMIT ?) RETURNING id, recipe, overrides, max_run_duration",
                          (stamp, int(sys.argv[5]))).fetchall()
        db.executemany("INSERT INTO schedule_runs (task_id, scheduled_for, last_scheduled, trigger, status, "
                       "recipe, overrides, max_run_duration, queued_at, backend) VALUES "
                       "(?, ?, ?, 'schedule', 'queued', ?, ?, ?, ?, ?)",
                       [(r[0], stamp, stamp, r[1], r[2], r[3], stamp, sys.argv[4]) for r in rows])
        db.execute("COMMIT")
        claimed += len(rows)
        if len(rows) < int(sys.argv[5]):
            break
    print(claimed)
"""


def build_store(path: Path | str, tasks: int, *, due: bool) -> None:
    """``tasks`` tasks, due at NOW (within their grace) or all in the future."""
    from axpipe import clock
    from axpipe.store import Store

    rows = []
    for n in range(tasks):
        zone = ZONES[n % len(ZONES)]
        when = (NOW - timedelta(seconds=n % 240)) if due else NOW + timedelta(hours=1, seconds=n % 240)
        local = when.astimezone(ZoneInfo(zone)).replace(second=0, microsecond=0)
        kind = ("daily", "weekly", "cron", "at")[n % 4]
        expression = {"daily": local.strftime("%H:%M"), "weekly": local.strftime("%a@%H:%M").upper(),
                      "cron": f"{local.minute} {local.hour} * * *",
                      "at": local.isoformat()}[kind]
        stamp = clock.iso(local)
        rows.append((f"task-{n:05d}", kind, expression, zone, stamp))
    with Store(path) as store, store.transaction() as db:
        created = clock.iso(NOW - timedelta(days=1))
        db.executemany(
            "INSERT INTO schedule_tasks (id, kind, expression, tz, recipe, overrides, catch_up, grace, "
            "max_run_duration, source, next_run, created_at, updated_at) VALUES "
            "(?, ?, ?, ?, 'nightly', '[\"batch=a\"]', 'run_once', 300, 3600, 'bench', ?, ?, ?)",
            [(*row, created, created) for row in rows])


def run_claimers(mode: str, template: Path | str, scratch: Path, processes: int) -> float:
    """Copy the template store, let ``processes`` claimers loose on it, return the seconds taken.
    On PostgreSQL (``template`` a URL) a fresh schema is filled for every sample instead."""
    path: Path | str
    if isinstance(template, str):
        path = pg_schema(template, f"{mode}_{processes}")
        build_store(path, TASKS[0], due=True)
    else:
        path = scratch / f"{mode}.db"
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
        shutil.copy(template, path)
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, mode, str(path), NOW.isoformat(), f"b{n}", str(BATCH)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
               for n in range(processes)]
    for worker in workers:
        assert worker.stdout is not None and worker.stdout.readline().strip() == "ready"
    started = time.perf_counter()
    for worker in workers:
        assert worker.stdin is not None
        worker.stdin.write("go\n")
        worker.stdin.flush()
    counts = [int(worker.communicate()[0]) for worker in workers]
    elapsed = time.perf_counter() - started
    check_exactly_once(path, sum(counts), mode)
    return elapsed


def check_exactly_once(path: Path | str, claimed: int, mode: str) -> None:
    from axpipe.store import Store

    with Store(path) as store:
        tasks = store.connection.execute("SELECT COUNT(*) FROM schedule_tasks").fetchone()[0]
        per_task = store.connection.execute("SELECT COUNT(*), COUNT(DISTINCT task_id) FROM schedule_runs").fetchone()
    if not (claimed == tasks == per_task[0] == per_task[1]):
        raise SystemExit(f"{mode}: claimed {claimed}, tasks {tasks}, run rows {per_task[0]}, distinct tasks "
                         f"{per_task[1]}: not exactly once")


def idle_sweep(template: Path | str, repeat: int) -> tuple[float, float, float]:
    """Median ms of one sweep over the idle store, of the bare due query, and their ratio."""
    from axpipe import clock
    from axpipe.schedule.sweep import sweep
    from axpipe.store import Store

    store = Store(template)
    stamp = clock.iso(NOW)
    ours, bare, ratios = [], [], []
    for _ in range(repeat * 20):
        started = time.perf_counter()
        store.connection.execute("SELECT * FROM schedule_tasks WHERE status = 'active' AND next_run <= ? "
                                 "ORDER BY next_run, id LIMIT ?", (stamp, BATCH)).fetchall()
        middle = time.perf_counter()
        result = sweep(store, backend="bench", now=NOW)
        ended = time.perf_counter()
        assert result.tasks == 0
        bare.append(middle - started)
        ours.append(ended - middle)
        ratios.append((ended - middle) / (middle - started))
    store.close()
    return statistics.median(ours) * 1000, statistics.median(bare) * 1000, statistics.median(ratios)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=10_000, help="tasks in the store (default 10000)")
    parser.add_argument("--repeat", type=int, default=5, help="samples per measurement (median)")
    parser.add_argument("--processes", default="1,2,4,8", help="backend process counts (default 1,2,4,8)")
    parser.add_argument("--pg-url", help="measure a PostgreSQL store at this URL instead of SQLite")
    args = parser.parse_args()
    TASKS[0] = args.tasks
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "axpipe")], check=True,
                   stdout=subprocess.DEVNULL)
    with tempfile.TemporaryDirectory(prefix="axpipe-bench-scheduler-") as folder:
        scratch = Path(folder)
        due: Path | str = scratch / "due-template.db"
        idle: Path | str = scratch / "idle-template.db"
        if args.pg_url:
            due, idle = args.pg_url, pg_schema(args.pg_url, "idle")
        else:
            build_store(due, args.tasks, due=True)
        build_store(idle, args.tasks, due=False)
        print(f"claims of {args.tasks} due tasks (batches of {BATCH} per transaction), median of {args.repeat}:")
        for processes in [int(part) for part in args.processes.split(",")]:
            ours, bare, ratios = [], [], []
            run_claimers("bare", due, scratch, processes)  # one warm-up pair: page cache, byte code
            run_claimers("axpipe", due, scratch, processes)
            for _ in range(args.repeat):
                baseline = run_claimers("bare", due, scratch, processes)
                subject = run_claimers("axpipe", due, scratch, processes)
                bare.append(baseline)
                ours.append(subject)
                ratios.append(subject / baseline)
            print(f"  {processes} process{'es' if processes > 1 else '  '}  axpipe sweep "
                  f"{args.tasks / statistics.median(ours):8.0f} claims/s  bare loop "
                  f"{args.tasks / statistics.median(bare):8.0f} claims/s  paired time ratio "
                  f"{statistics.median(ratios):5.2f}x  (exactly once: yes)")
        ours_ms, bare_ms, ratio = idle_sweep(idle, args.repeat)
        print(f"sweep of {args.tasks} scheduled tasks, none due: {ours_ms:.3f} ms vs bare due query "
              f"{bare_ms:.3f} ms: {ratio:.2f}x")
    engine = "PostgreSQL (--pg-url)" if args.pg_url else f"SQLite {sqlite3.sqlite_version}"
    print(f"\n(python {sys.version.split()[0]}, {os.cpu_count()} cores, {engine})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
