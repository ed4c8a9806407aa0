"""The exact output law of the Duff median: interval costs and the non-zero window.

Sorted data ``y_1 <= ... <= y_n`` in ``[a, b]``, ``y_0 = a``, ``y_{n+1} = b``,
``m = ceil(n/2)``.  For ``v`` strictly inside the ``j``-th interval
``(y_j, y_{j+1})`` (``j = 0..n``) the add/remove distance to "lower median =
v" is ``d_j = max(n - 2j, 2j + 1 - n)`` (mathematics §6.1, mathematics §7 item 24), so
``P(interval j) ∝ lambda_j exp(-epsilon d_j / 2)``.

Only the window of levels whose mass is not exactly zero after normalisation
in double precision is touched (every level outside it has ``l_j - max l <
-750``, using ``lambda_j <= b - a``), so after the O(n log n) sort the cost is
O(window) and the law is identical to the full computation.  Windows longer
than 2**16 intervals (very small epsilon) are weighted without logs -- ``d_j``
grows by 2 per step away from the median on each side, so the weights are two
geometric sequences (``.._exponential.piecewise_em._scale_geometric``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...._validation import check_epsilon
from .._exponential.piecewise_em import (
    _UNDERFLOW_MARGIN,
    _log_masses,
    _normalise_log,
    _sample_pieces,
    _scale_geometric,
    sample_piecewise_em,
    sample_piecewise_grid,
)
from .._order_stats import lower_median_index, sorted_padded
from .._rules import check_bounds

__all__: list[str] = []

#: Median windows longer than this are weighted without logs (geometric weights).
_FAST_WINDOW = 1 << 16
#: ... unless the upper bound on the max log-mass is this far above the lower bound.
_FAST_SHIFT_LIMIT = 600.0


def _median_costs(n: int, jlo: int, jhi: int) -> np.ndarray:
    """d_j = max(n - 2j, 2j + 1 - n) for j = jlo..jhi (interval (y_j, y_{j+1}))."""
    j = np.arange(jlo, jhi + 1, dtype=np.float64)
    return np.maximum(n - 2.0 * j, 2.0 * j + 1.0 - n)


def _level_window(n: int, level: int) -> tuple[int, int]:
    """Indices j with d_j <= level: ceil((n - level)/2) <= j <= floor((level + n - 1)/2)."""
    jlo = max(0, -((level - n) // 2))
    jhi = min(n, (level + n - 1) // 2)
    return jlo, jhi


def _median_plan(ext: np.ndarray, epsilon: float) -> tuple[int, int, float, float, bool]:
    """Window [jlo, jhi] of intervals outside which every normalised mass is exactly 0.

    Returns ``(jlo, jhi, mx, s, wide)``: ``mx`` is the largest log-mass found
    in the scanned central window (a lower bound on the global maximum), ``s``
    an upper bound on the global maximum log-mass, and ``wide`` says that the
    window is longer than ``_FAST_WINDOW`` and was not scanned (``s == mx``
    otherwise).  Levels c >= need have log-mass
    <= log(b - a) - epsilon c / 2 <= mx - 750, so they are exactly 0 after
    normalisation in double precision.
    """
    n = ext.size - 2
    log_width = math.log(ext[-1] - ext[0])
    level = min(n + 1, 64)
    while True:
        jlo, jhi = _level_window(n, level)
        lam = ext[jlo + 1 : jhi + 2] - ext[jlo : jhi + 1]
        with np.errstate(divide="ignore"):
            logm = np.log(lam) - (0.5 * epsilon) * _median_costs(n, jlo, jhi)
        mx = float(logm.max())
        if level >= n + 1:
            return jlo, jhi, mx, mx, False
        if mx == -math.inf:  # only empty (tied) intervals so far
            level = min(n + 1, 2 * level)
            continue
        need = 2.0 * (log_width - mx + _UNDERFLOW_MARGIN) / epsilon
        if need <= level:
            return jlo, jhi, mx, mx, False
        new_level = n + 1 if need >= n + 1 else min(n + 1, max(math.ceil(need), 2 * level))
        jlo2, jhi2 = _level_window(n, new_level)
        if jhi2 - jlo2 + 1 > _FAST_WINDOW:
            return jlo2, jhi2, mx, max(mx, log_width - 0.5 * epsilon * (level + 1)), True
        level = new_level


def _median_fast_masses(ext: np.ndarray, epsilon: float, jlo: int, jhi: int, s: float) -> np.ndarray:
    """Unnormalised masses lambda_j exp(-epsilon d_j / 2 - s) on [jlo, jhi] without logs.

    The weights are two geometric sequences in the distance from the median
    (d = c0 + 2r on each side, see :func:`_scale_geometric`); ``s`` bounds the
    maximal log-mass from above, so nothing overflows.
    """
    n = ext.size - 2
    m = lower_median_index(n)
    w = np.subtract(ext[jlo + 1 : jhi + 2], ext[jlo : jhi + 1])
    n_left = m - jlo  # j = m-1 down to jlo: d = (n - 2m + 2) + 2r
    _scale_geometric(w[:n_left][::-1], -0.5 * epsilon * (n - 2 * m + 2) - s, epsilon)
    _scale_geometric(w[n_left:], -0.5 * epsilon * (2 * m + 1 - n) - s, epsilon)
    return w


def _median_window_log_masses(ext: np.ndarray, epsilon: float, jlo: int, jhi: int) -> np.ndarray:
    n = ext.size - 2
    return _log_masses(ext[jlo : jhi + 1], ext[jlo + 1 : jhi + 2], -_median_costs(n, jlo, jhi), epsilon)


def median_distribution(x: Any, epsilon: float, bounds: Any) -> tuple[np.ndarray, np.ndarray, float, float]:
    epsilon = check_epsilon(epsilon)
    a, b = check_bounds(bounds)
    ext = sorted_padded(x, a, b)
    n = ext.size - 2
    jlo, jhi, _, _, _ = _median_plan(ext, epsilon)
    probs = np.zeros(n + 1)
    probs[jlo : jhi + 1] = _normalise_log(_median_window_log_masses(ext, epsilon, jlo, jhi))
    return ext, probs, a, b


def uniform_abs_dev(lo: np.ndarray, hi: np.ndarray, c: float) -> np.ndarray:
    """E|U - c| for U ~ Uniform[lo, hi] (lo <= hi), elementwise."""
    mid = 0.5 * lo + 0.5 * hi
    lam = hi - lo
    inside = (lo < c) & (c < hi)
    # ((c - lo)^2 + (hi - c)^2) / (2 lam) = lam (s^2 + (1 - s)^2) / 2, s = (c - lo)/lam: no overflow
    s = np.clip((c - lo) / np.where(lam > 0, lam, 1.0), 0.0, 1.0)
    within = 0.5 * lam * (s * s + (1.0 - s) * (1.0 - s))
    return np.where(inside, within, np.abs(mid - c))


def sample_median(ext: np.ndarray, epsilon: float, size: int | None, gen: np.random.Generator, method: str) -> Any:
    """Draws of the Duff median law of the padded sorted data ``ext`` (see the module docstring)."""
    n = ext.size - 2
    jlo, jhi, mx, s, wide = _median_plan(ext, epsilon)
    lefts, rights = ext[jlo : jhi + 1], ext[jlo + 1 : jhi + 2]
    if not wide or s - mx > _FAST_SHIFT_LIMIT or method == "race":
        utilities = -_median_costs(n, jlo, jhi)
        return sample_piecewise_em(lefts, rights, utilities, epsilon, size, gen, method)
    w = _median_fast_masses(ext, epsilon, jlo, jhi, s)
    return _sample_pieces(lefts, rights, size, gen, "inverse", w=w, overwrite=True)


def sample_median_grid(ext: np.ndarray, epsilon: float, lam: float, size: int | None, rng: Any) -> Any:
    """Draws of the Duff median on the grid lambda Z of [a, b]: exact EM over the grid points (all n + 1 intervals)."""
    n = ext.size - 2
    return sample_piecewise_grid(ext[:-1], -_median_costs(n, 0, n), epsilon, ext[0], ext[-1], lam, size, rng)
