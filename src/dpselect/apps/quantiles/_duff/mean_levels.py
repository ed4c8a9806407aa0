"""The level sets of Duff's mean: the means reachable with k add/remove steps, exactly.

J_k = [L_k, U_k] (:func:`duff_mean_levels`) are computed in exact rational arithmetic on the
binary representation of the floats (:class:`_Levels`), so the utility of :func:`duff_mean` is
exact on the pieces between them (mathematics §6.1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ...._docstrings import fill_doc
from ...._params import validate_params
from ...._validation import check_int
from .._exponential.piecewise_em import grid_ceil
from .._order_stats import sorted_padded
from .._rules import BOUNDS, SAMPLE, Rule

__all__ = ["MeanLevels", "duff_mean_levels"]


@dataclass(frozen=True)
class MeanLevels:
    """The level sets J_k = [lower[k], upper[k]] of Duff's mean (returned by :func:`duff_mean_levels`).

    Parameters
    ----------
    lower : ndarray
        L_0 >= L_1 >= ... (L_0 = mean(x)).
    upper : ndarray
        U_0 <= U_1 <= ... (U_0 = mean(x)).

    See Also
    --------
    duff_mean_levels : Ends ``(L, U)`` of the level sets J_k, k = 0..K' (K' = min(levels, n + 1))
    duff_mean : Duff exponential mechanism for the mean: epsilon-DP under add/remove
    duff_mean_intervals : Exact output law of :func:`duff_mean` (``granularity=0``), uniform on each piece
    """

    lower: np.ndarray
    upper: np.ndarray


def _check_levels(levels: Any, epsilon: float | None) -> int:
    if levels is None:
        if epsilon is None:
            raise ValueError("levels must be given")
        # public, data-independent default: levels beyond K carry relative weight <= e^{-40}
        return int(min(max(math.ceil(80.0 / epsilon), 8), 10**6))
    return check_int(levels, "levels", minimum=1)


#: The public number of levels K, required (an int >= 1).
LEVELS = Rule("an int >= 1", check=lambda v, n: _check_levels(v, None))


def _units(v: np.ndarray, e_min: int) -> np.ndarray:
    """``v / 2**e_min`` as exact Python ints (object array); every float here is a multiple of 2**e_min."""
    m, e = np.frexp(v)
    mant = (m * 2.0**53).astype(np.int64)  # exact: a float's 53-bit significand
    return mant.astype(object) << (e.astype(np.int64) - 53 - e_min)


def _exact_sum(v: np.ndarray, e_min: int) -> int:
    """``sum(v) / 2**e_min`` exactly.

    Int64 sums of the significand halves per exponent (no overflow for n < 2^35), then one
    Python shift-and-add per distinct exponent (at most ~2100).
    """
    m, e = np.frexp(v)
    mant = (m * 2.0**53).astype(np.int64)
    exps, inv = np.unique(e, return_inverse=True)
    hi = np.zeros(exps.size, dtype=np.int64)
    lo = np.zeros(exps.size, dtype=np.int64)
    np.add.at(hi, inv, mant >> 26)
    np.add.at(lo, inv, mant & ((1 << 26) - 1))
    return sum(((int(h) << 26) + int(low)) << (int(x) - 53 - e_min) for h, low, x in zip(hi, lo, exps))


def _extreme_means(top: np.ndarray, total: int, n: int, Kp: int) -> tuple[np.ndarray, np.ndarray]:
    """Min over i + j = k, j >= 1 of the shifted mean, k = 1..Kp, as exact ``(numerators, denominators)``.

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


@validate_params({"x": SAMPLE, "bounds": BOUNDS, "levels": LEVELS})
@fill_doc
def duff_mean_levels(x: ArrayLike, *, bounds: tuple[float, float], levels: int) -> MeanLevels:
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
    %(clamped_data)s
    levels : int
        K, the number of level sets (public, >= 1).

    Returns
    -------
    MeanLevels
        ``lower`` (L_0 >= L_1 >= ..., L_0 = mean(x)) and ``upper`` (U_0 <= U_1 <= ...), K' + 1
        each (K' = min(levels, n + 1)).

    See Also
    --------
    MeanLevels : The level sets J_k = [lower[k], upper[k]] of Duff's mean (returned by :func:`duff_mean_levels`)
    duff_mean : Duff exponential mechanism for the mean: epsilon-DP under add/remove
    duff_mean_intervals : Exact output law of :func:`duff_mean` (``granularity=0``), uniform on each piece

    Examples
    --------
    >>> from dpselect.apps.quantiles import duff_mean_levels
    >>> J = duff_mean_levels([1.0, 3.0], bounds=(0.0, 4.0), levels=2)
    >>> J.lower.tolist(), J.upper.tolist()
    ([2.0, 1.3333333333333333, 0.5], [2.0, 2.6666666666666665, 3.5])
    """
    a, b = bounds
    ext = sorted_padded(x, a, b)
    return MeanLevels(*_mean_levels(ext, a, b, levels))


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
