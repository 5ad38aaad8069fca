"""Timing shared by the benchmarks: a subject against a baseline measured in the same run."""

from __future__ import annotations

import random
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple


def spawn(*argv: str, cwd: Path, ok: tuple[int, ...] = (0,)) -> Callable[[], None]:
    """A sample: run ``argv`` in ``cwd`` quietly; stop the benchmark if it exits outside ``ok``."""
    def run() -> None:
        completed = subprocess.run(list(argv), cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if completed.returncode not in ok:
            raise SystemExit(f"{argv} failed: {completed.stderr.decode()[-500:]}")
    return run


class Comparison(NamedTuple):
    """Times in ms of a subject and its baseline, sampled in alternation."""

    ours: float  # median
    theirs: float  # median
    ratio: float  # median of the per-pair ratios
    best_ours: float  # fastest sample
    best_theirs: float  # fastest sample
    best_ratio: float  # fastest against fastest
    ratio_low: float  # 95% confidence interval of ``ratio`` (bootstrap)
    ratio_high: float

    def verdict(self, target: float) -> str:
        """``met`` when the whole interval is within ``target``, ``MISS`` when all of it is
        above, and ``edge`` when the target lies inside it: this run cannot tell."""
        if self.ratio_high <= target:
            return "met"
        return "MISS" if self.ratio_low > target else "edge"


def median_interval(values: list[float], *, rounds: int = 2000, seed: int = 0) -> tuple[float, float]:
    """A 95% confidence interval for the median of ``values``: the 2.5th and 97.5th
    percentiles of the medians of ``rounds`` resamples (bootstrap, seeded so a run's
    figures can be reproduced from its samples)."""
    draw = random.Random(seed)
    medians = sorted(statistics.median(draw.choices(values, k=len(values))) for _ in range(rounds))
    return medians[int(rounds * 0.025)], medians[int(rounds * 0.975) - 1]


def compare(subject: Callable[[], object], baseline: Callable[[], object], repeat: int,
            warmup: int = 2) -> Comparison:
    """Subject and baseline, alternating sample by sample, so a slow moment of a shared
    machine hits both.

    Two ratios come out. ``ratio``, the median of per-pair ratios, cancels a slowdown
    that lasts longer than one pair (a busy neighbour on a shared virtual machine, where
    one command's starts vary by up to 2x). ``best_ratio``, fastest against fastest, is
    the cost of the code alone when both sides met a quiet moment at least once; when
    the two ratios disagree, the run was noisy and more samples are needed. The interval
    around ``ratio`` says how far that median can be trusted: with few samples, or many
    noisy ones, it is wide, and a target inside it is neither met nor missed.
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
    low, high = median_interval(ratios)
    return Comparison(statistics.median(ours) * 1000, statistics.median(theirs) * 1000, statistics.median(ratios),
                      min(ours) * 1000, min(theirs) * 1000, min(ours) / min(theirs), low, high)


def paired(subject: Callable[[], object], baseline: Callable[[], object], repeat: int,
           warmup: int = 2) -> tuple[float, float, float]:
    """Median times (ms) of subject and baseline, and the median of their per-pair ratios
    (see :func:`compare`)."""
    compared = compare(subject, baseline, repeat, warmup)
    return compared.ours, compared.theirs, compared.ratio


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
