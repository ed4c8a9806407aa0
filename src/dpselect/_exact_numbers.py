"""Exact numbers every layer shares: the power-of-two output grid and exact fractions.

A private module made for sharing (scikit-learn's ``utils._param_validation`` pattern):
the noise laws, the mechanisms' releases and the apps import these helpers from here, and
no public face exports them.

* :func:`check_granularity`: lambda = 2^j, a positive power of two;
* :func:`grid_index`: c = floor(v / lambda + 1/2), exact in float arithmetic (lambda is a
  power of two), clamped to +-2^51 so that c lambda stays an exact float;
* :func:`dyadic_ceil`: the smallest p / 2^q >= x with ``bits + 1`` significant bits (a
  scale rounded up: only less privacy loss);
* :func:`as_fraction`: an int, Fraction, float or NumPy real as an exact Fraction.

Messages name the argument and never echo a value that may come from the data.  The
grid is explained on the documentation page "Floating point and side channels"
(Mironov 2012, *On significance of the least significant bits for differential privacy*).

Examples
--------
>>> from fractions import Fraction
>>> check_granularity(0.25), grid_index([0.3, -0.7], 0.5).tolist()
(0.25, [1, -1])
>>> dyadic_ceil(Fraction(1, 3), bits=4), as_fraction(0.5, "scale", positive=True)
(Fraction(11, 32), Fraction(1, 2))
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._validation import as_real_array, check_positive

__all__ = ["as_fraction", "check_granularity", "dyadic_ceil", "grid_index"]


def check_granularity(value: Any, name: str = "granularity") -> float:
    """Return ``value`` as a float if it is a positive power of two (2^j for an integer j).

    Parameters
    ----------
    value : float
        The granularity.
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
    """
    g = check_positive(value, name)
    mant, _ = math.frexp(g)
    if mant != 0.5:
        raise ValueError(f"{name} must be a power of two (e.g. 2**-20), got {value!r}")
    return g


def grid_index(values: Any, granularity: float, name: str = "value") -> NDArray[np.int64]:
    """Return c = floor(v / lambda + 1/2) as int64, clamped to +-2^51 (exact: lambda is a power of two).

    The clamp is 1-Lipschitz, so it never increases a sensitivity; it only matters for
    |v| >= 2^51 lambda.

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
    """
    v = as_real_array(values, name)
    if not np.isfinite(v).all():
        raise ValueError(f"{name} must be finite")
    c = np.floor(np.clip(v / granularity, -(2.0**51), 2.0**51) + 0.5)
    return c.astype(np.int64)


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
    """
    q = bits - (x.numerator.bit_length() - x.denominator.bit_length())
    scale = Fraction(2) ** q
    return Fraction(math.ceil(x * scale)) / scale


def as_fraction(value: Any, name: str, *, positive: bool = False, nonnegative: bool = False) -> Fraction:
    """Return an int, Fraction, float or NumPy real as an exact :class:`~fractions.Fraction`.

    Every finite float is a rational number, so the conversion is exact
    (``Fraction(0.1)`` is ``3602879701896397 / 2**55``).  Messages name ``name`` and never
    echo the value (scales and rates may be computed from the data).

    Parameters
    ----------
    value : int, Fraction, float or numpy real
        The number (not a bool, finite).
    name : str
        The argument's name, for messages.
    positive : bool, default=False
        Whether ``value`` must be > 0.
    nonnegative : bool, default=False
        Whether ``value`` must be >= 0.

    Returns
    -------
    fractions.Fraction
        ``value`` exactly.

    Raises
    ------
    TypeError
        If ``value`` is not a real number (or is a bool).
    ValueError
        If it is not finite, or not > 0 / >= 0 as asked.
    """
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a rational number (int, Fraction or float), got bool")
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (int, Fraction)):
        q = Fraction(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{name} must be finite")
        q = Fraction(value)
    else:
        raise TypeError(f"{name} must be a rational number (int, Fraction or float), got {type(value).__name__}")
    if positive and q <= 0:  # no value in the message: scales and rates may be computed from the data
        raise ValueError(f"{name} must be > 0")
    if nonnegative and q < 0:
        raise ValueError(f"{name} must be >= 0")
    return q
