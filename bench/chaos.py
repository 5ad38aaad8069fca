"""Chaos over the runtime: SIGKILLs of backends and launchers at random moments, then counts.

    .venv/bin/python bench/chaos.py [--kills 60] [--tasks 3] [--tick 3] [--seed 25]

What it does (issue 25): a real project with ``--tasks`` tasks due every minute, two real
backends (``axpipe runtime start``) on one SQLite store, schedule time moved a minute every
``--tick`` seconds through the documented testing clock, and every real scheduled run a
real ``axpipe run`` whose check records the occurrence it ran for. A chaos loop SIGKILLs,
at random moments, a backend (restarted at once, as a supervisor would) or a launcher
(what the OOM killer does), until ``--kills`` processes were killed. Then the killing stops,
the backends finish the queue and are stopped, and the store is judged:

- ``PRAGMA integrity_check``;
- every occurrence from a task's first to its last covered one (and on to the end for an
  active task) is covered by exactly one run row (a catch-up row covers several): *lost*
  occurrences are covered by none, *duplicates* by more than one;
- no check ran twice for one occurrence (the check's own record);
- no run left open (queued, starting, running), no ``axpipe run`` row left open whose
  process is gone, and no run refused by the checkout's lock (exit 7: another task paying
  for an orphan);
- no orphan: no process left carrying a run's dispatch token, none working in the project.

It prints the counts and exits 1 when any of them is not 0. Correctness, not speed: there
is no ratio to print. Figures: docs/operations.md.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from axpipe.runtime.processes import marked, pid_alive  # noqa: E402
from axpipe.runtime.reaper import MARK_ENV  # noqa: E402

START = datetime(2026, 5, 1, 10, 0, 30, tzinfo=UTC)
RECIPE = """# @package _global_
name: tick
goal:
  objective: "record the occurrence"
  acceptance:
    AC1: {tag: closes, text: "recorded", check: record}
  checks:
    - id: record
      acceptance: [AC1]
      command: "sleep 0.3; echo \\"$AXPIPE_SCHEDULE_TASK $AXPIPE_SCHEDULED_FOR\\" >> .axpipe/fired.txt"
