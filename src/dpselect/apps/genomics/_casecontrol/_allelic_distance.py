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
from ._statistics import pearson_2x2

__all__ = ["AllelicPanel", "allelic_reach", "allelic_statistic"]


def unique_rows(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(tables, axis=0, return_inverse=True, return_counts=True)`` through one int64 key per row."""
    t = np.asarray(tables, dtype=np.int64)
    width = int(t.max(initial=0)) + 1
    if t.shape[0] == 0 or float(width) ** t.shape[1] >= 2.0**62:
        return np.unique(t, axis=0, return_inverse=True, return_counts=True)
    key = np.zeros(t.shape[0], dtype=np.int64)
    for j in range(t.shape[1]):  # a handful of columns
        key = key * width + t[:, j]
    _, first, inverse, counts = np.unique(key, return_index=True, return_inverse=True, return_counts=True)
    return t[first], inverse.ravel(), counts


def allelic_statistic(a: Any, b: Any, c: Any, d: Any) -> np.ndarray:
    """Pearson's 1-df chi2 of the allele table [[a, b], [c, d]] (cases, controls x A1, A2); 0 at a zero margin."""
    return pearson_2x2(a, b, c, d)


def allelic_reach(
    a: Any, b: Any, c: Any, d: Any, k: Any, *, which: str = "both", step: int = 2
) -> tuple[np.ndarray, np.ndarray]:
    """(hi(k), lo(k)): the largest / (a lower bound on) the smallest 2 x 2 chi2 reachable in k row moves.

    A row move is ``(dx, dy)`` with ``|dx|, |dy|, |dx + dy| <= step``: 2 on the allele table (one
    individual's two alleles), 1 on the carrier tables of the dominant and recessive tests.
    ``which="hi"`` or ``"lo"`` computes one of them (the other is returned as zeros).
    """
    arrays = np.broadcast_arrays(*(np.asarray(v, dtype=np.int64) for v in (a, b, c, d, k)))
    shape = arrays[0].shape
    a, b, c, d, k = (x.ravel() for x in arrays)
    fast = np.minimum(np.minimum(a, b), np.minimum(c, d)) >= step * k  # no cell clipped at any split
    hi, lo = np.zeros(k.shape), np.zeros(k.shape)
    if fast.any():
        hi[fast], lo[fast] = _reach_unclipped(a[fast], b[fast], c[fast], d[fast], k[fast], which, step)
    slow = ~fast
    if slow.any():
        hi[slow], lo[slow] = _reach_splits(a[slow], b[slow], c[slow], d[slow], k[slow], which, step)
    return hi.reshape(shape), lo.reshape(shape)


def _chi(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
    """:func:`allelic_statistic` on float64 arrays of one shape (no conversions)."""
    den = (a + b) * (c + d) * (a + c) * (b + d)
    num = (a + b + c + d) * (a * d - b * c) ** 2
    out = np.zeros(den.shape)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _corner(
    a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray, k: np.ndarray, t: Any, sign: int, step: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """P+ (sign 1) or P- (sign -1) at the split k1 = t, k0 = k - t, unclipped."""
    u, v = sign * step * t, sign * step * (k - t)
    return a + u, b - u, c - v, d + v


def _extreme_splits(
    a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray, k: np.ndarray, sign: int, step: int
) -> list[np.ndarray]:
    """Splits where chi2 of the unclipped corner path is smallest: its ends and the integers next to stationary points.

    Along the path the row totals stay and ``D = ad - bc`` and the A1 total ``m`` are linear in t,
    so chi2 = N D^2 / (n1 n0 m (N - m)) has sublevel sets {|D| <= sqrt(alpha g)} (convex: |D| convex,
    sqrt of the concave g = m (N - m) concave): chi2 is quasiconvex in t, its integer minimum lies at an
    end or next to a root of the quadratic 2 D' g - D g' (mathematics §14).
    """
    n = (a + b + c + d).astype(np.float64)
    cs = [_corner(a, b, c, d, k, t, sign, step) for t in (0, 1, 2)]
    dd = [(x[0] * x[3] - x[1] * x[2]).astype(np.float64) for x in cs]
    mm = [(x[0] + x[2]).astype(np.float64) for x in cs]
    q = [2 * (dd[1] - dd[0]) * m * (n - m) - dv * (mm[1] - mm[0]) * (n - 2 * m) for dv, m in zip(dd, mm)]
    qa = (q[2] - 2 * q[1] + q[0]) / 2
    qb = q[1] - q[0] - qa
    qc = q[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        disc = np.sqrt(np.maximum(qb * qb - 4 * qa * qc, 0.0))
        quad = np.abs(qa) > 1e-12 * (np.abs(qb) + np.abs(qc) + 1)
        r1 = np.where(quad, (-qb - disc) / (2 * qa), -qc / qb)
        r2 = np.where(quad, (-qb + disc) / (2 * qa), -qc / qb)
    kf = np.asarray(k, dtype=np.float64)
    out = [np.zeros(kf.shape), kf]
    for r in (r1, r2):
        base = np.floor(np.clip(np.nan_to_num(r, nan=0.0, posinf=0.0, neginf=0.0), 0.0, kf))
        out += [np.clip(base + j, 0.0, kf) for j in (-1, 0, 1, 2)]
    return out


def _reach_unclipped(
    a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray, k: np.ndarray, which: str, step: int
) -> tuple[np.ndarray, np.ndarray]:
    """(hi, lo) where no cell is clipped at any split: a constant number of splits per table (quasiconvexity).

    In float64 throughout: every cell and ``ad - bc`` is an integer below 2^53 (exact), and
    :func:`_chi` repeats :func:`allelic_statistic`'s operations in its order (the same values).
    """
    a, b, c, d, k = (np.asarray(x, dtype=np.float64) for x in (a, b, c, d, k))
    hi, lo = np.zeros(k.shape), np.zeros(k.shape)
    if which in ("both", "hi"):  # a quasiconvex function is largest at an end of the path
        for t in (0, k):
            for sign in (1, -1):
                hi = np.maximum(hi, _chi(*_corner(a, b, c, d, k, t, sign, step)))
    if which in ("both", "lo"):
        d_minus = [x[0] * x[3] - x[1] * x[2] for x in (_corner(a, b, c, d, k, t, -1, step) for t in (0, k))]
        d_plus = [x[0] * x[3] - x[1] * x[2] for x in (_corner(a, b, c, d, k, t, 1, step) for t in (0, k))]
        pos, neg = np.minimum(*d_minus) > 0, np.maximum(*d_plus) < 0  # D is linear along each path
        for mask, sign in ((pos, -1), (neg, 1)):
            if mask.any():
                am, bm, cm, dm, km = a[mask], b[mask], c[mask], d[mask], k[mask]
                best = np.full(km.shape, np.inf)
                for t in _extreme_splits(am, bm, cm, dm, km, sign, step):
                    best = np.minimum(best, _chi(*_corner(am, bm, cm, dm, km, t, sign, step)))
                lo[mask] = best
    return hi, lo


def _reach_splits(
    a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray, k: np.ndarray, which: str, step: int
) -> tuple[np.ndarray, np.ndarray]:
    """(hi, lo) by every split k1 + k0 = k (cells clipped at 0), vectorised over the tables.

    The tables are ordered by k, largest first, so split k1 touches only the prefix with k >= k1.
    """
    order = np.argsort(-k, kind="stable")
    a, b, c, d, k = a[order], b[order], c[order], d[order], k[order]
    want_hi, want_lo = which in ("both", "hi"), which in ("both", "lo")
    hi = np.zeros(k.shape)
    lo_plus = np.full(k.shape, np.inf)  # min chi2(P-) over the splits (the D > 0 side)
    lo_minus = np.full(k.shape, np.inf)  # min chi2(P+) (the D < 0 side)
    d_min = np.full(k.shape, np.inf)
    d_max = np.full(k.shape, -np.inf)
    for k1 in range(int(k.max(initial=0)) + 1):  # the splits k1 + k0 = k
        j = int(np.searchsorted(-k, -k1, side="right"))  # the prefix with k >= k1
        aj, bj, cj, dj = a[:j], b[:j], c[:j], d[:j]
        u, v = step * k1, step * (k[:j] - k1)
        plus = (aj + u, np.maximum(bj - u, 0), np.maximum(cj - v, 0), dj + v)
        minus = (np.maximum(aj - u, 0), bj + u, cj + v, np.maximum(dj - v, 0))
        chi_p, chi_m = allelic_statistic(*plus), allelic_statistic(*minus)
        if want_hi:
            np.maximum(hi[:j], np.maximum(chi_p, chi_m), out=hi[:j])
        if want_lo:
            np.minimum(lo_plus[:j], chi_m, out=lo_plus[:j])
            np.minimum(lo_minus[:j], chi_p, out=lo_minus[:j])
            np.minimum(d_min[:j], minus[0] * minus[3] - minus[1] * minus[2], out=d_min[:j])
            np.maximum(d_max[:j], plus[0] * plus[3] - plus[1] * plus[2], out=d_max[:j])
    lo = np.where(d_min > 0, lo_plus, np.where(d_max < 0, lo_minus, 0.0)) if want_lo else np.zeros(k.shape)
    back = np.empty_like(order)
    back[order] = np.arange(order.size)
    return hi[back], lo[back]


class AllelicPanel(PanelDistances):
    """:class:`PanelDistances` of a 2 x 2 test: tables (a, b, c, d), row moves of size ``step`` (mathematics §14).

    ``step=2`` on the allele tables (the allelic test), 1 on the carrier tables of the
    dominant and recessive tests (one individual moves one carrier count by one).
    """

    list_cap = 32  # a level listed again costs k + 1 corner pairs per table: list enough for every round

    def __init__(self, tables: np.ndarray, removals: int = 0, rank: int = 1, step: int = 2) -> None:
        keys, inverse, counts = unique_rows(tables)
        self.tables = keys.T  # (4, u)
        self.step = step
        self._start(inverse, counts, allelic_statistic(*self.tables), removals, rank)

    def _reach_max(self, keys: np.ndarray, k: np.ndarray) -> np.ndarray:
        a, b, c, d = self.tables[:, keys]
        return allelic_reach(a, b, c, d, k, which="hi", step=self.step)[0]

    def _reach_min(self, keys: np.ndarray, k: np.ndarray) -> np.ndarray:
        a, b, c, d = self.tables[:, keys]
        return allelic_reach(a, b, c, d, k, which="lo", step=self.step)[1]
