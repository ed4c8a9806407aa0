"""The points of the output grid: granularities, indices and values (see :mod:`dpselect.noise.grid`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._params import Rule, positive, validate_params
from .._validation import check_positive

#: Default grid: 2^-GRID_BITS of the smallest public scale (rounding error <= 2^-21 scale).
GRID_BITS = 20
#: Grid indices are kept within +-2^52 so that k * lambda is an exact float.
MAX_INDEX = 2**52


@validate_params({})  # the scales are checked one by one in the body
def default_granularity(*scales: float) -> float:
    """Return 2^(floor(log2(min(scales))) - GRID_BITS): the default grid from public scales.

    Parameters
    ----------
    *scales : float
        Public scales, each > 0 (at least one).

    Returns
    -------
    float
        The granularity, a power of two.

    See Also
    --------
    grid_values : Return k lambda as float64, k clamped to +-2^52 (post-processing) so that every value is exact

    Examples
    --------
    >>> default_granularity(1.0) == 2.0**-20
    True
    >>> default_granularity(3.0, 10.0) == 2.0**-19
    True
    """
    s = min(check_positive(v, "scale") for v in scales)
    return math.ldexp(1.0, math.frexp(s)[1] - 1 - GRID_BITS)


def _integer_like(value: Any, name: str) -> Any:
    if np.asarray(value).dtype.kind not in "biuf":
        raise TypeError(f"{name} must be integers, got dtype {np.asarray(value).dtype}")
    return value


@validate_params({"index": Rule("integers (a scalar or an array)", check=_integer_like), "granularity": positive()})
def grid_values(index: ArrayLike, granularity: float) -> NDArray[np.float64]:
    """Return k lambda as float64, k clamped to +-2^52 (post-processing) so that every value is exact.

    Parameters
    ----------
    index : array_like of int
        Grid indices k (any shape; converted to int64).
    granularity : float
        lambda, a power of two.

    Returns
    -------
    numpy.ndarray
        k lambda, shaped like ``index``.

    See Also
    --------
    default_granularity : Return 2^(floor(log2(min(scales))) - GRID_BITS): the default grid from public scales
    GridLaplace : Exact discrete Laplace release on the grid lambda Z for a statistic of sensitivity Delta

    Examples
    --------
    >>> grid_values([1, -3], 0.25).tolist()
    [0.25, -0.75]
    """
    return _grid_values(index, granularity)


def _grid_values(index: Any, granularity: float) -> NDArray[np.float64]:
    """:func:`grid_values` without the parameter layer (the releases' inner loops)."""
    k = np.clip(np.asarray(index, dtype=np.int64), -MAX_INDEX, MAX_INDEX)
    return k.astype(np.float64) * granularity