"""


def iso(moment: datetime) -> str:
    return moment.isoformat(timespec="microseconds").replace("+00:00", "Z")


class Chaos:
    def __init__(self, root: Path, seed: int) -> None:
        self.root = root
        self.clock_file = root.parent / "clock.txt"
        self.env = {**os.environ, "AXPIPE_TESTING_CLOCK": str(self.clock_file), "AXPIPE_TESTING_FAST": "1",
                    "TZ": "UTC"}
        self.backends: list[subprocess.Popen[bytes]] = []
        self.random = random.Random(seed)
        self.kills: Counter[str] = Counter()
        self.now = START

    def set_clock(self, moment: datetime) -> None:
        self.now = moment
        temporary = self.clock_file.with_suffix(".tmp")
        temporary.write_text(iso(moment))
        os.replace(temporary, self.clock_file)

    def axpipe(self, *args: str) -> None:
        subprocess.run([sys.executable, "-m", "axpipe", *args], cwd=self.root, env=self.env, check=True,
                       stdout=subprocess.DEVNULL)

    def start_backend(self) -> subprocess.Popen[bytes]:
        log = (self.root.parent / "backends.log").open("ab")
        process = subprocess.Popen([sys.executable, "-m", "axpipe", "runtime", "start", "--sweep-interval", "200ms"],
                                   cwd=self.root, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        self.backends.append(process)
        return process

    def launchers(self) -> list[int]:
        """Live launchers of this project (found by their command line)."""
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    argv = (entry / "cmdline").read_bytes().split(b"\0")
                except OSError:
                    continue
                if b"axpipe.runtime.launcher" in argv and str(self.root).encode() in argv:
                    found.append(int(entry.name))
        return found

    def kill_one(self) -> None:
        """SIGKILL a launcher (half the time: the next one to appear, within 3 s) or a backend."""
        if self.random.random() < 0.5:
            give_up = time.monotonic() + 3
            while not (launchers := self.launchers()) and time.monotonic() < give_up:
                time.sleep(0.05)
            if launchers:
                time.sleep(self.random.uniform(0, 1.5))  # a random moment of the run
                alive = [pid for pid in launchers if pid_alive(pid)]
                if alive:
                    os.kill(self.random.choice(alive), signal.SIGKILL)
                    self.kills["launcher"] += 1
                    return
        victim = self.random.choice(self.backends)
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait()
        self.backends.remove(victim)
        self.kills["backend"] += 1
        self.start_backend()  # a supervisor restarts it

    def store(self) -> sqlite3.Connection:
        return sqlite3.connect(self.root / ".axpipe" / "state.db", timeout=30)

    def idle(self) -> bool:
        with self.store() as db:
            return not db.execute("SELECT 1 FROM schedule_runs WHERE status IN ('queued', 'starting', 'running')"
                                  ).fetchone()


def coverage(db: sqlite3.Connection, end: datetime) -> tuple[int, int, int]:
    """``(occurrences, lost, duplicates)`` over every task, minute by minute."""
    occurrences = lost = duplicates = 0
    for task_id, status in db.execute("SELECT id, status FROM schedule_tasks"):
        covered: Counter[datetime] = Counter()
        for first, last in db.execute("SELECT scheduled_for, last_scheduled FROM schedule_runs WHERE task_id = ?",
                                      (task_id,)):
            moment = datetime.fromisoformat(first.replace("Z", "+00:00"))
            until = datetime.fromisoformat(last.replace("Z", "+00:00"))
            while moment <= until:
                covered[moment] += 1
                moment += timedelta(minutes=1)
        if not covered:
            continue
        moment, last_covered = min(covered), max(covered)
        final = end.replace(second=0, microsecond=0) if status == "active" else last_covered
        while moment <= max(final, last_covered):
            occurrences += 1
            lost += covered[moment] == 0
            duplicates += max(0, covered[moment] - 1)
            moment += timedelta(minutes=1)
    return occurrences, lost, duplicates


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kills", type=int, default=60)
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--tick", type=float, default=4.0, help="real seconds per minute of schedule time")
    parser.add_argument("--seed", type=int, default=25)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="axpipe-chaos-") as folder:
        root = Path(folder) / "project"
        (root / "recipes").mkdir(parents=True)
        (root / "recipes" / "tick.yaml").write_text(RECIPE)
        (root / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
        subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
        chaos = Chaos(root, args.seed)
        chaos.set_clock(START)
        for number in range(args.tasks):
            chaos.axpipe("schedule", "add", "--cron", "* * * * *", "--tz", "UTC", "--recipe", "tick",
                         "--id", f"task-{number}")
        chaos.start_backend()
        chaos.start_backend()
        started = time.monotonic()
        next_tick = started + args.tick
        try:
            while sum(chaos.kills.values()) < args.kills:
                time.sleep(chaos.random.uniform(0.3, 2.0))
                if time.monotonic() >= next_tick:
                    chaos.set_clock(chaos.now + timedelta(minutes=1))
                    next_tick += args.tick
                chaos.kill_one()
            chaos.set_clock(chaos.now + timedelta(minutes=1))
            give_up = time.monotonic() + 300
            time.sleep(2)
            while not chaos.idle() and time.monotonic() < give_up:
                time.sleep(0.5)
        finally:
            for backend in chaos.backends:
                backend.send_signal(signal.SIGTERM)
            for backend in chaos.backends:
                backend.wait(timeout=60)
        chaos_seconds = time.monotonic() - started
        time.sleep(1)
        with chaos.store() as db:
            integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
            occurrences, lost, duplicates = coverage(db, chaos.now)
            statuses = Counter(status for (status,) in db.execute("SELECT status FROM schedule_runs"))
            open_runs = sum(statuses[state] for state in ("queued", "starting", "running"))
            refused = db.execute("SELECT COUNT(*) FROM schedule_runs WHERE exit_code = 7").fetchone()[0]
            open_children = sum(1 for (pid,) in db.execute("SELECT pid FROM runs WHERE finished_at IS NULL")
                                if not pid_alive(int(pid)))
            tokens = [token for (token,) in db.execute(
                "SELECT DISTINCT dispatch_token FROM schedule_runs WHERE dispatch_token IS NOT NULL")]
        fired = (root / ".axpipe" / "fired.txt").read_text().splitlines() if (root / ".axpipe" / "fired.txt").exists() \
            else []
        twice = sum(count - 1 for count in Counter(fired).values() if count > 1)
        orphans = sorted({pid for token in tokens for pid in marked(MARK_ENV, token)})
        for pid in orphans:  # reported above all; not left running after the benchmark
            os.kill(pid, signal.SIGKILL)
        print(f"chaos: {sum(chaos.kills.values())} SIGKILLs ({chaos.kills['backend']} backends, "
              f"{chaos.kills['launcher']} launchers) over {chaos_seconds:.0f} s, {args.tasks} tasks due every "
              f"minute, schedule time {START:%H:%M}..{chaos.now:%H:%M}")
        print(f"runs: {dict(sorted(statuses.items()))}; checks executed: {len(fired)}")
        figures = {"integrity_check": integrity, "occurrences": occurrences, "lost": lost,
                   "duplicates": duplicates, "checks run twice": twice, "runs left open": open_runs,
                   "axpipe run rows left open": open_children, "refused by the lock (exit 7)": refused,
                   "orphan processes": len(orphans)}
        for name, value in figures.items():
            print(f"  {name}: {value}")
        failed = integrity != "ok" or any(value for name, value in figures.items()
                                          if name not in ("integrity_check", "occurrences"))
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
