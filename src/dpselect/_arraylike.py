"""One conversion of the array-likes users hold into numpy: numpy, lists, pandas, polars, pyarrow.

:func:`to_numpy` is the single place where a foreign column becomes a numpy array; every
array rule of :mod:`dpselect._params` (through :func:`dpselect._validation.as_real_array`)
and :func:`dpselect._params.as_array_1d` go through it.  The rules:

* the kind is kept: a nullable or pyarrow integer column (``Int64``, ``int64[pyarrow]``,
  polars ``Int64``, a pyarrow ``int64`` array) becomes ``int64`` (unsigned: ``uint64``), a
  float column ``float64``, a boolean column numpy ``bool`` (mapped explicitly, as a numpy
  bool array is treated); anything else (strings, categories, dates) keeps what numpy makes of
  it and the caller's dtype check refuses it;
* a missing value (``pd.NA``, a NaN in a pandas column, ``None``, a polars or pyarrow null)
  is a ``ValueError`` naming the argument (never dropped, never read as NaN);
* pandas, polars and pyarrow are never imported here: a value is recognised only when its
  package is already in ``sys.modules`` (a user holding such a column has imported it).

Examples
--------
>>> from dpselect._arraylike import to_numpy
>>> to_numpy([1, 2, 3], "x").dtype
dtype('int64')
>>> to_numpy([1.0, None], "x")
Traceback (most recent call last):
...
ValueError: x has missing values (None / NA): drop or impute them first
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

__all__ = ["as_array_1d", "to_numpy"]


def _missing(name: str) -> ValueError:
    return ValueError(f"{name} has missing values (None / NA): drop or impute them first")


def _target(kind: str, numpy_dtype: Any) -> Any:
    """The numpy dtype a column of ``kind`` becomes (None: let numpy decide)."""
    if kind == "b":
        return np.bool_
    if kind == "i":
        return np.int64
    if kind == "u":
        return np.uint64
    if kind == "f":
        return np.float64
    return numpy_dtype if kind in ("c", "m", "M") else None


def _from_pandas(value: Any, name: str, pd: Any) -> np.ndarray:
    if bool(pd.isna(value).any()):  # NA, None, NaN: pandas' own notion of missing
        raise _missing(name)
    dtype = value.dtype
    target = _target(getattr(dtype, "kind", "O"), getattr(dtype, "numpy_dtype", None))
    return np.asarray(value.to_numpy() if target is None else value.to_numpy(dtype=target))


def _from_polars(value: Any, name: str) -> np.ndarray:
    if value.null_count() > 0:
        raise _missing(name)
    dtype = value.dtype
    if dtype.is_integer():
        return np.asarray(value.to_numpy(), dtype=np.uint64 if "UInt" in str(dtype) else np.int64)
    if dtype.is_float():
        return np.asarray(value.to_numpy(), dtype=np.float64)
    return np.asarray(value.to_numpy())


def _from_pyarrow(value: Any, name: str, pa: Any) -> np.ndarray:
    if value.null_count > 0:
        raise _missing(name)
    t = value.type
    if pa.types.is_boolean(t):
        target: Any = np.bool_
    elif pa.types.is_signed_integer(t):
        target = np.int64
    elif pa.types.is_unsigned_integer(t):
        target = np.uint64
    elif pa.types.is_floating(t):
        target = np.float64
    else:
        target = None
    arr = np.asarray(value.to_numpy(zero_copy_only=False))
    return arr if target is None else arr.astype(target)


def _foreign(value: Any, name: str) -> np.ndarray | None:
    """``value`` converted when it is a pandas, polars or pyarrow column; None otherwise."""
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(value, (pd.Series, pd.Index, pd.api.extensions.ExtensionArray)):
        return _from_pandas(value, name, pd)
    pl = sys.modules.get("polars")
    if pl is not None and isinstance(value, pl.Series):
        return _from_polars(value, name)
    pa = sys.modules.get("pyarrow")
    if pa is not None and isinstance(value, (pa.Array, pa.ChunkedArray)):
        return _from_pyarrow(value, name, pa)
    return None


def _has_none(arr: np.ndarray) -> bool:
    """Whether an object array holds None or pandas' NA (the error path only: object arrays are refused)."""
    return any(v is None or type(v).__name__ == "NAType" for v in arr.ravel().tolist())


def to_numpy(value: Any, name: str) -> np.ndarray:
    """``value`` as a numpy array, its kind (integer, float, bool) kept; a missing value is a ValueError.

    Parameters
    ----------
    value : array_like
        A numpy array, a list or tuple, a pandas Series / Index / extension array (nullable and
        pyarrow dtypes included), a polars Series, a pyarrow Array or ChunkedArray, or anything
        ``numpy.asarray`` takes.
    name : str
        The argument's name, for the messages (which never quote the values).

    Returns
    -------
    ndarray
        The values; integer columns as int64 (uint64 when unsigned), float columns as float64,
        boolean columns as bool.

    Raises
    ------
    ValueError
        A missing value (None, ``pd.NA``, a NaN of a pandas column, a polars or pyarrow null).
    TypeError
        ``value`` cannot be made an array.
    """
    if isinstance(value, np.ndarray):
        return value
    if value is None:
        raise TypeError(f"{name} must be array-like, got None")
    arr = _foreign(value, name)
    if arr is not None:
        return arr
    try:
        arr = np.asarray(value)
    except Exception as exc:  # ragged lists and exotic objects
        raise TypeError(f"{name} must be array-like: {type(exc).__name__}") from None
    if arr.dtype == object and _has_none(arr):
        raise _missing(name)
    return arr


def as_array_1d(value: Any, name: str) -> np.ndarray:
    """The one conversion of a 1-D column users hold (numpy, list, pandas, polars, pyarrow) to numpy.

    Integer columns stay integers (``Int64``, ``int64[pyarrow]``, polars and pyarrow ints: int64),
    floats become float64, booleans numpy bool; a missing value (None, ``pd.NA``, a NaN of a pandas
    column, a polars / pyarrow null) is a ``ValueError`` naming ``name``; pandas, polars and pyarrow
    are never imported (:mod:`dpselect._arraylike`).  A dask array is handed on unchanged.

    >>> as_array_1d([1, 2, 3], "x").dtype
    dtype('int64')
    """
    if hasattr(value, "dask") and hasattr(value, "compute"):
        return value  # reduced chunk by chunk by its consumer
    arr = to_numpy(value, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    return arr
