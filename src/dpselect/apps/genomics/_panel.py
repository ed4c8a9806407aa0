"""The distance search the TDT and the case-control tests share (mathematics §9.1, §14).

d_r = min{k >= 0 : hi_r(k) >= D(k)}, D(k) := max_s lo_s(k) (or the k-th largest lo for the
distance to the top-k set), with hi (lo) the largest (smallest) statistic a table reaches in
k neighbour steps, supplied by each design's subclass.  hi_r is non-decreasing and D
non-increasing in k, so d_r is found by bisection, vectorised over the distinct tables.  D(k)
is tabulated once per level: the largest lo values and their tables, found on a prefix of the
tables sorted by statistic that grows until the smallest listed value is at least the
statistic of the next table (lo_s(k) <= stat_s, so no table further down can enter).

Peeling (:meth:`PanelDistances.remove`): removing a SNP lowers D only if its table was the last
copy of a listed one; then D' <= D everywhere, every distance can only drop, and
d'_r = min{k <= d_r : hi_r(k) >= D'(k)} is again a search on [0, d_r] (probing d_r - 1 first);
a level whose listed tables are all removed is listed again from the live ones.
"""

from __future__ import annotations

import numpy as np

__all__ = ["PanelDistances"]

#: Most lo values kept per level (a level is listed again when all its tables are removed).
_LIST = 4


class PanelDistances:
    """Neighbour distances of a panel of distinct tables, with :meth:`remove` for peeling.

    A subclass sets up its distinct tables and calls :meth:`_start`; it supplies
    :meth:`_reach_max` / :meth:`_reach_min`, hi(k) and lo(k) of its design.
    """

    #: Most lo values kept per level (more: fewer re-listings while peeling, a longer first listing).
    list_cap = _LIST

    def _reach_max(self, keys: np.ndarray, k: np.ndarray) -> np.ndarray:
        """hi(k) of the distinct tables ``keys`` (broadcast with ``k``)."""
        raise NotImplementedError

    def _reach_min(self, keys: np.ndarray, k: np.ndarray) -> np.ndarray:
        """lo(k) of the distinct tables ``keys`` (broadcast with ``k``)."""
        raise NotImplementedError

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
