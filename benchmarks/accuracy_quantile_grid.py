"""What the output grid costs the quantile releases: exact expected errors on the grid vs the continuous law.

Run by hand::

    DPSELECT_DATA=/work/shared/data PYTHONPATH=src python benchmarks/accuracy_quantile_grid.py [--seeds 10]

Real-valued columns (bounds public, as in ``accuracy_quantiles.py``): gamma fLength [0, 400] and
fAlpha [0, 90], adult hours-per-week [0, 100] released as *real* outputs (``integer=False``: the
grid path; as integers the release is unchanged), and N(0, 1) on [-5, 5] (synthetic, always run).
For each (column, n in {1e3, 1e4}, seed) a subsample of n records without replacement; for
p in {10, 50, 90} and eps in {0.1, 1, 10}:

* single quantile: the exact E|output - x_(k)| of ``private_quantile`` at the default grid
  lambda = 2^(floor(log2(b - a)) - 20) and of the continuous law (``granularity=0``), closed forms;
  printed: the mean errors over the seeds and their relative difference, the largest difference of
  one subsample in units of lambda, and the largest relative and absolute differences overall;
* nine deciles (``private_quantiles``, JointExp and recursive): mean absolute error of draws on the
  grid and with floats from the same seeds (sampled: the difference is within noise);
* CPU time (``time.process_time``, best of 3) of one draw, grid vs float, side by side;
* ``--cpu``: only the sampler table -- CPU per draw of the single-quantile grid release with the
  exact sampler (``sampler="exact"``, the default) and the float piece sampler (``sampler="float"``),
  n in {1e3, 1e4}, q in {0.5 (integer scores), 0.9 (rational scores)}, eps in {0.1, 1, 10}: one
  draw per call (data reduction included) and per draw of a ``size=10^4`` batch.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from dpselect.apps import quantiles as Q

PS = (10, 50, 90)
EPSILONS = (0.1, 1.0, 10.0)
SIZES = (1000, 10_000)
DECILES = np.arange(1, 10) / 10


def columns() -> dict[str, tuple[np.ndarray, tuple[float, float]]]:
    cols: dict[str, tuple[np.ndarray, tuple[float, float]]] = {
        "normal(0,1)": (np.random.default_rng(0).normal(size=50_000).clip(-5, 5), (-5.0, 5.0))
    }
    data = os.environ.get("DPSELECT_DATA")
    if data:
        import pandas as pd

        d = Path(data)
        gamma = pd.read_csv(d / "gamma" / "gamma.csv")
        cols["gamma/fLength"] = (gamma["fLength"].to_numpy(np.float64), (0.0, 400.0))
        cols["gamma/fAlpha"] = (gamma["fAlpha"].to_numpy(np.float64), (0.0, 90.0))
        adult = pd.read_parquet(d / "adult" / "adult.parquet")
        cols["adult/hours (real)"] = (adult["hours-per-week"].to_numpy(np.float64), (0.0, 100.0))
    else:
        print("DPSELECT_DATA not set: synthetic column only")
    return cols


def cpu(f, reps: int = 3) -> float:
    best = np.inf
    for _ in range(reps):
        t = time.process_time()
        f()
        best = min(best, time.process_time() - t)
    return best


def sampler_table(calls: int = 20) -> None:
    """CPU per draw, exact vs float piece sampler on the default grid, N(0, 1) on [-5, 5]."""
    col, bounds = columns()["normal(0,1)"]
    print("CPU per draw (best of 3), private_quantile on the default grid, normal(0,1), bounds [-5, 5]:")
    print(
        f"  {'n':>6} {'q':>4} {'eps':>5}  {'exact 1 draw':>12} {'float 1 draw':>12} {'ratio':>6}"
        f"  {'exact/draw, size=1e4':>21} {'float/draw':>11} {'ratio':>6}"
    )
    for n in SIZES:
        x = col[:n]
        for q in (0.5, 0.9):
            for eps in EPSILONS:
                t = {}
                for smp in ("exact", "float"):
                    one = (
                        cpu(
                            lambda: [
                                Q.private_quantile(x, q, eps, bounds=bounds, rng=r, sampler=smp) for r in range(calls)
                            ]
                        )
                        / calls
                    )
                    batch = (
                        cpu(lambda: Q.private_quantile(x, q, eps, bounds=bounds, rng=1, size=10_000, sampler=smp))
                        / 10_000
                    )
                    t[smp] = (one, batch)
                (e1, eb), (f1, fb) = t["exact"], t["float"]
                print(
                    f"  {n:>6} {q:>4} {eps:>5}  {e1 * 1e3:>9.3f} ms {f1 * 1e3:>9.3f} ms {e1 / f1:>6.2f}"
                    f"  {eb * 1e6:>18.2f} us {fb * 1e6:>8.2f} us {eb / fb:>6.2f}"
                )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--multi-draws", type=int, default=40)
    ap.add_argument("--cpu", action="store_true", help="only the exact vs float sampler CPU table")
    args = ap.parse_args()
    if args.cpu:
        sampler_table()
        return
    worst_rel = worst_abs = worst_mean_rel = 0.0
    print(
        f"{'column':<20} {'n':>6} {'eps':>5} {'p':>3} {'E|err| grid':>12} {'continuous':>12} {'rel. diff':>10}"
        f" {'max |diff|/lambda':>18}"
    )
    for name, (col, bounds) in columns().items():
        lam = 2.0 ** (np.floor(np.log2(bounds[1] - bounds[0])) - 20)
        for n in SIZES:
            subs = [np.random.default_rng([n, s]).choice(col, size=n, replace=False) for s in range(args.seeds)]
            for eps in EPSILONS:
                for p in PS:
                    g = np.array(
                        [Q.quantile_expected_error(x, p / 100, eps, bounds=bounds, integer=False) for x in subs]
                    )
                    c = np.array(
                        [
                            Q.quantile_expected_error(x, p / 100, eps, bounds=bounds, integer=False, granularity=0)
                            for x in subs
                        ]
                    )
                    rel = float(np.max(np.abs(g - c) / c))
                    mean_rel = abs(g.mean() - c.mean()) / c.mean()
                    worst_rel, worst_abs = max(worst_rel, rel), max(worst_abs, float(np.max(np.abs(g - c))))
                    worst_mean_rel = max(worst_mean_rel, mean_rel)
                    print(
                        f"{name:<20} {n:>6} {eps:>5} {p:>3} {g.mean():>12.4g} {c.mean():>12.4g} {mean_rel:>10.2e}"
                        f" {np.max(np.abs(g - c)) / lam:>18.2f}"
                    )
    print(
        f"\nsingle quantiles, every cell: mean errors differ by at most {worst_mean_rel:.2e} (relative); "
        f"one subsample by at most {worst_rel:.2e} (relative), {worst_abs:.2e} (absolute)"
    )

    print("\nnine deciles, MAE (sampled, same seeds), normal(0,1) n = 1e4, bounds [-5, 5]:")
    col, bounds = columns()["normal(0,1)"]
    x = col[:10_000]
    truth = np.quantile(x, DECILES, method="inverted_cdf")
    for method in ("joint", "recursive"):
        for eps in EPSILONS:
            err = {}
            for gran in (None, 0):
                e = [
                    np.abs(
                        Q.private_quantiles(x, DECILES, eps, bounds=bounds, method=method, granularity=gran, rng=s)
                        - truth
                    ).mean()
                    for s in range(args.multi_draws)
                ]
                err[gran] = (np.mean(e), np.std(e) / np.sqrt(len(e)))
            print(
                f"  {method:<9} eps={eps:<5} grid {err[None][0]:.4g} ± {err[None][1]:.2g}   "
                f"float {err[0][0]:.4g} ± {err[0][1]:.2g}"
            )

    print()
    sampler_table()
    print("\nCPU per draw (best of 3), normal(0,1) n = 1e4 (grid: the default exact sampler):")
    for label, f in (
        ("private_quantile q=0.9", lambda g: Q.private_quantile(x, 0.9, 1.0, bounds=bounds, granularity=g, rng=1)),
        (
            "private_quantile q=0.9 size=10^5",
            lambda g: Q.private_quantile(x, 0.9, 1.0, bounds=bounds, granularity=g, rng=1, size=100_000),
        ),
        (
            "private_quantiles joint",
            lambda g: Q.private_quantiles(x, DECILES, 1.0, bounds=bounds, method="joint", granularity=g, rng=1),
        ),
        (
            "private_quantiles recursive",
            lambda g: Q.private_quantiles(x, DECILES, 1.0, bounds=bounds, method="recursive", granularity=g, rng=1),
        ),
    ):
        tg, tf = cpu(lambda: f(None)), cpu(lambda: f(0))
        print(f"  {label:<34} grid {tg * 1e3:8.2f} ms   float {tf * 1e3:8.2f} ms   ratio {tg / tf:.2f}")


if __name__ == "__main__":
    main()
