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


def best_of(
    runs: list[tuple[str, Callable[[], tuple[dict[str, float], np.ndarray]]]], repeat: int = 3
) -> tuple[dict[str, dict[str, float]], dict[str, np.ndarray]]:
    """Run each ``(name, run)`` ``repeat`` times, alternating; per name the best CPU and the best wall (each
    ``run()`` returns its timings ``{"cpu": s, "wall": s}`` and its counts) and the last counts."""
    best: dict[str, dict[str, float]] = {}
    counts: dict[str, np.ndarray] = {}
    for _ in range(repeat):
        for name, run in runs:
            t, counts[name] = run()
            b = best.setdefault(name, {"cpu": np.inf, "wall": np.inf})
            b["cpu"], b["wall"] = min(b["cpu"], t["cpu"]), min(b["wall"], t["wall"])
    return best, counts
