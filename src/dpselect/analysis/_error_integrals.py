r"""Integrals of a symmetric error law's survival function: clipped and shifted absolute errors.

For E = s Z with Z a standard symmetric noise law and

.. math::

    G(u) = \int_0^u P(Z > v)\, dv = E[\min(Z^+, u)],

the expected absolute error after clipping to [lo, hi] (lo <= 0 <= hi) is
s (G(hi/s) + G(-lo/s)), and against a shifted truth c it is
E|E - c| = E|E| + |c| - 2 s G(|c|/s) (differentiate in c: 2 P(E <= c) - 1).
"""

from __future__ import annotations

import math

from scipy import integrate

from ..noise import NoiseDistribution

__all__ = ["clipped_abs_error", "integrated_sf", "shifted_abs_error"]


def integrated_sf(noise: NoiseDistribution, u: float) -> float:
    """G(u) = int_0^u P(Z > v) dv = E[min(Z^+, u)], for the standard noise ``noise``."""
    if u <= 0:
        return 0.0
    sf = noise.sf
    first = min(u, 1.0)
    total, _ = integrate.quad(lambda v: float(sf(v)), 0.0, first, limit=200, epsabs=0, epsrel=1e-11)
    if u > 1.0:
        # log substitution v = e^w: smooth integrand for heavy and light tails alike
        tail, _ = integrate.quad(
            lambda w: float(sf(math.exp(w))) * math.exp(w), 0.0, math.log(u), limit=400, epsabs=0, epsrel=1e-11
        )
        total += tail
    return total


def clipped_abs_error(noise: NoiseDistribution, scale: float, lo: float, hi: float) -> float:
    """E|clip(E, -lo, hi)| for E = scale Z: ``lo`` and ``hi`` are the distances (>= 0, inf allowed)."""
    mean_abs = float(noise.mean_abs())
    if math.isinf(lo) or math.isinf(hi):
        if math.isinf(mean_abs):
            return math.inf
        # one side unbounded: E[Z^+] = E|Z|/2 on that side
        half = scale * mean_abs / 2
        left = half if math.isinf(lo) else scale * integrated_sf(noise, lo / scale)
        right = half if math.isinf(hi) else scale * integrated_sf(noise, hi / scale)
        return left + right
    return scale * (integrated_sf(noise, hi / scale) + integrated_sf(noise, lo / scale))


def shifted_abs_error(noise: NoiseDistribution, scale: float, c: float) -> float:
    """E|E - c| for E = scale Z (inf when Z has no mean)."""
    c = abs(c)
    if scale == 0.0:
        return c
    mean_abs = float(noise.mean_abs())
    if math.isinf(mean_abs) or c == 0.0:
        return scale * mean_abs
    return scale * mean_abs + c - 2.0 * scale * integrated_sf(noise, c / scale)
