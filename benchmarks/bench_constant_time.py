"""Benchmark: does a release's running time follow the private data at fixed public parameters?

Run by hand:  PYTHONPATH=src python benchmarks/bench_constant_time.py [--n 20000] [--repeat 3] [--only NAME]
For every release function, the public parameters are fixed (n, bounds, epsilon, the
grid, the number of candidates) and the data vary over adversarial datasets of the same
size: all distinct, all tied, all at a bound, most tied plus a spread, two far clusters,
and (for counts) tiny, huge, tied and far-apart counts.  Printed per function: the best
wall time on each dataset (``repeat`` rounds after a warm-up, the datasets interleaved
in every round, so that load from other processes hits all of them alike; the minimum is
the time the code needs) and the factor max/min.
A factor near 1 means the time tells nothing about which dataset was used; the
publishing page's "What is and is not constant-time" table quotes these factors.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable

import numpy as np

from dpselect.apps import counts as c
from dpselect.apps import quantiles as q

BOUNDS = (0.0, 1.0)
EPS = 1.0
GRID = np.linspace(0.0, 1.0, 1025)  # a public grid of candidates for the grid percentile mechanisms


def real_datasets(n: int) -> dict[str, np.ndarray]:
    """Adversarial datasets of n values in [0, 1] (the same public n and bounds)."""
    rng = np.random.default_rng(0)
    k = (3 * n) // 5
    return {
        "distinct": rng.uniform(0, 1, n),
        "ties": np.full(n, 0.5),
        "at_bound": np.zeros(n),
        "ties+spread": np.r_[np.zeros(k), rng.uniform(0, 1, n - k)],
        "two_clusters": np.r_[np.full(n // 2, 1e-9), np.full(n - n // 2, 1 - 1e-9)],
        "linspace": np.linspace(0, 1, n),
    }


def count_datasets(m: int) -> dict[str, np.ndarray]:
    """Adversarial count vectors of m classes (the same public m)."""
    rng = np.random.default_rng(1)
    top = np.zeros(m, dtype=np.int64)
    top[0] = 10**12
    return {
        "zeros": np.zeros(m, dtype=np.int64),
        "small": rng.integers(0, 5, m),
        "one_huge": top,
        "tied_top": np.full(m, 10**6, dtype=np.int64),
        "spread": (rng.uniform(0, 1, m) * 10**9).astype(np.int64),
    }


def real_cases() -> dict[str, Callable[[np.ndarray], object]]:
    return {
        "private_quantile (q=0.9)": lambda x: q.private_quantile(x, 0.9, EPS, bounds=BOUNDS, rng=0),
        "private_median": lambda x: q.private_median(x, EPS, bounds=BOUNDS, rng=0),
        "private_quantile bounds=None": lambda x: q.private_quantile(x, 0.5, EPS, rng=0),
        "private_quantiles (3, joint)": lambda x: q.private_quantiles(x, [0.25, 0.5, 0.75], EPS, bounds=BOUNDS, rng=0),
        "duff_median": lambda x: q.duff_median(x, EPS, bounds=BOUNDS, rng=0),
        "duff_mean": lambda x: q.duff_mean(x, EPS, bounds=BOUNDS, rng=0),
        "smooth_sens_pure": lambda x: q.smooth_sens_pure(x, EPS, bounds=BOUNDS, rng=0),
        "laplace_ln": lambda x: q.laplace_ln(x, EPS, bounds=BOUNDS, rng=0),
        "smooth_sens_approx": lambda x: q.smooth_sens_approx(x, EPS, delta=1e-6, bounds=BOUNDS, rng=0),
        "private_percentile pf rank (no grid)": lambda x: q.private_percentile(x, 50, EPS, bounds=BOUNDS, rng=0),
        "private_percentile pf rank, grid": lambda x: q.private_percentile(x, 50, EPS, GRID, rng=0),
        "private_percentile snm_t indicator, grid": lambda x: q.private_percentile(
            x, 50, EPS, GRID, mechanism="snm_t", utility="indicator", rng=0
        ),
        "private_percentile ld indicator, grid": lambda x: q.private_percentile(
            x, 50, EPS, GRID, mechanism="ld", utility="indicator", rng=0
        ),
        "duff_mode": lambda x: c.duff_mode(np.round(x * 50), EPS, candidates=np.arange(51.0), rng=0),
        "unbounded_quantile (q=0.5)": lambda x: q.unbounded_quantile(x, 0.5, EPS, rng=0),
        "private_bounds": lambda x: q.private_bounds(x, EPS, rng=0),
    }


def tree_cases() -> dict[str, Callable[[np.ndarray], object]]:
    """Tree fits on a public shape: 2,000 records, 4 features in (0, 1), labels from the dataset's first column."""
    from dpselect.apps.trees import DPDecisionTreeClassifier, DPRandomForestClassifier

    def data(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        X = np.resize(x, (2000, 4))
        return X, (X[:, 0] > 0.5).astype(int)

    kw = {"epsilon": EPS, "bounds": (0.0, 1.0), "classes": [0, 1], "n_records": 2000, "random_state": 0}
    return {
        "DPDecisionTreeClassifier pf": lambda x: DPDecisionTreeClassifier(**kw).fit(*data(x)),
        "DPDecisionTreeClassifier snm_t": lambda x: DPDecisionTreeClassifier(mechanism="snm_t", **kw).fit(*data(x)),
        "DPRandomForestClassifier": lambda x: DPRandomForestClassifier(**kw).fit(*data(x)),
    }


def snp_datasets(n_snps: int, n_families: int) -> dict[str, np.ndarray]:
    """Transmission counts (b, c) stacked as rows, b + c <= 2 n_families (public n_snps, n_families)."""
    rng = np.random.default_rng(2)
    half = np.full(n_snps, n_families // 2)
    return {
        "zeros": np.zeros((2, n_snps), dtype=np.int64),
        "balanced": np.stack([half, half]),
        "one_strong": np.stack([np.r_[2 * n_families, half[1:]], np.r_[0, half[1:]]]),
        "random": rng.integers(0, n_families + 1, (2, n_snps)),
    }


def snp_cases(n_families: int) -> dict[str, Callable[[np.ndarray], object]]:
    from dpselect.apps.genomics import select_top_snps

    return {
        f"select_top_snps {m} k=5": (
            lambda bc, m=m: select_top_snps(bc[0], bc[1], n_families, EPS, 5, mechanism=m, rng=0)
        )
        for m in ("pf", "em")
    }


def count_cases() -> dict[str, Callable[[np.ndarray], object]]:
    return {
        "private_argmax pf": lambda n: c.private_argmax(n, EPS, rng=0),
        "private_argmax snm_t indicator": lambda n: c.private_argmax(
            n, EPS, mechanism="snm_t", utility="indicator", rng=0
        ),
        "private_argmax ld indicator": lambda n: c.private_argmax(n, EPS, mechanism="ld", utility="indicator", rng=0),
        "private_argmax sps indicator": lambda n: c.private_argmax(n, EPS, mechanism="sps", utility="indicator", rng=0),
        "ptr_mode": lambda n: c.ptr_mode(n, EPS, delta=1e-6, rng=0),
        "stable_histogram": lambda n: c.stable_histogram(n, EPS, delta=1e-6, rng=0),
    }


def _best_times(fn: Callable[[np.ndarray], object], data: dict[str, np.ndarray], repeat: int) -> dict[str, float]:
    """Best wall time per dataset over ``repeat`` interleaved rounds (one warm-up call each first)."""
    for v in data.values():
        fn(v)
    best = dict.fromkeys(data, float("inf"))
    for _ in range(repeat):
        for d, v in data.items():
            t0 = time.perf_counter()
            fn(v)
            best[d] = min(best[d], time.perf_counter() - t0)
    return best


def factor_table(
    cases: dict[str, Callable[[np.ndarray], object]], data: dict[str, np.ndarray], repeat: int, only: str | None
) -> list[tuple[str, float, dict[str, float]]]:
    rows = []
    for name, fn in cases.items():
        if only and only not in name:
            continue
        times = _best_times(fn, data, repeat)
        rows.append((name, max(times.values()) / min(times.values()), times))
        slow, fast = max(times, key=times.__getitem__), min(times, key=times.__getitem__)
        print(
            f"{name:<40}{rows[-1][1]:>8.1f}x   max {times[slow] * 1e3:9.2f} ms ({slow}),"
            f" min {times[fast] * 1e3:8.2f} ms ({fast})",
            flush=True,
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20_000, help="records per dataset (public)")
    ap.add_argument("--m", type=int, default=100, help="classes per count vector (public)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", default=None, help="run the functions whose name contains this text")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    print(f"n = {args.n} records in bounds {BOUNDS}, epsilon = {EPS}; factor = max/min best time over the datasets")
    factor_table(real_cases(), real_datasets(args.n), args.repeat, args.only)
    print(f"\nm = {args.m} classes, epsilon = {EPS}")
    factor_table(count_cases(), count_datasets(args.m), args.repeat, args.only)
    print("\ntrees: 2,000 records x 4 features in (0, 1), n_records public")
    factor_table(tree_cases(), real_datasets(8000), args.repeat, args.only)
    print("\nTDT: 2,000 SNPs, 500 families (public)")
    factor_table(snp_cases(500), snp_datasets(2000, 500), args.repeat, args.only)


if __name__ == "__main__":
    main()
