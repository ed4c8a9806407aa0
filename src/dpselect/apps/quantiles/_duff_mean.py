"""Duff mean: the exponential mechanism on the add/remove distance to "mean = v".

Gillenwater & Muñoz Medina (Duff); mathematics §6.1.  Neighbour relation:
**add/remove**.  Level sets ``J_k = [L_k, U_k]`` of means reachable with at
most ``k`` add/remove operations (at least one addition) are exact up to a
finite set (derivation in :func:`duff_mean_levels`); the utility is ``-k`` on
the ring ``J_k \\ J_{k-1}`` and ``-(K+1)`` beyond the public number of levels
``K``.  Floating point: the level-set ends are exact rationals of Python
integers (every float is a multiple of a common power of two); the grid
release uses their exact grid indices, the continuous law and
:func:`duff_mean_levels` their correctly rounded floats.  Re-exported by
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
from typing import Any, Literal, overload

import numpy as np
from numpy.typing import ArrayLike

from ..._params import int_at_least, validate_params
from ..._validation import check_epsilon, check_int, check_random_state
from ...accounting import Accountant, charge
from ...output_law import OutputLaw
from ...typing import SeedLike
from ._order_stats import check_bounds, check_points, sorted_padded
from ._rules import ACCOUNTANT, ANY, BOUNDS, EPSILON, GRANULARITY, METHOD, OUT_OF_BOUNDS_RULE, SEED, SIZE, Rule
from ._piecewise_em import (
    check_output_grid,
    em_privacy,
    grid_ceil,
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


#: The public number of levels K, required (an int >= 1).
LEVELS = Rule("an int >= 1", check=lambda v, n: _check_levels(v, None))
_X_PARAM = """x : array_like
        1-D array of finite floats (n >= 1); records outside ``bounds`` are clamped to them."""


def _units(v: np.ndarray, e_min: int) -> np.ndarray:
    """``v / 2**e_min`` as exact Python ints (object array); every float here is a multiple of 2**e_min."""
    m, e = np.frexp(v)
    mant = (m * 2.0**53).astype(np.int64)  # exact: a float's 53-bit significand
    return mant.astype(object) << (e.astype(np.int64) - 53 - e_min)


def _exact_sum(v: np.ndarray, e_min: int) -> int:
    """``sum(v) / 2**e_min`` exactly: int64 sums of the significand halves per exponent (no overflow
    for n < 2^35), then one Python shift-and-add per distinct exponent (at most ~2100)."""
    m, e = np.frexp(v)
    mant = (m * 2.0**53).astype(np.int64)
    exps, inv = np.unique(e, return_inverse=True)
    hi = np.zeros(exps.size, dtype=np.int64)
    lo = np.zeros(exps.size, dtype=np.int64)
    np.add.at(hi, inv, mant >> 26)
    np.add.at(lo, inv, mant & ((1 << 26) - 1))
    return sum(((int(h) << 26) + int(low)) << (int(x) - 53 - e_min) for h, low, x in zip(hi, lo, exps))


def _extreme_means(top: np.ndarray, total: int, n: int, Kp: int) -> tuple[np.ndarray, np.ndarray]:
    """min over i + j = k, j >= 1 of the shifted mean, k = 1..Kp, as exact ``(numerators, denominators)``.

    ``top`` = the m = min(Kp - 1, n) largest shifted values t_1 >= t_2 >= ... (data minus the
    bound, all >= 0; exact Python ints), ``total`` their full sum over the n records.  With
    T_i the sum of the i largest, removing them and adding j = k - i copies of the bound gives
    g_k(i) = N_i / D, N_i = total - T_i, D = n + k - 2i (>= 1 for i <= min(k - 1, n)).  Moving
    from i to i + 1 lowers g_k iff t_{i+1} D > 2 N_i, i.e. iff k >= c_i = floor(2 N_i / t_{i+1})
    + 2i - n + 1; h_k(i) = t_{i+1} D - 2 N_i is nonincreasing in i (h_k(i+1) - h_k(i) =
    (t_{i+2} - t_{i+1})(D - 2) <= 0), so g_k decreases while the test holds and never again
    after: the minimiser is the number of leading i with k >= max_{i' <= i} c_{i'} (capped at
    min(k - 1, n)), one ``searchsorted`` for all k.  Integer arithmetic throughout.
    """
    m = top.size
    T = np.empty(m + 1, dtype=object)
    T[0] = 0
    T[1:] = np.cumsum(top) if m else T[1:]
    N = total - T
    c = np.full(m, Kp + 2, dtype=np.int64)
    pos = np.flatnonzero(top > 0)
    if pos.size:
        thr = (2 * N[pos]) // top[pos] + (2 * pos - n + 1)
        c[pos] = np.minimum(thr, Kp + 2).astype(np.int64)
    c = np.maximum.accumulate(c)
    k = np.arange(1, Kp + 1, dtype=np.int64)
    i = np.minimum(np.searchsorted(c, k, side="right"), np.minimum(k - 1, n))
    return N[i], n + k - 2 * i


@validate_params({"x": ANY, "bounds": BOUNDS, "levels": LEVELS})
def duff_mean_levels(x: ArrayLike, *, bounds: tuple[float, float], levels: int) -> tuple[np.ndarray, np.ndarray]:
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

    Parameters
    ----------
    x : array_like
        1-D array of finite floats (n >= 1); records outside ``bounds`` are clamped to them.
    bounds : tuple of float
        Public ``(a, b)`` with ``a < b``.
    levels : int
        K, the number of level sets (public, >= 1).

    Returns
    -------
    L : ndarray
        The lower ends L_0 >= L_1 >= ... (L_0 = mean(x)).
    U : ndarray
        The upper ends U_0 <= U_1 <= ....

    Examples
    --------
    >>> from dpselect.apps.quantiles import duff_mean_levels
    >>> L, U = duff_mean_levels([1.0, 3.0], bounds=(0.0, 4.0), levels=2)
    >>> L.tolist(), U.tolist()
    ([2.0, 1.3333333333333333, 0.5], [2.0, 2.6666666666666665, 3.5])
    """
    a, b = bounds
    ext = sorted_padded(x, a, b)
    return _mean_levels(ext, a, b, levels)


