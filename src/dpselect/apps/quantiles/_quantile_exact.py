"""The exact output law and error of :func:`private_quantile`, and its non-private target."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._validation import check_array_1d, check_epsilon, check_relation
from ._quantile import _law, output_grid
from ._quantile_law import abs_dev, check_q, check_sample, normalise, target_rank

__all__ = ["quantile_expected_error", "quantile_law", "true_quantile"]


def quantile_law(
    x: Any,
    q: float,
    epsilon: float,
    *,
    bounds: Any,
    integer: bool | None = None,
    relation: str = "add_remove",
    granularity: float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact output law of :func:`private_quantile`: ``(lo, hi, probabilities)`` per piece.

    With the given probability the output is uniform on the grid points of
    ``[lo, hi]`` (real outputs: lo and hi are the first and last multiple of
    ``granularity`` in the piece), on its integers (integer outputs), or on
    the interval (``granularity=0``); pieces are in increasing order, the
    gaps between consecutive data values alternating with the data values
    themselves (integer outputs, or real values on the grid; a piece without
    a point is empty: ``hi < lo``, probability 0).

    Examples
    --------
    >>> import numpy as np
    >>> from dpselect.apps.quantiles import quantile_law
    >>> lo, hi, p = quantile_law(np.array([1, 2, 2, 3]), 0.5, 2.0, bounds=(0, 4))
    >>> lo.tolist()
    [0.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0]
    >>> hi.tolist()
    [0.0, 1.0, 1.0, 2.0, 2.0, 3.0, 4.0]
    >>> round(float(p[3]), 3)  # the atom {2}: the median
    0.826
    >>> lo, hi, p = quantile_law(np.array([0.3, 1.5]), 0.5, 2.0, bounds=(0, 2), granularity=0.25)
    >>> lo.tolist()  # [0, 0.3), {0.3} (off the grid: empty), (0.3, 1.5), the atom {1.5}, (1.5, 2]
    [0.0, 0.5, 0.5, 1.5, 1.75]
    >>> hi.tolist()
    [0.25, 0.25, 1.25, 1.5, 2.0]
    """
    epsilon = check_epsilon(epsilon)
    q = check_q(q)
    relation = check_relation(relation)
    s = check_sample(x, bounds, integer)
    pc, logw = _law(s, q, epsilon, relation, output_grid(granularity, s))
    return pc.lo.copy(), pc.hi.copy(), normalise(logw)


def true_quantile(x: Any, q: float) -> float:
    """x_(k), k = max(1, ceil(q n)): ``numpy.quantile(x, q, method="inverted_cdf")``.

    Examples
    --------
    >>> from dpselect.apps.quantiles import true_quantile
    >>> true_quantile([4.0, 1.0, 3.0, 2.0], 0.5)
    2.0
    """
    q = check_q(q)
    arr = np.sort(check_array_1d(x, "x"))
    return float(arr[target_rank(q, arr.size) - 1])


def quantile_expected_error(
    x: Any,
    q: float,
    epsilon: float,
    *,
    bounds: Any,
    integer: bool | None = None,
    relation: str = "add_remove",
    target: float | None = None,
    granularity: float | None = None,
) -> float:
    """Exact E|private_quantile(x, q) - target| (default target: x_(k)), closed form per piece.

    On the output grid of ``granularity`` (default as in :func:`private_quantile`;
    0: the continuous law) the closed form is that of a uniform grid point.

    Examples
    --------
    >>> from dpselect.apps.quantiles import quantile_expected_error
    >>> import numpy as np
    >>> round(quantile_expected_error(np.array([1, 2, 2, 3]), 0.5, 2.0, bounds=(0, 4)), 4)
    0.1944
    """
    epsilon = check_epsilon(epsilon)
    q = check_q(q)
    relation = check_relation(relation)
    s = check_sample(x, bounds, integer)
    lam = output_grid(granularity, s)
    t = s.order_statistic(target_rank(q, s.n)) if target is None else float(target)
    pc, logw = _law(s, q, epsilon, relation, lam)
    p = normalise(logw)
    keep = p > 0
    return float(np.dot(p[keep], abs_dev(pc, t)[keep]))
