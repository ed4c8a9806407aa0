r"""The joint delta of Gaussian thresholding: lone keys and the shared keys' shift together (mathematics §16.2).

The added user's l2 budget of 1 is split between her ``t`` lone keys (weight ``a`` each) and the
shift of the keys others hold too (``Delta <= sqrt(1 - t a^2)``).  With ``q = Phi((rho - a) /
sigma)^t`` the chance no lone key passes, the release is (epsilon, delta)-DP when, for every
``t <= C`` and every ``a`` in ``[0, a(t)]``,

.. math::

    \max\bigl(\delta_G(\epsilon + \ln q; \Delta),\
    q\,\delta_G(\epsilon - \ln q; \Delta) + 1 - q\bigr) \le \delta,
    \quad \delta_G(x; \Delta) = \Phi(\tfrac{\Delta}{2\sigma} - \tfrac{x\sigma}{\Delta})
    - e^{x}\Phi(-\tfrac{\Delta}{2\sigma} - \tfrac{x\sigma}{\Delta}).

Both terms fall as ``q`` grows and rise with ``Delta``, so on a cell ``[a_j, a_{j+1}]`` of a grid
the bound at ``(q(a_{j+1}), Delta(a_j))`` covers the whole cell: a finite, rigorous check.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import special

__all__ = ["GRID_CELLS", "grid_cells", "joint_calibration", "joint_delta", "shifted_profile"]

#: Cells per lone-key count in the grid over the lone weight a (fewer for large C: coarser cells are
#: still rigorous, only looser).
GRID_CELLS = 256


def grid_cells(max_contributions: int) -> int:
    """The cells per lone-key count: 256 up to C = 32, then about 8192 / C (at least 16)."""
    return GRID_CELLS if max_contributions <= 32 else max(16, 8192 // max_contributions)


#: The sigmas tried, as multiples of the smallest sigma whose Gaussian part alone fits delta.
_SIGMA_FACTORS = (1.0005, 1.002, 1.005, 1.01, 1.02, 1.04, 1.07, 1.1, 1.2, 1.5)


def shifted_profile(x: np.ndarray, sigma: float, shift: np.ndarray) -> np.ndarray:
    """``delta_G(x; Delta)`` of N(0, sigma^2) vs N(Delta, sigma^2), vectorised (Balle & Wang 2018, Thm 8)."""
    r = np.maximum(shift, 1e-300) / sigma
    first = special.ndtr(r / 2.0 - x / r)
    with np.errstate(over="ignore"):
        second = np.exp(x + special.log_ndtr(-r / 2.0 - x / r))
    return np.maximum(first - second, 0.0)


def joint_delta(epsilon: float, sigma: float, rho: float, a_max: np.ndarray) -> float:
    """The largest cell bound over ``t = 0..C`` lone keys (``a_max[t - 1]`` their largest weight)."""
    worst = float(shifted_profile(np.array(epsilon), sigma, np.array(1.0)))  # no lone key
    frac = np.linspace(0.0, 1.0, grid_cells(a_max.size) + 1)
    t = np.arange(1, a_max.size + 1, dtype=np.float64)[:, None]
    grid = a_max[:, None] * frac[None, :]
    lo, hi = grid[:, :-1], grid[:, 1:]
    log_q = t * special.log_ndtr((rho - hi) / sigma)
    shift = np.sqrt(np.clip(1.0 - t * lo * lo, 0.0, 1.0))
    miss = -np.expm1(log_q)
    first = shifted_profile(epsilon + log_q, sigma, shift)
    second = np.exp(log_q) * shifted_profile(epsilon - log_q, sigma, shift) + miss
    return max(worst, float(first.max()), float(second.max()))


def _smallest_sigma(epsilon: float, delta: float) -> float:
    """The smallest sigma with ``delta_G(epsilon; 1) <= delta`` (bisection, decreasing in sigma)."""
    lo, hi = 1e-6, 1.0
    while float(shifted_profile(np.array(epsilon), hi, np.array(1.0))) > delta:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if float(shifted_profile(np.array(epsilon), mid, np.array(1.0))) <= delta else (mid, hi)
        if hi - lo <= 1e-12 * hi:
            break
    return hi


def _smallest_rho(epsilon: float, delta: float, sigma: float, a_max: np.ndarray) -> float:
    """The smallest rho (to 1e-9 relative) with ``joint_delta <= delta`` (decreasing in rho)."""
    lo, hi = 0.0, float(a_max.max()) + 10.0 * sigma
    while joint_delta(epsilon, sigma, hi, a_max) > delta:
        lo, hi = hi, 2.0 * hi
    while hi - lo > 1e-9 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if joint_delta(epsilon, sigma, mid, a_max) <= delta else (mid, hi)
    return hi


@functools.lru_cache(maxsize=256)
def joint_calibration(epsilon: float, delta: float, a_max: tuple[float, ...]) -> tuple[float, float]:
    """(sigma, rho): the smallest rho over the public sigma grid with the joint bound <= delta.

    Examples
    --------
    >>> from dpselect.apps.counts._partitions.joint_calibration import joint_calibration
    >>> sigma, rho = joint_calibration(1.0, 1e-6, (1.0,))
    >>> bool(4.0 < sigma < 4.6 and 20.0 < rho < 23.0)
    True
    """
    target = delta * (1.0 - 1e-9)  # room for the rounding of the bound's evaluation
    a = np.asarray(a_max, dtype=np.float64)
    base = _smallest_sigma(epsilon, target)
    best = (math.inf, math.inf)
    for factor in _SIGMA_FACTORS:
        sigma = base * factor
        rho = _smallest_rho(epsilon, target, sigma, a)
        if rho < best[1]:
            best = (sigma, rho)
    return best
