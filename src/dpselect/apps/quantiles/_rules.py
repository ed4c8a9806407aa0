"""Parameter rules shared by the entry points of :mod:`dpselect.apps.quantiles`.

Each rule calls the same check as the body used to (so messages are unchanged); the data
``x`` is :data:`SAMPLE`: made a numpy array by the one conversion of the parameter layer
(:func:`~dpselect._params.as_array_1d`: pandas, polars, pyarrow columns, their integer kind
kept, a missing value refused), then checked in the body against ``bounds``, ``integer`` and
``on_out_of_bounds`` (records outside the bounds are clamped by default).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._params import (
    ANY,
    BOOLEAN,
    DATA_FINITE,
    DELTA,
    EPSILON,
    FINITE,
    SEED,
    SIZE,
    Rule,
    as_array_1d,
    instance_of,
    real_in,
)
from ..._validation import OUT_OF_BOUNDS, RELATIONS, SAMPLERS, check_array_1d, check_finite_float
from ...accounting import Accountant
from ._exponential.piecewise_em import check_method

#: The rank conventions of percentiles (module docstring of :mod:`._percentile.grid`).
RANK_CONVENTIONS = ("paper", "code")

__all__ = [
    "ACCOUNTANT",
    "ANY",
    "BOOLEAN",
    "BOUNDS",
    "DATA_FINITE",
    "DELTA",
    "EPSILON",
    "FINITE",
    "GRANULARITY",
    "GRID",
    "INTEGER",
    "LEVEL",
    "METHOD",
    "OUT_OF_BOUNDS_RULE",
    "PERCENT",
    "RANK_CONVENTION",
    "RANK_CONVENTIONS",
    "RELATION",
    "SAMPLE",
    "SAMPLER",
    "SEED",
    "SIZE",
    "Rule",
    "check_bounds",
    "check_grid",
    "options",
]


def check_bounds(bounds: Any) -> tuple[float, float]:
    if isinstance(bounds, (str, bytes)) or not hasattr(bounds, "__len__"):
        raise TypeError(f"bounds must be a pair (a, b), got {type(bounds).__name__}")
    if len(bounds) != 2:
        raise ValueError(f"bounds must be a pair (a, b), got length {len(bounds)}")
    a = check_finite_float(bounds[0], "bounds[0]")
    b = check_finite_float(bounds[1], "bounds[1]")
    if not a < b:
        raise ValueError(f"bounds must satisfy a < b, got ({a!r}, {b!r})")
    if not math.isfinite(b - a):
        raise ValueError("bounds width b - a must be finite")
    return a, b


def check_grid(grid: Any) -> tuple[np.ndarray, np.ndarray]:
    """(float64 grid, original array) — finite, 1-D, non-empty, strictly increasing."""
    g = check_array_1d(grid, "grid")
    if g.size > 1 and not (np.diff(g) > 0).all():
        raise ValueError("grid must be strictly increasing")
    return g, np.asarray(grid)


def _bounds(value: Any, name: str) -> tuple[float, float]:
    return check_bounds(value)


def _grid(value: Any, name: str) -> Any:
    check_grid(value)
    return value  # the body keeps the original values (the labels)


def _method(value: Any, name: str) -> str:
    return check_method(value)


def _integer(value: Any, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be None or a bool, got {type(value).__name__}")
    return bool(value)


def options(*values: str, none: bool = False) -> Rule:
    """One of the strings ``values``; anything else is a ValueError (as the checks of this package always were)."""

    def check(value: Any, name: str) -> str:
        if not isinstance(value, str) or value not in values:
            raise ValueError(f"{name} must be one of {values}, got {value!r}")
        return value

    return Rule(f"one of {values}", check=check, none=none)


#: A neighbour relation of mathematics §1.
RELATION = options(*RELATIONS)
#: The sampler of the grid releases.
SAMPLER = options(*SAMPLERS)
#: What a bounded-data function does with a record outside the public bounds.
OUT_OF_BOUNDS_RULE = options(*OUT_OF_BOUNDS)
#: Public bounds (a, b): finite, a < b, finite width.
BOUNDS = Rule("a pair (a, b) of finite floats with a < b", check=_bounds)
#: The 1-D sample ``x``: numpy, a list, a pandas / polars / pyarrow column (integer kind kept) or
#: a dask array, as numpy; the body checks it against ``bounds`` and ``integer``.
SAMPLE = Rule("a 1-D array-like of real numbers (numpy, list, pandas, polars, pyarrow or dask)", check=as_array_1d)
#: A quantile level in [0, 1].
LEVEL = real_in(0.0, 1.0, closed=True)
#: A percentile in [0, 100].
PERCENT = real_in(0.0, 100.0, closed=True)
#: A public candidate grid: finite, 1-D, non-empty, strictly increasing.
GRID = Rule("a finite, strictly increasing 1-D array", check=_grid)
#: Integer outputs: None (from the dtype of the data) or a bool.
INTEGER = Rule("a bool", check=_integer, none=True)
#: The float piece sampler of the exponential mechanism over pieces.
METHOD = Rule("one of ('auto', 'race', 'inverse')", check=_method)
#: The rank conventions of percentiles.
RANK_CONVENTION = options(*RANK_CONVENTIONS)
#: The output grid: None (the default from the public bounds), 0 (floats) or a power of two;
#: checked in the body against ``bounds``.
GRANULARITY = Rule("None, 0 or a power of two (checked against the bounds)")
#: An accountant charged before any randomness is drawn.
ACCOUNTANT = instance_of(Accountant, none=True)
