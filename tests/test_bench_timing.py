"""The benchmarks' verdicts (bench/timing.py): a target is met only when the whole 95%
interval of the per-pair median is within it, and a run too noisy to tell says so."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

# Loaded by path under its own name: putting bench/ on sys.path would shadow modules such
# as `cli` or `fingerprint` for every other test.
_spec = importlib.util.spec_from_file_location("axpipe_bench_timing",
                                               Path(__file__).resolve().parent.parent / "bench" / "timing.py")
assert _spec is not None and _spec.loader is not None
timing = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = timing
_spec.loader.exec_module(timing)
Comparison, compare, median_interval = timing.Comparison, timing.compare, timing.median_interval


def test_the_interval_holds_the_median_and_is_reproducible() -> None:
    samples = [1.0 + 0.01 * i for i in range(41)]  # median 1.2
    low, high = median_interval(samples)
    assert low < 1.2 < high
    assert (low, high) == median_interval(samples)  # seeded: the same samples, the same interval
    assert median_interval([1.25] * 30) == (1.25, 1.25)


def test_more_samples_of_the_same_spread_narrow_the_interval() -> None:
    spread = [1.0, 1.1, 1.2, 1.3, 1.4]
    few_low, few_high = median_interval(spread * 4)
    many_low, many_high = median_interval(spread * 40)
    assert many_high - many_low < few_high - few_low


@pytest.mark.parametrize(("low", "high", "verdict"), [
    (1.10, 1.25, "met"),
    (1.10, 1.30, "met"),  # the whole interval within the target
    (1.25, 1.34, "edge"),  # the target inside the interval: this run cannot tell
    (1.31, 1.40, "MISS"),
])
def test_a_target_is_met_missed_or_at_the_edge(low: float, high: float, verdict: str) -> None:
    compared = Comparison(ours=1.0, theirs=1.0, ratio=(low + high) / 2, best_ours=1.0, best_theirs=1.0,
                          best_ratio=1.0, ratio_low=low, ratio_high=high)
    assert compared.verdict(1.3) == verdict


def test_compare_alternates_the_two_sides_and_reports_the_slower_one_as_such() -> None:
    calls: list[str] = []
    compared = compare(lambda: calls.append("subject"), lambda: calls.append("baseline"), repeat=5, warmup=1)
    assert calls == ["baseline", "subject"] * 6
    assert compared.ratio_low <= compared.ratio <= compared.ratio_high
