"""Run time of the quantile family across data at fixed public parameters (issue: time follows the data).

Run by hand::

    PYTHONPATH=src python benchmarks/bench_quantile_cost.py [--n 20000] [--reps 5]

Columns of n records in bounds (0, 1): all distinct, all tied, two atoms, 90 % ties + distinct,
integers 0..9 (integer outputs, bounds (0, 10): another public setting, left out of the ratio).
Prints the median wall time per call (ms) of
``private_quantile`` (exact and float samplers), ``private_median`` and ``private_quantiles``
(deciles, joint and recursive), and per row the ratio slowest / fastest column.  The work is
2 n + 1 pieces whatever the data (``tests/test_quantiles_cost.py`` counts it); what remains is
``np.unique``'s sort, faster on sorted or tied input.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dpselect.apps import quantiles as Q


def columns(n: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {
        "distinct": rng.random(n),
        "ties": np.full(n, 0.5),
        "two atoms": np.r_[np.zeros(n // 2), np.ones(n - n // 2)],
        "90% ties": np.r_[np.full(n - n // 10, 0.25), rng.random(n // 10)],
        "integers 0..9": rng.integers(0, 10, n),
    }


def calls() -> dict[str, object]:
    d = np.arange(1, 10) / 10

    def b(x: np.ndarray) -> tuple[int, int]:
        return (0, 10) if x.dtype.kind == "i" else (0, 1)

    return {
        "private_quantile exact": lambda x, r: Q.private_quantile(x, 0.9, 1.0, bounds=b(x), rng=r),
        "private_quantile float": lambda x, r: Q.private_quantile(x, 0.9, 1.0, bounds=b(x), rng=r, sampler="float"),
        "private_median": lambda x, r: Q.private_median(x, 1.0, bounds=b(x), rng=r),
        "private_quantiles joint": lambda x, r: Q.private_quantiles(x, d, 1.0, bounds=b(x), rng=r, method="joint"),
        "private_quantiles recursive": lambda x, r: Q.private_quantiles(
            x, d, 1.0, bounds=b(x), rng=r, method="recursive"
        ),
    }


def main(n: int, reps: int) -> None:
    cols = columns(n)
    print(f"n = {n}, median of {reps} calls (ms)")
    print("| call | " + " | ".join(cols) + " | slowest / fastest (real columns) |")
    print("|---" * (len(cols) + 2) + "|")
    for name, f in calls().items():
        row = []
        for x in cols.values():
            f(x, 0)  # warm
            ts = []
            for r in range(reps):
                t = time.perf_counter()
                f(x, r)
                ts.append(time.perf_counter() - t)
            row.append(1e3 * float(np.median(ts)))
        print(f"| {name} | " + " | ".join(f"{v:.1f}" for v in row) + f" | {max(row[:4]) / min(row[:4]):.2f} |")


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=20_000)
    p.add_argument("--reps", type=int, default=5)
    a = p.parse_args()
    main(a.n, a.reps)
