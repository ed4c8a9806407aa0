"""Neighbour distances of the trend and genotypic tests on the 2 x 3 genotype table (mathematics §14).

One individual replaced (status kept) moves one genotype cell of its row
down by one and another up by one (a missing call: one of them only); one
individual added or removed moves one cell by one.  Either way every cell of
a SNP's table moves by at most 1, so a table reaches in k steps only tables
inside the box ``B(x, k)`` of cells ``o +- k`` (clipped at 0), and for
neighbouring data ``B(x, k) ⊆ B(x', k + 1)``.

hi(k) / lo(k) are the natural interval extensions of the statistics over
the box, written as

    genotypic = sum_i (r_i S - s_i R)^2 / (R S n_i),
    trend     = N (sum_i w_i (r_i S - s_i R))^2 / (R S (n_2 n_1 + 4 n_2 n_0 + n_1 n_0)),

``r_i S - s_i R = sum_{l != i} (r_i s_l - s_i r_l)``, ``w = (2, 1, 0)``.
An interval extension is inclusion-monotone, so hi(x, k) <= hi(x', k + 1)
and lo(x, k + 1) <= lo(x', k) for neighbours, and hi(k) >= every statistic
of the box >= lo(k): the distance d_r = min{k : hi_r(k) >= max_s lo_s(k)}
is a 1-Lipschitz lower bound of the fewest steps before SNP r has a largest
statistic, under "replace" and "add_remove" (mathematics §9.1).  Where a
denominator's interval reaches 0, hi = inf and lo = 0.
"""

from __future__ import annotations

import numpy as np

from .._panel import PanelDistances
from ._allelic_distance import unique_rows

__all__ = ["GenotypePanel", "genotype_reach"]


def _iv_mul(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Product of non-negative intervals."""
    return a[0] * b[0], a[1] * b[1]


def _iv_sq(u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Square of the interval [u, v]."""
    lo = np.where((u <= 0) & (v >= 0), 0.0, np.minimum(u * u, v * v))
    return lo, np.maximum(u * u, v * v)


def _iv_div(num: tuple[np.ndarray, np.ndarray], den: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Num / den for num >= 0, den >= 0: hi = inf and lo = 0 where den's interval reaches 0."""
    hi = np.full(num[1].shape, np.inf)
    np.divide(num[1], den[0], out=hi, where=den[0] > 0)
    lo = np.zeros(num[0].shape)
    np.divide(num[0], den[1], out=lo, where=den[0] > 0)
    return lo, hi


def genotype_reach(test: str, tables: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lo(k), hi(k)) of ``test`` ("trend" or "genotypic") over the boxes ``o +- k`` of (6, ...) tables."""
    t = tables.astype(np.float64)
    kk = np.asarray(k, dtype=np.float64)
    lo_c, hi_c = np.maximum(t - kk, 0.0), t + kk
    r = [(lo_c[i], hi_c[i]) for i in range(3)]
    s = [(lo_c[3 + i], hi_c[3 + i]) for i in range(3)]
    big_r = (r[0][0] + r[1][0] + r[2][0], r[0][1] + r[1][1] + r[2][1])
    big_s = (s[0][0] + s[1][0] + s[2][0], s[0][1] + s[1][1] + s[2][1])
    n = [(r[i][0] + s[i][0], r[i][1] + s[i][1]) for i in range(3)]
    rs = _iv_mul(big_r, big_s)
    diffs = []  # r_i S - s_i R = sum_{l != i} (r_i s_l - s_i r_l)
    for i in range(3):
        u = sum(r[i][0] * s[j][0] - s[i][1] * r[j][1] for j in range(3) if j != i)
        v = sum(r[i][1] * s[j][1] - s[i][0] * r[j][0] for j in range(3) if j != i)
        diffs.append((u, v))
    if test == "genotypic":
        lo, hi = np.zeros(lo_c.shape[1:]), np.zeros(lo_c.shape[1:])
        for i in range(3):
            part = _iv_div(_iv_sq(*diffs[i]), _iv_mul(rs, n[i]))
            lo, hi = lo + part[0], hi + part[1]
        return lo, hi
    num_u = 2 * diffs[0][0] + diffs[1][0]
    num_v = 2 * diffs[0][1] + diffs[1][1]
    sq = _iv_sq(num_u, num_v)
    total = (big_r[0] + big_s[0], big_r[1] + big_s[1])
    spread = (
        n[0][0] * n[1][0] + 4 * n[0][0] * n[2][0] + n[1][0] * n[2][0],
        n[0][1] * n[1][1] + 4 * n[0][1] * n[2][1] + n[1][1] * n[2][1],
    )
    return _iv_div(_iv_mul(total, sq), _iv_mul(rs, spread))


class GenotypePanel(PanelDistances):
    """:class:`PanelDistances` of the trend or genotypic test on (m, 6) genotype tables (cases, then controls)."""

    list_cap = 32

    def __init__(self, test: str, tables: np.ndarray, removals: int = 0, rank: int = 1) -> None:
        keys, inverse, counts = unique_rows(tables)
        self.test = test
        self.tables = keys.T  # (6, u)
        # the statistic as the reach computes it at k = 0 (the same rounding: lo(0) = hi(0) = chi)
        self._start(inverse, counts, genotype_reach(test, self.tables, np.zeros(1))[0], removals, rank)

    def _reach_max(self, keys: np.ndarray, k: np.ndarray) -> np.ndarray:
        return genotype_reach(self.test, self.tables[:, keys], k)[1]

    def _reach_min(self, keys: np.ndarray, k: np.ndarray) -> np.ndarray:
        return genotype_reach(self.test, self.tables[:, keys], k)[0]
