r"""Private selection from private candidates: repeat an epsilon-DP run a random number of times, keep the best.

Let Q be an epsilon-DP randomised algorithm whose output carries a score.
Draw K from the truncated negative binomial law D_{eta, gamma}
(eta >= 0, gamma in (0, 1)):

.. math::

    P[K = k] = \frac{(1 - \gamma)^k}{\gamma^{-\eta} - 1}
               \prod_{l=0}^{k-1} \frac{l + \eta}{l + 1}, \quad k \ge 1

(eta = 0: the logarithmic law P[K = k] = (1 - gamma)^k / (k ln(1/gamma));
eta = 1: the geometric law gamma (1 - gamma)^{k-1}), run Q K times
independently and output the run with the highest score (nothing else: not
K, not the other runs).  Then the output is (2 + eta) epsilon-DP
(Papernot & Steinke, ICLR 2022, Theorem 2 with lambda, lambda-hat -> infinity:
epsilon' = epsilon + (1 + eta) epsilon-hat; for eta = 1 this is Liu & Talwar,
STOC 2019, Theorem 3.1: 3 epsilon), whatever gamma, i.e. whatever the mean
number of runs

.. math::

    E[K] = \frac{\eta (1 - \gamma)}{\gamma (1 - \gamma^\eta)} \ (\eta > 0), \qquad
    E[K] = \frac{1 - \gamma}{\gamma \ln(1/\gamma)} \ (\eta = 0).

Exact law of the output (used by the audit): order Q's outcomes by score
(ties broken by a fixed total order) with cumulative law F; with
G(x) = E[x^K] the probability generating function of K,

.. math::

    P[\text{output} = o] = G(F(o)) - G(F(o^-)), \qquad
    G(x) = \frac{(1 - (1 - \gamma) x)^{-\eta} - 1}{\gamma^{-\eta} - 1}
    \ (\eta > 0), \quad G(x) = \frac{\ln(1 - (1 - \gamma) x)}{\ln \gamma} \ (\eta = 0).

References
----------
Liu & Talwar, "Private selection from private candidates", STOC 2019, Theorem 3.1.
Papernot & Steinke, "Hyperparameter tuning with Renyi differential privacy", ICLR 2022, Theorem 2.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...._validation import check_positive, check_real

__all__ = ["expected_repetitions", "gamma_for_mean", "repetition_epsilon", "sample_repetitions"]


def _check_eta_gamma(eta: Any, gamma: Any) -> tuple[float, float]:
    eta = check_real(eta, "eta")
    gamma = check_real(gamma, "gamma")
    if not (math.isfinite(eta) and eta >= 0.0):
        raise ValueError(f"eta must be finite and >= 0, got {eta!r}")
    if not 0.0 < gamma < 1.0:
        raise ValueError(f"gamma must lie in (0, 1), got {gamma!r}")
    return eta, gamma


def expected_repetitions(eta: float, gamma: float) -> float:
    """E[K] under D_{eta, gamma} (module docstring).

    Examples
    --------
    >>> round(expected_repetitions(1.0, 0.25), 12), round(expected_repetitions(0.0, 0.5), 6)
    (4.0, 1.442695)
    """
    eta, gamma = _check_eta_gamma(eta, gamma)
    if eta == 0.0:
        return (1.0 - gamma) / (gamma * -math.log(gamma))
    return eta * (1.0 - gamma) / (gamma * -math.expm1(eta * math.log(gamma)))


def gamma_for_mean(eta: float, mean: float) -> float:
    """The gamma in (0, 1) with E[K] = ``mean`` (> 1) under D_{eta, gamma} (bisection; E[K] falls with gamma).

    Examples
    --------
    >>> round(gamma_for_mean(1.0, 4.0), 9)
    0.25
    """
    mean = check_positive(mean, "mean")
    if not (math.isfinite(mean) and mean > 1.0):
        raise ValueError(f"the mean number of repetitions must be finite and > 1, got {mean!r}")
    lo, hi = 1e-15, 1.0 - 1e-15
    if expected_repetitions(eta, lo) < mean:
        raise ValueError(f"mean {mean!r} is out of reach for eta={eta!r}")
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if expected_repetitions(eta, mid) > mean:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def repetition_epsilon(epsilon: float, eta: float) -> float:
    """(2 + eta) epsilon: the guarantee of the best of K ~ D_{eta, gamma} runs of an epsilon-DP algorithm.

    Examples
    --------
    >>> repetition_epsilon(1.0, 0.0), repetition_epsilon(1.0, 1.0)
    (2.0, 3.0)
    """
    eta = check_real(eta, "eta")
    if not (math.isfinite(eta) and eta >= 0.0):
        raise ValueError(f"eta must be finite and >= 0, got {eta!r}")
    return (2.0 + eta) * check_positive(epsilon, "epsilon", allow_zero=True)


def sample_repetitions(eta: float, gamma: float, *, rng: np.random.Generator) -> int:
    """One draw of K ~ D_{eta, gamma}: numpy's logarithmic law (eta = 0) or negative binomial given K >= 1."""
    eta, gamma = _check_eta_gamma(eta, gamma)
    if eta == 0.0:
        return int(rng.logseries(1.0 - gamma))
    while True:  # NB(eta, gamma) counts failures: P(k) = Gamma(k + eta)/(k! Gamma(eta)) gamma^eta (1 - gamma)^k
        k = int(rng.negative_binomial(eta, gamma))
        if k >= 1:
            return k
