"""Exact samplers: Bernoulli(e^-x), discrete Laplace, discrete Gaussian, exponential weights.

Every decision is made with integer (:class:`fractions.Fraction`) arithmetic on
uniform random integers, so the sampled law is *exactly* the stated one: no
floating-point rounding, no truncated tail (Canonne, Kamath & Steinke 2020).
A float parameter is accepted and converted exactly (every finite float is a
rational number: ``Fraction(0.1)`` is ``3602879701896397 / 2**55``), so the law
is exact for the float you pass, not for the decimal you may have meant.

Randomness: ``rng`` is anything :func:`dpselect._validation.check_random_state`
accepts.  With ``rng="secure"`` every uniform integer comes straight from the
operating system's CSPRNG (:func:`os.urandom`); otherwise from the NumPy
Generator, so a seed reproduces the draws.  Batches (``size=``) are vectorised
over int64 arrays while the integers fit (denominators below 2^50), otherwise
they fall back to Python integers, element by element (same law).
Exponential weights over groups of points (the exponential mechanism on a
grid, or over candidates) live in :mod:`dpselect.noise._exact_em`, and the
grid-rounded Student t_3 / Cauchy sampler (:func:`sample_snapped_atan`) in
:mod:`dpselect.noise._exact_atan`; both are re-exported here.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import cast, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._docstrings import fill_doc
from .._params import SEED, SIZE, Rule, instance_of, int_at_least, validate_params
from .._validation import as_real_array
from ..typing import SeedLike
from ._exact_atan import sample_snapped_atan
from ._exact_core import _bernoulli_exp_batch, _discrete_laplace_batch
from ._exact_em import NONNEGATIVE_INTEGERS, exponential_weights, exponential_weights_batch, rational_rates
from ._integers import _INT62, RATIONAL, IntegerSource, Rational, rational

__all__ = [
    "IntegerSource",
    "bernoulli_exp",
    "bernoulli_exp_batch",
    "discrete_gaussian",
    "discrete_laplace",
    "discrete_laplace_batch",
    "discrete_laplace_logpmf",
    "exponential_weights",
    "exponential_weights_batch",
    "exponential_weights_uniform_batch",
    "rational_rates",
    "sample_snapped_atan",
]


_SOURCE = instance_of(IntegerSource, description="a dpselect.noise.IntegerSource")


@validate_params({"src": _SOURCE, "num": NONNEGATIVE_INTEGERS, "den": int_at_least(1)})
def bernoulli_exp_batch(src: IntegerSource, num: ArrayLike, den: int) -> NDArray[np.bool_]:
    """Return elementwise exact Bernoulli(exp(-num_i/den)) draws (CKS 2020, Algorithm 1).

    Vectorised over int64 while den < 2^50 and every num_i < 2^62, else element by element
    with Python integers (same law).

    Parameters
    ----------
    src : IntegerSource
        The uniform integers.
    num : array_like of int
        The numerators num_i >= 0 (an array or a list; Python ints of any size).
    den : int
        The common denominator, >= 1.

    Returns
    -------
    numpy.ndarray of bool
        One draw per num_i (flattened).

    Examples
    --------
    >>> bernoulli_exp_batch(IntegerSource(0), [0, 0], 3).tolist()
    [True, True]
    """
    return _bernoulli_exp_batch(src, num, den)


@overload
def bernoulli_exp(x: Rational, *, size: None = None, rng: SeedLike = None) -> bool: ...
@overload
def bernoulli_exp(x: Rational, *, size: int, rng: SeedLike = None) -> NDArray[np.bool_]: ...


@validate_params({"x": rational(nonnegative=True), "size": SIZE, "rng": SEED})
@fill_doc
def bernoulli_exp(x: Rational, *, size: int | None = None, rng: SeedLike = None) -> bool | NDArray[np.bool_]:
    r"""Exact Bernoulli(exp(-x)) for a rational x >= 0.

    .. math::

        P[\mathrm{True}] = e^{-x}.

    For x in [0, 1] draw A_1, A_2, ... with A_K ~ Bernoulli(x / K) until the
    first failure at K; return whether K is odd (P[K > k] = x^k / k!, so
    P[K odd] = sum_k (-x)^k / k! = e^{-x}).  For x > 1, return the conjunction
    of floor(x) Bernoulli(e^{-1}) draws and one Bernoulli(e^{-(x - floor x)}).
    Every comparison is between integers.

    Parameters
    ----------
    x : int, Fraction or float
        The rate, >= 0 (a float is converted exactly).
    size : int or None, default=None
        None for one bool, else the number of independent draws (bool ndarray).
    %(exact_rng)s
    bool or numpy.ndarray of bool
        One draw for ``size=None``, else ``size`` independent draws.

    See Also
    --------
    bernoulli_exp_batch : Return elementwise exact Bernoulli(exp(-num_i/den)) draws (CKS 2020, Algorithm 1)
    discrete_gaussian : Exact discrete Gaussian on the integers with rational variance parameter ``sigma2`` > 0
    discrete_laplace : Exact discrete Laplace on the integers with rational ``scale`` > 0

    References
    ----------
    Canonne, Kamath & Steinke (2020), *The Discrete Gaussian for Differential
    Privacy*, NeurIPS, Algorithm 1 and Proposition 1.

    Examples
    --------
    >>> from fractions import Fraction
    >>> draws = bernoulli_exp(Fraction(1, 2), size=20_000, rng=0)
    >>> bool(abs(draws.mean() - 0.6065) < 0.02)
    True
    """
    q = cast(Fraction, x)  # the rule handed the body a Fraction
    src = IntegerSource(rng)
    out = _bernoulli_exp_batch(src, [q.numerator] * (1 if size is None else size), q.denominator)
    return bool(out[0]) if size is None else out


@validate_params(
    {
        "src": _SOURCE,
        "s": int_at_least(1),
        "t": int_at_least(1),
        "n": int_at_least(0),
        "clamp": int_at_least(0, none=True),
    }
)
def discrete_laplace_batch(src: IntegerSource, s: int, t: int, n: int, clamp: int | None = None) -> NDArray[np.int64]:
    """Return n exact draws of CKS Algorithm 2: P[Y = y] proportional to exp(-|y| s / t).

    Expected O(1) rounds per draw whatever s and t (CKS20 Thm 2).

    Parameters
    ----------
    src : IntegerSource
        The uniform integers.
    s : int
        The numerator of the rate s/t, >= 1 (the scale is t/s).
    t : int
        The denominator of the rate, >= 1.
    n : int
        The number of draws, >= 0.
    clamp : int or None, default=None
        If given (<= 2^62), return min(max(Y, -clamp), clamp) (post-processing) instead of
        refusing draws beyond int64 -- for callers that clamp anyway, so that a huge
        (private) scale never raises.

    Returns
    -------
    numpy.ndarray of int64
        The n draws.

    Raises
    ------
    OverflowError
        If a draw exceeds int64 and ``clamp`` is None.

    See Also
    --------
    discrete_laplace : Exact discrete Laplace on the integers with rational ``scale`` > 0
    discrete_laplace_logpmf : Return log P[Y = y] of :func:`discrete_laplace` (float, for laws and audits)
    bernoulli_exp_batch : Return elementwise exact Bernoulli(exp(-num_i/den)) draws (CKS 2020, Algorithm 1)

    Examples
    --------
    >>> discrete_laplace_batch(IntegerSource(0), 1, 2, 3).shape
    (3,)
    """
    return _discrete_laplace_batch(src, s, t, n, clamp)


@overload
def discrete_laplace(scale: Rational, *, size: None = None, rng: SeedLike = None) -> int: ...
@overload
def discrete_laplace(scale: Rational, *, size: int, rng: SeedLike = None) -> NDArray[np.int64]: ...


@validate_params({"scale": RATIONAL, "size": SIZE, "rng": SEED})
@fill_doc
def discrete_laplace(scale: Rational, *, size: int | None = None, rng: SeedLike = None) -> int | NDArray[np.int64]:
    r"""Exact discrete Laplace on the integers with rational ``scale`` > 0.

    .. math::

        P[Y = y] = \frac{1 - e^{-1/b}}{1 + e^{-1/b}} \, e^{-|y|/b}, \quad y \in \mathbb{Z}, \; b = \text{scale}.

    With b = t/s in lowest terms: U uniform on {0..t-1} accepted with
    probability e^{-U/t}, V geometric with P[V >= v] = e^{-v}, X = U + tV is
    geometric with ratio e^{-1/t}; Y = floor(X/s) is geometric with ratio
    e^{-s/t}; a uniform sign, rejecting "-0", gives the two-sided law.

    Parameters
    ----------
    scale : int, Fraction or float
        b > 0 (a float is converted exactly).
    size : int or None, default=None
        None for one int, else the number of draws (int64 ndarray).
    %(exact_rng)s
    int or numpy.ndarray of int64
        One draw for ``size=None``, else ``size`` independent draws.

    See Also
    --------
    discrete_laplace_batch : Return n exact draws of CKS Algorithm 2: P[Y = y] proportional to exp(-|y| s / t)
    discrete_laplace_logpmf : Return log P[Y = y] of :func:`discrete_laplace` (float, for laws and audits)
    discrete_gaussian : Exact discrete Gaussian on the integers with rational variance parameter ``sigma2`` > 0

    References
    ----------
    Canonne, Kamath & Steinke (2020), NeurIPS, Algorithm 2; see also the
    documentation page "Floating point and side channels".

    Examples
    --------
    >>> y = discrete_laplace(2, size=50_000, rng=1)
    >>> bool(abs((y == 0).mean() - 0.2449) < 0.01)
    True
    """
    b = cast(Fraction, scale)  # the rule handed the body a Fraction
    src = IntegerSource(rng)
    out = _discrete_laplace_batch(src, b.denominator, b.numerator, 1 if size is None else size)
    return int(out[0]) if size is None else out


@validate_params({"y": Rule("real numbers (a scalar or an array)", check=as_real_array), "scale": RATIONAL})
def discrete_laplace_logpmf(y: ArrayLike, scale: Rational) -> NDArray[np.float64]:
    """Return log P[Y = y] of :func:`discrete_laplace` (float, for laws and audits).

    Parameters
    ----------
    y : array_like
        Integers (any shape).
    scale : int, Fraction or float
        b > 0.

    Returns
    -------
    numpy.ndarray
        log P[Y = y], shaped like ``y`` (a NumPy float for a scalar).

    See Also
    --------
    discrete_laplace : Exact discrete Laplace on the integers with rational ``scale`` > 0
    discrete_laplace_batch : Return n exact draws of CKS Algorithm 2: P[Y = y] proportional to exp(-|y| s / t)
    discrete_gaussian : Exact discrete Gaussian on the integers with rational variance parameter ``sigma2`` > 0

    Examples
    --------
    >>> round(float(discrete_laplace_logpmf(0, 1.0)), 6)
    -0.771937
    """
    b = float(scale)
    y = np.abs(y)
    r = 1.0 / b
    return np.log(-np.expm1(-r)) - np.log1p(np.exp(-r)) - y * r


@overload
def discrete_gaussian(sigma2: Rational, *, size: None = None, rng: SeedLike = None) -> int: ...
@overload
def discrete_gaussian(sigma2: Rational, *, size: int, rng: SeedLike = None) -> NDArray[np.int64]: ...


@validate_params({"sigma2": RATIONAL, "size": SIZE, "rng": SEED})
def discrete_gaussian(sigma2: Rational, *, size: int | None = None, rng: SeedLike = None) -> int | NDArray[np.int64]:
    r"""Exact discrete Gaussian on the integers with rational variance parameter ``sigma2`` > 0.

    .. math::

        P[Y = y] \propto e^{-y^2 / (2\sigma^2)}, \quad y \in \mathbb{Z}.

    Rejection from the discrete Laplace with scale t = floor(sigma) + 1: accept
    Y with probability exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2)), a rational rate.

    Parameters
    ----------
    sigma2 : int, Fraction or float
        sigma^2 > 0 (a float is converted exactly).
    size : int or None, default=None
        None for one int, else the number of draws (int64 ndarray).
    rng : None, int, Generator or "secure", default=None
        Randomness (keyword-only).

    Returns
    -------
    int or numpy.ndarray of int64
        One draw for ``size=None``, else ``size`` independent draws.

    See Also
    --------
    discrete_laplace : Exact discrete Laplace on the integers with rational ``scale`` > 0
    discrete_laplace_batch : Return n exact draws of CKS Algorithm 2: P[Y = y] proportional to exp(-|y| s / t)
    discrete_laplace_logpmf : Return log P[Y = y] of :func:`discrete_laplace` (float, for laws and audits)

    References
    ----------
    Canonne, Kamath & Steinke (2020), NeurIPS, Algorithm 3 and Theorem 6.

    Examples
    --------
    >>> y = discrete_gaussian(4, size=20_000, rng=2)
    >>> bool(abs(y.var() - 4) < 0.2)
    True
    """
    s2 = cast(Fraction, sigma2)  # the rule handed the body a Fraction
    src = IntegerSource(rng)
    a, b = s2.numerator, s2.denominator
    t = math.isqrt(a // b) + 1
    n = 1 if size is None else size
    out = np.empty(n, dtype=np.int64)
    filled = 0
    while filled < n:
        y = _discrete_laplace_batch(src, 1, t, n - filled)
        # (|y| - s2/t)^2 / (2 s2) = (|y| t b - a)^2 / (2 a b t^2)
        num = [(abs(int(v)) * t * b - a) ** 2 for v in y]
        keep = _bernoulli_exp_batch(src, num, 2 * a * b * t * t)
        y = y[keep]
        out[filled : filled + y.size] = y
        filled += int(y.size)
    return int(out[0]) if size is None else out


def exponential_weights_uniform_batch(
    src: IntegerSource, nums: ArrayLike, den: int, counts: ArrayLike, n: int
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Return n draws of the plain rejection sampler of :func:`exponential_weights`' law.

    The reference for tests and benchmarks.  Propose one of the N = sum n_g points
    uniformly, accept with an exact Bernoulli(e^{-nums_g/den}) (nums_g >= 0, some 0):
    exact, but N / Z rounds are expected (Z = sum n_g e^{-gamma_g}), which grows with
    N -- slow on fine grids; :func:`exponential_weights` needs at most 2.5 rounds.

    Parameters
    ----------
    src : IntegerSource
        The uniform integers.
    nums : array_like of int
        The rate numerators nums_g >= 0, one per group.
    den : int
        The common denominator, >= 1.
    counts : array_like of int
        The group sizes n_g >= 1 (total below 2^62).
    n : int
        The number of draws.

    Returns
    -------
    tuple of (numpy.ndarray, numpy.ndarray)
        (g, o): the groups and the offsets inside them, int64 arrays of length n.
    """
    cnt = np.asarray(counts, dtype=np.int64).reshape(-1)
    ends = np.cumsum(cnt)
    if int(ends[-1]) >= _INT62:
        raise ValueError("the total count must be below 2^62")
    nums = np.asarray(nums, dtype=object).reshape(-1)
    if all(int(v) < _INT62 for v in nums):
        nums = nums.astype(np.int64)
    group = np.empty(n, dtype=np.int64)
    offset = np.empty(n, dtype=np.int64)
    todo = np.arange(n)
    while todo.size:
        u = src.below_array(np.full(todo.size, int(ends[-1]), dtype=np.int64))
        g = np.searchsorted(ends, u, side="right")
        acc = _bernoulli_exp_batch(src, nums[g], den)
        group[todo[acc]] = g[acc]
        offset[todo[acc]] = (u - (ends[g] - cnt[g]))[acc]
        todo = todo[~acc]
    return group, offset
