"""Privacy of releases sampled exactly on a power-of-two grid (discrete Laplace).

The derivations are in the documentation page "Floating point and side
channels"; in short, with granularity lambda:

* **Fixed scale.**  Round f(x) to the grid index c(x) = floor(f(x)/lambda + 1/2)
  and add K ~ discrete Laplace with scale t (grid units).  For |f(x) - f(y)| <= Delta,
  |c(x) - c(y)| <= m = ceil(Delta/lambda) (floor(a + 1/2) - floor(b + 1/2) <=
  ceil(a - b)), so the privacy loss is at most m/t: epsilon-DP with t = m/epsilon
  (the geometric mechanism of Ghosh, Roughgarden & Sundararajan 2009, on the grid).
* **Smooth scale.**  With S a beta-smooth upper bound on LS_f and a public guard
  M >= 1, S~ = S + M lambda is a beta-smooth bound on the local sensitivity of the
  rounded index (|c(x) - c(y)| <= S~(y)/lambda), and the scale is
  t(x) = S~(x)/(alpha lambda) >= M/alpha, so a = 1/(2t) <= alpha/(2M).  The discrete
  Laplace normaliser tanh(1/(2t)) moves with the scale like the continuous one up to
  eta = min(beta, -log(1 - a^2 e^{2 beta}/3)) (from u - u^3/3 <= tanh u <= u, and
  the normaliser term is never positive when the scale shrinks), which gives the
  privacy loss L <= alpha + max(beta, eta + max(0, z (e^beta - 1) - beta)),
  z = |K|/t(x); and P[|K| > t z0] <= 2 e^{-z0} / (1 + e^{-2a}).  Hence
  (epsilon, delta)-DP whenever epsilon >= alpha + beta and

      delta >= 2/(1 + e^{-alpha/M}) exp(-(epsilon - alpha + beta - eta)/(e^beta - 1)),

  the continuous condition (the mathematics page-verified, Bun & Steinke 2019 Thm 34 form) up to the
  factor 2/(1 + e^{-alpha/M}) and the term eta, both negligible for M = 32.
"""

from __future__ import annotations

import math
from fractions import Fraction

from .._docstrings import fill_doc
from .._params import EPSILON, Rule, positive, validate_params
from .._validation import check_positive
from .conversions import LAPLACE_DELTA, _require_alpha_below

__all__ = ["grid_laplace_smooth_beta", "grid_laplace_smooth_delta", "grid_steps"]


def _guard(value: float, name: str) -> float:
    m = check_positive(value, name)
    if m < 1.0:
        raise ValueError(f"{name} must be >= 1, got {value!r}")
    return m


#: The guard M >= 1 of the smooth-scale grid condition.
GUARD = Rule("a float >= 1", check=_guard)


@validate_params({"sensitivity": positive(), "granularity": positive()})
def grid_steps(sensitivity: float, granularity: float) -> int:
    """Return m = ceil(Delta / lambda): the most grid steps a rounded statistic of sensitivity Delta moves.

    Parameters
    ----------
    sensitivity : float
        Delta > 0, the sensitivity of the statistic (public).
    granularity : float
        lambda > 0, the grid step.

    Returns
    -------
    int
        m >= 1.

    See Also
    --------
    grid_laplace_smooth_beta : Return the largest beta (to float precision, by bisection) satisfying the grid ...
    grid_laplace_smooth_delta : Return the smallest delta certified for discrete Laplace of scale (S + M ...

    Examples
    --------
    >>> grid_steps(1.0, 0.25), grid_steps(1.0, 0.3)
    (4, 4)
    """
    d = Fraction(sensitivity)
    g = Fraction(granularity)
    return max(1, math.ceil(d / g))


def _eta(alpha: float, beta: float, guard: float) -> float:
    a = alpha / (2.0 * guard)
    x = a * a * math.exp(2.0 * beta) / 3.0
    return math.inf if x >= 1.0 else -math.log1p(-x)


