"""Order statistics of bounded data and their NRS local / smooth sensitivity.

Data ``x`` lie in public bounds ``[a, b]``; the sorted data padded with the
bounds, ``x_0 = a <= x_1 <= ... <= x_n <= x_{n+1} = b``, are shared by the
Duff mechanisms (:mod:`dpselect.apps.quantiles`) and the smooth-sensitivity median
baselines (:mod:`dpselect.apps.quantiles`).

Neighbour relation: **replace-one** ("replace", ``n`` fixed) -- Nissim,
Raskhodnikova & Smith 2007 (NRS07) §3.1; mathematics §4.5.  Under add/remove the
median index moves with ``n`` and the formula here is *not* the smooth
sensitivity (mathematics §4.5, last bullet).

* :func:`local_sensitivity_quantile`, :func:`local_sensitivity_median`:
  ``LS = max(x_m - x_{m-1}, x_{m+1} - x_m)``.
* :func:`smooth_sensitivity_quantile`, :func:`smooth_sensitivity_median`:
  ``S*_beta(x) = max_{i <= m <= j, i < j} (x_j - x_i) e^{-beta (j - i - 1)}``,
  in O(n log n) by divide and conquer.

Examples
--------
>>> from dpselect.apps.quantiles import smooth_sensitivity_median
>>> round(smooth_sensitivity_median([0.2, 0.4, 0.5, 0.9], 0.5, bounds=(0.0, 1.0)), 6)
0.303265
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..._docstrings import fill_doc
from ..._params import int_at_least, positive, validate_params
from ..._validation import as_real_array, check_array_1d, check_int, clip_to_bounds
from ._rules import BOUNDS, SAMPLE

__all__ = [
    "local_sensitivity_median",
    "local_sensitivity_quantile",
    "smooth_sensitivity_median",
    "smooth_sensitivity_quantile",
]


# ---------------------------------------------------------------------------
# bounded, sorted data (shared helpers)
# ---------------------------------------------------------------------------


def sorted_padded(x: Any, a: float, b: float, name: str = "x", on_out_of_bounds: str = "clip") -> np.ndarray:
    """``[a, sorted(clip(x, a, b))..., b]`` (one copy + in-place sort).

    NaN / inf raise (bad input); finite records outside [a, b] are clamped to the bounds
    (``on_out_of_bounds="raise"``: ValueError, not private; :func:`~dpselect._validation.clip_to_bounds`).
    """
    arr = check_array_1d(x, name)
    n = arr.size
    ext = np.empty(n + 2, dtype=np.float64)
    ext[0] = a
    ext[n + 1] = b
    body = ext[1 : n + 1]
    body[...] = clip_to_bounds(arr, (a, b), on_out_of_bounds, name)
    body.sort()
    return ext


def check_points(t: Any, name: str = "t") -> np.ndarray:
    arr = as_real_array(t, name)
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not contain NaN")
    return arr


def lower_median_index(n: int) -> int:
    """1-based index m = ceil(n/2) of the lower median."""
    return (n + 1) // 2


# ---------------------------------------------------------------------------
# NRS local and smooth sensitivity of order statistics (replace-one)
# ---------------------------------------------------------------------------


def _check_index(index: Any, n: int) -> int:
    idx = check_int(index, "index", minimum=0)
    if idx >= n:
        raise ValueError(f"index must be < n (the number of records), got {idx}")
    return idx


@validate_params({"x": SAMPLE, "bounds": BOUNDS, "index": int_at_least(0)})
@fill_doc
def local_sensitivity_quantile(x: ArrayLike, *, bounds: tuple[float, float], index: int) -> float:
    """LS of the order statistic x_(index) (0-based) under replace-one, data in [a, b].

    LS = max(x_m - x_{m-1}, x_{m+1} - x_m) with m = index + 1 (1-based) and the
    padding x_0 = a, x_{n+1} = b (mathematics §4.5).

    Parameters
    ----------
    x : array_like
        1-D array of finite floats (n >= 1); records outside ``bounds`` are clamped to them.
    %(order_statistic_range)s
        The local sensitivity (not private: it reads the data).

    See Also
    --------
    local_sensitivity_median : LS of the lower median (0-based index ceil(n/2) - 1) under replace-one
    smooth_sensitivity_quantile : NRS07 beta-smooth sensitivity of the order statistic x_(index) (0-based) ...
    smooth_sensitivity_median : NRS07 beta-smooth sensitivity of the **lower** median (m = ceil(n/2), 1-based) ...

    Examples
    --------
    >>> from dpselect.apps.quantiles import local_sensitivity_quantile
    >>> local_sensitivity_quantile([1.0, 2.0, 6.0], bounds=(0.0, 10.0), index=1)
    4.0
    """
    a, b = bounds
    ext = sorted_padded(x, a, b)
    m = _check_index(index, ext.size - 2) + 1
    return float(max(ext[m] - ext[m - 1], ext[m + 1] - ext[m]))


@validate_params({"x": SAMPLE, "bounds": BOUNDS})
def local_sensitivity_median(x: ArrayLike, *, bounds: tuple[float, float]) -> float:
    """LS of the lower median (0-based index ceil(n/2) - 1) under replace-one.

    Parameters
    ----------
    x : array_like
        1-D array of finite floats (n >= 1); records outside ``bounds`` are clamped to them.
    bounds : tuple of float
        Public ``(a, b)`` with ``a < b`` (the data range under replace-one neighbours).

    Returns
    -------
    float
        The local sensitivity (not private: it reads the data).

    See Also
    --------
    local_sensitivity_quantile : LS of the order statistic x_(index) (0-based) under replace-one, data in [a, b]
    smooth_sensitivity_median : NRS07 beta-smooth sensitivity of the **lower** median (m = ceil(n/2), 1-based) ...
    smooth_sensitivity_quantile : NRS07 beta-smooth sensitivity of the order statistic x_(index) (0-based) ...

    Examples
    --------
    >>> from dpselect.apps.quantiles import local_sensitivity_median
    >>> local_sensitivity_median([1.0, 2.0, 6.0], bounds=(0.0, 10.0))
    4.0
    """
    n = check_array_1d(x, "x", finite=False).size
    return local_sensitivity_quantile(x, bounds=bounds, index=lower_median_index(n) - 1)


def smooth_sens_sorted(ext: np.ndarray, m: int, beta: float) -> float:
    """max_{0 <= i <= m <= j <= n+1, i < j} (ext_j - ext_i) exp(-beta (j - i - 1)).

    Divide and conquer on i with the monotone argmax j*(i) (mathematics §4.5;
    (x_j - c) e^{-beta j} has increasing differences in (j, c)), run level by
    level: all sub-problems of one recursion depth are scanned in one
    vectorised pass (segment max via ``maximum.reduceat``), in the log domain
    (no underflow of far terms).  O(n log n) time.
    """
    n = ext.size - 2
    ilo = np.array([0], dtype=np.int64)
    ihi = np.array([m], dtype=np.int64)
    jlo = np.array([m], dtype=np.int64)
    jhi = np.array([n + 1], dtype=np.int64)
    best = -math.inf
    best_pair = (m - 1, m)
    while ilo.size:
        mid = (ilo + ihi) // 2
        lens = jhi - jlo + 1
        starts = np.zeros(lens.size, dtype=np.int64)
        np.cumsum(lens[:-1], out=starts[1:])
        total = int(starts[-1] + lens[-1])
        seg = np.repeat(np.arange(lens.size), lens)
        j = np.arange(total, dtype=np.int64) - (starts - jlo)[seg]
        i = mid[seg]
        gap = j - i - 1
        with np.errstate(divide="ignore"):
            vals = np.log(ext[j] - ext[i])
        vals -= beta * np.maximum(gap, 0)
        vals[gap < 0] = -math.inf
        segmax = np.maximum.reduceat(vals, starts)
        pos = np.where(vals == segmax[seg], np.arange(total), total)
        first = np.minimum.reduceat(pos, starts)
        top = int(np.argmax(segmax))
        if segmax[top] > best:
            best = float(segmax[top])
            best_pair = (int(i[first[top]]), int(j[first[top]]))
        jstar = j[first]
        left = mid > ilo
        right = mid < ihi
        ilo, ihi, jlo, jhi = (
            np.concatenate((ilo[left], mid[right] + 1)),
            np.concatenate((mid[left] - 1, ihi[right])),
            np.concatenate((jlo[left], jstar[right])),
            np.concatenate((jstar[left], jhi[right])),
        )
    # evaluate the maximising pair directly (not exp(log(.))): exact for gap 0, so S >= LS holds exactly
    bi, bj = best_pair
    value = (ext[bj] - ext[bi]) * math.exp(-beta * max(bj - bi - 1, 0))
    local = max(ext[m] - ext[m - 1], ext[m + 1] - ext[m])
    return float(max(value, local))


@validate_params({"x": SAMPLE, "beta": positive(), "bounds": BOUNDS, "index": int_at_least(0)})
@fill_doc
def smooth_sensitivity_quantile(x: ArrayLike, beta: float, *, bounds: tuple[float, float], index: int) -> float:
    """NRS07 beta-smooth sensitivity of the order statistic x_(index) (0-based), replace-one.

    S*_beta(x) = max_{i <= m <= j, i < j} (x_j - x_i) e^{-beta (j - i - 1)}
    with m = index + 1 (1-based), x_i = a for i < 1 and x_i = b for i > n
    (mathematics §4.5; one padded index on each side suffices).  O(n log n).
    Neighbour relation: replace-one (n fixed).

    %(smoothing_data)s
    %(order_statistic_range)s
        S*_beta(x) (not private: it reads the data).

    See Also
    --------
    local_sensitivity_quantile : LS of the order statistic x_(index) (0-based) under replace-one, data in [a, b]
    smooth_sensitivity_median : NRS07 beta-smooth sensitivity of the **lower** median (m = ceil(n/2), 1-based) ...
    local_sensitivity_median : LS of the lower median (0-based index ceil(n/2) - 1) under replace-one

    Examples
    --------
    >>> from dpselect.apps.quantiles import smooth_sensitivity_quantile
    >>> round(smooth_sensitivity_quantile([1.0, 2.0, 6.0], 0.5, bounds=(0.0, 10.0), index=1), 3)
    4.852
    """
    a, b = bounds
    ext = sorted_padded(x, a, b)
    m = _check_index(index, ext.size - 2) + 1
    return smooth_sens_sorted(ext, m, beta)


@validate_params({"x": SAMPLE, "beta": positive(), "bounds": BOUNDS})
@fill_doc
def smooth_sensitivity_median(x: ArrayLike, beta: float, *, bounds: tuple[float, float]) -> float:
    """NRS07 beta-smooth sensitivity of the **lower** median (m = ceil(n/2), 1-based), replace-one.

    For odd n this is NRS's median; for even n it is the lower median, the
    same convention as :func:`duff_median`.

    %(smoothing_data)s
    bounds : tuple of float
        Public ``(a, b)`` with ``a < b`` (the data range under replace-one neighbours).

    Returns
    -------
    float
        S*_beta(x) (not private: it reads the data).

    See Also
    --------
    local_sensitivity_median : LS of the lower median (0-based index ceil(n/2) - 1) under replace-one
    smooth_sensitivity_quantile : NRS07 beta-smooth sensitivity of the order statistic x_(index) (0-based) ...
    local_sensitivity_quantile : LS of the order statistic x_(index) (0-based) under replace-one, data in [a, b]

    Examples
    --------
    >>> from dpselect.apps.quantiles import smooth_sensitivity_median
    >>> round(smooth_sensitivity_median([1.0, 2.0, 6.0], 0.5, bounds=(0.0, 10.0)), 3)
    4.852
    """
    a, b = bounds
    ext = sorted_padded(x, a, b)
    n = ext.size - 2
    return smooth_sens_sorted(ext, lower_median_index(n), beta)
