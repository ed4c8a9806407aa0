"""Tied columns: the score family S_theta = psi + theta max(0, O - psi), exact expected errors (mathematics §12.1).

Run by hand::

    DPSELECT_DATA=/work/shared/data PYTHONPATH=src python benchmarks/accuracy_quantile_ties.py

O = |(1 - q) #{x < t} - q #{x > t}| / w is OpenDP's score (ties at t excluded).  Columns of
``_quantile_columns`` with many ties or fewer than 150 distinct values (29 columns), n in
{1e2, 1e3, 1e4}, epsilon in {0.1, 1, 10}, q in {.1, .25, .5, .75, .9, .99}, tight bounds, 3
subsamples.  Printed: per theta the share of cells within 1.25x the better of IndExp and the
exponential mechanism with O (the peers' scores), and the cells > 1.25x worse / better than theta = 0.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

import _quantile_columns as C
from accuracy_quantile_integer import opendp_score_error
from accuracy_quantiles import smith_expected_error
from dpselect.apps.quantiles._exponential import mechanism as QQ
from dpselect.apps.quantiles._exponential import quantile_pieces as QL

THETAS = (0.0, 0.25, 0.5, 1.0)


def theta_error(x: np.ndarray, q: float, eps: float, b: tuple, theta: float, integer: bool) -> float:
    s = QL.check_sample(x, b, integer)
    pc = QL.pieces(s, QQ.output_grid(None, s), atoms=True)
    psi = QL.rank_distance(pc.L, pc.C, s.n, q, "add_remove", "grid")
    O = np.abs((1 - q) * pc.L - q * (s.n - pc.C)) / max(q, 1 - q)
    psi = psi + theta * np.maximum(0.0, O - psi)
    p = QL.normalise(pc.logsize - 0.5 * eps * psi)
    keep = p > 0
    return float(np.dot(p[keep], QL.abs_dev(pc, s.order_statistic(QL.target_rank(q, s.n)))[keep]))


def _opendp_real(x: np.ndarray, q: float, eps: float, b: tuple) -> float:
    c = np.linspace(b[0], b[1], 10001)
    xs = np.sort(x)
    L, G = np.searchsorted(xs, c, "left"), xs.size - np.searchsorted(xs, c, "right")
    lw = -0.5 * eps * np.abs((1 - q) * L - q * G) / max(q, 1 - q)
    p = np.exp(lw - lw.max())
    return float(p @ np.abs(c - np.quantile(x, q, method="inverted_cdf")) / p.sum())


def main() -> None:
    cols = C.columns(Path(os.environ.get("DPSELECT_DATA", "/work/shared/data")))
    cols = {k: v for k, v in cols.items() if C.ties(v) == "many" or np.unique(v).size < 150}
    rows = []
    for ci, col in enumerate(cols.values()):
        integer = col.dtype.kind == "i"
        b = (int(col.min()), int(col.max())) if integer else (float(col.min()), float(col.max()))
        for n in (100, 1000, 10_000):
            subs = [C.subsample(col, n, [ci, n, s]) for s in range(3)]
            for eps in (0.1, 1.0, 10.0):
                for q in (0.1, 0.25, 0.5, 0.75, 0.9, 0.99):
                    e = [np.mean([theta_error(x, q, eps, b, th, integer) for x in subs]) for th in THETAS]
                    truth = [np.quantile(x, q, method="inverted_cdf") for x in subs]
                    e.append(np.mean([smith_expected_error(x, q, eps, b, t) for x, t in zip(subs, truth)]))
                    od = opendp_score_error if integer else _opendp_real
                    e.append(np.mean([od(x, q, eps, b) for x in subs]))
                    rows.append(e)
    r = np.asarray(rows)
    k = len(THETAS)
    best = np.minimum(r[:, k], r[:, k + 1])
    print(f"{len(cols)} columns, {r.shape[0]} cells")
    for j, th in enumerate(THETAS):
        e = r[:, j]
        print(
            f"theta = {th}: within 1.25x best peer score {np.mean(e <= 1.25 * best + 1e-9):.3f}; "
            f"vs theta = 0 worse {np.sum(e > 1.25 * r[:, 0] + 1e-3)}, better {np.sum(1.25 * e < r[:, 0] - 1e-3)}"
        )


if __name__ == "__main__":
    main()
