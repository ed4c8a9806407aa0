"""Grid output of the smooth-sensitivity release (floating-point safety).

* Laplace noise: sampled exactly on the grid lambda Z: index c(x) = floor(f(x)/lambda + 1/2)
  plus a discrete Laplace K with scale t(x) = (S(x) + M lambda)/(alpha lambda), M = GUARD,
  rounded up to a dyadic with 40 significant bits (ratio slack log1p(2^-40), charged to
  beta); the guarantee is :func:`dpselect.accounting.grid_laplace_smooth_delta` with guard M.
* Student t df = 3 or 1, polynomial gamma = 2: sampled exactly from the ideal release
  rounded to the grid (:mod:`dpselect.noise._exact_atan`), post-processing of the ideal
  real-valued mechanism, whose guarantee is the one reported.
* Other noises (Student t, polynomial, LLN): the float release is snapped to the grid,
  floor(y/lambda + 1/2) lambda.  Rounding is post-processing of the ideal real-valued
  mechanism, whose guarantee is the one reported; the float sampler itself is not exact.

See the documentation page "Floating point and side channels".
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._exact_numbers import dyadic_ceil, grid_index
from ..noise import IntegerSource, NoiseDistribution, discrete_laplace_batch, discrete_laplace_logpmf, grid_values
from ..typing import SeedLike

__all__ = [
    "GUARD",
    "ROUND_SLACK",
    "clip_indices",
    "clip_to_grid",
    "grid_laplace_scale",
    "sample_grid_laplace",
    "snapped_log_law",
]

#: Dilation slack of rounding the scale up to 40 significant bits: log(1 + 2^-40).
ROUND_SLACK = math.log1p(2.0**-40)
#: Guard M: the scale uses S + M lambda >= M lambda, which makes the grid condition within
#: ~0.6% (in beta) of the continuous one for epsilon <= 5 (see accounting.discrete).
GUARD = 32


def grid_laplace_scale(sensitivity: float, alpha: float, lam: float) -> Fraction:
    """The scale t = dyadic_ceil((S + GUARD lambda) / (alpha lambda)), exactly (grid units)."""
    s_tilde = Fraction(sensitivity) + GUARD * Fraction(lam)
    return dyadic_ceil(s_tilde / (Fraction(alpha) * Fraction(lam)))


def sample_grid_laplace(value: float, t: Fraction, lam: float, n: int, rng: SeedLike) -> np.ndarray:
    """Draw n releases lambda (c(value) + K), K ~ discrete Laplace(t), exact."""
    c = grid_index(value, lam).reshape(-1)[0]
    # |c| <= 2^51 and grid_values clamps c + k to +-2^52: clamping k to +-2^53 first changes nothing
    k = discrete_laplace_batch(IntegerSource(rng), t.denominator, t.numerator, n, clamp=2**53)
    return grid_values(c + k, lam)


def clip_to_grid(values: np.ndarray, bounds: tuple[float, float], lam: float) -> np.ndarray:
    """Clamp grid values to the grid points inside [lo, hi] (post-processing; stays on the grid)."""
    lo, hi = math.ceil(bounds[0] / lam) * lam, math.floor(bounds[1] / lam) * lam
    if lo > hi:  # no grid point inside: the nearest grid point to the interval
        lo = hi = float(grid_values(grid_index(0.5 * (bounds[0] + bounds[1]), lam), lam))
    return np.clip(values, lo, hi)


def clip_indices(bounds: tuple[float, float] | None, lam: float) -> tuple[int, int] | None:
    """Grid indices [ceil(lo / lambda), floor(hi / lambda)] of :func:`clip_to_grid`'s clamp, within +-2^51.

    The exact t_3 / Cauchy sampler clamps its index to this range while searching (the same law
    as clamping afterwards, and a search bounded by the public clip range); None without a clip
    or when no grid point of the clip range lies within +-2^51 (clip_to_grid then decides).
    """
    if bounds is None:
        return None
    lo = max(math.ceil(Fraction(bounds[0]) / Fraction(lam)), -(2**51))
    hi = min(math.floor(Fraction(bounds[1]) / Fraction(lam)), 2**51)
    return (lo, hi) if lo <= hi else None


def snapped_log_law(
    noise: NoiseDistribution, value: float, scale: float, lam: float, window: int
) -> tuple[np.ndarray, np.ndarray]:
    """Ideal law of floor((value + scale Z)/lambda + 1/2) lambda on 2 window + 1 grid points around value.

    P[k lambda] = F((k lambda + lambda/2 - value)/scale) - F((k lambda - lambda/2 - value)/scale).
    """
    c = int(grid_index(value, lam).reshape(-1)[0])
    k = np.arange(c - window, c + window + 1)
    pts = grid_values(k, lam)
    hi = (pts + 0.5 * lam - value) / scale
    lo = (pts - 0.5 * lam - value) / scale
    # log(F(hi) - F(lo)) stably: use the side of the mode with the smaller tail
    cdf_hi, cdf_lo = np.asarray(noise.logcdf(hi)), np.asarray(noise.logcdf(lo))
    sf_hi, sf_lo = np.asarray(noise.logsf(hi)), np.asarray(noise.logsf(lo))
    with np.errstate(divide="ignore"):
        left = cdf_hi + np.log(-np.expm1(cdf_lo - cdf_hi))
        right = sf_lo + np.log(-np.expm1(sf_hi - sf_lo))
    return pts, np.where(hi <= 0, left, right)


def grid_laplace_log_law(value: float, t: Fraction, lam: float, window: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact law of :func:`sample_grid_laplace` on 2 window + 1 grid points around c(value)."""
    c = int(grid_index(value, lam).reshape(-1)[0])
    j = np.arange(-window, window + 1)
    return grid_values(c + j, lam), discrete_laplace_logpmf(j, t)
