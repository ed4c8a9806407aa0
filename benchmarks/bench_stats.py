"""Benchmark: Duff median and the NRS smooth sensitivity of the median.

Plain script (no pytest): prints a table.  Usage::

    PYTHONPATH=src python benchmarks/bench_stats.py [--n 10000000] [--repeat 5]

* ``duff_median`` on n uniform floats in [0, 1] versus ``np.sort`` of the same
  array (the mechanism's unavoidable cost), for several epsilons; timings are
  the best of ``--repeat`` runs, interleaved with np.sort runs (load drifts).
  The external libraries run once (they take tens of seconds at n = 10**7).
* Optional comparisons, only if the packages are importable (nothing is
  installed by this script): ``diffprivlib.tools.median`` and OpenDP's
  ``make_private_quantile`` (alpha = 0.5, a public grid of 1001 candidates,
  scale calibrated to epsilon = 1 under the symmetric distance).
* ``smooth_sensitivity_median`` for n = 10**6 (beta = 0.01 and 0.1).
* ``duff_mode`` (the library's exponential mechanism on the Duff mode
  problem) on n integers over 1000 public candidates, versus
  ``np.unique(return_counts=True)``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dpselect.apps.counts import duff_mode
from dpselect.apps.quantiles import duff_median, smooth_sensitivity_median


def best_of(fn, repeat):
    best = float("inf")
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def row(name, seconds, ref=None, note=""):
    ratio = f"{seconds / ref:6.2f}x" if ref else "       "
    print(f"{name:<46} {seconds * 1e3:10.1f} ms  {ratio}  {note}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10**7)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    x = rng.uniform(0.0, 1.0, size=args.n)
    print(f"n = {args.n:,} uniform floats on [0, 1], best of {args.repeat}\n")
    print(f"{'operation':<46} {'time':>13}  {'/sort':>7}  note")
    print("-" * 90)

    def paired(fn):
        """Interleave fn and np.sort (machine load drifts); best of each."""
        ts, tf, out = float("inf"), float("inf"), None
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            np.sort(x)
            ts = min(ts, time.perf_counter() - t0)
            t0 = time.perf_counter()
            out = fn()
            tf = min(tf, time.perf_counter() - t0)
        return ts, tf, out

    t_sort, _ = best_of(lambda: np.sort(x), args.repeat)
    row("np.sort", t_sort, t_sort)
    for eps in (10.0, 1.0, 0.1, 0.01, 1e-3, 1e-4, 1e-6):
        ts, t, v = paired(lambda: duff_median(x, eps, bounds=(0.0, 1.0), rng=1))
        row(f"dpselect duff_median eps={eps:g}", t, ts, f"-> {v:.6f}  (sort {ts * 1e3:.0f} ms)")
    ts, t, v = paired(lambda: duff_median(x, 1.0, bounds=(0.0, 1.0), rng=1, size=10**5))
    row("dpselect duff_median eps=1, size=1e5 draws", t, ts, f"(sort {ts * 1e3:.0f} ms)")

    try:
        import diffprivlib.tools as dpl

        t, v = best_of(lambda: dpl.median(x, epsilon=1.0, bounds=(0.0, 1.0), random_state=1), 1)
        row("diffprivlib.tools.median eps=1", t, t_sort, f"-> {v:.6f}")
    except Exception as exc:
        print(f"{'diffprivlib.tools.median':<46} skipped ({type(exc).__name__}: {exc})")

    try:
        import opendp.prelude as dp

        dp.enable_features("contrib")
        candidates = list(np.linspace(0.0, 1.0, 1001))

        def make(scale):
            return dp.m.make_private_quantile(
                dp.vector_domain(dp.atom_domain(T=float, nan=False)),
                dp.symmetric_distance(),
                dp.max_divergence(),
                candidates=candidates,
                alpha=0.5,
                scale=scale,
            )

        scale = dp.binary_search_param(make, d_in=1, d_out=1.0)
        meas = make(scale)
        data = x.tolist()
        t_conv, _ = best_of(lambda: x.tolist(), 1)
        t, v = best_of(lambda: meas(data), 1)
        row("opendp make_private_quantile eps=1", t, t_sort, f"-> {v:.6f} (+{t_conv * 1e3:.0f} ms tolist)")
    except Exception as exc:
        print(f"{'opendp make_private_quantile':<46} skipped ({type(exc).__name__}: {exc})")

    print()
    y = rng.uniform(0.0, 1.0, size=10**6)
    t_sort6, _ = best_of(lambda: np.sort(y), args.repeat)
    row("np.sort n=1e6", t_sort6, t_sort6)
    for beta in (0.01, 0.1):
        t, s = best_of(lambda: smooth_sensitivity_median(y, beta, bounds=(0.0, 1.0)), 3)
        row(f"smooth_sensitivity_median n=1e6 beta={beta:g}", t, t_sort6, f"-> {s:.3e}")

    print()
    z = rng.integers(0, 1000, size=args.n)
    cands = np.arange(1000)
    t_unique, _ = best_of(lambda: np.unique(z, return_counts=True), args.repeat)
    row(f"np.unique(return_counts) n={args.n:.0e}", t_unique, t_unique)
    t, v = best_of(lambda: duff_mode(z, 1.0, candidates=cands, rng=1), args.repeat)
    row("dpselect duff_mode eps=1, 1000 candidates", t, t_unique, f"-> {v}  (library EM + engine)")


if __name__ == "__main__":
    main()
