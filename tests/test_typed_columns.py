"""Typed columns (pandas nullable and pyarrow dtypes, polars, pyarrow) through the quantile functions.

One conversion (``dpselect._params.as_array_1d``) makes them numpy with their kind kept: an
integer column gives integer outputs, exactly as the same numpy int64 array does (the same draw
for the same seed), a float column the float64 draws; a missing value is a ValueError naming the
argument, before any randomness is drawn.  ``private_median`` without bounds takes the route of
``private_quantile(x, 0.5, epsilon)``.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from dpselect._params import as_array_1d
from dpselect.apps.quantiles import duff_median, private_median, private_quantile, private_quantiles

INTS = [3, 5, 5, 7, 9, 12, 12, 12, 15, 20]
FLOATS = [0.5, 1.25, 2.0, 2.0, 3.5, 4.0, 6.5, 7.25, 8.0, 9.5]


def _typed(kind: str, values: list) -> object:
    """``values`` as the column type ``kind`` (skip when its package is absent)."""
    if kind == "numpy":
        return np.asarray(values)
    if kind == "list":
        return list(values)
    integer = isinstance(values[0], int)
    if kind.startswith("pandas"):
        pd = pytest.importorskip("pandas")
        if kind == "pandas-nullable":
            return pd.Series(values, dtype="Int64" if integer else "Float64")
        pytest.importorskip("pyarrow")
        return pd.Series(values, dtype="int64[pyarrow]" if integer else "double[pyarrow]")
    if kind == "polars":
        pl = pytest.importorskip("polars")
        return pl.Series("x", values)
    pa = pytest.importorskip("pyarrow")
    return pa.array(values) if kind == "pyarrow" else pa.chunked_array([values[:4], values[4:]])


KINDS = ["numpy", "list", "pandas-nullable", "pandas-arrow", "polars", "pyarrow", "pyarrow-chunked"]


def _four(x: object) -> tuple:
    """The four quantile functions on ``x``, seeded: a tuple of plain values."""
    return (
        private_quantile(x, 0.5, 1.0, bounds=(0, 25), rng=3),
        tuple(private_quantiles(x, [0.25, 0.75], 1.0, bounds=(0, 25), rng=3).tolist()),
        private_median(x, 1.0, bounds=(0, 25), rng=3),
        duff_median(x, 1.0, bounds=(0, 25), rng=3),
    )


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("values", [INTS, FLOATS], ids=["int", "float"])
def test_typed_column_gives_the_numpy_draws(kind: str, values: list) -> None:
    x = _typed(kind, values)
    reference = _four(np.asarray(values))  # int64 or float64
    got = _four(x)
    assert got == reference
    # integer-ness kept: integer outputs (Python ints) exactly when the column is integer
    assert isinstance(got[0], int) == isinstance(values[0], int)
    assert isinstance(got[2], int) == isinstance(values[0], int)


@pytest.mark.parametrize("kind", KINDS[2:])
def test_conversion_keeps_the_kind(kind: str) -> None:
    assert as_array_1d(_typed(kind, INTS), "x").dtype == np.int64
    assert as_array_1d(_typed(kind, FLOATS), "x").dtype == np.float64


def _with_missing(kind: str) -> object:
    if kind == "list":
        return [1.0, None, 3.0]
    if kind == "pandas-NA":
        pd = pytest.importorskip("pandas")
        return pd.Series([1, pd.NA, 3], dtype="Int64")
    if kind == "pandas-nan-nullable":
        pd = pytest.importorskip("pandas")
        return pd.Series([1.0, np.nan, 3.0], dtype="Float64")
    if kind == "pandas-arrow":
        pd = pytest.importorskip("pandas")
        pytest.importorskip("pyarrow")
        return pd.Series([1.0, None, 3.0], dtype="double[pyarrow]")
    if kind == "polars":
        pl = pytest.importorskip("polars")
        return pl.Series("x", [1, None, 3])
    pa = pytest.importorskip("pyarrow")
    return pa.chunked_array([[1, None], [3]])


@pytest.mark.parametrize("kind", ["list", "pandas-NA", "pandas-nan-nullable", "pandas-arrow", "polars", "pyarrow"])
@pytest.mark.parametrize(
    "call",
    [
        lambda x: private_quantile(x, 0.5, 1.0, bounds=(0, 10), rng=0),
        lambda x: private_quantiles(x, [0.5], 1.0, bounds=(0, 10), rng=0),
        lambda x: private_median(x, 1.0, bounds=(0, 10), rng=0),
        lambda x: duff_median(x, 1.0, bounds=(0, 10), rng=0),
        lambda x: private_median(x, 1.0, rng=0),
    ],
    ids=["private_quantile", "private_quantiles", "private_median", "duff_median", "median-unbounded"],
)
def test_missing_value_is_a_value_error_naming_x(kind: str, call) -> None:
    x = _with_missing(kind)
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    with pytest.raises(ValueError, match=r"^x has missing values"):
        call(x)
    assert gen.bit_generator.state == state


def test_boolean_column_is_mapped_as_numpy_bool() -> None:
    pd = pytest.importorskip("pandas")
    got = as_array_1d(pd.Series([True, False, True], dtype="boolean"), "x")
    assert got.dtype == np.bool_ and got.tolist() == [True, False, True]


def test_not_one_dimensional_and_not_numeric() -> None:
    with pytest.raises(ValueError, match=r"^x must be 1-D"):
        as_array_1d(np.zeros((2, 2)), "x")
    pd = pytest.importorskip("pandas")
    with pytest.raises(TypeError, match=r"^x must be numeric"):
        private_median(pd.Series(["a", "b"], dtype="string"), 1.0, bounds=(0, 1))


def test_core_imports_no_dataframe_library() -> None:
    """The conversion recognises columns through sys.modules only: importing dpselect imports none."""
    import subprocess

    code = (
        "import sys, dpselect, dpselect._params, dpselect.apps.quantiles; "
        "print(sorted(m for m in ('pandas', 'polars', 'pyarrow') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_median_without_bounds_is_the_quantile_route() -> None:
    x = np.random.default_rng(1).normal(50.0, 5.0, size=400)
    for seed in range(3):
        assert private_median(x, 1.0, rng=seed) == private_quantile(x, 0.5, 1.0, rng=seed)
    ints = np.random.default_rng(2).integers(0, 100, size=300)
    got = private_median(ints, 2.0, rng=5)
    assert isinstance(got, int) and got == private_quantile(ints, 0.5, 2.0, rng=5)
    assert abs(got - int(np.quantile(ints, 0.5, method="inverted_cdf"))) <= 20


@pytest.mark.parametrize("kind", KINDS[2:])
def test_counts_columns_go_through_the_same_conversion(kind: str) -> None:
    from dpselect.apps.counts import private_argmax

    counts = [22, 8, 17, 4, 0]
    assert private_argmax(_typed(kind, counts), 1.0, rng=4) == private_argmax(np.asarray(counts), 1.0, rng=4)
    with pytest.raises(ValueError, match=r"^counts has missing values"):
        private_argmax([3, None, 1], 1.0)
