"""A sweep of 8 jobs whose check sleeps 2 s: Hydra's joblib launcher against the basic one,
as the ratio of wall times measured in the same run (issue 22's target: at most 0.6x).

    .venv/bin/python bench/sweeps.py [--jobs 8] [--sleep 2] [--repeat 3] [--n-jobs N]

Each sample is a whole ``axpipe run -m recipe=sleepy job=range(N) [hydra/launcher=joblib]``
in a fresh git repository (start-up, composition, per-job worktrees under joblib, the
summary), basic and joblib alternating; the ratio is the median of the per-pair ratios.
Every sample must end with exit 0 and one recorded job per override, or the bench fails.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECIPE = """# @package _global_
name: sleepy
job: 0
goal:
  objective: "wait, then pass (job ${{job}})"
  acceptance:
    AC1: {{tag: closes, text: "waited", check: wait}}
  checks:
    - {{id: wait, acceptance: [AC1], command: "python3 -c 'import time; time.sleep({sleep})'"}}
"""


def project(folder: Path, sleep: float) -> Path:
    repo = folder / "repo"
    (repo / "recipes").mkdir(parents=True)
    (repo / "axpipe.yaml").write_text("recipe_paths: [recipes]\n")
    (repo / "recipes" / "sleepy.yaml").write_text(RECIPE.format(sleep=sleep))
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "r"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    return repo


def sample(repo: Path, jobs: int, launcher: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "axpipe", "run", "-m", "recipe=sleepy", f"job=range({jobs})",
                           *launcher], cwd=repo, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0 or done.stdout.count(" -> exit 0") != jobs:
        raise SystemExit(f"{launcher or 'basic'}: exit {done.returncode}\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--sleep", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--n-jobs", type=int, default=None, help="joblib's n_jobs (default: the launcher's, -1)")
    args = parser.parse_args()
    joblib = ["hydra/launcher=joblib"] + ([f"hydra.launcher.n_jobs={args.n_jobs}"] if args.n_jobs else [])
    basic_times, joblib_times, ratios = [], [], []
    with tempfile.TemporaryDirectory(prefix="axpipe-bench-sweeps-") as folder:
        repo = project(Path(folder), args.sleep)
        for _ in range(args.repeat):
            basic = sample(repo, args.jobs, [])
            parallel = sample(repo, args.jobs, joblib)
            basic_times.append(basic)
            joblib_times.append(parallel)
            ratios.append(parallel / basic)
    result = {"jobs": args.jobs, "sleep": args.sleep, "basic_s": round(statistics.median(basic_times), 2),
              "joblib_s": round(statistics.median(joblib_times), 2), "ratio": round(statistics.median(ratios), 2),
              "samples": [round(ratio, 2) for ratio in ratios], "joblib_args": joblib}
    print(f"sweep of {args.jobs} jobs sleeping {args.sleep:g} s, median of {args.repeat}: basic "
          f"{result['basic_s']} s, joblib {result['joblib_s']} s: {result['ratio']}x (pairs {result['samples']})")
    print(json.dumps(result))
    print(f"(python {sys.version.split()[0]}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
