"""Adaptive composition of eta-bounded-range mechanisms by dynamic programming (Dong, Durfee & Rogers 2020).

For neighbours x, y an eta-bounded-range (eta-BR) mechanism has privacy loss
L in a window [t - eta, t] with E_P[e^-L] = 1, so t is in [0, eta].  Let
V_r(z) be the largest hockey-stick divergence E_P[(1 - e^(z - L))_+] of r
such mechanisms composed adaptively (each chosen after the earlier outputs,
eta fixed in advance).  Conditioning on the first output,

.. math::

    V_r(z) = \\sup_{\\text{first pair}} \\mathbb{E}_{P_1}\\bigl[V_{r-1}(z - L_1)\\bigr],
    \\qquad V_0(z) = (1 - e^{z})_+ ,

and y -> V_{r-1}(z + ln y) is convex (a supremum of expectations of
(1 - c y)_+), so among laws on a window with E e^-L = 1 the two-point law on
the window's ends is the worst (Dong, Durfee & Rogers 2020, §4-§6 reduce to
these generalised randomized responses the same way).  On a grid z = n h with
eta = m h, every window [t - eta, t] with t in [j h, (j + 1) h] lies in
[j h - eta, (j + 1) h], whose two-point law (ends on the grid) is worse still,
so the recursion

.. math::

    D_r(n) = \\max_{0 \\le j < m} \\; q_j D_{r-1}(n - j - 1) + (1 - q_j) D_{r-1}(n - j + m),
    \\qquad q_j = \\frac{e^{\\eta - jh} - 1}{e^{\\eta - jh} - e^{-(j+1)h}},

gives D_r >= V_r at every grid point (by induction: V is decreasing in z).
Negative z use V_r(z) = 1 - e^z + e^z V_r(-z) (the class is closed under
swapping P and Q); z above the grid use Bun & Steinke's tail bound
exp(-(z - rho)^2 / (4 rho)) for rho = r eta^2/8 (eta-BR is eta^2/8-zCDP).
The reported epsilon is the first grid point with D_k <= delta.  Its
pessimism is that of widening each window by h (relative error about h/eta);
the grid is chosen to keep the cost near 3e7 operations.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .._validation import check_delta, check_int, check_positive
from .composition import zcdp_epsilon

__all__ = ["br_adaptive_epsilon"]

_WORK = 3e7  # target number of grid operations
_MIN_STEPS = 8  # fewer grid steps per eta than this: too loose, no statement from this route
_MAX_STEPS = 2000


def br_adaptive_epsilon(eta: float, k: int, delta: float) -> float:
    r"""epsilon of k adaptively chosen eta-bounded-range mechanisms at ``delta``, by dynamic programming.

    .. math::

        V_r(z) = \sup_{t \in [0, \eta]} \; q_t V_{r-1}(z - t) + (1 - q_t) V_{r-1}(z - t + \eta),
        \qquad q_t = \frac{e^{\eta} - e^{t}}{e^{\eta} - 1}, \quad V_0(z) = (1 - e^z)_+,

    is the largest delta at epsilon = z of r eta-BR mechanisms chosen
    adaptively (the exact adaptive optimum, Dong, Durfee & Rogers 2020).  It
    is bounded from above on a grid (each window widened by one grid step; see
    the module notes), so the result is valid and within about one grid step
    per eta (relative) of the optimum.  Returns ``inf`` when ``k`` is too
    large for a useful grid.

    Parameters
    ----------
    eta : float
        The bounded-range parameter of every mechanism, > 0.
    k : int
        The number of mechanisms, >= 1.
    delta : float
        The delta of the composed guarantee, in (0, 1).

    Returns
    -------
    float
        epsilon' (never below the exact adaptive optimum).

    Examples
    --------
    >>> round(br_adaptive_epsilon(0.05, 100, 1e-6), 4)  # zCDP: 1.1429, two-candidate EM worst case: 1.0577
    1.0744
    """
    eta = check_positive(eta, "eta")
    k = check_int(k, "k", minimum=1)
    d = check_delta(delta)
    if d <= 0.0:
        raise ValueError(f"delta must be > 0, got {delta!r}")
    return _recursion(eta, k, d)


def _tail(z: np.ndarray, r: int, eta: float) -> np.ndarray:
    """A bound on V_r(z) above the grid: 0 from z = r eta on (the loss never exceeds it), below that
    Bun-Steinke's bound exp(-(z - rho)^2 / (4 rho)) for rho = r eta^2 / 8 (1 where it says nothing)."""
    rho = r * eta * eta / 8.0
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = np.where(z > rho, np.exp(-((z - rho) ** 2) / (4.0 * rho)), 1.0) if rho > 0 else 1.0
    return np.where(z >= r * eta, 0.0, bound)


@lru_cache(maxsize=128)
def _recursion(eta: float, k: int, delta: float) -> float:
    top = min(k * eta, 2.0 * zcdp_epsilon(k * eta * eta / 8.0, delta) + eta)  # the grid's extent
    m = int(min(_MAX_STEPS, math.sqrt(_WORK * eta / (k * top))))
    if m < _MIN_STEPS:
        return math.inf
    h = eta / m
    n_top = max(int(math.ceil(top / h)), m + 2)
    z = np.arange(n_top + 1) * h
    j = np.arange(m, dtype=float)
    q = np.expm1(eta - j * h) / (np.exp(eta - j * h) - np.exp(-(j + 1.0) * h))
    neg_z = -np.arange(m + 1, 0, -1) * h  # z = -(m+1) h .. -h
    high_z = (n_top + 1 + np.arange(m)) * h  # z above the grid, up to n_top + m
    d = np.where(z >= 0.0, 0.0, 1.0)  # V_0 on the grid
    for r in range(1, k + 1):
        neg = -np.expm1(neg_z) + np.exp(neg_z) * d[m + 1:0:-1]  # V(z) = 1 - e^z + e^z V(-z)
        ext = np.concatenate([neg, d, _tail(high_z, r - 1, eta)])  # index i: n = i - (m + 1)
        best = np.zeros(n_top + 1)
        for jj in range(m):
            lo = ext[m - jj: m - jj + n_top + 1]  # n - j - 1
            hi = ext[2 * m + 1 - jj: 2 * m + 1 - jj + n_top + 1]  # n - j + m
            np.maximum(best, q[jj] * lo + (1.0 - q[jj]) * hi, out=best)
        d = np.minimum(best, 1.0)
    ok = np.nonzero(d <= delta * (1.0 - 1e-9))[0]
    return float(z[ok[0]]) if ok.size else math.inf
