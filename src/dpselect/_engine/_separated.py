r"""Scores below the integration range as Chebyshev points (noisy-max engine).

When the noisy maximum's log-CDF G is negligible below a point y_lo (the engine's
lower cut, :func:`dpselect._engine._mesh.lower_end`), only y >= y_lo is integrated.
For a score a < y_lo every argument z = y - a of the integrand is then >= D = y_lo - a.
If the law's density and log-CDF are analytic on the sector |arg z| < theta
(``noise.right_sector``, mathematics §13), the maps a -> log F(y - a) and
a -> Pr[a] are analytic, for every y >= y_lo at once, in the Bernstein ellipse of
ratio rho = 2 + sqrt(5) around any panel of centre distance D and half-length L with

.. math::

    D \ge \kappa L, \qquad \kappa = \sqrt5 + 2 / \tan\theta

(the ellipse's semi-axes are sqrt(5) L and 2 L, so the whole ellipse has
Re z >= D - sqrt(5) L and |Im z| <= 2 L).  Panels geometric in D with ratio
r = min(2, (kappa + 1)/(kappa - 1)) from D = r0, capped at half the noise width,
satisfy it (lengths up to about 2h); on each, degree-25 Chebyshev interpolation is exact to ~rho^-25 = 2e-16
relative.  The scores are replaced by the panels' Chebyshev points with summed
barycentric weights (for G) and Pr is interpolated back, as for laws analytic in a
strip (:func:`dpselect._engine._noisy_max._chebyshev_grid`); the scores closer than r0 to y_lo
(at most 26; r0 <= h) are summed directly.  The y-mesh is refined geometrically above
y_lo from r0 so that the Chebyshev points' own integrands, singular at distance >= r0
below y_lo, are resolved.  Proofs of the sectors: the mathematics page, §13.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

__all__ = ["CHEB_POINTS", "Separated", "barycentric_weights", "chebyshev_points", "separated_grid"]

#: Chebyshev points per panel: degree-25 interpolation, exact to ~rho^-25 = 2e-16 relative.
CHEB_POINTS = 26
_RHO_MAJOR = math.sqrt(5.0)  # semi-major and semi-minor axes / L of the ellipse of ratio 2 + sqrt 5
_RHO_MINOR = 2.0
_MIN_R0 = 2.0**-40  # scores closer than 2^-40 h to y_lo are summed directly
_DIRECT = 26
_MAX_D = 2.0**40  # nor are scores farther than 2^40 h (panel edges would lose their precision)


class Separated(NamedTuple):
    """The Chebyshev points replacing the far scores, and how to interpolate back.

    Chebyshev points ``X`` (P, 26) in score coordinates, interpolation weights ``ell``
    (number of proxied groups, 26), each proxied group's ``panel``, summed weights ``W``,
    the mask ``proxied`` over the groups, and ``r0`` (the y-mesh refinement scale).
    """

    X: np.ndarray
    ell: np.ndarray
    panel: np.ndarray
    W: np.ndarray
    proxied: np.ndarray
    r0: float


def chebyshev_points(mid: np.ndarray, half: float | np.ndarray) -> np.ndarray:
    """The 26 Chebyshev points (second kind) of each panel [mid - half, mid + half], one row per panel."""
    k = np.arange(CHEB_POINTS)
    return mid[:, None] + np.reshape(half, (-1, 1)) * np.cos(np.pi * k / (CHEB_POINTS - 1))[None, :]


def barycentric_weights(diff: np.ndarray) -> np.ndarray:
    """Interpolation weights of each score at its panel's Chebyshev points (barycentric formula).

    ``diff[i, j]`` is score i minus point j of its panel; a score on a point gets weight 1 there.
    """
    k = np.arange(CHEB_POINTS)
    lam = np.where(k % 2 == 0, 1.0, -1.0)
    lam[[0, -1]] *= 0.5
    hit = diff == 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        C = lam[None, :] / diff
        ell = C / C.sum(axis=1, keepdims=True)
    rows = hit.any(axis=1)
    ell[rows] = hit[rows]
    return ell


def separated_grid(values: np.ndarray, counts: np.ndarray, noise: Any, y_lo: float) -> Separated | None:
    """The Chebyshev points of the scores at distance >= r0 below ``y_lo`` (module docstring).

    None if the law declares no sector or the points would not be at least 4 times fewer
    than the groups they replace.
    """
    theta = float(getattr(noise, "right_sector", 0.0))
    if not (theta > 0 and np.isfinite(y_lo)):
        return None
    h = 0.5 * float(noise.width)
    kappa = _RHO_MAJOR + (_RHO_MINOR / math.tan(theta) if theta < math.pi / 2 else 0.0)
    ratio = min(2.0, (kappa + 1.0) / (kappa - 1.0))
    D = y_lo - values
    # r0: at most _DIRECT groups closer to y_lo are summed directly (each costs as much as a point)
    r0 = max(min(float(np.partition(D, min(_DIRECT, D.size - 1))[min(_DIRECT, D.size - 1)]), h), h * _MIN_R0)
    proxied = (D >= r0) & (D <= h * _MAX_D)
    # panel edges in D: geometric with `ratio` while the panel is shorter than h, then length h
    n_geo = max(0, math.ceil(math.log(h / ((ratio - 1.0) * r0)) / math.log(ratio))) + 1
    geo = r0 * ratio ** np.arange(n_geo + 1)
    start = float(geo[-1])
    Dp = D[proxied]
    idx = np.where(Dp < start, np.searchsorted(geo, Dp, side="right") - 1.0, n_geo + np.floor((Dp - start) / h))
    used, panel = np.unique(idx, return_inverse=True)
    if not used.size * CHEB_POINTS * 4 < Dp.size:
        return None
    geo_panel = used < n_geo
    ui = np.where(geo_panel, used, 0).astype(np.int64)
    lo = np.where(geo_panel, geo[ui], start + (used - n_geo) * h)
    hi = np.where(geo_panel, geo[np.minimum(ui + 1, n_geo)], lo + h)
    half = 0.5 * (hi - lo)
    Dx = chebyshev_points(lo + half, half)
    ell = barycentric_weights(Dx[panel] - Dp[:, None])  # a - X, computed in distances
    W = np.zeros_like(Dx)
    np.add.at(W, panel, counts[proxied][:, None] * ell)
    return Separated(y_lo - Dx, ell, panel, W, proxied, r0)
