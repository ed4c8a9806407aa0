"""Exact samplers: Bernoulli(e^-x), discrete Laplace and discrete Gaussian on the integers.

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
"""

from __future__ import annotations

import math
import os
from fractions import Fraction
from typing import Any

import numpy as np

from .._validation import SecureGenerator, check_random_state, check_size

__all__ = [
    "as_fraction",
    "bernoulli_exp",
    "bernoulli_exp_batch",
    "discrete_gaussian",
    "discrete_laplace",
    "discrete_laplace_batch",
    "discrete_laplace_logpmf",
    "exponential_weights",
    "IntegerSource",
]

_VEC_DEN = 1 << 50  # vectorise while den * K stays below 2^62
_INT62 = 1 << 62


def as_fraction(value: Any, name: str, *, positive: bool = False, nonnegative: bool = False) -> Fraction:
    """An int, Fraction, float or NumPy real as an exact :class:`~fractions.Fraction`."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a rational number (int, Fraction or float), got bool")
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (int, Fraction)):
        q = Fraction(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{name} must be finite, got {value!r}")
        q = Fraction(value)
    else:
        raise TypeError(f"{name} must be a rational number (int, Fraction or float), got {type(value).__name__}")
    if positive and q <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    if nonnegative and q < 0:
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    return q


class IntegerSource:
    """Uniform random integers from a NumPy Generator, or from the OS for ``"secure"``.

    ``below(n)`` is uniform on {0, ..., n-1} for any Python int n >= 1;
    ``below_array(high)`` is elementwise uniform on {0, ..., high_i - 1} for an
    int64 array with entries in [1, 2^62].
    """

    def __init__(self, rng: Any = None) -> None:
        self.generator = check_random_state(rng)
        self.secure = isinstance(self.generator, SecureGenerator)

    def below(self, n: int) -> int:
        if self.secure:
            import secrets  # the OS CSPRNG (imported only when asked for)

            return secrets.randbelow(n)
        if n <= 1 << 64:
            return int(self.generator.integers(0, n, dtype=np.uint64)) if n > 1 else 0
        bits = (n - 1).bit_length()
        words = -(-bits // 64)
        while True:  # rejection on `bits` random bits: exact and reproducible
            w = self.generator.integers(0, 1 << 64, size=words, dtype=np.uint64, endpoint=False)
            x = int.from_bytes(w.astype("<u8").tobytes(), "little") >> (64 * words - bits)
            if x < n:
                return x

    def below_array(self, high: np.ndarray) -> np.ndarray:
        high = np.asarray(high, dtype=np.int64)
        if not self.secure:
            return self.generator.integers(0, high)
        h = high.astype(np.uint64)
        out = np.empty(h.shape, dtype=np.int64)
        todo = np.arange(h.size)
        while todo.size:  # x uniform on [0, 2^64); keep x < 2^64 - (2^64 mod h), return x mod h
            x = np.frombuffer(os.urandom(8 * todo.size), dtype=np.uint64)
            hh = h.reshape(-1)[todo]
            r = (np.uint64(0) - hh) % hh  # 2^64 mod h
            ok = (r == 0) | (x < np.uint64(0) - r)
            out.reshape(-1)[todo[ok]] = (x[ok] % hh[ok]).astype(np.int64)
            todo = todo[~ok]
        return out


def _bern_exp_scalar(src: IntegerSource, num: int, den: int) -> bool:
    """Bernoulli(exp(-num/den)) with Python integers (CKS 2020, Algorithm 1)."""
    whole, frac = divmod(num, den)
    for _ in range(whole):  # Bernoulli(e^-1) ``whole`` times, all must succeed
        if not _bern_exp_unit(src, 1, 1, 1):
            return False
    return _bern_exp_unit(src, frac, den, 1)


def _bern_exp_unit(src: IntegerSource, num: int, den: int, k: int) -> bool:
    """Bernoulli(exp(-g)), g = num/den in [0, 1], continuing Algorithm 1 from K = k."""
    while src.below(den * k) < num:  # A ~ Bernoulli(g / K)
        k += 1
    return k % 2 == 1


def _bern_exp_unit_array(src: IntegerSource, num: np.ndarray, den: int) -> np.ndarray:
    """Vectorised :func:`_bern_exp_unit` for int64 ``num`` in [0, den], den < 2^50."""
    k = np.ones(num.shape, dtype=np.int64)
    active = np.flatnonzero(num > 0)
    while active.size:
        if den * (int(k[active].max()) + 1) >= _INT62:  # never in practice: finish exactly in Python
            for i in active:
                k[i] = 1 if _bern_exp_unit(src, int(num[i]), den, int(k[i])) else 2
            break
        hit = src.below_array(den * k[active]) < num[active]
        k[active[hit]] += 1
        active = active[hit]
    return k % 2 == 1


def bernoulli_exp_batch(src: IntegerSource, num: Any, den: int) -> np.ndarray:
    """Elementwise Bernoulli(exp(-num_i/den)) for non-negative integers num_i (array or list)."""
    nums = np.asarray(num, dtype=object).reshape(-1)
    if den < _VEC_DEN and all(int(v) < _INT62 for v in nums):
        n = nums.astype(np.int64)
        whole, frac = np.divmod(n, den)
        alive = np.ones(n.shape, dtype=bool)
        j = 0
        while True:  # round j: every alive element with whole > j draws one Bernoulli(e^-1)
            idx = np.flatnonzero(alive & (whole > j))
            if not idx.size:
                break
            alive[idx] = _bern_exp_unit_array(src, np.ones(idx.size, dtype=np.int64), 1)
            j += 1
        idx = np.flatnonzero(alive)
        alive[idx] = _bern_exp_unit_array(src, frac[idx], den)
        return alive
    return np.fromiter((_bern_exp_scalar(src, int(v), den) for v in nums), dtype=bool, count=nums.size)


def bernoulli_exp(x: Any, *, size: int | None = None, rng: Any = None) -> Any:
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
    rng : None, int, Generator or "secure", default=None
        Randomness (keyword-only); ``"secure"`` uses the OS CSPRNG.

    Returns
    -------
    bool or numpy.ndarray of bool

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
    q = as_fraction(x, "x", nonnegative=True)
    size = check_size(size)
    src = IntegerSource(rng)
    out = bernoulli_exp_batch(src, [q.numerator] * (1 if size is None else size), q.denominator)
    return bool(out[0]) if size is None else out


def _geometric_e1(src: IntegerSource, n: int) -> np.ndarray:
    """n iid counts of Bernoulli(e^-1) successes before the first failure (P[V >= v] = e^-v)."""
    v = np.zeros(n, dtype=np.int64)
    active = np.arange(n)
    while active.size:
        ok = _bern_exp_unit_array(src, np.ones(active.size, dtype=np.int64), 1)
        v[active[ok]] += 1
        active = active[ok]
    return v


def discrete_laplace_batch(src: IntegerSource, s: int, t: int, n: int) -> np.ndarray:
    """n draws of CKS Algorithm 2: P[Y = y] proportional to exp(-|y| s / t)."""
    out = np.empty(n, dtype=np.int64)
    filled = 0
    while filled < n:
        m = n - filled
        if t < _VEC_DEN:
            u = src.below_array(np.full(m, t, dtype=np.int64))
        else:
            u = np.array([src.below(t) for _ in range(m)], dtype=object)
        d = bernoulli_exp_batch(src, u, t)  # accept U with probability exp(-U/t)
        u = u[d]
        x = u + t * _geometric_e1(src, int(u.size)).astype(object if t >= _VEC_DEN else np.int64)
        y = x // s
        b = src.below_array(np.full(y.size, 2, dtype=np.int64)).astype(bool)
        keep = ~(b & (y == 0))  # reject (B = 1, Y = 0) so that 0 is not counted twice
        y = np.where(b, -y, y)[keep]
        if y.dtype == object and y.size and max(abs(int(v)) for v in y) >= _INT62:
            raise OverflowError(f"discrete Laplace draws exceed int64 (scale {t}/{s} is too large)")
        out[filled : filled + y.size] = y.astype(np.int64)
        filled += int(y.size)
    return out


def discrete_laplace(scale: Any, *, size: int | None = None, rng: Any = None) -> Any:
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
    rng : None, int, Generator or "secure", default=None
        Randomness (keyword-only); ``"secure"`` uses the OS CSPRNG.

    Returns
    -------
    int or numpy.ndarray of int64

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
    b = as_fraction(scale, "scale", positive=True)
    size = check_size(size)
    src = IntegerSource(rng)
    out = discrete_laplace_batch(src, b.denominator, b.numerator, 1 if size is None else size)
    return int(out[0]) if size is None else out


def discrete_laplace_logpmf(y: Any, scale: Any) -> np.ndarray:
    """log P[Y = y] of :func:`discrete_laplace` (float, for laws and audits)."""
    b = float(as_fraction(scale, "scale", positive=True))
    y = np.abs(np.asarray(y, dtype=np.float64))
    r = 1.0 / b
    return np.log(-np.expm1(-r)) - np.log1p(np.exp(-r)) - y * r


def discrete_gaussian(sigma2: Any, *, size: int | None = None, rng: Any = None) -> Any:
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

    References
    ----------
    Canonne, Kamath & Steinke (2020), NeurIPS, Algorithm 3 and Theorem 6.

    Examples
    --------
    >>> y = discrete_gaussian(4, size=20_000, rng=2)
    >>> bool(abs(y.var() - 4) < 0.2)
    True
    """
    s2 = as_fraction(sigma2, "sigma2", positive=True)
    size = check_size(size)
    src = IntegerSource(rng)
    a, b = s2.numerator, s2.denominator
    t = math.isqrt(a // b) + 1
    n = 1 if size is None else size
    out = np.empty(n, dtype=np.int64)
    filled = 0
    while filled < n:
        y = discrete_laplace_batch(src, 1, t, n - filled)
        # (|y| - s2/t)^2 / (2 s2) = (|y| t b - a)^2 / (2 a b t^2)
        num = [(abs(int(v)) * t * b - a) ** 2 for v in y]
        keep = bernoulli_exp_batch(src, num, 2 * a * b * t * t)
        y = y[keep]
        out[filled : filled + y.size] = y
        filled += int(y.size)
    return int(out[0]) if size is None else out


def exponential_weights(
    rates: Any, *, counts: Any = None, size: int | None = None, rng: Any = None
) -> tuple[Any, Any]:
    r"""Exact draw of (group g, offset o) with P[g, o] proportional to e^{-rate_g}, o in {0..counts_g - 1}.

    .. math::

        P[g] = \frac{n_g e^{-\gamma_g}}{\sum_h n_h e^{-\gamma_h}}, \qquad
        o \mid g \sim \mathrm{Uniform}\{0, \dots, n_g - 1\}.

    The exponential mechanism over the grid points of intervals (n_g grid
    points sharing the rate gamma_g, e.g. Duff's median on a grid) or over
    candidates (all n_g = 1).  Rejection: propose one of the N = sum n_g points
    uniformly, accept with an exact Bernoulli(e^{-(gamma_g - min gamma)}); a
    round outputs (g, o) with probability e^{-(gamma_g - min gamma)}/N, so the
    law is exact; the expected number of rounds is N / sum_h n_h e^{-(gamma_h - min gamma)}.

    Parameters
    ----------
    rates : sequence of int, Fraction or float
        gamma_g (floats converted exactly); any real values.
    counts : sequence of int or None, default=None
        n_g >= 1 (None: all 1).
    size : int or None, default=None
        None for one draw, else the number of draws.
    rng : None, int, Generator or "secure", default=None
        Randomness (keyword-only).

    Returns
    -------
    (g, o) : two ints, or two int64 arrays of length ``size``

    References
    ----------
    McSherry & Talwar (2007), FOCS (the exponential mechanism); Canonne,
    Kamath & Steinke (2020), NeurIPS, Algorithm 1 (the Bernoulli).

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
    size = check_size(size)
    src = IntegerSource(rng)
    low = min(q)
    gam = [r - low for r in q]
    den = math.lcm(*(g.denominator for g in gam))
    nums = np.array([g.numerator * (den // g.denominator) for g in gam], dtype=object)
    if all(int(v) < _INT62 for v in nums):
        nums = nums.astype(np.int64)
    cum = np.cumsum(np.array(n, dtype=object))
    total = int(cum[-1])
    if total >= _INT62:
        raise ValueError(f"the total count {total} must be below 2^62")
    cum64 = cum.astype(np.int64)
    draws = 1 if size is None else size
    group = np.empty(draws, dtype=np.int64)
    offset = np.empty(draws, dtype=np.int64)
    todo = np.arange(draws)
    while todo.size:
        u = src.below_array(np.full(todo.size, total, dtype=np.int64))
        g = np.searchsorted(cum64, u, side="right")
        acc = bernoulli_exp_batch(src, nums[g], den)
        group[todo[acc]] = g[acc]
        offset[todo[acc]] = (u - (cum64[g] - np.asarray(n, dtype=np.int64)[g]))[acc]
        todo = todo[~acc]
    if size is None:
        return int(group[0]), int(offset[0])
    return group, offset
