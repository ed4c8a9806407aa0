"""Neighbour distance of the allelic case-control test (mathematics §14).

Table of one SNP: the allele counts ``(a, b; c, d)`` = (A1, A2 of cases;
A1, A2 of controls) and the allelic statistic (Pearson's 1-df chi2 of the
2 x 2 table, PLINK's ``--assoc`` CHISQ)

    chi2 = N (ad - bc)^2 / ((a + b)(c + d)(a + c)(b + d)),  N = a + b + c + d,

0 when a margin is 0.  One individual added, removed or replaced (status
kept) moves one row of every SNP's table by a *row move* ``(dx, dy)`` with
``|dx|, |dy|, |dx + dy| <= 2`` (each SNP its own move and row; the moves
over-approximate the realisable ones: conservative), so a row reaches in j
moves the lattice hexagon ``max(|dx|, |dy|, |dx + dy|) <= 2j`` (clipped to
counts >= 0) and a table in k moves the union over k1 + k0 = k of the
products of the row hexagons.

Closed forms (mathematics §14, proof there): where D = ad - bc > 0 the
statistic increases in a and d and decreases in b and c, so over one
product of hexagons its maximum on {D > 0} sits at the corner
P+(k1, k0) = (a + 2k1, (b - 2k1)+, (c - 2k0)+, d + 2k0) and on {D < 0} at
P-(k1, k0) = ((a - 2k1)+, b + 2k1, c + 2k0, (d - 2k0)+).  Hence

    hi(k) = max_{k1 + k0 = k} max(chi2(P+), chi2(P-)),
    lo(k) = min_{k1 + k0 = k} chi2(P-)   if D(P-) > 0 for every split,
            min_{k1 + k0 = k} chi2(P+)   if D(P+) < 0 for every split,
            0                            otherwise (the reach meets both signs of D),

k + 1 corner pairs per table and level.  The last case is a lower bound
(exact unless the hexagons step over D = 0 without a table of chi2 = 0); a
lower bound lo' with lo'(x, k + 1) <= lo'(x', k) for neighbours keeps the
distance 1-Lipschitz (mathematics §9.1, §14), so the utility keeps
sensitivity 1.  The distance search, the tabulation of D(k) and peeling are
those of the TDT (:class:`PanelDistances`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._panel import PanelDistances

__all__ = ["AllelicPanel", "allelic_reach", "allelic_statistic"]


def allelic_statistic(a: Any, b: Any, c: Any, d: Any) -> np.ndarray:
    """Pearson's 1-df chi2 of the allele table [[a, b], [c, d]] (cases, controls x A1, A2); 0 at a zero margin."""
    a, b, c, d = (np.asarray(v, dtype=np.float64) for v in (a, b, c, d))
    den = (a + b) * (c + d) * (a + c) * (b + d)
    num = (a + b + c + d) * (a * d - b * c) ** 2
    out = np.zeros(np.broadcast_shapes(a.shape, b.shape, c.shape, d.shape), dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


def allelic_reach(
    a: Any, b: Any, c: Any, d: Any, k: Any, *, which: str = "both", step: int = 2
) -> tuple[np.ndarray, np.ndarray]:
    """(hi(k), lo(k)): the largest / (a lower bound on) the smallest 2 x 2 chi2 reachable in k row moves.

    A row move is ``(dx, dy)`` with ``|dx|, |dy|, |dx + dy| <= step``: 2 on the allele table (one
    individual's two alleles), 1 on the carrier tables of the dominant and recessive tests.
    ``which="hi"`` or ``"lo"`` computes one of them (the other is returned as zeros).
    """
    a, b, c, d, k = np.broadcast_arrays(*(np.asarray(v, dtype=np.int64) for v in (a, b, c, d, k)))
    want_hi, want_lo = which in ("both", "hi"), which in ("both", "lo")
    hi = np.zeros(k.shape)
    lo_plus = np.full(k.shape, np.inf)  # min chi2(P-) over the splits (the D > 0 side)
    lo_minus = np.full(k.shape, np.inf)  # min chi2(P+) (the D < 0 side)
    d_min = np.full(k.shape, np.inf)
    d_max = np.full(k.shape, -np.inf)
    for k1 in range(int(k.max(initial=0)) + 1):  # the splits k1 + k0 = k, vectorised over the tables
        ok = k >= k1
        u, v = step * k1, step * np.maximum(k - k1, 0)
        plus = (a + u, np.maximum(b - u, 0), np.maximum(c - v, 0), d + v)
        minus = (np.maximum(a - u, 0), b + u, c + v, np.maximum(d - v, 0))
        chi_p, chi_m = allelic_statistic(*plus), allelic_statistic(*minus)
        if want_hi:
            hi = np.where(ok, np.maximum(hi, np.maximum(chi_p, chi_m)), hi)
        if want_lo:
            lo_plus = np.where(ok, np.minimum(lo_plus, chi_m), lo_plus)
            lo_minus = np.where(ok, np.minimum(lo_minus, chi_p), lo_minus)
            d_min = np.where(ok, np.minimum(d_min, minus[0] * minus[3] - minus[1] * minus[2]), d_min)
            d_max = np.where(ok, np.maximum(d_max, plus[0] * plus[3] - plus[1] * plus[2]), d_max)
    lo = np.where(d_min > 0, lo_plus, np.where(d_max < 0, lo_minus, 0.0)) if want_lo else np.zeros(k.shape)
    return hi, lo


class AllelicPanel(PanelDistances):
    """:class:`PanelDistances` of a 2 x 2 test: tables (a, b, c, d), row moves of size ``step`` (mathematics §14).

    ``step=2`` on the allele tables (the allelic test), 1 on the carrier tables of the
    dominant and recessive tests (one individual moves one carrier count by one).
    """

    list_cap = 32  # a level listed again costs k + 1 corner pairs per table: list enough for every round

    def __init__(self, tables: np.ndarray, removals: int = 0, rank: int = 1, step: int = 2) -> None:
        keys, inverse, counts = np.unique(tables, axis=0, return_inverse=True, return_counts=True)
        self.tables = keys.T  # (4, u)
        self.step = step
        self._start(inverse, counts, allelic_statistic(*self.tables), removals, rank)

    def _reach_max(self, keys: np.ndarray, k: np.ndarray) -> np.ndarray:
        a, b, c, d = self.tables[:, keys]
        return allelic_reach(a, b, c, d, k, which="hi", step=self.step)[0]

    def _reach_min(self, keys: np.ndarray, k: np.ndarray) -> np.ndarray:
        a, b, c, d = self.tables[:, keys]
        return allelic_reach(a, b, c, d, k, which="lo", step=self.step)[1]
