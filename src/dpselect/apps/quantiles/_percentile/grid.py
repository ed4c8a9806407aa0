"""Shared helpers of :mod:`dpselect.apps.quantiles`: the public grid, per-bin counts, ranks.

Records are snapped to the nearest grid point (a value exactly half-way
between two grid points goes to the lower one) and reduced to per-bin counts
h; everything downstream works on h (``np.cumsum`` + ``np.searchsorted``).

Rank conventions (1-indexed rank k of the percentile record among n):

* ``"paper"`` (Chaves et al. Def. 5.1): k = max(1, floor(p n / 100));
* ``"code"`` (the authors' code: 0-indexed position floor(p n / 100), clamped
  to the last record for p = 100): k = min(floor(p n / 100) + 1, n).

Both are computed exactly for the given float p (``fractions.Fraction``), and
in both k(n + 1) - k(n) is 0 or 1, which the distance utility's sensitivity
argument uses (:func:`dpselect.apps.quantiles.rank_distances`).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from ...._validation import check_array_1d, check_counts, check_out_of_bounds, check_probability_in, clip_to_bounds
from .._rules import RANK_CONVENTIONS, check_grid

__all__ = ["RANK_CONVENTIONS", "rank"]


def check_p(p: Any) -> float:
    return check_probability_in(p, "p", 0.0, 100.0, closed=True)


def check_rank_convention(convention: Any) -> str:
    if convention not in RANK_CONVENTIONS:
        raise ValueError(f"rank_convention must be one of {RANK_CONVENTIONS}, got {convention!r}")
    return str(convention)


def snap(values: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Index of the nearest grid point for each value (ties -> the lower point)."""
    if grid.size == 1:
        return np.zeros(values.size, dtype=np.int64)
    hi = np.clip(np.searchsorted(grid, values, side="left"), 1, grid.size - 1)
    lo = hi - 1
    return np.where(grid[hi] - values < values - grid[lo], hi, lo).astype(np.int64)


def raw_values(x: Any, grid: np.ndarray, name: str = "x") -> np.ndarray:
    arr = check_array_1d(x, name)  # non-empty (n >= 1), no NaN / inf
    lo, hi = grid[0], grid[-1]
    if (arr < lo).any() or (arr > hi).any():
        raise ValueError(f"{name} must lie within the grid range [{float(lo):g}, {float(hi):g}]")
    return arr


def _dask_bin_counts(x: Any, grid: np.ndarray) -> np.ndarray:
    """Per-chunk counts (validated chunk by chunk), summed: the same counts as in memory."""
    if x.ndim != 1:
        raise ValueError(f"x must be 1-D, got shape {x.shape}")

    def block(b: np.ndarray) -> np.ndarray:
        arr = raw_values(b, grid) if b.size else np.empty(0)
        return np.bincount(snap(arr, grid), minlength=grid.size).astype(np.int64)[None, :]

    parts = x.map_blocks(block, dtype=np.int64, chunks=((1,) * x.numblocks[0], (grid.size,)), new_axis=1)
    h = np.asarray(parts.sum(axis=0).compute(), dtype=np.int64)
    if int(h.sum()) == 0:
        raise ValueError("x must not be empty")
    return h


def bin_counts(x: Any, grid: np.ndarray, histogram: bool) -> np.ndarray:
    """Counts per grid point (int64, length len(grid), total >= 1); a dask array is counted per chunk."""
    if not isinstance(histogram, (bool, np.bool_)):
        raise TypeError(f"histogram must be a bool, got {type(histogram).__name__}")
    if histogram:
        h = check_counts(x, "x")
        if h.size != grid.size:
            raise ValueError(f"x must hold one count per grid point ({grid.size}), got {h.size}")
        if int(h.sum()) == 0:
            raise ValueError("x must hold at least one record (all counts are 0)")
        return h
    if hasattr(x, "dask") and hasattr(x, "map_blocks"):
        return _dask_bin_counts(x, grid)
    arr = raw_values(x, grid)
    return np.bincount(snap(arr, grid), minlength=grid.size).astype(np.int64)


def rank(p: float, n: int, *, convention: str = "paper") -> int:
    """The 1-indexed rank k of the p-th percentile among n records (module docstring).

    Examples
    --------
    >>> from dpselect.apps.quantiles._percentile.grid import rank
    >>> rank(50, 10), rank(50, 10, convention="code"), rank(100, 10, convention="code")
    (5, 6, 10)
    """
    p = check_p(p)
    convention = check_rank_convention(convention)
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    f = math.floor(Fraction(p) * int(n) / 100)
    return max(1, f) if convention == "paper" else min(f + 1, int(n))


def counts_and_rank(
    x: Any, p: Any, grid: Any, histogram: bool, rank_convention: Any, on_out_of_bounds: str = "clip"
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(counts h, float grid, original grid, rank k), every argument validated.

    Raw records outside [grid[0], grid[-1]] are clamped to it (a per-record map; they then
    snap to the end points as the nearest grid points), or refused with ``"raise"`` (not private).
    """
    p = check_p(p)
    g, g_orig = check_grid(grid)
    convention = check_rank_convention(rank_convention)
    check_out_of_bounds(on_out_of_bounds)
    raw = isinstance(histogram, (bool, np.bool_)) and not histogram
    if raw and not hasattr(x, "dask"):
        x = clip_to_bounds(check_array_1d(x, "x"), (g[0], g[-1]), on_out_of_bounds)
    elif raw and on_out_of_bounds == "clip":
        x = x.clip(g[0], g[-1])  # dask: lazily, chunk by chunk
    h = bin_counts(x, g, histogram)
    return h, g, g_orig, rank(p, int(h.sum()), convention=convention)


def stability(h: np.ndarray, k: int) -> tuple[int, int, int]:
    """(v_index, j_l, j_g) for the record of rank k (1-indexed) in the counts h."""
    cum = np.cumsum(h)
    v = int(np.searchsorted(cum, k, side="left"))
    below = int(cum[v - 1]) if v > 0 else 0
    return v, k - 1 - below, below + int(h[v]) - k
