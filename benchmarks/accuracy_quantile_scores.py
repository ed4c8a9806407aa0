"""Single-quantile scores compared with exact expected errors (mathematics §12.1).

Run by hand::

    DPSELECT_DATA=/work/shared/data PYTHONPATH=src python benchmarks/accuracy_quantile_scores.py

For each column, n in {1e2, 1e3, 1e4}, epsilon in {0.1, 1, 10}, q in {.1, .25, .5, .75, .9, .99},
tight and 100x loose bounds, 10 subsamples (``default_rng([crc32(column), n, seed])``): the exact
E|output - x_(k)| of ``private_quantile`` (score psi = max(rank distance, IndExp normalised), on the
default grid) and of the same mechanism with OpenDP's tie-excluding score O = |(1 - q) #{x < t} -
q #{x > t}| / w added to the maximum (a valid sensitivity-1 score, not used by the library).
Columns: gamma fLength / fAlpha (floats), adult age / hours-per-week / capital-gain and pendigits
input1 (integers), scikit-learn's bundled digits pixels (integers 0..16, heavy ties), and a 70 %-zeros
column (zeros + Gamma(2, 50), seed 7).  Printed: per column, the cells where adding O helps / hurts
(ratio of expected errors beyond 1 %), and the worst cells.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path

import numpy as np

from dpselect.apps import quantiles as Q
from dpselect.apps.quantiles._exponential import mechanism as QQ
from dpselect.apps.quantiles._exponential import quantile_pieces as QL

PS = (0.1, 0.25, 0.5, 0.75, 0.9, 0.99)


def load(data_dir: Path) -> dict[str, tuple[np.ndarray, tuple[float, float]]]:
    import pandas as pd
    from sklearn.datasets import load_digits

    g = pd.read_csv(data_dir / "gamma" / "gamma.csv")
    ad = pd.read_parquet(data_dir / "adult" / "adult.parquet")
    pen = pd.read_csv(data_dir / "pendigits" / "pendigits.csv")
    rng = np.random.default_rng(7)
    zinf = np.where(rng.random(200_000) < 0.7, 0.0, rng.gamma(2.0, 50.0, 200_000))
    return {
        "gamma/fLength": (g["fLength"].to_numpy(float), (0.0, 400.0)),
        "gamma/fAlpha": (g["fAlpha"].to_numpy(float), (0.0, 90.0)),
        "zeros70": (zinf, (0.0, 1000.0)),
        "pendigits/input1": (pen["input1"].to_numpy(np.int64), (0, 100)),
        "adult/age": (ad["age"].to_numpy(np.int64), (0, 100)),
        "adult/hours": (ad["hours-per-week"].to_numpy(np.int64), (0, 100)),
        "adult/capgain": (ad["capital-gain"].to_numpy(np.int64), (0, 100_000)),
        "sklearn/digits": (load_digits().data.ravel().astype(np.int64), (0, 16)),
    }


def error_with_ties_term(x: np.ndarray, q: float, eps: float, bounds: tuple[float, float]) -> float:
    """Exact expected error of the mechanism with score max(psi, O)."""
    s = QL.check_sample(x, bounds)
    lam = QQ.output_grid(None, s)
    pc = QL.pieces(s, lam, atoms=True)
    kind = "integer" if pc.integer else "grid"
    n = s.n
    w = max(q, 1.0 - q)
    psi = QL.rank_distance(pc.L, pc.C, n, q, "add_remove", kind)
    psi = np.maximum(psi, np.abs((1.0 - q) * pc.L - q * (n - pc.C)) / w)
    p = QL.normalise(pc.logsize - 0.5 * eps * psi)
    keep = p > 0
    t = s.order_statistic(QL.target_rank(q, n))
    return float(np.dot(p[keep], QL.abs_dev(pc, t)[keep]))


def main() -> None:
    cols = load(Path(os.environ.get("DPSELECT_DATA", "/work/shared/data")))
    for name, (col, bd) in cols.items():
        ratios, cells = [], []
        for n in (100, 1000, 10_000):
            subs = [
                np.random.default_rng([zlib.crc32(name.encode()), n, s]).choice(col, n, replace=False)
                for s in range(10)
            ]
            for eps in (0.1, 1.0, 10.0):
                for q in PS:
                    for loose in (False, True):
                        b = (bd[0], bd[0] + 100 * (bd[1] - bd[0])) if loose else bd
                        ours = np.mean([Q.quantile_expected_error(x, q, eps, bounds=b) for x in subs])
                        ties = np.mean([error_with_ties_term(x, q, eps, b) for x in subs])
                        ratios.append((ties + 1e-12) / (ours + 1e-12))
                        cells.append((n, eps, q, loose, ours, ties))
        r = np.array(ratios)
        print(f"{name:18s} adding O: better in {np.sum(r < 0.99):3d}, worse in {np.sum(r > 1.01):3d} of {r.size} cells")
        for i in np.argsort(-r)[:2]:
            n, eps, q, loose, ours, ties = cells[i]
            print(f"    worst: n={n} eps={eps} q={q} loose={loose}: ours {ours:.3g}, with O {ties:.3g}")


if __name__ == "__main__":
    main()
