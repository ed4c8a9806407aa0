"""Privacy of releases sampled exactly on a power-of-two grid (discrete Laplace).

The derivations are in the documentation's mathematics page, section
"Floating point and side channels"; in short, with granularity lambda:

* **Fixed scale.**  Round f(x) to the grid index c(x) = floor(f(x)/lambda + 1/2)
  and add K ~ discrete Laplace with scale t (grid units).  For |f(x) - f(y)| <= Delta,
  |c(x) - c(y)| <= m = ceil(Delta/lambda) (floor(a + 1/2) - floor(b + 1/2) <=
  ceil(a - b)), so the privacy loss is at most m/t: epsilon-DP with t = m/epsilon
  (the geometric mechanism of Ghosh, Roughgarden & Sundararajan 2009, on the grid).
* **Smooth scale.**  With S beta-smooth upper bound on LS_f, S~ = S + lambda is a
  beta-smooth bound on the local sensitivity of the rounded index (in lambda units,
  |c(x) - c(y)| <= S~(y)/lambda), and the scale t(x) = S~(x)/(alpha lambda) >= 1/alpha.
  The discrete Laplace normaliser tanh(1/(2t)) moves by at most the ratio of the
  scales, in the same direction as the continuous one's, which gives the privacy loss
  L <= alpha + max(beta, z (e^beta - 1)), z = |K|/t(x), and P[|K| > t z0] <=
  2 e^{-z0} / (1 + e^{-1/t}) <= 2 e^{-z0} / (1 + e^{-alpha}).  Hence (epsilon, delta)-DP
  whenever

      epsilon >= alpha + beta   and   delta >= 2/(1 + e^{-alpha}) exp(-(epsilon - alpha)/(e^beta - 1)).

  (The continuous condition has epsilon - alpha + beta in the exponent: on the grid
  the normaliser's help on the shrinking side is only asymptotic, so we do not use it.)
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from .._validation import check_delta_positive, check_epsilon, check_positive

__all__ = ["grid_laplace_smooth_beta", "grid_laplace_smooth_delta", "grid_steps"]


def grid_steps(sensitivity: Any, granularity: float) -> int:
    """m = ceil(Delta / lambda): the most grid steps a rounded statistic of sensitivity Delta moves.

    Examples
    --------
    >>> grid_steps(1.0, 0.25), grid_steps(1.0, 0.3)
    (4, 4)
    """
    d = Fraction(check_positive(sensitivity, "sensitivity"))
    g = Fraction(check_positive(granularity, "granularity"))
    return max(1, math.ceil(d / g))


def grid_laplace_smooth_delta(epsilon: Any, alpha: Any, beta: Any) -> float:
    """Smallest delta the grid condition certifies for discrete Laplace of scale S~(x)/(alpha lambda).

    2/(1 + e^{-alpha}) exp(-(epsilon - alpha)/(e^beta - 1)), capped at 1; 1.0 when
    epsilon < alpha + beta (see the module docstring).

    Examples
    --------
    >>> grid_laplace_smooth_delta(1.0, 0.5, grid_laplace_smooth_beta(1.0, 1e-6, 0.5)) <= 1e-6
    True
    """
    eps = check_epsilon(epsilon)
    a = check_positive(alpha, "alpha")
    b = check_positive(beta, "beta")
    if eps < a + b:
        return 1.0
    log_d = math.log(2.0) - math.log1p(math.exp(-a)) - (eps - a) / math.expm1(b)
    return min(1.0, math.exp(log_d))


def grid_laplace_smooth_beta(epsilon: Any, delta: Any, alpha: Any) -> float:
    """Largest beta satisfying the grid condition: min(eps - alpha, log1p((eps - alpha)/ln(2/((1 + e^-alpha) delta)))).

    Nudged down (nextafter) until :func:`grid_laplace_smooth_delta` certifies delta.

    Examples
    --------
    >>> round(grid_laplace_smooth_beta(1.0, 1e-6, 0.5), 6)
    0.035006
    """
    eps = check_epsilon(epsilon)
    d = check_delta_positive(delta, "Laplace noise is not pure-admissible")
    a = check_positive(alpha, "alpha")
    if not a < eps:
        raise ValueError(f"alpha must be < epsilon, got alpha={a!r}, epsilon={eps!r}")
    r = eps - a
    log_term = math.log(2.0) - math.log1p(math.exp(-a)) - math.log(d)
    beta = min(r, math.log1p(r / log_term))
    while beta > 0 and grid_laplace_smooth_delta(eps, a, beta) > d:
        beta = math.nextafter(beta, 0.0)
    if not beta > 0:
        raise ValueError(f"no beta > 0 satisfies the grid condition for epsilon={eps!r}, delta={d!r}")
    return beta
