r"""Composition of eta-bounded-range mechanisms, adaptive and non-adaptive (Dong, Durfee & Rogers 2020).

For neighbours x, y an eta-bounded-range (eta-BR) mechanism has privacy loss
L in a window [t - eta, t] with E_P[e^-L] = 1, so t is in [0, eta].  Let
V_r(z) be the largest hockey-stick divergence E_P[(1 - e^(z - L))_+] of r
such mechanisms composed adaptively (each chosen after the earlier outputs,
eta fixed in advance).  Conditioning on the first output,

.. math::

    V_r(z) = \sup_{\text{first pair}} \mathbb{E}_{P_1}\bigl[V_{r-1}(z - L_1)\bigr],
    \qquad V_0(z) = (1 - e^{z})_+ ,

and y -> V_{r-1}(z + ln y) is convex (a supremum of expectations of
(1 - c y)_+), so among laws on a window with E e^-L = 1 the two-point law on
the window's ends is the worst (Dong, Durfee & Rogers 2020, §4-§6 reduce to
these generalised randomized responses the same way).  On a grid z = n h with
eta = m h, every window [t - eta, t] with t in [j h, (j + 1) h] lies in
[j h - eta, (j + 1) h], whose two-point law (ends on the grid) is worse still,
so the recursion

.. math::

    D_r(n) = \max_{0 \le j < m} \; q_j D_{r-1}(n - j - 1) + (1 - q_j) D_{r-1}(n - j + m),
    \qquad q_j = \frac{e^{\eta - jh} - 1}{e^{\eta - jh} - e^{-(j+1)h}},

gives D_r >= V_r at every grid point (by induction: V is decreasing in z).
Negative z use V_r(z) = 1 - e^z + e^z V_r(-z) (the class is closed under
swapping P and Q); z above the grid use Bun & Steinke's tail bound
exp(-(z - rho)^2 / (4 rho)) for rho = r eta^2/8 (eta-BR is eta^2/8-zCDP).
The reported epsilon is the first grid point with D_k <= delta.  Its
pessimism is that of widening each window by h (relative error about h/eta);
the grid is chosen to keep the cost near 3e7 operations.

Mechanisms fixed in advance (none chosen from earlier outputs) cost less:
their worst case is the product of two-point pairs with one common t, whose
optimum (Dong, Durfee & Rogers 2020, Thm 3) :func:`br_nonadaptive_epsilon`
computes exactly (the documentation's mathematics page §10.1).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .._docstrings import fill_doc
from .._params import int_at_least, positive, validate_params
from ._rules import delta_nonzero
from .composition import zcdp_epsilon

__all__ = ["br_adaptive_epsilon", "br_nonadaptive_epsilon"]

_WORK = 3e7  # target number of grid operations
_MIN_STEPS = 8  # fewer grid steps per eta than this: too loose, no statement from this route
_MAX_STEPS = 2000
_BR_RULES = {"eta": positive(), "k": int_at_least(1), "delta": delta_nonzero()}
_NONADAPTIVE_MAX_K = 500  # O(k^2) per evaluation: beyond it, no statement from the non-adaptive route


@validate_params(_BR_RULES)
@fill_doc
def br_adaptive_epsilon(eta: float, k: int, delta: float) -> float:
    r"""Return the epsilon of k adaptively chosen eta-bounded-range mechanisms at ``delta``, by dynamic programming.

    .. math::

        V_r(z) = \sup_{t \in [0, \eta]} \; q_t V_{r-1}(z - t) + (1 - q_t) V_{r-1}(z - t + \eta),
        \qquad q_t = \frac{e^{\eta} - e^{t}}{e^{\eta} - 1}, \quad V_0(z) = (1 - e^z)_+,

    is the largest delta at epsilon = z of r eta-BR mechanisms chosen
    adaptively (the exact adaptive optimum, Dong, Durfee & Rogers 2020).  It
    is bounded from above on a grid (each window widened by one grid step; see
    the module notes), so the result is valid and within about one grid step
    per eta (relative) of the optimum.  Returns ``inf`` when ``k`` is too
    large for a useful grid.

    %(br_composition)s
        epsilon' (never below the exact adaptive optimum).

    See Also
    --------
    br_nonadaptive_epsilon : Return the exact optimal epsilon of k eta-bounded-range mechanisms **fixed in ...

    Examples
    --------
    >>> round(br_adaptive_epsilon(0.05, 100, 1e-6), 4)  # zCDP: 1.1429, two-candidate EM worst case: 1.0577
    1.0744
    """
    d = delta
    return _recursion(eta, k, d)


@validate_params(_BR_RULES)
@fill_doc
def br_nonadaptive_epsilon(eta: float, k: int, delta: float) -> float:
    r"""Return the exact optimal epsilon of k eta-bounded-range mechanisms **fixed in advance** at ``delta``.

    Each eta-BR pair is dominated by a generalised randomized response with
    loss t (P-probability q_t) or t - eta, t in [0, eta]; for k mechanisms
    fixed in advance (none chosen from earlier outputs) the worst t's are
    equal and the optimal delta is (Dong, Durfee & Rogers, ICML 2020, Thm 3)

    .. math::

        \delta_{OPT}(\varepsilon') = \max_{\ell \in \{0, \dots, k\}} \sum_{i=0}^{k} \binom{k}{i}
        q_{t_\ell}^{k-i} (1 - q_{t_\ell})^{i} \bigl(1 - e^{\varepsilon' - (k t_\ell - i \eta)}\bigr)_+,
        \quad t_\ell = \min\Bigl(\eta, \frac{\varepsilon' + (\ell + 1)\eta}{k + 1}\Bigr),
        \quad q_t = \frac{e^{\eta} - e^{t}}{e^{\eta} - 1} .

    It is evaluated in log space (all l at once) and the smallest
    epsilon' with delta_OPT(epsilon') <= ``delta`` found by bisection on
    floats (each accepted point checked against ``delta`` (1 - 1e-9)).  Valid
    only when every mechanism and its parameters are fixed before the first
    runs; adaptively chosen mechanisms can cost more
    (:func:`br_adaptive_epsilon`).  Returns ``inf`` for k > 500 (cost O(k^2)
    per evaluation: about 0.5 s at k = 500).

    %(br_composition)s
        epsilon' (never below the exact non-adaptive optimum, within float rounding of it).

    See Also
    --------
    br_adaptive_epsilon : Return the epsilon of k adaptively chosen eta-bounded-range mechanisms at ``delta`` ...

    Examples
    --------
    >>> round(br_nonadaptive_epsilon(0.05, 100, 1e-6), 4)  # adaptive: 1.0744, zCDP: 1.1429
    1.0577
    """
    d = delta
    if k > _NONADAPTIVE_MAX_K or math.isinf(eta):
        return math.inf
    return _nonadaptive(eta, k, d)


def _nonadaptive_delta(eta: float, k: int, z: float) -> float:
    """delta_OPT(z) of k eta-BR mechanisms fixed in advance (Dong, Durfee & Rogers 2020, Thm 3), z >= 0.

    Rows: the distinct t_l in (0, eta] (t_l > 0 as z >= 0; the t_l clipped to eta coincide); columns: the
    i with loss k t - i eta possibly above z.  Terms p_i (1 - e^(z - loss)) are all >= 0 (no cancellation).
    """
    from scipy.special import gammaln

    ell = np.arange(k + 1, dtype=float)
    t = np.unique(np.minimum((z + (ell + 1.0) * eta) / (k + 1.0), eta))[:, None]
    n_i = int(min(k, math.floor(k - z / eta) + 1)) + 1  # i < k - z / eta, or the loss is <= z (one to spare)
    if n_i <= 0:
        return 0.0
    i = np.arange(n_i, dtype=float)[None, :]
    log_em1 = math.log(math.expm1(eta))
    with np.errstate(divide="ignore"):
        log_q = t + np.log(np.expm1(eta - t)) - log_em1  # log P(loss = t); -inf at t = eta
        log_1q = np.log(np.expm1(t)) - log_em1  # log P(loss = t - eta)
    log_c = gammaln(k + 1.0) - gammaln(i + 1.0) - gammaln(k - i + 1.0)
    with np.errstate(invalid="ignore"):  # 0 * -inf where a power is 0: replaced by 0
        log_p = log_c + np.where(i < k, (k - i) * log_q, 0.0) + np.where(i > 0, i * log_1q, 0.0)
    gap = k * t - i * eta - z
    terms = np.where(gap > 0.0, np.exp(log_p) * -np.expm1(-np.maximum(gap, 0.0)), 0.0)
    return float(terms.sum(axis=1).max())


@lru_cache(maxsize=64)
def _nonadaptive(eta: float, k: int, delta: float) -> float:
    """The smallest z (bisection to a relative 1e-10, rounded up) with delta_OPT(z) <= delta (1 - 1e-9)."""
    target = delta * (1.0 - 1e-9)
    if _nonadaptive_delta(eta, k, 0.0) <= target:
        return 0.0
    lo, hi = 0.0, k * eta  # delta_OPT(k eta) = 0: no loss exceeds k eta
    while hi - lo > 1e-10 * hi:  # hi passes, lo fails: hi is at most a relative 1e-10 above the optimum
        mid = lo + (hi - lo) / 2.0
        lo, hi = (lo, mid) if _nonadaptive_delta(eta, k, mid) <= target else (mid, hi)
    return hi


def _tail(z: np.ndarray, r: int, eta: float) -> np.ndarray:
    """A bound on V_r(z) above the grid.

    0 from z = r eta on (the loss never exceeds it), below that Bun-Steinke's bound
    exp(-(z - rho)^2 / (4 rho)) for rho = r eta^2 / 8 (1 where it says nothing).
    """
    rho = r * eta * eta / 8.0
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = np.where(z > rho, np.exp(-((z - rho) ** 2) / (4.0 * rho)), 1.0) if rho > 0 else 1.0
    return np.where(z >= r * eta, 0.0, bound)


@lru_cache(maxsize=32)
def _grid(eta: float, k: int, delta: float) -> tuple[float, np.ndarray] | None:
    """(h, D_k on the grid z = n h, n = 0..n_top), or None when no useful grid fits the work budget."""
    top = min(k * eta, 2.0 * zcdp_epsilon(k * eta * eta / 8.0, delta) + eta)  # the grid's extent
    m = int(min(_MAX_STEPS, math.sqrt(_WORK * eta / (k * top))))
    if m < _MIN_STEPS:
        return None
    h = eta / m
    n_top = max(math.ceil(top / h), m + 2)
    z = np.arange(n_top + 1) * h
    j = np.arange(m, dtype=float)
    q = np.expm1(eta - j * h) / (np.exp(eta - j * h) - np.exp(-(j + 1.0) * h))
    neg_z = -np.arange(m + 1, 0, -1) * h  # z = -(m+1) h .. -h
    high_z = (n_top + 1 + np.arange(m)) * h  # z above the grid, up to n_top + m
    d = np.where(z >= 0.0, 0.0, 1.0)  # V_0 on the grid
    for r in range(1, k + 1):
        neg = -np.expm1(neg_z) + np.exp(neg_z) * d[m + 1 : 0 : -1]  # V(z) = 1 - e^z + e^z V(-z)
        ext = np.concatenate([neg, d, _tail(high_z, r - 1, eta)])  # index i: n = i - (m + 1)
        best = np.zeros(n_top + 1)
        for jj in range(m):
            lo = ext[m - jj : m - jj + n_top + 1]  # n - j - 1
            hi = ext[2 * m + 1 - jj : 2 * m + 1 - jj + n_top + 1]  # n - j + m
            np.maximum(best, q[jj] * lo + (1.0 - q[jj]) * hi, out=best)
        d = np.minimum(best, 1.0)
    return h, d


def _recursion(eta: float, k: int, delta: float) -> float:
    grid = _grid(eta, k, delta)
    if grid is None:
        return math.inf
    h, d = grid
    ok = np.nonzero(d <= delta * (1.0 - 1e-9))[0]
    return float(ok[0] * h) if ok.size else math.inf


def _values(h: float, d: np.ndarray, k: int, eta: float, n: np.ndarray) -> np.ndarray:
    """Upper bounds on V_k at the grid points n h for any integer n (symmetry below 0, tail bound above)."""
    n_top = d.size - 1
    out = np.empty(n.shape)
    pos = n >= 0
    a = np.abs(n)
    inside = a <= n_top
    va = np.where(inside, d[np.minimum(a, n_top)], _tail(a * h, k, eta))
    z = n * h
    out[pos] = va[pos]
    out[~pos] = -np.expm1(z[~pos]) + np.exp(z[~pos]) * va[~pos]
    return np.minimum(out, 1.0)


def _br_with_pure_epsilon(eta: float, k: int, pure: tuple[tuple[float, int], ...], delta: float) -> float:
    """Return the epsilon of k eta-BR mechanisms and pure epsilon_i-DP ones, in any order.

    ``pure`` holds (epsilon, count) pairs.

    A pure step's worst pair is randomized response RR(epsilon_i) (loss +/- epsilon_i, mean-one
    constraint, the same convexity argument), whose operator R f(z) = E f(z - L) is linear; a
    BR step's is B f(z) = sup_t (...).  B R f <= R B f (a supremum of expectations is at most the
    expectation of the supremum), so moving every pure step first can only increase delta: for
    every interleaving, delta(z) <= E_S[V_k(z - S)], S the sum of the pure losses (independent).
    Each group's total loss is rounded up to the grid (V is decreasing) and D_k >= V_k; the
    smallest grid z with sum_S P(S) D_k(z - S) <= delta is returned (inf without a useful grid).
    """
    grid = _grid(eta, k, delta)
    if grid is None or not pure:
        return math.inf if grid is None else _recursion(eta, k, delta)
    h, d = grid
    from .optimal import _rr_on_grid

    shifts: np.ndarray = np.zeros(1, dtype=np.int64)
    probs: np.ndarray = np.ones(1)
    for e, n in pure:
        idx, p = _rr_on_grid(e, n, h)  # the group's total loss, rounded up to the grid
        keep = p > 1e-300
        shifts = (shifts[:, None] + idx[keep][None, :]).ravel()
        probs = (probs[:, None] * p[keep][None, :]).ravel()
        if shifts.size > 10**6:
            return math.inf
        shifts, inverse = np.unique(shifts, return_inverse=True)
        probs = np.bincount(inverse, weights=probs)

    def delta_at(n: int) -> float:
        return float(np.dot(probs, _values(h, d, k, eta, n - shifts)))

    lo, hi = 0, int(d.size - 1 + shifts.max() + 1)
    target = delta * (1.0 - 1e-9)
    if delta_at(hi) > target:
        return math.inf
    if delta_at(lo) <= target:
        return 0.0
    while hi - lo > 1:  # delta_at decreases in n: lo fails, hi passes
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if delta_at(mid) <= target else (mid, hi)
    return hi * h
