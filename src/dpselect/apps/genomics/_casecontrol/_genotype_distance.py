"""Neighbour distances of the trend and genotypic tests on the 2 x 3 genotype table (mathematics §14).

Rows ``(r2, r1, r0)`` (cases) and ``(s2, s1, s0)`` (controls) count 2, 1, 0 copies of A1;
``n_i = r_i + s_i``, ``R``, ``S``, ``N`` the called totals.  One individual replaced
(status kept) moves one genotype cell of its row down by one and another up by one (a
missing call: one of them only); one individual added or removed moves one cell by one.
So every ``n_i`` and ``N`` move by at most 1, the derived allele row
``(2 r2 + r1, r1 + 2 r0)`` by a row move of size 2 and each "genotype i against the
rest" row ``(r_i, R - r_i)`` by a row move of size 1 (:func:`allelic_reach`'s hexagons).

* trend: Cochran–Armitage = allelic chi2 of the derived allele table times
  ``rho = (2 n2 + n1)(n1 + 2 n0) / (2 (n2 n1 + 4 n2 n0 + n1 n0))`` (the same numerator
  ``(ad - bc)^2``; rho is 1 under Hardy–Weinberg proportions), so
  ``hi(k) = hi_allelic(k) * rho_hi(k)`` and ``lo(k) = lo_allelic(k) * rho_lo(k)``, rho's
  numerator and denominator increasing in every ``n_i`` over the box ``n_i +- k``;
* genotypic: Pearson's 2-df chi2 ``= sum_i chi2_i (N - n_i) / N``, ``chi2_i`` the 1-df chi2
  of genotype i against the rest, so ``hi(k) = sum_i hi_i(k) (1 - (n_i - k)+ / (N + k))``
  and ``lo(k) = sum_i lo_i(k) (1 - (n_i + k) / (N - k))+``.

Every factor is the extreme of the statistic over a set that grows with k and contains
the neighbours' sets one step further (``S(x, k) ⊆ S(x', k + 1)``), so hi(x, k) <= hi(x', k + 1)
and lo(x, k + 1) <= lo(x', k): the distance d_r = min{k : hi_r(k) >= max_s lo_s(k)} is a
1-Lipschitz lower bound of the fewest steps before SNP r has a largest statistic, under
"replace" and "add_remove" (mathematics §9.1, §14).
"""

from __future__ import annotations

import numpy as np

from .._panel import PanelDistances
from ._allelic_distance import allelic_reach, unique_rows

__all__ = ["GenotypePanel", "genotype_reach"]


def _ratio(num: np.ndarray, den: np.ndarray, empty: float) -> np.ndarray:
    out = np.full(np.broadcast_shapes(num.shape, den.shape), empty)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _trend_reach(r: list[np.ndarray], s: list[np.ndarray], k: np.ndarray, n: list[np.ndarray]) -> tuple:
    a, b = 2 * r[2] + r[1], r[1] + 2 * r[0]
    c, d = 2 * s[2] + s[1], s[1] + 2 * s[0]
    hi_a, lo_a = allelic_reach(a, b, c, d, k, step=2)

    def parts(m: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        m0, m1, m2 = (x.astype(np.float64) for x in m)
        return (2 * m2 + m1) * (m1 + 2 * m0), 2 * (m2 * m1 + 4 * m2 * m0 + m1 * m0)

    num_lo, den_lo = parts([np.maximum(x - k, 0) for x in n])
    num_hi, den_hi = parts([x + k for x in n])
    rho_hi = _ratio(num_hi, den_lo, np.inf)
    rho_lo = _ratio(num_lo, den_hi, 0.0)
    hi = np.where(hi_a > 0, hi_a * np.where(hi_a > 0, rho_hi, 1.0), 0.0)
    return lo_a * rho_lo, hi


def _genotypic_reach(r: list[np.ndarray], s: list[np.ndarray], k: np.ndarray, n: list[np.ndarray]) -> tuple:
    big_r, big_s = r[0] + r[1] + r[2], s[0] + s[1] + s[2]
    total = (big_r + big_s).astype(np.float64)
    lo = np.zeros(np.broadcast_shapes(total.shape, k.shape))
    hi = np.zeros(lo.shape)
    for i in range(3):
        hi_i, lo_i = allelic_reach(r[i], big_r - r[i], s[i], big_s - s[i], k, step=1)
        w_hi = 1.0 - _ratio(np.maximum(n[i] - k, 0).astype(np.float64), total + k, 0.0)
        w_lo = np.maximum(1.0 - _ratio((n[i] + k).astype(np.float64), total - k, np.inf), 0.0)
        hi += hi_i * w_hi
        lo += lo_i * w_lo
    return lo, hi


def genotype_reach(test: str, tables: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lo(k), hi(k)) of ``test`` ("trend" or "genotypic") for (6, ...) tables (r2, r1, r0, s2, s1, s0)."""
    t = np.asarray(tables, dtype=np.int64)
    kk = np.asarray(k, dtype=np.int64)
    shape = np.broadcast_shapes(t.shape[1:], kk.shape)
    t = np.broadcast_to(t.reshape(t.shape[:1] + (1,) * (len(shape) - t.ndim + 1) + t.shape[1:]), (6, *shape))
    kk = np.broadcast_to(kk, shape)
    r = [t[2], t[1], t[0]]  # r[i]: cases with i copies of A1
    s = [t[5], t[4], t[3]]
    n = [r[i] + s[i] for i in range(3)]
    reach = _trend_reach if test == "trend" else _genotypic_reach
    lo, hi = reach(r, s, kk, n)
    return np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)


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
