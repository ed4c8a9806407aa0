"""Distances to the sets G = {LS = GS} and U = {LS > T} of TDT tables (Yamamoto & Shibuya Thm 4 / Thm 5).

A step is one family replaced ("replace" neighbours; the Lemma 3 metric of :mod:`._sensitivity`;
mathematics §4.4).

* ``G = {LS = GS}``: for N >= 5 only the swap moves (-+2, +-2) reach GS, and
  G = {(2N, 0), (2N - 2, 2), (0, 2N), (2, 2N - 2)}; N <= 4 enumerates its
  <= 45 states.  gd = min over G of the Lemma 3 distance: O(1) per table.
* ``U = {LS > T}`` for 6 <= T < GS: the union of four half-planes; the distance
  to one half-plane is the least k whose hexagon of radius 2k holds a point
  of it, found by bisection: O(log N) per table, vectorised.

The derivations are in the module docstring of :mod:`._sensitivity`.
"""

from __future__ import annotations

import functools

import numpy as np
from numpy.typing import ArrayLike

from ...._docstrings import fill_doc
from ...._params import validate_params
from .._rules import COUNTS, N_FAMILIES, THRESHOLD
from ._sensitivity import check_tables, check_threshold, gs_fraction, hex_distance, move_fractions

__all__ = ["gs_dist", "gs_distance", "unstable_dist", "unstable_distance"]


@functools.lru_cache(maxsize=64)
def _gs_states(n: int) -> tuple[tuple[int, int], ...]:
    if n >= 5:
        return ((2 * n, 0), (2 * n - 2, 2), (0, 2 * n), (2, 2 * n - 2))
    sb = np.array([b for b in range(2 * n + 1) for _ in range(2 * n + 1 - b)], dtype=np.int64)
    sc = np.array([c for b in range(2 * n + 1) for c in range(2 * n + 1 - b)], dtype=np.int64)
    gs_num, gs_den = gs_fraction(n)
    hit = np.zeros(sb.size, dtype=bool)
    for valid, num, den in move_fractions(sb, sc, n):
        hit |= valid & (num * gs_den == gs_num * den)
    return tuple((int(b), int(c)) for b, c in zip(sb[hit], sc[hit]))


def gs_dist(b: np.ndarray, c: np.ndarray, n: int) -> np.ndarray:
    """Gd of validated tables: min Lemma 3 distance to the states of G."""
    out = np.full(b.shape, np.iinfo(np.int64).max, dtype=np.int64)
    for gb, gc in _gs_states(n):
        np.minimum(out, hex_distance(b, c, gb, gc), out=out)
    return out


def _halfplane_distance(b: np.ndarray, c: np.ndarray, n: int, t: float, c_min: int, k_rhs: int) -> np.ndarray:
    """Least k with a state y, d(x, y) <= k, c_y >= c_min and (8-T) b_y - (8+T) c_y > k_rhs (N + 1 if none)."""
    s = b + c
    lo = np.zeros(b.shape, dtype=np.int64)
    hi = np.full(b.shape, n + 1, dtype=np.int64)

    def reachable(k: np.ndarray) -> np.ndarray:
        c_y = np.maximum(c - 2 * k, c_min)
        b_y = np.minimum(b + 2 * k, np.minimum(s + 2 * k, 2 * n) - c_y)
        b_min = np.maximum(np.maximum(b - 2 * k, s - 2 * k - c_y), 0)
        ok = (c_y <= c + 2 * k) & (b_y >= b_min)
        return ok & ((8.0 - t) * b_y - (8.0 + t) * c_y > k_rhs)

    while True:
        open_ = lo < hi
        if not open_.any():
            return lo
        mid = (lo + hi) // 2
        good = reachable(mid)
        hi = np.where(open_ & good, mid, hi)
        lo = np.where(open_ & ~good, mid + 1, lo)


def unstable_dist(b: np.ndarray, c: np.ndarray, n: int, t: float) -> np.ndarray:
    """Ud of validated tables for a checked threshold t >= 6 (module docstring)."""
    parts = [
        _halfplane_distance(x, y, n, t, c_min, rhs) for x, y in ((b, c), (c, b)) for c_min, rhs in ((0, 16), (2, -16))
    ]
    return np.minimum.reduce(parts)


@validate_params({"b": COUNTS, "c": COUNTS, "n_families": N_FAMILIES})
@fill_doc
def gs_distance(b: ArrayLike, c: ArrayLike, n_families: int) -> int | np.ndarray:
    """gd: distance (Lemma 3 metric) from each table to ``G = {LS = GS}``, O(1) per table.

    A step is one family replaced (mathematics §4.4).

    Parameters
    ----------
    %(tdt_table_counts)s

    Returns
    -------
    int or ndarray
        gd of each table.

    Examples
    --------
    >>> from dpselect.apps.genomics import gs_distance
    >>> int(gs_distance(296, 0, 150))
    2
    """
    n = n_families
    b, c = check_tables(b, c, n)
    return gs_dist(b, c, n)[()]


@validate_params({"b": COUNTS, "c": COUNTS, "n_families": N_FAMILIES, "threshold": THRESHOLD})
@fill_doc
def unstable_distance(b: ArrayLike, c: ArrayLike, n_families: int, threshold: float = 6) -> int | np.ndarray:
    """ud: distance (Lemma 3 metric) from each table to ``U = {LS > threshold}``, O(log N) per table.

    For T = 6, U is Lemma 2's region (:func:`lemma2_region`); a step is one
    family replaced (mathematics §4.4).

    Parameters
    ----------
    %(tdt_table_counts)s
    threshold : float, default=6
        T, ``6 <= threshold < global_sensitivity(n_families)``.

    Returns
    -------
    int or ndarray
        ud of each table.

    Examples
    --------
    >>> from dpselect.apps.genomics import unstable_distance
    >>> int(unstable_distance(9, 0, 150)), int(unstable_distance(8, 0, 150))
    (0, 1)
    """
    n = n_families
    b, c = check_tables(b, c, n)
    t = check_threshold(threshold, n)
    return unstable_dist(b, c, n, t)[()]
