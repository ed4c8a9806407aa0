"""Duff mean: the exponential mechanism on the add/remove distance to "mean = v".

Gillenwater & Muñoz Medina (Duff); mathematics §6.1.  Neighbour relation:
**add/remove**.  Level sets ``J_k = [L_k, U_k]`` of means reachable with at
most ``k`` add/remove operations (at least one addition) are exact up to a
finite set (derivation in :func:`duff_mean_levels`); the utility is ``-k`` on
the ring ``J_k \\ J_{k-1}`` and ``-(K+1)`` beyond the public number of levels
``K``.  Floating point: level boundaries are computed in double precision
(the mathematics page's guarantees are for exact arithmetic).  Re-exported by
:mod:`dpselect.apps.quantiles`.

Examples
--------
>>> from dpselect.apps.quantiles import duff_mean
>>> v = duff_mean([0.2, 0.4, 0.5, 0.9], 1.0, bounds=(0.0, 1.0), rng=0)
>>> 0.0 <= v <= 1.0
True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._validation import check_epsilon, check_int, check_random_state, check_size
from ...accounting import Accountant, charge
from ._order_stats import check_bounds, check_points, sorted_padded
from ._piecewise_em import (
    check_method,
    check_output_grid,
    em_privacy,
    piecewise_grid_law,
    piecewise_probabilities,
    sample_piecewise_em,
    sample_piecewise_grid,
)

__all__ = ["duff_mean", "duff_mean_intervals", "duff_mean_levels", "duff_mean_utility"]


def _check_levels(levels: Any, epsilon: float | None) -> int:
    if levels is None:
        if epsilon is None:
            raise ValueError("levels must be given")
        # public, data-independent default: levels beyond K carry relative weight <= e^{-40}
        return int(min(max(math.ceil(80.0 / epsilon), 8), 10**6))
    return check_int(levels, "levels", minimum=1)


def _extreme_means(shift: np.ndarray, K: int) -> np.ndarray:
    """min over i + j = k, j >= 1 of mean (in shifted coordinates, origin at the bound).

    ``shift`` = data minus the bound (all >= 0), sorted **descending**.  With
    T_i the sum of the i largest values, the mean after removing the i largest
    and adding j = k - i copies of the bound is g(i) = (T_n - T_i)/(n + k - 2i).
    Moving from i to i + 1 lowers g iff t_{i+1} > 2 g(i) (t_{i+1} = (i+1)-th
    largest); once false it stays false, so the minimiser is the first i where
    it fails (found by a vectorised binary search over k = 1..K).
    """
    n = shift.size
    T = np.concatenate(([0.0], np.cumsum(shift)))
    total = T[n]
    k = np.arange(1, K + 1)
    imax = np.minimum(k - 1, n)
    lo = np.zeros(K, dtype=np.int64)
    hi = imax.astype(np.int64)
    while True:
        active = lo < hi
        if not active.any():
            break
        mid = (lo + hi) // 2
        nxt = shift[np.minimum(mid, n - 1)]
        g_num = total - T[mid]
        improve = nxt * (n + k - 2 * mid) > 2.0 * g_num
        lo = np.where(active & improve, mid + 1, lo)
        hi = np.where(active & ~improve, mid, hi)
    best = np.full(K, np.inf)
    for off in (-1, 0, 1):  # guard against rounding at the switch point
        i = np.clip(lo + off, 0, imax)
        best = np.minimum(best, (total - T[i]) / (n + k - 2 * i))
    return np.maximum(best, 0.0)


def duff_mean_levels(x: Any, *, bounds: Any, levels: Any) -> tuple[np.ndarray, np.ndarray]:
    """Ends ``(L, U)`` of the level sets J_k, k = 0..K' (K' = min(levels, n + 1)).

    J_k = [L_k, U_k] is the set of means reachable from x with at most k
    add/remove operations using at least one addition (records in [a, b]);
    J_0 = {mean(x)}.  With exactly i removals and j >= 1 additions the
    reachable means form the full interval
    [(S - top_i + j a)/(n - i + j), (S - bottom_i + j b)/(n - i + j)]
    (subset sums of size i can be walked by swaps changing the sum by at most
    b - a <= the width j (b - a) of the addition range), each such interval
    contains mean(x), and adding a copy of a (b) never raises (lowers) the
    lower (upper) end, so L_k = min over i + j = k, j >= 1 (see
    :func:`_extreme_means`).  Means reachable only by pure removals form a
    finite set, so J_k equals the exact level set up to a null set; J_{n+1} = [a, b].
    """
    a, b = check_bounds(bounds)
    ext = sorted_padded(x, a, b)
    K = _check_levels(levels, None)
    return _mean_levels(ext, a, b, K)


def _mean_levels(ext: np.ndarray, a: float, b: float, K: int) -> tuple[np.ndarray, np.ndarray]:
    y = ext[1:-1]
    n = y.size
    Kp = min(K, n + 1)
    mu = float(np.mean(y))
    mu = min(max(mu, a), b)
    low = a + _extreme_means((y - a)[::-1], Kp)
    high = b - _extreme_means((b - y), Kp)
    L = np.concatenate(([mu], np.minimum(low, mu)))
    U = np.concatenate(([mu], np.maximum(high, mu)))
    L = np.minimum.accumulate(np.maximum(L, a))
    U = np.maximum.accumulate(np.minimum(U, b))
    if Kp == n + 1:  # remove everything, add one record anywhere: J_{n+1} = [a, b]
        L[-1], U[-1] = a, b
    return L, U


def _mean_pieces(ext: np.ndarray, a: float, b: float, K: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    L, U = _mean_levels(ext, a, b, K)
    Kp = L.size - 1
    k = np.arange(Kp, 0, -1, dtype=np.float64)
    lefts = np.concatenate(([a], L[::-1][:-1], U[:-1], [U[-1]]))
    rights = np.concatenate(([L[-1]], L[::-1][1:], U[1:], [b]))
    utilities = -np.concatenate(([K + 1.0], k, k[::-1], [K + 1.0]))
    return lefts, rights, utilities


def duff_mean_intervals(
    x: Any, epsilon: float, *, bounds: Any, levels: Any = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Exact output law of :func:`duff_mean`: ``(lefts, rights, utilities, probabilities)``.

    Pieces, left to right: [a, L_K'] (utility -(K+1)), the left rings
    [L_k, L_{k-1}] (utility -k, k = K'..1), the right rings [U_{k-1}, U_k]
    (k = 1..K'), and [U_K', b] (utility -(K+1)); empty pieces have probability 0.
    """
    epsilon = check_epsilon(epsilon)
    a, b = check_bounds(bounds)
    K = _check_levels(levels, epsilon)
    ext = sorted_padded(x, a, b)
    lefts, rights, utilities = _mean_pieces(ext, a, b, K)
    return lefts, rights, utilities, piecewise_probabilities(lefts, rights, utilities, epsilon)


