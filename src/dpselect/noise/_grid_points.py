"""The points of the output grid: granularities, indices and values (see :mod:`dpselect.noise.grid`)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._params import ANY, Rule, instance_of, int_at_least, positive, validate_params
from .._validation import as_real_array, check_positive
from ._integers import POSITIVE_FRACTION

#: Default grid: 2^-GRID_BITS of the smallest public scale (rounding error <= 2^-21 scale).
GRID_BITS = 20
#: Grid indices are kept within +-2^52 so that k * lambda is an exact float.
MAX_INDEX = 2**52


def _check_granularity(value: Any, name: str = "granularity") -> float:
    g = check_positive(value, name)
    mant, _ = math.frexp(g)
    if mant != 0.5:
        raise ValueError(f"{name} must be a power of two (e.g. 2**-20), got {value!r}")
    return g


_NAME = instance_of(str)


@validate_params({"value": ANY, "name": _NAME})  # value: checked here, under ``name``
def check_granularity(value: float, name: str = "granularity") -> float:
    """Return ``value`` as a float if it is a positive power of two (2^j for an integer j).

    Parameters
    ----------
    value : float
        The granularity (checked here; messages name ``name``).
    name : str, default="granularity"
        The argument's name, for messages.

    Returns
    -------
    float
        ``value``.

    Raises
    ------
    TypeError
        If ``value`` is not a real number.
    ValueError
        If it is not a positive power of two.

    Examples
    --------
    >>> check_granularity(0.25)
    0.25
    """
    return _check_granularity(value, name)


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

    Examples
    --------
    >>> default_granularity(1.0) == 2.0**-20
    True
    >>> default_granularity(3.0, 10.0) == 2.0**-19
    True
    """
    s = min(check_positive(v, "scale") for v in scales)
    return math.ldexp(1.0, math.frexp(s)[1] - 1 - GRID_BITS)


@validate_params({"x": POSITIVE_FRACTION, "bits": int_at_least(1)})
def dyadic_ceil(x: Fraction, bits: int = 40) -> Fraction:
    """Return the smallest p / 2^q >= x with p < 2^(bits + 1): relative increase below 2^-bits.

    Parameters
    ----------
    x : fractions.Fraction
        The number to round up, > 0.
    bits : int, default=40
        The significant bits kept, >= 1.

    Returns
    -------
    fractions.Fraction
        The dyadic upper bound.

    Examples
    --------
    >>> dyadic_ceil(Fraction(1, 3), bits=4)
    Fraction(11, 32)
    """
    q = bits - (x.numerator.bit_length() - x.denominator.bit_length())
    scale = Fraction(2) ** q
    return Fraction(math.ceil(x * scale)) / scale


@validate_params({"values": ANY, "granularity": positive(), "name": _NAME})  # values: checked here, under name
def grid_index(values: ArrayLike, granularity: float, name: str = "value") -> NDArray[np.int64]:
    """Return c = floor(v / lambda + 1/2) as int64, clamped to +-2^51 (exact: lambda is a power of two).

    The clamp is 1-Lipschitz, so it never increases a sensitivity; it only
    matters for |v| >= 2^51 lambda.

    Parameters
    ----------
    values : array_like
        Finite reals v (any shape; messages name ``name``).
    granularity : float
        lambda, a power of two.
    name : str, default="value"
        The argument's name, for messages.

    Returns
    -------
    numpy.ndarray of int64
        c, shaped like ``values``.

    Examples
    --------
    >>> grid_index([0.3, -0.7], 0.5).tolist()
    [1, -1]
    """
    return _grid_index(values, granularity, name)


def _grid_index(values: Any, granularity: float, name: str = "value") -> NDArray[np.int64]:
    """:func:`grid_index` without the parameter layer."""
    v = as_real_array(values, name)
    if not np.isfinite(v).all():
        raise ValueError(f"{name} must be finite")
    c = np.floor(np.clip(v / granularity, -(2.0**51), 2.0**51) + 0.5)
    return c.astype(np.int64)


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
