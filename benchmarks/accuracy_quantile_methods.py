"""JointExp against the recursive method at small epsilon, m quantiles (the rule of ``choose_method``).

Run by hand::

    DPSELECT_DATA=/work/shared/data PYTHONPATH=src python benchmarks/accuracy_quantile_methods.py --m 9 --eps 0.1

Every column of ``_quantile_columns``; levels i / (m + 1); n in {100, 1000}; tight bounds (and
``--loose``: 100x the width too); ``--seeds`` subsamples, one draw per method each (Monte Carlo:
JointExp has no closed-form marginal error).  Printed: the geometric mean of MAE(joint) /
MAE(recursive), the share of cells where JointExp is better, and the shares beyond 1.25x either way,
overall and per n.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

import _quantile_columns as C
from dpselect.apps import quantiles as Q


def main(m: int, eps: float, seeds: int, loose: bool) -> None:
    levels = np.arange(1, m + 1) / (m + 1)
    cols = C.columns(Path(os.environ.get("DPSELECT_DATA", "/work/shared/data")))
    rows = []
    for ci, col in enumerate(cols.values()):
        integer = col.dtype.kind == "i"
        a, b = float(col.min()), float(col.max())
        for wide in (False, True) if loose else (False,):
            lo, hi = ((a + b) / 2 - 50 * (b - a), (a + b) / 2 + 50 * (b - a)) if wide else (a, b)
            bounds = (int(np.floor(lo)), int(np.ceil(hi))) if integer else (lo, hi)
            for n in (100, 1000):
                err = {"joint": [], "recursive": []}
                for s in range(seeds):
                    x = C.subsample(col, n, [ci, n, s])
                    t = np.quantile(x, levels, method="inverted_cdf")
                    for meth, e in err.items():
                        gen = np.random.default_rng([ci, n, s, len(meth)])
                        e.append(
                            np.abs(Q.private_quantiles(x, levels, eps, bounds=bounds, method=meth, rng=gen) - t).mean()
                        )
                rows.append((n, np.mean(err["joint"]), np.mean(err["recursive"])))
    r = np.asarray(rows)
    for label, keep in (("all", np.ones(len(r), bool)), ("n = 100", r[:, 0] == 100), ("n = 1000", r[:, 0] == 1000)):
        ratio = (r[keep, 1] + 1e-12) / (r[keep, 2] + 1e-12)
        print(
            f"m = {m}, eps = {eps}, {label}: {keep.sum()} cells, geo mean joint / recursive "
            f"{np.exp(np.mean(np.log(ratio))):.3f}, joint better {np.mean(ratio < 1):.2f}, "
            f"joint > 1.25x {np.mean(ratio > 1.25):.2f}, recursive > 1.25x {np.mean(ratio < 0.8):.2f}"
        )


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--m", type=int, default=9)
    p.add_argument("--eps", type=float, default=0.1)
    p.add_argument("--seeds", type=int, default=6)
    p.add_argument("--loose", action="store_true")
    a = p.parse_args()
    main(a.m, a.eps, a.seeds, a.loose)
