"""Exact exponential weights over groups of points in O(1) expected rounds.

The law: group ``g`` holds ``n_g`` points sharing the rate ``gamma_g >= 0``
(``min gamma = 0``), and a point ``(g, o)``, ``o < n_g``, has probability
``e^{-gamma_g} / Z``, ``Z = sum_h n_h e^{-gamma_h}``.  The Duff median and mean
on a grid are this law with ``N = sum n_g`` about 2^20 grid points and O(n)
groups; proposing a uniform point (as a plain rejection sampler does) needs
``N / Z`` rounds, which grows with the grid.

Here the proposal is dyadic.  With ``j_g = floor(gamma_g / ln 2)`` (certified:
``j_g ln 2 <= gamma_g``, using a rational upper bound on ln 2), capped at
``J = bitlength(N) + 2``, the proposal draws ``g`` with probability
``∝ n_g 2^{-j_g}`` -- a uniform integer below ``T = sum_g n_g 2^{J - j_g}``, whose
position inside group ``g``'s block also gives the uniform offset ``o`` -- and
accepts with probability ``a_g = 2^{j_g} e^{-gamma_g} <= 1``.  A round outputs
``(g, o)`` with probability ``2^{-J} e^{-gamma_g} / (T 2^{-J})``, so the output
law is exact.  Its success probability is at least
``e^{-k} (1/2) U / (U + 1/4) >= (2/5) e^{-k}``, ``k = 2^-114`` (``U >= 1`` the
uncapped proposal mass, ``a_g > e^{-k}/2`` there since the ln 2 bound is
within 2^-120, and the capped groups carry at most ``N 2^{-J} < 1/4``): **at
most 2.5 rounds (times e^k) are expected, whatever N**.

The acceptance ``a_g = e^{-y}``, ``y = gamma_g - j_g ln 2``, is irrational, so it
is decided by comparing a lazily drawn uniform ``U = 0.v_1 v_2 ...`` with
rational bounds on ``a_g``: 62 random bits are compared with integer bounds
``lo <= 2^62 a_g <= hi`` (``hi - lo`` a few units); only if ``v`` falls between
them (probability about 2^-60) are 64 more bits drawn and the bounds recomputed
at the higher precision, and so on.  The bounds are computed in fixed point
with directed rounding from series with explicit remainders (ln 2 = sum
1/(k 2^k); e^{-f} = sum (-f)^i/i! for f in [0, 1], alternating; e^{-k} = (e^{-1})^k),
so every decision is an integer comparison: no float enters it (those bounds live in
:mod:`dpselect.noise._exp_bounds`).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._docstrings import fill_doc
from .._exact_numbers import as_fraction
from .._params import Rule, instance_of, int_at_least, validate_params
from .._validation import check_size
from ._exp_bounds import _bernoulli_pow2_exp, _ln2_fixed, pow2_exp_bounds
from ._integers import _INT62, NONNEGATIVE_INTEGERS, POSITIVE_FRACTION, IntegerSource, _rate_values

__all__ = [
    "NONNEGATIVE_INTEGERS",
    "exponential_weights",
    "exponential_weights_batch",
    "pow2_exp_bounds",
    "rational_rates",
]


#: Bits of the first (vectorised, int64) comparison of the lazy uniform.
_FAST_BITS = 62
#: Precision of the ln 2 upper bound that certifies j ln 2 <= gamma.
_J_BITS = 128


@validate_params({"values": Rule("a non-empty array of finite reals", check=_rate_values), "scale": POSITIVE_FRACTION})
def rational_rates(values: ArrayLike, scale: Fraction) -> tuple[np.ndarray, int]:
    """Return (nums, den) with (max v - v_r) * scale = nums_r / den exactly (min rate 0).

    Integer-valued floats below 2^52 take a vectorised path; int64 output when it fits, else object.
    Integers (an integer array, or Python ints in an object array) are taken exactly, whatever their size.

    Parameters
    ----------
    values : array_like
        The scores v_r: finite floats, or integers of any size.
    scale : fractions.Fraction
        The factor > 0 (e.g. epsilon / (2 Delta)).

    Returns
    -------
    tuple of (numpy.ndarray, int)
        (nums, den): the numerators (int64 when they fit, else Python ints) and the
        common denominator.

    See Also
    --------
    exponential_weights_batch : Return n exact draws of (g, o): P ∝ e^{-nums_g/den}, o uniform below counts_g

    Examples
    --------
    >>> nums, den = rational_rates([1.0, 3.0], Fraction(1, 2))
    >>> nums.tolist(), den
    ([2, 0], 2)
    """
    v = np.asarray(values).reshape(-1)
    if v.dtype.kind in "iuO" and v.size and not (v.dtype.kind in "iu" and int(np.abs(v).max()) < 2**52):
        vo = v.astype(object)
        nums = (vo.max() - vo) * scale.numerator
        den = scale.denominator
        if int(nums.max()) < _INT62:
            nums = nums.astype(np.int64)
        return nums, den
    v = v.astype(np.float64)
    if np.all(np.abs(v) < 2.0**52) and np.all(v == np.round(v)):
        gaps = (v.max() - v).astype(np.int64)  # exact: integers below 2^53
        if int(gaps.max()) * scale.numerator < _INT62:
            return gaps * scale.numerator, scale.denominator
        nums = gaps.astype(object) * scale.numerator
        den = scale.denominator
    else:
        fr = [Fraction(float(s)) for s in v]
        top = max(fr)
        gam = [(top - f) * scale for f in fr]
        den = math.lcm(*(g.denominator for g in gam))
        nums = np.array([g.numerator * (den // g.denominator) for g in gam], dtype=object)
    if nums.size and int(nums.max()) < _INT62:
        nums = nums.astype(np.int64)
    return nums, den


def _as_int_array(values: Any) -> np.ndarray:
    """Non-negative integers as int64 when every one is below 2^62, else as Python ints (object)."""
    arr = np.asarray(values)
    if arr.dtype.kind in "iu" and (arr.size == 0 or int(arr.max()) < _INT62):
        return arr.astype(np.int64, copy=False).reshape(-1)
    obj = np.frompyfunc(int, 1, 1)(arr.reshape(-1)).astype(object)  # Python ints, in one C loop
    return obj.astype(np.int64) if obj.size == 0 or int(obj.max()) < _INT62 else obj


def _total(cnt: np.ndarray) -> int:
    """Exact sum (no int64 overflow)."""
    if cnt.dtype == np.int64 and int(cnt.max()) < _INT62 // max(cnt.size, 1):
        return int(cnt.sum())
    return sum(int(c) for c in cnt)


def _exponential_weights_batch(
    src: IntegerSource, nums: Any, den: int, counts: Any, n: int
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """:func:`exponential_weights_batch` without the parameter layer."""
    num = _as_int_array(nums)
    cnt = _as_int_array(counts)
    top = _total(cnt).bit_length() + 2  # J: capped groups carry <= N 2^-J < 1/4
    # j_g = min(floor(gamma_g / l), J) = #{1 <= j <= J : num_g >= t_j}, t_j = ceil(j l den), l = l2hi 2^-128 >= ln 2
    l2hi = _ln2_fixed(_J_BITS)[1]
    thresholds = [-((-(j * l2hi * den)) >> _J_BITS) for j in range(1, top + 1)]
    if num.dtype == np.int64:
        jj = np.searchsorted(np.array([min(t, _INT62) for t in thresholds], dtype=np.int64), num, side="right")
    else:
        jj = np.searchsorted(np.array(thresholds, dtype=object), num, side="right")
    shift = (top - jj).astype(np.int64, copy=False)
    if cnt.dtype == np.int64 and _total(cnt).bit_length() + top < 62:
        weights = cnt << shift
    else:
        weights = cnt.astype(object) * np.array([1 << int(s) for s in shift], dtype=object)
    cum = np.cumsum(weights)
    total = int(cum[-1])
    group = np.empty(n, dtype=np.int64)
    offset = np.empty(n, dtype=np.int64)
    cache: dict[tuple[int, int], tuple[int, int]] = {}

    def bounds(g: int) -> tuple[int, int]:
        key = (int(num[g]), int(jj[g]))
        if key not in cache:
            cache[key] = pow2_exp_bounds(key[0], den, key[1], _FAST_BITS)
        return cache[key]

    if total >= _INT62:  # huge grids: Python integers, one draw at a time (same law)
        ends = [int(c) for c in cum]
        for k in range(n):
            while True:
                ui = src.below(total)
                h = bisect_right(ends, ui)
                vi = src.below(1 << _FAST_BITS)
                lo, hi = bounds(h)
                if vi < lo or (vi < hi and _bernoulli_pow2_exp(src, int(num[h]), den, int(jj[h]), vi, _FAST_BITS)):
                    break
            group[k], offset[k] = h, (ui - (ends[h] - int(weights[h]))) >> int(shift[h])
        return group, offset
    ends64 = cum.astype(np.int64, copy=False)
    starts64 = ends64 - weights.astype(np.int64, copy=False)
    lo64 = np.full(num.size, -1, dtype=np.int64)
    hi64 = np.full(num.size, -1, dtype=np.int64)
    todo = np.arange(n)
    while todo.size:
        u = src.below_array(np.full(todo.size, total, dtype=np.int64))
        g = np.searchsorted(ends64, u, side="right")
        for new in np.unique(g[lo64[g] < 0]):
            lo64[new], hi64[new] = bounds(int(new))
        v = src.below_array(np.full(todo.size, 1 << _FAST_BITS, dtype=np.int64))
        acc = v < lo64[g]
        for i in np.flatnonzero(~acc & (v < hi64[g])):  # probability ~2^-60 each: refine exactly
            gi = int(g[i])
            acc[i] = _bernoulli_pow2_exp(src, int(num[gi]), den, int(jj[gi]), int(v[i]), _FAST_BITS)
        group[todo[acc]] = g[acc]
        offset[todo[acc]] = ((u - starts64[g]) >> shift[g])[acc]
        todo = todo[~acc]
    return group, offset


def _group_sizes(value: Any, name: str) -> Any:
    """Integers >= 0, not all 0 (a group of size 0 is never drawn)."""
    NONNEGATIVE_INTEGERS(value, name)
    arr = np.asarray(value)
    if arr.size == 0 or not (arr > 0).any():
        raise ValueError(f"{name} must hold at least one positive group size")
    return value


#: Group sizes of :func:`exponential_weights_batch`: integers >= 0, at least one positive.
_GROUP_SIZES = Rule("integers >= 0, at least one positive (an array or a list)", check=_group_sizes)


@validate_params(
    {
        "src": instance_of(IntegerSource, description="a dpselect.noise.IntegerSource"),
        "nums": NONNEGATIVE_INTEGERS,
        "den": int_at_least(1),
        "counts": _GROUP_SIZES,
        "n": int_at_least(0),
    }
)
def exponential_weights_batch(
    src: IntegerSource, nums: ArrayLike, den: int, counts: ArrayLike, n: int
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Return n exact draws of (g, o): P ∝ e^{-nums_g/den}, o uniform below counts_g.

    The dyadic-proposal rejection of the module docstring (at most 2.5 rounds
    expected); vectorised over int64 while the proposal total is below 2^62.

    Parameters
    ----------
    src : IntegerSource
        The uniform integers.
    nums : array_like of int
        The rate numerators nums_g >= 0, one per group (Python ints of any size).
    den : int
        The common denominator, >= 1.
    counts : array_like of int
        The group sizes counts_g >= 0, at least one positive; a group of size 0
        has weight 0 and is never drawn (callers keep empty groups so that the
        work follows the number of groups, not which are empty).
    n : int
        The number of draws, >= 0.

    Returns
    -------
    tuple of (numpy.ndarray, numpy.ndarray)
        (g, o): the groups and the offsets inside them, int64 arrays of length n.

    See Also
    --------
    rational_rates : Return (nums, den) with (max v - v_r) * scale = nums_r / den exactly (min rate 0)
    Exponential : Standard exponential Exp(1): g(z) = e^{-z}, G(z) = 1 - e^{-z} on z >= 0
    bernoulli_exp_batch : Return elementwise exact Bernoulli(exp(-num_i/den)) draws (CKS 2020, Algorithm 1)

    Examples
    --------
    >>> g, o = exponential_weights_batch(IntegerSource(0), [0, 1], 1, [1, 3], 4)
    >>> bool((o < np.array([1, 3])[g]).all())
    True
    """
    return _exponential_weights_batch(src, nums, den, counts, n)


