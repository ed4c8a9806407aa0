r"""Thresholds of partition selection, proved in mathematics §16.

Add/remove one user ``u`` with her (bounded) set ``S_u`` of at most ``C`` keys.  Every
method here releases, independently per key, the keys whose noisy weight (or count) passes
a threshold; the calibrations below are closed forms plus one monotone bisection.

* Truncated geometric (Desfontaines, Voss, Gipson & Mandayam 2022): a key held by ``n``
  users is released with probability ``pi_n``, ``pi_0 = 0`` and

  .. math::

      \pi_n = \min\bigl(1,\ e^{\epsilon'}\pi_{n-1} + \delta',\
      1 - e^{-\epsilon'}(1 - \pi_{n-1} - \delta')\bigr),
      \qquad (\epsilon', \delta') = (\epsilon / C, \delta / C),

  the largest release probability the two (epsilon', delta') constraints of a
  Bernoulli pair allow (optimal at ``C = 1``); ``C`` keys compose to (epsilon, delta).
  Each ``pi_n`` is rounded down to the grid ``2^-53`` after a margin of ``2^-50`` (relative,
  and absolute on the second branch) so that
  ``P[U < pi_n]`` for numpy's 53-bit uniform ``U`` is exactly ``pi_n`` and the constraints
  hold for the rounded values.
* Gaussian thresholding: weights move by at most 1 in l2; the added user's keys that nobody
  else holds ("lone", ``t`` of them) get weight ``a <= a(t)`` each and the other keys shift by
  at most ``sqrt(1 - t a^2)``; sigma and rho meet the joint bound of
  :mod:`~dpselect.apps.counts._partitions.joint_calibration` (the Gaussian mechanism's exact profile, Balle &
  Wang 2018, mixed with the chance ``1 - q`` that a lone key passes rho).
* Laplace thresholding: the same with a pure (1/b)-DP noise part and ``b = 1/(epsilon +
  ln(1 - theta))``, ``theta = min(delta, (1 - e^-epsilon) / 2)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from .joint_calibration import joint_calibration

__all__ = [
    "SENSITIVITY_SLACK",
    "ThresholdCalibration",
    "calibrate_gaussian",
    "calibrate_laplace",
    "truncated_geometric_probabilities",
    "unique_weight_bound",
]

_GRID = 2.0**53  # numpy's Generator.random() returns j / 2^53, j uniform in [0, 2^53)
_MARGIN = 2.0**-50  # covers the rounding of the recurrence (each term is <= ~2 ulp of 1)
#: Relative slack on the l2 sensitivity and the lone weights: covers the rounding of the weights
#: (<= a few ulp per user step, 1-Lipschitz steps do not amplify it; mathematics §16).
SENSITIVITY_SLACK = 2.0**-20


@dataclass(frozen=True)
class ThresholdCalibration:
    """The public constants of a noisy-threshold partition selection (mathematics §16).

    Parameters
    ----------
    scale : float
        The noise scale (sigma of the Gaussian, b of the Laplace).
    threshold : float
        rho: a key is released when its noisy weight exceeds rho.
    theta : float
        The largest probability that one of a lone user's keys passes rho.
    noise : str
        ``"gaussian"`` or ``"laplace"``.
    """

    scale: float
    threshold: float
    theta: float
    noise: str


def truncated_geometric_probabilities(epsilon: float, delta: float, max_contributions: int) -> np.ndarray:
    r"""``pi_0, pi_1, ..., pi_N = 1``: the release probability of a key held by ``n`` users (mathematics §16).

    Each value is a multiple of ``2^-53`` (so ``U < pi_n`` with numpy's uniform has
    probability exactly ``pi_n``), rounded down after a margin of ``2^-50``.

    Examples
    --------
    >>> from dpselect.apps.counts._partitions.calibration import truncated_geometric_probabilities
    >>> p = truncated_geometric_probabilities(1.0, 1e-6, 1)
    >>> float(p[0]), bool(0 < p[1] <= 1e-6), float(p[-1])
    (0.0, True, 1.0)
    """
    eps, dlt = epsilon / max_contributions, delta / max_contributions
    growth, shrink = math.exp(eps), math.exp(-eps)
    probs = [0.0]
    while probs[-1] < 1.0:
        prev = probs[-1]
        up, down = growth * prev + dlt, 1.0 - shrink * (1.0 - prev - dlt)
        # rounding: a few ulp of the result (first branch), a few ulp of 1 (second branch)
        value = min(up, down) * (1.0 - _MARGIN) - (_MARGIN if down <= up else 0.0)
        nxt = 1.0 if value >= 1.0 else math.floor(max(value, 0.0) * _GRID) / _GRID
        if nxt <= prev and 1.0 - prev <= dlt * (1.0 - 1e-9) and up >= 1.0 + 1e-9:
            nxt = 1.0  # both constraints allow pi_n = 1 with room to spare (checked exactly in the tests)
        if nxt <= prev:  # delta below the margin: the recurrence cannot grow on the grid
            raise ValueError(f"delta / max_contributions must be > {2 * _MARGIN:g} for the truncated geometric")
        probs.append(nxt)
    return np.asarray(probs)


def unique_weight_bound(method: str, t: np.ndarray, max_contributions: int) -> np.ndarray:
    """``a(t)``: the largest weight one of ``t`` keys only the added user holds can get (mathematics §16)."""
    if method in ("gaussian", "laplace"):  # counts: 1/sqrt(C) (l2) or 1/C (l1) per key
        return np.full(t.shape, 1.0 / (math.sqrt(max_contributions) if method == "gaussian" else max_contributions))
    if method in ("weighted_laplace", "policy_laplace"):  # l1 budget 1 shared equally by t lone keys
        return 1.0 / t
    return 1.0 / np.sqrt(t)  # weighted and policy Gaussian


def _lone_threshold(a: np.ndarray, t: np.ndarray, theta: float, scale: float, noise: str) -> float:
    """``max_t a(t) + scale * isf(1 - (1 - theta)^(1/t))``: every lone set of t keys stays below theta."""
    p = -np.expm1(np.log1p(-theta) / t)
    z = -special.ndtri(p) if noise == "gaussian" else np.log(0.5 / p)
    rho = float(np.max(a + scale * z))
    return rho + 1e-9 * max(abs(rho), 1.0)  # a rounding margin, checked exactly in the tests


def calibrate_gaussian(epsilon: float, delta: float, max_contributions: int, method: str) -> ThresholdCalibration:
    r"""Sigma and rho of a Gaussian thresholding method: the joint bound of mathematics §16.2.

    The smallest rho over a public grid of sigmas such that every split of the added user's
    budget between lone keys and the shared keys' shift stays within delta
    (:func:`~dpselect.apps.counts._partitions.joint_calibration.joint_delta`).

    Examples
    --------
    >>> from dpselect.apps.counts._partitions.calibration import calibrate_gaussian
    >>> cal = calibrate_gaussian(1.0, 1e-6, 10, "weighted_gaussian")
    >>> bool(3 < cal.scale < 6 and cal.threshold > cal.scale)
    True
    """
    t = np.arange(1, max_contributions + 1, dtype=np.float64)
    a = unique_weight_bound(method, t, max_contributions) * (1.0 + SENSITIVITY_SLACK)
    sigma, rho = joint_calibration(epsilon, delta, tuple(a.tolist()))
    sigma *= 1.0 + SENSITIVITY_SLACK  # and rho / sigma stays: the slack covers an l2 shift of 1 + 2^-20
    rho *= 1.0 + SENSITIVITY_SLACK
    theta = float(np.max(-np.expm1(t * special.log_ndtr((rho - a) / sigma))))
    return ThresholdCalibration(sigma, rho, theta, "gaussian")


def calibrate_laplace(epsilon: float, delta: float, max_contributions: int, method: str) -> ThresholdCalibration:
    r"""B and rho of a Laplace thresholding method (mathematics §16): ``b = 1/(epsilon + ln(1 - theta))``.

    Examples
    --------
    >>> import math
    >>> from dpselect.apps.counts._partitions.calibration import calibrate_laplace
    >>> cal = calibrate_laplace(1.0, 1e-6, 1, "weighted_laplace")
    >>> bool(abs(cal.threshold - (1 + math.log(0.5 / 1e-6))) < 1e-4)
    True
    """
    theta = min(delta, 0.5 * -math.expm1(-epsilon))  # a large delta: keep epsilon + ln(1 - theta) > 0
    eps_noise = epsilon + math.log1p(-theta)
    t = np.arange(1, max_contributions + 1, dtype=np.float64)
    a = unique_weight_bound(method, t, max_contributions) * (1.0 + SENSITIVITY_SLACK)
    scale = (1.0 + SENSITIVITY_SLACK) / eps_noise
    return ThresholdCalibration(scale, _lone_threshold(a, t, theta, scale, "laplace"), theta, "laplace")
