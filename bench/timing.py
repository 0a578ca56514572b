"""Shared by the bench scripts: the median of several timed runs."""

from __future__ import annotations

import statistics
import time


def median_seconds(fn, runs: int) -> float:
    """Median wall time of ``runs`` calls: robust to the odd slow run of a shared machine."""
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)