@fill_doc
def exponential_weights(rates: Any, *, counts: Any = None, size: int | None = None, rng: Any = None) -> tuple[Any, Any]:
    r"""Exact draw of (group g, offset o) with P[g, o] proportional to e^{-rate_g}, o in {0..counts_g - 1}.

    .. math::

        P[g] = \frac{n_g e^{-\gamma_g}}{\sum_h n_h e^{-\gamma_h}}, \qquad
        o \mid g \sim \mathrm{Uniform}\{0, \dots, n_g - 1\}.

    The exponential mechanism over the grid points of intervals (n_g grid
    points sharing the rate gamma_g, e.g. Duff's median on a grid) or over
    candidates (all n_g = 1).  Rejection from a dyadic proposal: with
    ``j_g = min(floor((gamma_g - min gamma) / ln 2), J)``, ``J = bitlength(N) + 2``,
    ``N = sum n_g``, propose g with probability ``∝ n_g 2^{-j_g}`` (one uniform
    integer, which also gives o) and accept with the exact
    Bernoulli(``2^{j_g} e^{-(gamma_g - min gamma)}``), decided by comparing lazily
    drawn uniform bits with certified rational bounds.  The law is exact and
    at most 2.5 rounds are expected, whatever N and the rates (derivation:
    the documentation page "Floating point and side channels").

    Parameters
    ----------
    rates : sequence of int, Fraction or float
        gamma_g (floats converted exactly); any real values.
    counts : sequence of int or None, default=None
        n_g >= 1 (None: all 1).
    size : int or None, default=None
        None for one draw, else the number of draws.
    %(exact_rng)s
    (g, o) : two ints, or two int64 arrays of length ``size``

    References
    ----------
    McSherry & Talwar (2007), FOCS (the exponential mechanism); Canonne,
    Kamath & Steinke (2020), NeurIPS, Section 5 (exact sampling with integer
    arithmetic); von Neumann (1951), *Various techniques used in connection
    with random digits* (rejection, and comparing a lazily drawn uniform).

    Examples
    --------
    >>> g, o = exponential_weights([0, 1, 2], counts=[1, 4, 2], size=5, rng=0)
    >>> bool((o < np.array([1, 4, 2])[g]).all())
    True
    """
    q = [as_fraction(r, "rates") for r in np.asarray(rates, dtype=object).reshape(-1)]
    if not q:
        raise ValueError("rates must not be empty")
    n = [1] * len(q) if counts is None else [int(c) for c in np.asarray(counts).reshape(-1)]
    if len(n) != len(q):
        raise ValueError(f"counts must have the same length as rates, got {len(n)} and {len(q)}")
    if min(n) < 1:
        raise ValueError("counts must be >= 1")
    if max(n) >= _INT62:
        raise ValueError("counts must be below 2^62")
    size = check_size(size)
    low = min(q)
    gam = [r - low for r in q]
    den = math.lcm(*(g.denominator for g in gam))
    nums = [g.numerator * (den // g.denominator) for g in gam]
    group, offset = _exponential_weights_batch(IntegerSource(rng), nums, den, n, 1 if size is None else size)
    if size is None:
        return int(group[0]), int(offset[0])
    return group, offset