class _Levels:
    """Exact level-set ends ``L_k = L_num[k] / L_den[k] * 2**e_min`` (likewise U), k = 0..K'.

    Every float (data, bounds, grid) is a multiple of 2**e_min, so the means are exact
    rationals of Python ints; floats and grid indices are taken from them by correct
    rounding (:meth:`floats`, :meth:`grid_starts`), which commutes with the min / max
    that follow.  Cost: O(n) numpy work plus O(K') Python-integer operations.
    """

    def __init__(self, ext: np.ndarray, K: int, lam: float = 1.0) -> None:
        y = ext[1:-1]
        n = y.size
        a, b = float(ext[0]), float(ext[-1])
        self.n, self.Kp = n, min(K, n + 1)
        self.e_min = int(np.frexp(np.concatenate((y, [a, b, lam])))[1].min()) - 53
        A, B = (int(v) for v in _units(np.array([a, b]), self.e_min))
        total = _exact_sum(y, self.e_min)
        m = min(self.Kp - 1, n)
        g_num, g_den = _extreme_means(_units(y[::-1][:m], self.e_min) - A, total - n * A, n, self.Kp)
        h_num, h_den = _extreme_means(B - _units(y[:m], self.e_min), n * B - total, n, self.Kp)
        self.L_den = np.concatenate(([n], g_den)).astype(object)
        self.U_den = np.concatenate(([n], h_den)).astype(object)
        self.L_num = A * self.L_den + np.concatenate(([total - n * A], g_num))
        self.U_num = B * self.U_den - np.concatenate(([n * B - total], h_num))

    def _accumulate(self, L: np.ndarray, U: np.ndarray, a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
        # J_k = [L_k, U_k] nested; J_{n+1} = [a, b] (remove everything, add one record anywhere)
        L = np.minimum.accumulate(np.maximum(np.minimum(L, L[0]), a))
        U = np.maximum.accumulate(np.minimum(np.maximum(U, U[0]), b))
        if self.Kp == self.n + 1:
            L[-1], U[-1] = a, b
        return L, U

    def floats(self, a: float, b: float) -> tuple[np.ndarray, np.ndarray]:
        """(L, U) rounded to nearest float (Python's int / int is correctly rounded)."""
        e = self.e_min
        if e >= 0:
            L, U = (self.L_num << e) / self.L_den, (self.U_num << e) / self.U_den
        else:
            L, U = self.L_num / (self.L_den << -e), self.U_num / (self.U_den << -e)
        return self._accumulate(L.astype(np.float64), U.astype(np.float64), a, b)

    def grid_starts(self, a: float, b: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
        """(ceil(L_k / lambda), ceil(U_k / lambda)) as exact int64 grid indices."""
        shift = int(np.frexp(lam)[1]) - 1 - self.e_min  # lambda = 2^(e - 1) = 2^shift units
        ia, ib = grid_ceil(np.array([a, b]), lam)
        L = (-((-self.L_num) // (self.L_den << shift))).astype(np.int64)
        U = (-((-self.U_num) // (self.U_den << shift))).astype(np.int64)
        return self._accumulate(L, U, ia, ib)


def _mean_levels(ext: np.ndarray, a: float, b: float, K: int) -> tuple[np.ndarray, np.ndarray]:
    return _Levels(ext, K).floats(a, b)


def _mean_pieces(ext: np.ndarray, a: float, b: float, K: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    L, U = _mean_levels(ext, a, b, K)
    lefts, rights = _piece_ends(L, U, a, b)
    return lefts, rights, _piece_utilities(L.size - 1, K)


def _piece_ends(L: np.ndarray, U: np.ndarray, a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    """Pieces [a, L_K'], [L_k, L_{k-1}] (k = K'..1), [U_{k-1}, U_k] (k = 1..K'), [U_K', b]."""
    lefts = np.concatenate(([a], L[::-1][:-1], U[:-1], [U[-1]]))
    rights = np.concatenate(([L[-1]], L[::-1][1:], U[1:], [b]))
    return lefts, rights


def _piece_utilities(Kp: int, K: int) -> np.ndarray:
    k = np.arange(Kp, 0, -1, dtype=np.float64)
    return -np.concatenate(([K + 1.0], k, k[::-1], [K + 1.0]))


def _grid_pieces(ext: np.ndarray, a: float, b: float, K: int, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """(first grid index, utility) of each piece, the indices ceil(l_j / lambda) exact."""
    levels = _Levels(ext, K, lam)
    L, U = levels.grid_starts(a, b, lam)
    return _piece_ends(L, U, grid_ceil(np.array([a]), lam)[0], None)[0], _piece_utilities(levels.Kp, K)


@validate_params({"x": ANY, "epsilon": EPSILON, "bounds": BOUNDS, "levels": int_at_least(1, none=True)})
def duff_mean_intervals(
    x: ArrayLike, epsilon: float, *, bounds: tuple[float, float], levels: int | None = None
) -> OutputLaw:
    """Exact output law of :func:`duff_mean` (``granularity=0``), uniform on each piece.

    Pieces, left to right: [a, L_K'] (utility -(K+1)), the left rings
    [L_k, L_{k-1}] (utility -k, k = K'..1), the right rings [U_{k-1}, U_k]
    (k = 1..K'), and [U_K', b] (utility -(K+1)); empty pieces have probability 0.
    The utilities are :func:`duff_mean_utility` at the pieces' interiors.

    Parameters
    ----------
    x : array_like
        1-D array of finite floats (n >= 1); records outside ``bounds`` are clamped to them.
    epsilon : float
        Privacy parameter (> 0) of the mechanism: epsilon-DP under add/remove neighbours
        (mathematics §6.1).
    bounds : tuple of float
        Public ``(a, b)`` with ``a < b``.
    levels : int or None, default=None
        K (public); None: ``min(max(ceil(80/epsilon), 8), 10**6)``.

    Returns
    -------
    OutputLaw
        The pieces (``law.lo``, ``law.hi``) and their probabilities.

    Examples
    --------
    >>> from dpselect.apps.quantiles import duff_mean_intervals
    >>> law = duff_mean_intervals([1.0, 3.0], 1.0, bounds=(0.0, 4.0), levels=2)
    >>> [round(v, 3) for v in law.lo]
    [0.0, 0.5, 1.333, 2.0, 2.667, 3.5]
    """
    a, b = bounds
    K = _check_levels(levels, epsilon)
    ext = sorted_padded(x, a, b)
    lefts, rights, utilities = _mean_pieces(ext, a, b, K)
    return OutputLaw(piecewise_probabilities(lefts, rights, utilities, epsilon), lo=lefts, hi=rights)


@validate_params({"v": ANY, "x": ANY, "bounds": BOUNDS, "levels": LEVELS})
def duff_mean_utility(
    v: ArrayLike, x: ArrayLike, *, bounds: tuple[float, float], levels: int
) -> float | np.ndarray:
    """Truncated Duff utility of the mean: ``-min(d(v), K + 1)`` (a.e. exact).

    ``d(v) = min{k : v in J_k}`` (:func:`duff_mean_levels`), 0 at mean(x).  It
    equals the true add/remove distance to "mean = v" except on the finite set
    of means reachable by pure removals (and the level-0 point), where it is
    larger -- i.e. off a null set it is exact, never a lower bound on the
    distance.  Hence for neighbours |u_x(v) - u_y(v)| <= 1 for all v outside a
    finite set (e.g. x = {0}, y = {0, 10} on [0, 10]: at v = 0 the values are
    0 and -2), which does not change the EM density, so the mechanism is
    epsilon-DP.  Clipping at K + 1 preserves the bound; K must be public.

    Parameters
    ----------
    v : array_like
        Points of [a, b] (any shape).
    x : array_like
        1-D array of finite floats (n >= 1); records outside ``bounds`` are clamped to them.
    bounds : tuple of float
        Public ``(a, b)`` with ``a < b``.
    levels : int
        K (public, >= 1).

    Returns
    -------
    float or ndarray
        The utility at ``v`` (a float for a scalar ``v``), in [-(K + 1), 0].

    Examples
    --------
    >>> from dpselect.apps.quantiles import duff_mean_utility
    >>> duff_mean_utility([2.0, 0.5], [1.0, 3.0], bounds=(0.0, 4.0), levels=2).tolist()
    [0.0, -2.0]
    """
    a, b = bounds
    ext = sorted_padded(x, a, b)
    K = levels
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


@overload
def duff_mean(
    x: ArrayLike, epsilon: float, *, bounds: tuple[float, float], levels: int | None = ..., rng: SeedLike = ...,
    size: None = ..., method: Literal["auto", "race", "inverse"] = ..., accountant: Accountant | None = ...,
    granularity: float | None = ..., on_out_of_bounds: Literal["clip", "raise"] = ...,
) -> float: ...
@overload
def duff_mean(
    x: ArrayLike, epsilon: float, *, bounds: tuple[float, float], levels: int | None = ..., rng: SeedLike = ...,
    size: int, method: Literal["auto", "race", "inverse"] = ..., accountant: Accountant | None = ...,
    granularity: float | None = ..., on_out_of_bounds: Literal["clip", "raise"] = ...,
) -> np.ndarray: ...
@validate_params({"x": ANY, "epsilon": EPSILON, "bounds": BOUNDS, "levels": int_at_least(1, none=True), "rng": SEED,
                  "size": SIZE, "method": METHOD, "accountant": ACCOUNTANT, "granularity": GRANULARITY,
                  "on_out_of_bounds": OUT_OF_BOUNDS_RULE})
def duff_mean(
    x: ArrayLike,
    epsilon: float,
    *,
    bounds: tuple[float, float],
    levels: int | None = None,
    rng: SeedLike = None,
    size: int | None = None,
    method: Literal["auto", "race", "inverse"] = "auto",
    accountant: Accountant | None = None,
    granularity: float | None = None,
    on_out_of_bounds: Literal["clip", "raise"] = "clip",
) -> float | np.ndarray:
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

    Parameters
    ----------
    x : array_like
        1-D array of finite floats (n >= 1); records outside ``bounds`` are clamped to them.
    epsilon : float
        Privacy parameter (> 0): epsilon-DP under add/remove neighbours (mathematics §6.1).
    bounds : tuple of float
        Public ``(a, b)`` with ``a < b``.
    levels : int or None, default=None
        K (public); None: ``min(max(ceil(80/epsilon), 8), 10**6)``.
    rng : None, int, Generator or "secure", default=None
        The randomness (keyword-only); a seed reproduces.
    size : int or None, default=None
        None (one float) or the number of iid draws (an array).
    method : {"auto", "race", "inverse"}, default="auto"
        How the piece is chosen on the continuous path (same law).
    accountant : Accountant or None, default=None
        Charged ``Privacy(epsilon, 0, "add_remove")`` before any randomness is drawn.
    granularity : float or None, default=None
        The output grid (a power of two <= b - a; None: 2^(floor(log2(b - a)) - 20); 0: floats).
    on_out_of_bounds : {"clip", "raise"}, default="clip"
        "clip": records outside ``bounds`` are clamped to them (private); "raise": a
        ValueError instead, **not private**.

    Returns
    -------
    float or ndarray
        The private mean (an array of ``size`` draws).
    """
    a, b = bounds
    K = _check_levels(levels, epsilon)
    lam = check_output_grid(granularity, a, b)
    ext = sorted_padded(x, a, b, on_out_of_bounds=on_out_of_bounds)
    gen = check_random_state(rng)
    charge(accountant, em_privacy(epsilon))
    if lam:
        starts, utilities = _grid_pieces(ext, a, b, K, lam)
        return sample_piecewise_grid(None, utilities, epsilon, a, b, lam, size, gen, starts=starts)
    lefts, rights, utilities = _mean_pieces(ext, a, b, K)
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
    starts, utilities = _grid_pieces(ext, a, b, K, lam)
    return piecewise_grid_law(None, utilities, epsilon, a, b, lam, starts=starts)
