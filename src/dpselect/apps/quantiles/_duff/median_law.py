"""The exact output law of :func:`duff_median` (``granularity=0``): its pieces and density.

The CDF and the expected error are the law's own (:meth:`~dpselect.OutputLaw.cdf`,
:meth:`~dpselect.OutputLaw.expected_error`).

The law is the exponential mechanism over the n + 1 intervals between the padded order
statistics (:mod:`.median_masses`); epsilon-DP under add/remove neighbours (mathematics §6.1).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ...._docstrings import fill_doc
from ...._params import validate_params
from ....output_law import OutputLaw
from .._order_stats import check_points
from .._rules import BOUNDS, EPSILON, REALS, SAMPLE
from .median_masses import median_distribution

__all__ = ["duff_median_intervals", "duff_median_pdf"]


_LAW_RULES = {"x": SAMPLE, "epsilon": EPSILON, "bounds": BOUNDS}


@validate_params(_LAW_RULES)
@fill_doc
def duff_median_intervals(x: ArrayLike, epsilon: float, *, bounds: tuple[float, float]) -> OutputLaw:
    """Exact output law of :func:`duff_median` (``granularity=0``) as a piecewise-uniform mixture.

    Parameters
    ----------
    %(duff_data)s

    Returns
    -------
    OutputLaw
        n + 1 pieces: piece ``j`` is ``[y_j, y_{j+1}]`` (``law.lo``, ``law.hi``; ``y_0 = a``,
        ``y_{n+1} = b``), and the output is uniform on it with probability ``law[j]``.
        Zero-length intervals (ties, data at the bounds) have probability 0.

    See Also
    --------
    duff_median_pdf : Density of :func:`duff_median` at ``t`` (vectorised; 0 outside [a, b])
    duff_mean_intervals : Exact output law of :func:`duff_mean` (``granularity=0``), uniform on each piece
    duff_median : Sample the Duff exponential mechanism for the (lower) median

    Examples
    --------
    >>> from dpselect.apps.quantiles import duff_median_intervals
    >>> law = duff_median_intervals([1.0, 2.0, 3.0], 1.0, bounds=(0.0, 4.0))
    >>> law.lo.tolist(), round(float(law[1] + law[2]), 3)
    ([0.0, 1.0, 2.0, 3.0], 0.731)
    """
    ext, probs, _, _ = median_distribution(x, epsilon, bounds)
    return OutputLaw(probs, lo=ext[:-1], hi=ext[1:])


@validate_params({"t": REALS} | _LAW_RULES)
@fill_doc
def duff_median_pdf(t: ArrayLike, x: ArrayLike, epsilon: float, *, bounds: tuple[float, float]) -> float | np.ndarray:
    """Density of :func:`duff_median` at ``t`` (vectorised; 0 outside [a, b]).

    The density is piecewise constant; at a breakpoint the value of the
    interval to the right is returned (at ``b``, of the last interval).

    Parameters
    ----------
    %(duff_points_data)s

    Returns
    -------
    float or ndarray
        The density at ``t`` (a float for a scalar ``t``).

    See Also
    --------
    duff_median_intervals : Exact output law of :func:`duff_median` (``granularity=0``) as a piecewise-uniform ...
    duff_median : Sample the Duff exponential mechanism for the (lower) median
    duff_median_utility : Exact Duff utility ``u_d(x, t) = -d_AR(x, {x' : median(x') = t})`` for t in [a, b]

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