def duff_mean_utility(v: Any, x: Any, *, bounds: Any, levels: Any) -> Any:
    """Truncated Duff utility of the mean: ``-min(d(v), K + 1)`` (a.e. exact).

    ``d(v) = min{k : v in J_k}`` (:func:`duff_mean_levels`), 0 at mean(x).  It
    equals the true add/remove distance to "mean = v" except on the finite set
    of means reachable by pure removals (and the level-0 point), where it is
    larger -- i.e. off a null set it is exact, never a lower bound on the
    distance.  Hence for neighbours |u_x(v) - u_y(v)| <= 1 for all v outside a
    finite set (e.g. x = {0}, y = {0, 10} on [0, 10]: at v = 0 the values are
    0 and -2), which does not change the EM density, so the mechanism is
    epsilon-DP.  Clipping at K + 1 preserves the bound; K must be public.
    """
    a, b = check_bounds(bounds)
    ext = sorted_padded(x, a, b)
    K = _check_levels(levels, None)
    L, U = _mean_levels(ext, a, b, K)
    vv = check_points(v, "v")
    if ((vv < a) | (vv > b)).any():
        raise ValueError("v must lie within bounds")
    mu = L[0]
    left = np.searchsorted(-L, -vv, side="left")
    right = np.searchsorted(U, vv, side="left")
    d = np.where(vv < mu, left, np.where(vv > mu, right, 0))
    d = np.where(d > L.size - 1, K + 1, d).astype(np.float64)
    u = 0.0 - d
    return float(u) if u.ndim == 0 else u


def duff_mean(
    x: Any,
    epsilon: float,
    *,
    bounds: Any,
    levels: Any = None,
    rng: Any = None,
    size: Any = None,
    method: str = "auto",
    accountant: Accountant | None = None,
    granularity: float | None = None,
) -> Any:
    """Duff exponential mechanism for the mean: epsilon-DP under add/remove.

    Utility ``u(v) = -min(d(v), K + 1)`` with ``K = levels`` (public; default
    ``min(max(ceil(80/epsilon), 8), 10**6)``, depending on epsilon only): the
    rings between consecutive level sets J_k get ``-k`` and the rest of
    [a, b] beyond J_K gets ``-(K+1)`` (for n + 1 <= K, J_{n+1} = [a, b] already).
    Density ∝ exp(epsilon u / 2) on [a, b] (Delta = 1); sampled with the same
    piecewise sampler as the median.  See :func:`duff_mean_levels`.

    ``accountant`` (optional :class:`~dpselect.accounting.Accountant`) is
    charged ``Privacy(epsilon, 0, "add_remove")`` before any randomness is drawn.

    ``granularity`` (a power of two <= b - a; None: 2^(floor(log2(b - a)) - 20)):
    the output is a grid point k lambda of [a, b] drawn exactly with
    probability ∝ exp(epsilon u(k lambda) / 2) (the exponential mechanism over
    the public grid, floating-point safe; ``method`` unused); 0 gives the
    continuous mechanism sampled with floats (paper reproductions).
    """
    epsilon = check_epsilon(epsilon)
    a, b = check_bounds(bounds)
    K = _check_levels(levels, epsilon)
    size = check_size(size)
    method = check_method(method)
    lam = check_output_grid(granularity, a, b)
    ext = sorted_padded(x, a, b)
    gen = check_random_state(rng)
    charge(accountant, em_privacy(epsilon))
    lefts, rights, utilities = _mean_pieces(ext, a, b, K)
    if lam:
        return sample_piecewise_grid(lefts, utilities, epsilon, a, b, lam, size, gen)
    return sample_piecewise_em(lefts, rights, utilities, epsilon, size, gen, method)


def duff_mean_grid_law(
    x: Any, epsilon: float, *, bounds: Any, levels: Any = None, granularity: float | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact law of :func:`duff_mean` on its grid: (first grid index, n_j, P[each point of piece j])."""
    epsilon = check_epsilon(epsilon)
    a, b = check_bounds(bounds)
    K = _check_levels(levels, epsilon)
    lam = check_output_grid(granularity, a, b)
    if not lam:
        raise ValueError("granularity must be > 0 for the grid law (0 is the continuous law: duff_mean_intervals)")
    ext = sorted_padded(x, a, b)
    lefts, _, utilities = _mean_pieces(ext, a, b, K)
    return piecewise_grid_law(lefts, utilities, epsilon, a, b, lam)
