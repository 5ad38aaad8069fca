"""What a loop costs per tick and how punctually it ticks, against baselines measured in the same run.

    .venv/bin/python bench/loops.py [--ticks N] [--rounds R]

1. **Tick overhead.** A goal-less loop whose tick is the command ``true`` runs N ticks
   (``axpipe run``, 10 ms interval under the testing switch); each tick's duration comes
   from its ``loop.tick_finished`` event: the probe-less lifecycle pass, the command, the
   loop's row and the events. The baseline is the bare process runner running ``true``
   (``axpipe.process.run``), timed in this process in the same round.
2. **Punctuality.** How late each tick starts after its firing (the ``loop.tick_started``
   event against the loop's start plus firing times the interval), against a bare
   ``threading.Event.wait`` periodic timer measured in the same round.
3. **``loop status``** start-up against ``python -I -c pass`` (the issue-2 target for every
   subcommand but ``run``: within 5x, without Hydra) and against ``runtime status``, the
   sibling command that reads the same store (paired samples).

Run it with the venv's own python (a pyenv shim adds ~85 ms to every start).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli import PY, ROOT, imports_hydra  # bench/ is not a package: import its siblings
from timing import paired, spawn

INTERVAL = 0.01



def project(base: Path) -> Path:
    root = base / "project"
    (root / "recipes").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    (root / "recipes" / "ticks.yaml").write_text(
        f'# @package _global_\nname: ticks\nloop:\n  interval: {int(INTERVAL * 1000)}ms\n  command: ["true"]\n')
    return root


def loop_round(root: Path, ticks: int) -> tuple[list[float], list[float]]:
    """Tick durations and start lateness (seconds) of one loop of ``ticks`` ticks."""
    completed = subprocess.run([PY, "-m", "axpipe", "run", "recipe=ticks", f"loop.max_runs={ticks}", "--json"],
                               cwd=root, capture_output=True, text=True, env={**os.environ, "AXPIPE_TESTING_FAST": "1"})
    if completed.returncode != 0:
        raise SystemExit(f"the loop failed: {completed.stderr[-800:]}")
    events = [json.loads(line) for line in completed.stdout.splitlines() if line.startswith("{")]
    started = next(event for event in events if event["type"] == "loop.started")
    origin = datetime.fromisoformat(started["ts"].replace("Z", "+00:00")).timestamp()
    durations = [event["duration"] for event in events if event["type"] == "loop.tick_finished"]
    lateness = [datetime.fromisoformat(event["ts"].replace("Z", "+00:00")).timestamp()
                - (origin + (event["firing"] - 1) * INTERVAL)
                for event in events if event["type"] == "loop.tick_started"]
    return durations, lateness


def bare_runner(count: int) -> list[float]:
    from axpipe import process

    samples = []
    for _ in range(count):
        began = time.perf_counter()
        process.run(["true"])
        samples.append(time.perf_counter() - began)
    return samples


def bare_timer_lateness(count: int) -> list[float]:
    """A periodic timer at the same interval with nothing else to do: how late it wakes."""
    stop = threading.Event()
    origin = time.monotonic()
    late = []
    for index in range(1, count + 1):
        due = origin + index * INTERVAL
        stop.wait(max(0.0, due - time.monotonic()))
        late.append(time.monotonic() - due)
    return late


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ticks", type=int, default=200, help="ticks per loop round (<= 500)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds; each runs a loop and its baselines")
    parser.add_argument("--repeat", type=int, default=15, help="samples for the `loop status` start-up")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    subprocess.run([PY, "-m", "compileall", "-q", str(ROOT / "axpipe"), str(ROOT / "plugins")],
                   check=True, stdout=subprocess.DEVNULL)
    tick_ratios, late_ours, late_bare, ticks_ms, bare_ms = [], [], [], [], []
    with tempfile.TemporaryDirectory(prefix="axpipe-bench-loops-") as scratch:
        root = project(Path(scratch))
        for _ in range(args.rounds):
            durations, lateness = loop_round(root, args.ticks)
            bare = bare_runner(args.ticks)
            timer = bare_timer_lateness(args.ticks)
            tick_ratios.append(statistics.median(durations) / statistics.median(bare))
            ticks_ms.append(statistics.median(durations) * 1000)
            bare_ms.append(statistics.median(bare) * 1000)
            late_ours.extend(lateness)
            late_bare.extend(timer)
        console = Path(PY).parent / "axpipe"
        axpipe = [str(console)] if console.exists() else [PY, "-m", "axpipe"]
        status_ms, pass_ms, status_ratio = paired(spawn(*axpipe, "loop", "status", cwd=root, ok=(0, 1)),
                                                  spawn(PY, "-I", "-c", "pass", cwd=root), args.repeat)
        _, runtime_ms, sibling_ratio = paired(spawn(*axpipe, "loop", "status", cwd=root, ok=(0, 1)),
                                              spawn(*axpipe, "runtime", "status", cwd=root, ok=(0, 1)), args.repeat)
        hydra = imports_hydra("loop", "status", cwd=root)
    tick_ratio = statistics.median(tick_ratios)
    print(f"tick (command `true`, no goal)  {statistics.median(ticks_ms):6.2f} ms   bare process.run(['true']) "
          f"{statistics.median(bare_ms):6.2f} ms   ratio {tick_ratio:4.2f}x  (median of {args.rounds} rounds of "
          f"{args.ticks} ticks)")
    print(f"tick start after its firing     p50 {percentile(late_ours, 0.5) * 1000:6.2f} ms  p95 "
          f"{percentile(late_ours, 0.95) * 1000:6.2f} ms   bare Event.wait timer p50 "
          f"{percentile(late_bare, 0.5) * 1000:6.2f} ms  p95 {percentile(late_bare, 0.95) * 1000:6.2f} ms")
    print(f"axpipe loop status              {status_ms:6.1f} ms   python -I -c pass {pass_ms:6.1f} ms   "
          f"ratio {status_ratio:4.2f}x  imports hydra: {hydra}")
    print(f"axpipe loop status                           axpipe runtime status {runtime_ms:6.1f} ms   "
          f"ratio {sibling_ratio:4.2f}x  (the sibling command reading the same store)")
    ok = status_ratio <= 5 and not hydra
    print(f"\nresult\n  {'met ' if ok else 'MISS'}  loop status start-up {status_ratio:.2f}x (target <= 5x, no Hydra)")
    print(f"\n(python {sys.version.split()[0]}, {os.cpu_count()} cores)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
