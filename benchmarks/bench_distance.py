"""Rank-utility percentile over a 10^6-point grid, side by side with EM on raw scores (issue #11 item 5).

Run by hand::

    PYTHONPATH=src python benchmarks/bench_distance.py

Target: the rank-utility percentile (problem + one draw) over a 10^6-point
grid in <= 1 s.  Printed: median wall times (7 runs after a warm-up) of

* EM on 10^6 raw scores (one draw): the reference cost of any selection;
* building the rank-utility problem from 10^5 raw records / from a
  10^6-bin histogram (snap, counts, cumsum: O(n + m));
* ``private_percentile`` end to end (default PF on the rank utility) and
  with EM, from 10^5 raw records;
* the exact output law of EM (closed form) and of PF (the engine) on the
  10^6-candidate rank problem, which ``analysis.accuracy`` uses.
"""

from __future__ import annotations

import time

import numpy as np

from _timing import median_time
from dpselect import ExponentialMechanism, PermuteAndFlip
from dpselect.apps.quantiles._percentile import percentile as pct
from dpselect.problem import SelectionProblem

M = 1_000_000
N = 100_000


def main() -> None:
    rng = np.random.default_rng(0)
    grid = np.linspace(-5.0, 5.0, M)
    x = rng.normal(size=N)
    hist = rng.poisson(0.5, size=M)
    raw = SelectionProblem(rng.normal(size=M))
    rank = pct.percentile_problem(x, 90, grid, utility="rank")
    em, pf = ExponentialMechanism(1.0), PermuteAndFlip(1.0)

    rows = [
        ("EM on 10^6 raw scores, one draw", lambda: em.select(raw, rng=1)),
        ("PF on 10^6 raw scores, one draw", lambda: pf.select(raw, rng=1)),
        (
            "rank problem from 10^5 records, 10^6-point grid",
            lambda: pct.percentile_problem(x, 90, grid, utility="rank"),
        ),
        (
            "rank problem from a 10^6-bin histogram",
            lambda: pct.percentile_problem(hist, 90, grid, histogram=True, utility="rank"),
        ),
        ("PF on the 10^6 rank problem, one draw", lambda: pf.select(rank, rng=1)),
        (
            "private_percentile (default PF-rank), 10^5 records, 10^6 grid",
            lambda: pct.private_percentile(x, 90, 1.0, grid, rng=1),
        ),
        (
            "private_percentile (EM-rank), 10^5 records, 10^6 grid",
            lambda: pct.private_percentile(x, 90, 1.0, grid, mechanism="em", rng=1),
        ),
        ("exact law of EM on the 10^6 rank problem", lambda: em.probabilities(rank)),
    ]
    print(f"{'operation':66s} {'median s':>9s}")
    for label, fn in rows:
        print(f"{label:66s} {median_time(fn):9.4f}", flush=True)
    t0 = time.perf_counter()
    p = pf.probabilities(rank)
    print(
        f"{'exact law of PF on the 10^6 rank problem (one run)':66s} {time.perf_counter() - t0:9.4f}"
        f"   (sum {p.sum():.12f})"
    )


if __name__ == "__main__":
    main()
