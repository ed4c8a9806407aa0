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

Peeling (:class:`PanelDistances`): removing a SNP lowers D only if its
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

from ..._params import validate_params
from ...mechanisms import distance_problem
from ...problem import SelectionProblem
from ._rules import COUNTS, LABELS, N_FAMILIES
from ._sensitivity import check_tables

__all__ = ["PanelDistances", "distance_utility_problem", "neighbour_distances", "reach_max", "reach_min"]


#: Most lo values kept per level (a level is listed again when all its tables are removed).
_LIST = 4


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


class PanelDistances:
    """Neighbour distances of a panel of validated tables, with :meth:`remove` for peeling."""

    #: Most lo values kept per level (more: fewer re-listings while peeling, a longer first listing).
    list_cap = _LIST

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

    def _start(self, inverse: np.ndarray, counts: np.ndarray, chi: np.ndarray, removals: int, rank: int = 1) -> None:
        """Shared set-up from the distinct tables (their statistic ``chi``, multiplicity ``counts``).

        ``rank`` = k > 1 gives the distance to the top-k set (fewest changes before the SNP is
        among k largest statistics): D(j) is then the k-th largest lo value (no removals).
        """
        n_keys = chi.size
        self.rank = int(rank)
        if self.rank > 1 and removals:
            raise ValueError("a top-k-set panel (rank > 1) supports no removals")
        self.inverse = np.asarray(inverse).ravel()
        self.count = counts.astype(np.int64)
        self.chi = chi
        self.order = np.argsort(-self.chi, kind="stable")
        self.in_list = np.zeros(n_keys, dtype=bool)
        self.list_size = r = max(self.rank, min(int(removals) + 1, self.list_cap))
        self.top_val = np.empty((r, 0))
        self.top_key = np.empty((r, 0), dtype=np.int64)
        levels = 16
        while True:
            first = self.top_val.shape[1]
            self.top_val = np.concatenate([self.top_val, np.full((r, levels - first), -np.inf)], axis=1)
            self.top_key = np.concatenate([self.top_key, np.full((r, levels - first), -1, np.int64)], axis=1)
            self._tabulate(np.arange(first, levels, dtype=np.int64))
            if (self._pred(np.arange(n_keys), np.full(n_keys, levels - 1))).all():
                break
            levels += max(16, levels // 4)
        self.key_dist = self._bisect(np.arange(n_keys), np.full(n_keys, levels - 1))
        self.hi_below = self._hi_below(np.arange(n_keys))

    def _hi_below(self, keys: np.ndarray) -> np.ndarray:
        """hi_r(d_r - 1) (the value the predicate failed on; 0 where d_r = 0)."""
        d = self.key_dist[keys]
        return np.where(d > 0, self._reach_max(keys, np.maximum(d - 1, 0)), 0.0)

    def _tabulate(self, todo: np.ndarray) -> None:
        """At the levels ``todo``: the _LIST largest lo values of the live tables and their keys."""
        u, r = self.order.size, self.list_size
        self.top_val[:, todo] = -np.inf
        self.top_key[:, todo] = -1
        start, size = 0, 64
        while todo.size and start < u:
            block = self.order[start : start + size]
            lo = self._reach_min(block[:, None], todo[None, :])
            lo[self.count[block] == 0] = -np.inf
            vals = np.concatenate([self.top_val[:, todo], lo])
            keys = np.concatenate([self.top_key[:, todo], np.broadcast_to(block[:, None], lo.shape)])
            pick = np.argpartition(-vals, r - 1, axis=0)[:r]
            vals, keys = np.take_along_axis(vals, pick, 0), np.take_along_axis(keys, pick, 0)
            self.top_val[:, todo], self.top_key[:, todo] = vals, keys
            start += block.size
            size *= 2
            if start < u:  # tables further down have lo <= chi2 <= this: the level is settled
                todo = todo[vals.min(axis=0) < self.chi[self.order[start]]]
        listed = self.top_key[self.top_key >= 0]
        self.in_list[listed] = True
        self.level = self._level()

    def _level(self) -> np.ndarray:
        alive = (self.top_key >= 0) & (self.count[np.maximum(self.top_key, 0)] > 0)
        vals = np.where(alive, self.top_val, -np.inf)
        if self.rank > 1:  # the k-th largest lo value, copies of a table counted by multiplicity
            mult = np.where(alive, self.count[np.maximum(self.top_key, 0)], 0)
            order = np.argsort(-vals, axis=0, kind="stable")
            sorted_vals = np.take_along_axis(vals, order, 0)
            covered = np.cumsum(np.take_along_axis(mult, order, 0), axis=0) >= self.rank
            first = np.where(covered.any(axis=0), covered.argmax(axis=0), 0)
            level = np.where(covered.any(axis=0), sorted_vals[first, np.arange(vals.shape[1])], 0.0)
            return np.asarray(level).clip(min=0.0)
        return vals.max(axis=0).clip(min=0.0)

    def _pred(self, keys: np.ndarray, k: np.ndarray) -> np.ndarray:
        return self._reach_max(keys, k) >= self.level[k]

    def _bisect(self, keys: np.ndarray, upper: np.ndarray, lower: np.ndarray | None = None) -> np.ndarray:
        """Least k in [lower, upper] with the predicate (true at ``upper``, false below ``lower``), per key."""
        lo = np.zeros(keys.size, dtype=np.int64) if lower is None else lower.astype(np.int64).copy()
        hi = upper.astype(np.int64).copy()
        while True:
            open_ = lo < hi
            if not open_.any():
                return hi
            idx = np.flatnonzero(open_)
            mid = (lo[idx] + hi[idx]) // 2
            ok = self._pred(keys[idx], mid)
            hi[idx] = np.where(ok, mid, hi[idx])
            lo[idx] = np.where(ok, lo[idx], mid + 1)

    def _gallop(self, keys: np.ndarray, upper: np.ndarray) -> np.ndarray:
        """As :meth:`_bisect` from [0, upper], probing upper - 1, upper - 2, upper - 4, ... first.

        Distances drop little when one SNP is removed: most keys stop after one probe).
        """
        hi = upper.astype(np.int64).copy()
        lo = np.zeros(keys.size, dtype=np.int64)
        step = np.ones(keys.size, dtype=np.int64)
        active = np.flatnonzero(hi > 0)
        while active.size:
            probe = np.maximum(hi[active] - step[active], 0)
            ok = self._pred(keys[active], probe)
            hi[active] = np.where(ok, probe, hi[active])
            lo[active] = np.where(ok, lo[active], probe + 1)
            step[active] *= 2
            active = active[ok & (probe > 0)]
        return self._bisect(keys, hi, lo)

    def distances(self) -> np.ndarray:
        """d_r of every SNP of the panel (removed SNPs included; ignore them)."""
        return self.key_dist[self.inverse]

    def remove(self, snp: int) -> None:
        """Remove SNP ``snp`` (an index of the panel) and update the distances of the others."""
        key = int(self.inverse[snp])
        self.count[key] -= 1
        if self.count[key] > 0 or not self.in_list[key]:
            return
        old = self.level
        alive = (self.top_key >= 0) & (self.count[np.maximum(self.top_key, 0)] > 0)
        empty = np.flatnonzero(~alive.any(axis=0) & (old > 0))
        if empty.size:  # every listed table of these levels is gone: list them again from the live ones
            self._tabulate(empty)
        self.level = self._level()
        changed = self.level < old
        if not changed.any():
            return
        # pred is monotone and unchanged at the levels where D is: d_r can drop only if level d_r - 1 changed
        d = self.key_dist
        todo = np.flatnonzero((d > 0) & (self.count > 0))
        todo = todo[changed[d[todo] - 1]]
        todo = todo[self.hi_below[todo] >= self.level[d[todo] - 1]]  # the predicate now holds at d_r - 1
        if todo.size:
            self.key_dist[todo] = self._gallop(todo, d[todo] - 1)
            self.hi_below[todo] = self._hi_below(todo)


@validate_params({"b": COUNTS, "c": COUNTS, "n_families": N_FAMILIES})
def neighbour_distances(b: ArrayLike, c: ArrayLike, n_families: int) -> np.ndarray:
    """d_r: fewest family replacements after which SNP r has a largest TDT statistic.

    Sensitivity 1 under "replace" neighbours (one family replaced; mathematics §9.1).

    Parameters
    ----------
    b : array-like of int
        1-D transmissions of allele 1, one per SNP.
    c : array-like of int
        1-D transmissions of allele 2, one per SNP (``b + c <= 2N``).
    n_families : int
        N >= 1, the number of families (public).

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
    return PanelDistances(b, c, n).distances()


@validate_params({"b": COUNTS, "c": COUNTS, "n_families": N_FAMILIES, "labels": LABELS})
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
    b : array-like of int
        1-D transmissions of allele 1, one per SNP.
    c : array-like of int
        1-D transmissions of allele 2, one per SNP (``b + c <= 2N``).
    n_families : int
        N >= 1, the number of families (public).
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
