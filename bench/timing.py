"""Timing shared by the benchmarks: a subject against a baseline measured in the same run."""

from __future__ import annotations

import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path


def spawn(*argv: str, cwd: Path, ok: tuple[int, ...] = (0,)) -> Callable[[], None]:
    """A sample: run ``argv`` in ``cwd`` quietly; stop the benchmark if it exits outside ``ok``."""
    def run() -> None:
        completed = subprocess.run(list(argv), cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if completed.returncode not in ok:
            raise SystemExit(f"{argv} failed: {completed.stderr.decode()[-500:]}")
    return run


def paired(subject: Callable[[], object], baseline: Callable[[], object], repeat: int,
           warmup: int = 2) -> tuple[float, float, float]:
    """Median times (ms) of subject and baseline, and the median of their per-pair ratios.

    The two alternate sample by sample, so a slow moment of a shared machine hits both
    and cancels out of the ratio.
    """
    for _ in range(warmup):
        baseline()
        subject()
    ours, theirs, ratios = [], [], []
    for _ in range(repeat):
        started = time.perf_counter()
        baseline()
        middle = time.perf_counter()
        subject()
        ended = time.perf_counter()
        theirs.append(middle - started)
        ours.append(ended - middle)
        ratios.append((ended - middle) / (middle - started))
    return statistics.median(ours) * 1000, statistics.median(theirs) * 1000, statistics.median(ratios)


def median_ms(action: Callable[[], object], repeat: int, warmup: int = 2) -> float:
    """The median time (ms) of ``action`` over ``repeat`` runs."""
    for _ in range(warmup):
        action()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000
