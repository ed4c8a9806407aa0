"""Timing helper shared by the benchmark scripts (run them as ``python benchmarks/bench_*.py``)."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np


def median_time(fn: Callable[[], object], repeat: int = 7) -> float:
    """Median wall time of ``fn()`` over ``repeat`` runs, after one warm-up run."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))
