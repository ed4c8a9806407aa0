"""Integer outputs: the old exact-at-x_(k) score against the grid-1 score, exact expected errors (mathematics §12.1).

Run by hand::

    DPSELECT_DATA=/work/shared/data PYTHONPATH=src python benchmarks/accuracy_quantile_integer.py

Every integer column of ``_quantile_columns`` (statsmodels, vega_datasets, scikit-learn, the
project's own) plus a lognormal price column (the issue's diamonds-like case), n in {100, 1000},
epsilon in {1, 10}, q in {.1, .5, .9, .99}, tight bounds, 3 subsamples.  Exact E|output - x_(k)|
of: the integer score max(0, L + 1 - k, k - C) blended as max(psi_grid, psi_int - c) for
c in {0 (old), .25, .5, .75, 1 (the grid score, the default)}; the real-output mechanism on the
same data cast to float64; IndExp (Smith 2011) and the exponential mechanism with OpenDP's score
|(1 - q) L - q G| / w on OpenDP's integer candidates.  Printed per c: the worst ratio to the
float64 mechanism, the share of cells beyond 1.01x of it, and the share within 1.25x of the better
of the two peers.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

import _quantile_columns as C
from accuracy_quantiles import smith_expected_error
from dpselect.apps.quantiles._exponential import mechanism as QQ
from dpselect.apps.quantiles._exponential import quantile_pieces as QL

CS = (0.0, 0.25, 0.5, 0.75, 1.0)


def _error(x: np.ndarray, q: float, eps: float, b: tuple, integer: bool, c: float) -> float:
    s = QL.check_sample(x, b, integer)
    pc = QL.pieces(s, QQ.output_grid(None, s), atoms=True)
    psi = QL.rank_distance(pc.L, pc.C, s.n, q, "add_remove", "grid")
    if integer:
        psi = np.maximum(psi, QL.rank_distance(pc.L, pc.C, s.n, q, "add_remove", "integer") - c)
    p = QL.normalise(pc.logsize - 0.5 * eps * psi)
    keep = p > 0
    return float(np.dot(p[keep], QL.abs_dev(pc, s.order_statistic(QL.target_rank(q, s.n)))[keep]))


def opendp_score_error(x: np.ndarray, q: float, eps: float, b: tuple) -> float:
    """Exact error of the exponential mechanism with OpenDP's score on its integer candidates."""
    c = np.unique(np.round(np.linspace(b[0], b[1], 10001)))
    xs = np.sort(x)
    L = np.searchsorted(xs, c, "left")
    G = xs.size - np.searchsorted(xs, c, "right")
    lw = -0.5 * eps * np.abs((1 - q) * L - q * G) / max(q, 1 - q)
    p = np.exp(lw - lw.max())
    return float(p @ np.abs(c - np.quantile(x, q, method="inverted_cdf")) / p.sum())


def main() -> None:
    cols = {k: v for k, v in C.columns(Path(os.environ.get("DPSELECT_DATA", "/work/shared/data"))).items()}
    cols = {k: v for k, v in cols.items() if v.dtype.kind == "i"}
    rng = np.random.default_rng(1)
    cols["synthetic/prices"] = np.clip(np.round(np.exp(rng.normal(7.8, 1.0, 50_000))), 326, 18823).astype(np.int64)
    rows = []
    for ci, col in enumerate(cols.values()):
        b = (int(col.min()), int(col.max()))
        for n in (100, 1000):
            subs = [C.subsample(col, n, [ci, n, s]) for s in range(3)]
            for eps in (1.0, 10.0):
                for q in (0.1, 0.5, 0.9, 0.99):
                    e = [np.mean([_error(x, q, eps, b, True, c) for x in subs]) for c in CS]
                    e.append(np.mean([_error(x.astype(np.float64), q, eps, b, False, 0.0) for x in subs]))
                    truth = [np.quantile(x, q, method="inverted_cdf") for x in subs]
                    e.append(np.mean([smith_expected_error(x, q, eps, b, t) for x, t in zip(subs, truth)]))
                    e.append(np.mean([opendp_score_error(x, q, eps, b) for x in subs]))
                    rows.append(e)
    r = np.asarray(rows)
    k = len(CS)
    real, best = r[:, k], np.minimum(r[:, k + 1], r[:, k + 2])
    print(f"{len(cols)} integer columns, {r.shape[0]} cells")
    for j, c in enumerate(CS):
        e = r[:, j]
        print(
            f"c = {c}: worst / float64 {np.max((e + 1e-12) / (real + 1e-12)):.3f}, "
            f"beyond 1.01x float64 {np.mean(e > 1.01 * real + 1e-12):.3f}, "
            f"within 1.25x best peer {np.mean(e <= 1.25 * best + 1e-9):.3f}"
        )


if __name__ == "__main__":
    main()
