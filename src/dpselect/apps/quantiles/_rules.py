"""Parameter rules shared by the entry points of :mod:`dpselect.apps.quantiles`.

The rules every package shares (the data ``x``, the output grid, an accountant, the option
rules) come from :mod:`dpselect._params`, re-exported here for the package's modules; the
data ``x`` is made a numpy array there by the one conversion of the parameter layer
(:func:`~dpselect._params.as_array_1d`: pandas, polars, pyarrow columns, their integer kind
kept, a missing value refused), then checked in the body against ``bounds``,
``integer`` and ``on_out_of_bounds`` (records outside the bounds are clamped by default).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._params import (
    ACCOUNTANT,
    BOOLEAN,
    DATA_FINITE,
    DELTA,
    EPSILON,
    FINITE,
    OUT_OF_BOUNDS_RULE,
    REALS,
    RELATION,
    SAMPLE,
    SAMPLER,
    SEED,
    SIZE,
    Rule,
    options,
    real_in,
)
from ..._params import GRANULARITY_OR_ZERO as GRANULARITY
from ..._validation import check_array_1d, check_finite_float

#: The float piece samplers of the exponential mechanism over pieces (same law).
FLOAT_SAMPLERS = ("auto", "race", "inverse")
#: The rank conventions of percentiles (module docstring of :mod:`._percentile.grid`).
RANK_CONVENTIONS = ("paper", "code")

__all__ = [
    "ACCOUNTANT",
    "BOOLEAN",
    "BOUNDS",
    "DATA_FINITE",
    "DELTA",
    "EPSILON",
    "FINITE",
    "FLOAT_SAMPLER",
    "FLOAT_SAMPLERS",
    "GRANULARITY",
    "GRID",
    "INTEGER",
    "LEVEL",
    "OUT_OF_BOUNDS_RULE",
    "PERCENT",
    "RANK_CONVENTION",
    "RANK_CONVENTIONS",
    "REALS",
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


def _integer(value: Any, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be None or a bool, got {type(value).__name__}")
    return bool(value)


#: Public bounds (a, b): finite, a < b, finite width.
BOUNDS = Rule("a pair (a, b) of finite floats with a < b", check=_bounds)
#: A quantile level in [0, 1].
LEVEL = real_in(0.0, 1.0, closed=True)
#: A percentile in [0, 100].
PERCENT = real_in(0.0, 100.0, closed=True)
#: A public candidate grid: finite, 1-D, non-empty, strictly increasing.
GRID = Rule("a finite, strictly increasing 1-D array", check=_grid)
#: Integer outputs: None (from the dtype of the data) or a bool.
INTEGER = Rule("a bool", check=_integer, none=True)
#: How the float sampler of the exponential mechanism over pieces draws the piece (same law).
FLOAT_SAMPLER = options(*FLOAT_SAMPLERS)
#: The rank conventions of percentiles.
RANK_CONVENTION = options(*RANK_CONVENTIONS)
