"""Neighbour-distance utility for private top-SNP selection (mathematics §9.1).

u_r = -d_r with d_r the fewest family replacements after which SNP r has a
largest TDT statistic (ties count as optimal).  One family moves every SNP's
table by at most one table-level move, each SNP its own (mathematics §4.4), so the
distance between panels is the max over SNPs of the Lemma 3 table distance
and

    d_r = min_v max(up_r(v), max_{s != r} down_s(v))
        = min{k >= 0 : hi_r(k) >= max_{s != r} lo_s(k)}
        = min{k >= 0 : hi_r(k) >= D(k)},   D(k) := max_s lo_s(k),

with hi (lo) the largest (smallest) chi2 a table reaches in k moves.  The
utility has sensitivity 1 under family replacement (triangle inequality;
Johnson & Shmatikov, KDD 2013; Wang et al., Bioinformatics 2017), so the
exponential mechanism / permute-and-flip run on it at Delta u = 1 with no
smooth sensitivity and no m-fold dilation.

Closed forms of hi and lo.  In the coordinates d = |b - c|, s = b + c a
table reaches in k moves exactly the states with |s - s0| <= 2k and
|d - d0| + |s - s0| <= 4k inside 0 <= |d| <= s <= 2N (the Lemma 3 metric is
ceil(max(|db|, |dc|, |db + dc|)/2) and max(|db|, |dc|) = (|d'|+|s'|)/2),
and the parity d = s (mod 2) holds automatically.  Hence

    hi(k) = max_s min(s, d0 + 4k - |s - s0|)^2 / s,
    lo(k) = min_s max(d0 - 4k + |s - s0|, s mod 2)^2 / s,

s over [max(0, s0 - 2k), min(2N, s0 + 2k)].  Each is piecewise monotone in s
with breakpoints at s0, (d0 + 4k + s0)/2, s0 +- (4k - d0) and the ends of the
range, so evaluating the bracket at those points (and their neighbours, for
the parity) is exact: O(1) per table and level.

The max may include r itself: if r attains D(k) then hi_r(k) >= lo_r(k) =
D(k) already.  hi_r is non-decreasing and D non-increasing in k, so d_r is
a crossing point: the predicate hi_r(k) >= D(k) is monotone in k, so d_r is
found by bisection, vectorised over the distinct pairs (|b_r - c_r|, b_r + c_r)
(at most min(m, (N+1)(2N+1))).  D(k) is tabulated once per level: the
two largest lo values and their tables, found on a prefix of the pairs
sorted by chi2 that grows until the smaller of them is at least the chi2 of
the next pair (lo_s(k) <= chi2_s, so no pair further down can enter).
Cost O(m log m) for the grouping plus O(u log K) closed-form evaluations
for u distinct pairs and K the largest distance.

Peeling (:class:`~dpselect.apps.genomics._panel.PanelDistances`): removing a SNP lowers D only if its
table was the last copy of a tabulated one; then D' <= D everywhere, every
distance can only drop, and d'_r = min{k <= d_r : hi_r(k) >= D'(k)} is again
a search on [0, d_r] (probing d_r - 1 first: most distances do not move);
a level whose listed tables are all removed is listed again from the live ones.
A round costs O(u log d) evaluations instead of a rebuild.
Values are compared in floating point on correctly rounded chi2 fractions,
which orders distinct fractions correctly for N < 80,000.  Checked against breadth-first search
and against the mathematics page's spec-check in ``tests/test_tdt_math.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from ...._docstrings import fill_doc
from ...._params import validate_params
from ....mechanisms import distance_problem
from ....problem import SelectionProblem
from .._panel import PanelDistances
from .._rules import COUNTS, LABELS, N_FAMILIES
from ._sensitivity import check_tables

__all__ = ["TransmissionPanel", "distance_utility_problem", "neighbour_distances", "reach_max", "reach_min"]


def _chi(d: np.ndarray, s: np.ndarray) -> np.ndarray:
    d = np.asarray(d, dtype=np.float64)
    s = np.asarray(s, dtype=np.float64)
    out = np.zeros(np.broadcast_shapes(d.shape, s.shape), dtype=np.float64)
    np.divide(d * d, s, out=out, where=s > 0)
    return out


def _range(s0: np.ndarray, k: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.maximum(s0 - 2 * k, 0), np.minimum(s0 + 2 * k, 2 * n)


def reach_max(d0: ArrayLike, s0: ArrayLike, k: ArrayLike, n: int) -> np.ndarray:
    """hi(k): the largest chi2 reachable in k moves from tables with |b - c| = d0, b + c = s0."""
    d0, s0, k = (np.asarray(v, dtype=np.int64) for v in (d0, s0, k))
    s_lo, s_hi = _range(s0, k, n)
    a = d0 + 4 * k
    mid = (a + s0) // 2
    best = np.zeros(np.broadcast_shapes(d0.shape, s0.shape, k.shape), dtype=np.float64)
    for s in (s0, mid, mid + 1):  # max at s0 for s <= s0; unimodal with peak (a + s0)/2 above
        s = np.clip(s, s_lo, s_hi)
        np.maximum(best, _chi(np.minimum(s, a - np.abs(s - s0)), s), out=best)
    return best


def reach_min(d0: ArrayLike, s0: ArrayLike, k: ArrayLike, n: int) -> np.ndarray:
    """lo(k): the smallest chi2 reachable in k moves from tables with |b - c| = d0, b + c = s0."""
    d0, s0, k = (np.asarray(v, dtype=np.int64) for v in (d0, s0, k))
    s_lo, s_hi = _range(s0, k, n)
    w = 4 * k - d0
    best = np.full(np.broadcast_shapes(d0.shape, s0.shape, k.shape), np.inf)
    for s in (
        s0,
        s0 - 1,
        s0 + 1,
        s_lo,
        s_lo + 1,
        s_hi - 1,
        s_hi,
        s0 - w - 1,
        s0 - w,
        s0 - w + 1,
        s0 + w - 1,
        s0 + w,
        s0 + w + 1,
    ):
        s = np.clip(s, s_lo, s_hi)
        np.minimum(best, _chi(np.maximum(d0 - 4 * k + np.abs(s - s0), s % 2), s), out=best)
    return best


class TransmissionPanel(PanelDistances):
    """:class:`PanelDistances` of the TDT: tables (|b - c|, b + c), family moves (mathematics §9.1)."""

    def __init__(self, b: np.ndarray, c: np.ndarray, n: int, removals: int = 0, rank: int = 1) -> None:
        width = 2 * n + 1
        keys, inverse, counts = np.unique(np.abs(b - c) * width + (b + c), return_inverse=True, return_counts=True)
        self.n = n
        self.d0, self.s0 = keys // width, keys % width
        self._start(inverse, counts, _chi(self.d0, self.s0), removals, rank)

    def _reach_max(self, keys: np.ndarray, k: np.ndarray) -> np.ndarray:
        """hi(k) of the distinct tables ``keys`` (broadcast with ``k``)."""
        return reach_max(self.d0[keys], self.s0[keys], k, self.n)

    def _reach_min(self, keys: np.ndarray, k: np.ndarray) -> np.ndarray:
        """lo(k) of the distinct tables ``keys`` (broadcast with ``k``)."""
        return reach_min(self.d0[keys], self.s0[keys], k, self.n)


@validate_params({"b": COUNTS, "c": COUNTS, "n_families": N_FAMILIES})
@fill_doc
def neighbour_distances(b: ArrayLike, c: ArrayLike, n_families: int) -> np.ndarray:
    """d_r: fewest family replacements after which SNP r has a largest TDT statistic.

    Sensitivity 1 under "replace" neighbours (one family replaced; mathematics §9.1).

    Parameters
    ----------
    %(tdt_panel)s

    Returns
    -------
    ndarray of int64, shape (m,)
        d_r per SNP (0 for every SNP with the largest statistic).

    Examples
    --------
    >>> from dpselect.apps.genomics import neighbour_distances
    >>> neighbour_distances([40, 30, 20], [10, 20, 20], 100).tolist()
    [0, 3, 4]
    """
    n = n_families
    b, c = check_tables(b, c, n)
    if b.ndim != 1:
        raise ValueError(f"b and c must be 1-D (one table per SNP), got shape {b.shape}")
    return TransmissionPanel(b, c, n).distances()


@validate_params({"b": COUNTS, "c": COUNTS, "n_families": N_FAMILIES, "labels": LABELS})
@fill_doc
def distance_utility_problem(
    b: ArrayLike, c: ArrayLike, n_families: int, *, labels: Sequence[object] | None = None
) -> SelectionProblem:
    """SelectionProblem of the neighbour-distance utility u_r = -d_r (Delta u = 1, relation "replace").

    Run it through :class:`~dpselect.mechanisms.PermuteAndFlip` (the
    default of :func:`dpselect.apps.genomics.select_top_snp`) or
    :class:`~dpselect.mechanisms.ExponentialMechanism`: epsilon-DP
    under family replacement (mathematics §9.1).

    Parameters
    ----------
    %(tdt_panel)s
    labels : sequence, default=None
        SNP names, one per SNP.

    Returns
    -------
    SelectionProblem
        Scores ``-d_r``, global sensitivity 1, relation "replace".

    Examples
    --------
    >>> import dpselect
    >>> from dpselect.apps.genomics import distance_utility_problem
    >>> p = distance_utility_problem([40, 30, 20], [10, 20, 20], 100)
    >>> p.scores.tolist(), p.global_sensitivity, p.relation
    ([0.0, -3.0, -4.0], 1.0, 'replace')
    """
    return distance_problem(neighbour_distances(b, c, n_families), relation="replace", labels=labels)