@validate_params({"epsilon": EPSILON, "alpha": positive(), "beta": positive(), "guard": GUARD})
def grid_laplace_smooth_delta(epsilon: float, alpha: float, beta: float, guard: float = 1.0) -> float:
    """Return the smallest delta certified for discrete Laplace of scale (S + M lambda)/(alpha lambda) on the grid.

    2/(1 + e^{-alpha/M}) exp(-(epsilon - alpha + beta - eta)/(e^beta - 1)), capped at 1,
    eta = min(beta, -log(1 - alpha^2 e^{2 beta}/(12 M^2))); 1.0 when epsilon < alpha + beta
    (see the module docstring).  The grid version of the continuous condition of
    mathematics §2.2, in the neighbour relation (add/remove or replace neighbours) in
    which S is a beta-smooth bound; the derivation is on the documentation page
    "Floating point and side channels".

    Parameters
    ----------
    epsilon : float
        The target epsilon, > 0.
    alpha : float
        The scale is (S + M lambda)/(alpha lambda) grid units, alpha > 0.
    beta : float
        The smoothness of the bound S, > 0.
    guard : float, default=1.0
        M >= 1, the public guard added to S in grid units.

    Returns
    -------
    float
        delta in (0, 1], 1.0 when epsilon < alpha + beta.

    See Also
    --------
    grid_laplace_smooth_beta : Return the largest beta (to float precision, by bisection) satisfying the grid ...
    grid_steps : Return m = ceil(Delta / lambda): the most grid steps a rounded statistic of sensitivity Delta moves
    laplace_smooth_delta : Return the smallest delta of mathematics §2.2's exact condition for smooth-scale ...

    Examples
    --------
    >>> grid_laplace_smooth_delta(1.0, 0.5, grid_laplace_smooth_beta(1.0, 1e-6, 0.5, 32), 32) <= 1e-6
    True
    """
    eps, a, b, m = epsilon, alpha, beta, guard
    eta = min(_eta(a, b, m), b)  # the normaliser term is also <= 0 <= beta - beta (crude bound)
    if eps < a + b:
        return 1.0
    log_d = math.log(2.0) - math.log1p(math.exp(-a / m)) - (eps - a + b - eta) / math.expm1(b)
    return min(1.0, math.exp(log_d))


@validate_params({"epsilon": EPSILON, "delta": LAPLACE_DELTA, "alpha": positive(), "guard": GUARD})
@fill_doc
def grid_laplace_smooth_beta(epsilon: float, delta: float, alpha: float, guard: float = 1.0) -> float:
    """Return the largest beta (to float precision, by bisection) satisfying the grid condition with guard M.

    The condition is :func:`grid_laplace_smooth_delta`'s (the grid version of mathematics
    §2.2), in the neighbour relation (add/remove or replace neighbours) in which S is a
    beta-smooth bound.

    %(target_privacy)s
    alpha : float
        The scale is (S + M lambda)/(alpha lambda) grid units, 0 < alpha < epsilon.
    guard : float, default=1.0
        M >= 1, the public guard added to S in grid units.

    Returns
    -------
    float
        beta in (0, epsilon - alpha].

    Raises
    ------
    ValueError
        If no beta > 0 satisfies the condition.

    See Also
    --------
    grid_laplace_smooth_delta : Return the smallest delta certified for discrete Laplace of scale (S + M ...
    grid_steps : Return m = ceil(Delta / lambda): the most grid steps a rounded statistic of sensitivity Delta moves
    laplace_smooth_beta : Return the largest beta of mathematics §2.2's exact condition for smooth-scale ...

    Examples
    --------
    >>> round(grid_laplace_smooth_beta(1.0, 1e-6, 0.5, 32), 6)
    0.038193
    """
    _require_alpha_below(epsilon, alpha)
    eps, d, a = epsilon, delta, alpha
    ok = lambda b: grid_laplace_smooth_delta(eps, a, b, guard) <= d
    lo, hi = 0.0, eps - a
    if not ok(hi):
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if mid <= lo or mid >= hi:
                break
            lo, hi = (mid, hi) if ok(mid) else (lo, mid)
        beta = lo
    else:
        beta = hi
    while beta > 0 and not ok(beta):
        beta = math.nextafter(beta, 0.0)
    if not beta > 0:
        raise ValueError(f"no beta > 0 satisfies the grid condition for epsilon={eps!r}, delta={d!r}")
    return beta
