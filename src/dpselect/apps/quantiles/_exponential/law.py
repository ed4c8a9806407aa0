"""The exact output law and error of :func:`private_quantile`, and its non-private target."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ...._params import validate_params
from ...._validation import check_array_1d
from ....output_law import OutputLaw
from ....typing import Relation
from .._rules import BOUNDS, DATA_FINITE, EPSILON, GRANULARITY, INTEGER, LEVEL, RELATION, SAMPLE
from .mechanism import _law, output_grid
from .quantile_pieces import abs_dev, check_sample, normalise, target_rank

__all__ = ["quantile_expected_error", "quantile_law", "true_quantile"]


@validate_params(
    {
        "x": SAMPLE,
        "q": LEVEL,
        "epsilon": EPSILON,
        "bounds": BOUNDS,
        "integer": INTEGER,
        "relation": RELATION,
        "granularity": GRANULARITY,
    }
)
def quantile_law(
    x: ArrayLike,
    q: float,
    epsilon: float,
    *,
    bounds: tuple[float, float],
    integer: bool | None = None,
    relation: Relation = "add_remove",
    granularity: float | None = None,
) -> OutputLaw:
    """Exact output law of :func:`private_quantile`: a probability per piece ``[lo, hi]``.

    With the given probability the output is uniform on the grid points of
    ``[lo, hi]`` (real outputs: lo and hi are the first and last multiple of
    ``granularity`` in the piece), on its integers (integer outputs), or on
    the interval (``granularity=0``); pieces are in increasing order, the
    gaps between consecutive data values alternating with the data values
    themselves (integer outputs, or real values on the grid).  A gap or an
    off-grid data value without a point of the output grid has probability 0 and
    is left out.  The mechanism is epsilon-DP under ``relation`` (add/remove or
    replace neighbours; mathematics §12.1).

    Parameters
    ----------
    x : array_like or dask array
        1-D sample, finite (records outside ``bounds`` are clamped to them).
    q : float
        Quantile level in [0, 1].
    epsilon : float
        Privacy budget (> 0).
    bounds : tuple of float
        Public ``(a, b)``, ``a < b``.
    integer : bool or None, default=None
        Integer outputs; None: whether ``x`` has an integer dtype.
    relation : {"add_remove", "replace"}, default="add_remove"
        The neighbour relation of the utility (mathematics §1).
    granularity : float or None, default=None
        The output grid of real outputs, as in :func:`private_quantile` (0: continuous).

    Returns
    -------
    OutputLaw
        Pieces ``law.lo``, ``law.hi`` and their probabilities (the law itself).

    Examples
    --------
    >>> import numpy as np
    >>> from dpselect.apps.quantiles import quantile_law
    >>> law = quantile_law(np.array([1, 2, 2, 3]), 0.5, 2.0, bounds=(0, 4))
    >>> law.lo.tolist()  # the gaps (1, 2) and (2, 3) hold no integer
    [0.0, 1.0, 2.0, 3.0, 4.0]
    >>> law.hi.tolist()
    [0.0, 1.0, 2.0, 3.0, 4.0]
    >>> round(float(law[2]), 3)  # the atom {2}: the median
    0.826
    >>> law = quantile_law(np.array([0.3, 1.5]), 0.5, 2.0, bounds=(0, 2), granularity=0.25)
    >>> law.lo.tolist()  # [0, 0.3), (0.3, 1.5), the atom {1.5}, (1.5, 2]; {0.3} is off the grid
    [0.0, 0.5, 1.5, 1.75]
    >>> law.hi.tolist()
    [0.25, 1.25, 1.5, 2.0]
    """
    s = check_sample(x, bounds, integer)
    pc, logw = _law(s, q, epsilon, relation, output_grid(granularity, s))
    p = normalise(logw)
    keep = pc.hi >= pc.lo
    return OutputLaw(p[keep], lo=pc.lo[keep], hi=pc.hi[keep])


@validate_params({"x": SAMPLE, "q": LEVEL})
def true_quantile(x: ArrayLike, q: float) -> float:
    """x_(k), k = max(1, ceil(q n)): ``numpy.quantile(x, q, method="inverted_cdf")`` (not private).

    Parameters
    ----------
    x : array_like
        1-D sample, finite, non-empty.
    q : float
        Quantile level in [0, 1].

    Returns
    -------
    float
        The order statistic x_(k).

    Examples
    --------
    >>> from dpselect.apps.quantiles import true_quantile
    >>> true_quantile([4.0, 1.0, 3.0, 2.0], 0.5)
    2.0
    """
    arr = np.sort(check_array_1d(x, "x"))
    return float(arr[target_rank(q, arr.size) - 1])


@validate_params(
    {
        "x": SAMPLE,
        "q": LEVEL,
        "epsilon": EPSILON,
        "bounds": BOUNDS,
        "integer": INTEGER,
        "relation": RELATION,
        "target": DATA_FINITE.or_none(),
        "granularity": GRANULARITY,
    }
)
def quantile_expected_error(
    x: ArrayLike,
    q: float,
    epsilon: float,
    *,
    bounds: tuple[float, float],
    integer: bool | None = None,
    relation: Relation = "add_remove",
    target: float | None = None,
    granularity: float | None = None,
) -> float:
    """Exact E|private_quantile(x, q) - target| (default target: x_(k)), closed form per piece.

    On the output grid of ``granularity`` (default as in :func:`private_quantile`;
    0: the continuous law) the closed form is that of a uniform grid point.  The mechanism
    is epsilon-DP under ``relation`` (add/remove or replace neighbours; mathematics §12.1).

    Parameters
    ----------
    x : array_like or dask array
        1-D sample, finite (records outside ``bounds`` are clamped to them).
    q : float
        Quantile level in [0, 1].
    epsilon : float
        Privacy budget (> 0).
    bounds : tuple of float
        Public ``(a, b)``, ``a < b``.
    integer : bool or None, default=None
        Integer outputs; None: whether ``x`` has an integer dtype.
    relation : {"add_remove", "replace"}, default="add_remove"
        The neighbour relation of the utility (mathematics §1).
    target : float or None, default=None
        The value the error is measured from (None: the order statistic x_(k)).
    granularity : float or None, default=None
        The output grid of real outputs, as in :func:`private_quantile` (0: continuous).

    Returns
    -------
    float
        The exact expected absolute error.

    Examples
    --------
    >>> from dpselect.apps.quantiles import quantile_expected_error
    >>> import numpy as np
    >>> round(quantile_expected_error(np.array([1, 2, 2, 3]), 0.5, 2.0, bounds=(0, 4)), 4)
    0.1944
    """
    s = check_sample(x, bounds, integer)
    lam = output_grid(granularity, s)
    t = s.order_statistic(target_rank(q, s.n)) if target is None else float(target)
    pc, logw = _law(s, q, epsilon, relation, lam)
    p = normalise(logw)
    keep = p > 0
    return float(np.dot(p[keep], abs_dev(pc, t)[keep]))
