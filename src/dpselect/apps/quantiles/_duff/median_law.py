"""The exact output law of :func:`duff_median` (``granularity=0``): pieces, density, CDF, error.

The law is the exponential mechanism over the n + 1 intervals between the padded order
statistics (:mod:`.median_masses`); epsilon-DP under add/remove neighbours (mathematics §6.1).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ...._params import validate_params
from ....output_law import OutputLaw
from .._order_stats import check_points, lower_median_index
from .._rules import ANY, BOUNDS, DATA_FINITE, EPSILON, SAMPLE
from .median_masses import median_distribution, uniform_abs_dev

__all__ = ["duff_median_intervals", "duff_median_pdf", "expected_absolute_error", "output_cdf"]


_LAW_RULES = {"x": SAMPLE, "epsilon": EPSILON, "bounds": BOUNDS}


@validate_params(_LAW_RULES)
def duff_median_intervals(x: ArrayLike, epsilon: float, *, bounds: tuple[float, float]) -> OutputLaw:
    """Exact output law of :func:`duff_median` (``granularity=0``) as a piecewise-uniform mixture.

    Parameters
    ----------
    x : array_like
        1-D array of finite floats (n >= 1); records outside ``bounds`` are clamped to them.
    epsilon : float
        Privacy parameter (> 0) of the mechanism: epsilon-DP under add/remove neighbours
        (mathematics §6.1).
    bounds : tuple of float
        Public ``(a, b)`` with ``a < b``.

    Returns
    -------
    OutputLaw
        n + 1 pieces: piece ``j`` is ``[y_j, y_{j+1}]`` (``law.lo``, ``law.hi``; ``y_0 = a``,
        ``y_{n+1} = b``), and the output is uniform on it with probability ``law[j]``.
        Zero-length intervals (ties, data at the bounds) have probability 0.

    Examples
    --------
    >>> from dpselect.apps.quantiles import duff_median_intervals
    >>> law = duff_median_intervals([1.0, 2.0, 3.0], 1.0, bounds=(0.0, 4.0))
    >>> law.lo.tolist(), round(float(law[1] + law[2]), 3)
    ([0.0, 1.0, 2.0, 3.0], 0.731)
    """
    ext, probs, _, _ = median_distribution(x, epsilon, bounds)
    return OutputLaw(probs, lo=ext[:-1], hi=ext[1:])


@validate_params({"t": ANY} | _LAW_RULES)
def duff_median_pdf(t: ArrayLike, x: ArrayLike, *, epsilon: float, bounds: tuple[float, float]) -> float | np.ndarray:
    """Density of :func:`duff_median` at ``t`` (vectorised; 0 outside [a, b]).

    The density is piecewise constant; at a breakpoint the value of the
    interval to the right is returned (at ``b``, of the last interval).

    Parameters
    ----------
    t : array_like
        Points of [a, b] (any shape).
    x : array_like
        1-D array of finite floats (n >= 1); records outside ``bounds`` are clamped to them.
    epsilon : float
        Privacy parameter (> 0) of the mechanism: epsilon-DP under add/remove neighbours
        (mathematics §6.1).
    bounds : tuple of float
        Public ``(a, b)`` with ``a < b``.

    Returns
    -------
    float or ndarray
        The density at ``t`` (a float for a scalar ``t``).

    Examples
    --------
    >>> from dpselect.apps.quantiles import duff_median_pdf
    >>> round(duff_median_pdf(2.0, [1.0, 2.0, 3.0], epsilon=1.0, bounds=(0.0, 4.0)), 3)
    0.276
    """
    ext, probs, a, b = median_distribution(x, epsilon, bounds)
    tt = check_points(t)
    n = ext.size - 2
    idx = np.searchsorted(ext, tt, side="right") - 1
    at_b = tt == b
    if at_b.any():
        idx = np.where(at_b, np.searchsorted(ext, b, side="left") - 1, idx)
    idx = np.clip(idx, 0, n)
    lam = ext[idx + 1] - ext[idx]
    with np.errstate(divide="ignore", invalid="ignore"):
        dens = np.where(lam > 0, probs[idx] / np.where(lam > 0, lam, 1.0), 0.0)
    dens = np.where((tt < a) | (tt > b), 0.0, dens)
    return float(dens) if dens.ndim == 0 else dens


@validate_params({"t": ANY} | _LAW_RULES)
def output_cdf(t: ArrayLike, x: ArrayLike, *, epsilon: float, bounds: tuple[float, float]) -> float | np.ndarray:
    """Exact CDF P(duff_median(x) <= t), vectorised over ``t`` (``granularity=0``).

    Parameters
    ----------
    t : array_like
        Points of [a, b] (any shape).
    x : array_like
        1-D array of finite floats (n >= 1); records outside ``bounds`` are clamped to them.
    epsilon : float
        Privacy parameter (> 0) of the mechanism: epsilon-DP under add/remove neighbours
        (mathematics §6.1).
    bounds : tuple of float
        Public ``(a, b)`` with ``a < b``.

    Returns
    -------
    float or ndarray
        The CDF at ``t`` (a float for a scalar ``t``).

    Examples
    --------
    >>> from dpselect.apps.quantiles import output_cdf
    >>> round(output_cdf(2.0, [1.0, 2.0, 3.0], epsilon=1.0, bounds=(0.0, 4.0)), 3)
    0.622
    """
    ext, probs, a, b = median_distribution(x, epsilon, bounds)
    tt = check_points(t)
    n = ext.size - 2
    cum = np.concatenate(([0.0], np.cumsum(probs)))
    idx = np.clip(np.searchsorted(ext, tt, side="right") - 1, 0, n)
    lo = ext[idx]
    lam = ext[idx + 1] - lo
    frac = np.where(lam > 0, np.clip((tt - lo) / np.where(lam > 0, lam, 1.0), 0.0, 1.0), 1.0)
    cdf = np.clip(cum[idx] + probs[idx] * frac, 0.0, 1.0)
    cdf = np.where(tt < a, 0.0, np.where(tt >= b, 1.0, cdf))
    return float(cdf) if cdf.ndim == 0 else cdf


@validate_params(_LAW_RULES | {"target": DATA_FINITE.or_none()})
def expected_absolute_error(
    x: ArrayLike, epsilon: float, *, bounds: tuple[float, float], target: float | None = None
) -> float:
    """Exact E|duff_median(x) - target| (default target: the lower median y_m), ``granularity=0``.

    Closed form per interval: for U ~ Uniform[l, r] and l < c < r,
    E|U - c| = ((c - l)^2 + (r - c)^2) / (2 (r - l)); otherwise |(l + r)/2 - c|.

    Parameters
    ----------
    x : array_like
        1-D array of finite floats (n >= 1); records outside ``bounds`` are clamped to them.
    epsilon : float
        Privacy parameter (> 0) of the mechanism: epsilon-DP under add/remove neighbours
        (mathematics §6.1).
    bounds : tuple of float
        Public ``(a, b)`` with ``a < b``.
    target : float or None, default=None
        The value the error is measured from (None: the lower median).

    Returns
    -------
    float
        The exact expected absolute error.

    Examples
    --------
    >>> from dpselect.apps.quantiles import expected_absolute_error
    >>> round(expected_absolute_error([0.1, 0.35, 0.4, 0.45, 0.5, 0.8], 2.0, bounds=(0.0, 1.0)), 4)
    0.0663
    """
    ext, probs, _, _ = median_distribution(x, epsilon, bounds)
    n = ext.size - 2
    c = float(ext[lower_median_index(n)]) if target is None else target
    keep = probs > 0
    dev = uniform_abs_dev(ext[:-1][keep], ext[1:][keep], c)
    return float(np.dot(probs[keep], dev))
