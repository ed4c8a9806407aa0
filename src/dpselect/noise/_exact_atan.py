r"""Exact grid sampling of v + b Z rounded to lambda Z, for Z ~ Student t_3 or Cauchy.

The released index is K = floor((v + b Z)/lambda + 1/2), so with
B(k) = ((k - 1/2) lambda - v)/b (an exact rational: v, b, lambda are floats)

.. math::

    P[K = k] = F(B(k + 1)) - F(B(k)),

    F_{t_3}(x) = 1/2 + (\arctan u + u/(1 + u^2))/\pi, \; u = x/\sqrt 3, \qquad
    F_{\mathrm{Cauchy}}(x) = 1/2 + \arctan(x)/\pi .

K is drawn by inversion, K = max{k : F(B(k)) <= U}, with U uniform on [0, 1)
drawn 64 bits at a time, and every comparison decided *rigorously* in integer
arithmetic: F(B(k)) is bracketed by fixed-point integers lo <= 2^P F <= hi
(outward rounding: sqrt 3 by ``math.isqrt``, arctan by Euler's series
arctan z = sum_n 2^{2n} (n!)^2/(2n+1)! z^{2n+1}/(1+z^2)^{n+1}, whose terms are
positive with ratio <= z^2/(1+z^2) <= 1/2 for 0 <= z <= 1, arctan z = pi/2 -
arctan(1/z) for z > 1, arctan z = arctan(j/8) + arctan((8z - j)/(8 + jz)) with
j = round(8z) to speed the series up, pi = 4 arctan 1).  When the bracket of U or of F is too
coarse to decide, 64 more bits of U are drawn and P is raised.  No float enters a
decision: floats only give the starting guess of the search.  The output law is
therefore exactly the law of the ideal real-valued release rounded to the grid.

References: Euler's series for arctan (e.g. Abramowitz & Stegun 4.4.42);
inversion with lazily drawn uniform bits: Devroye (1986), *Non-Uniform Random
Variate Generation*, §II.2; the documentation page "Floating point and side channels".
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np
from scipy.special import stdtrit

from .._params import DATA_FINITE, SEED, Rule, callable_, int_at_least, positive, validate_params
from .._validation import check_int, check_positive
from ..typing import SeedLike
from ._integers import IntegerSource

__all__ = ["ATAN_LAWS", "atan_bounds", "cauchy_cdf_bounds", "pi_bounds", "sample_snapped_atan", "t3_cdf_bounds"]

#: (num, den, P) -> (lo, hi) with lo <= 2^P F(num/den) <= hi (integers, den > 0).
CdfBounds = Callable[[int, int, int], tuple[int, int]]


def _guard(p: int) -> int:
    """Guard bits: the series' accumulated floor errors stay below 2^guard ulps."""
    return 2 * p.bit_length() + 8


def _atan_unit(num: int, den: int, w: int) -> tuple[int, int]:
    """Return lo, hi with lo <= 2^w arctan(num/den) <= hi for 0 <= num <= den (Euler's series, one floor chain).

    Each computed term t'_n = floor(t'_{n-1} r_n) satisfies 0 <= t_n - t'_n <= n + 1
    (r_n <= 1), so the sum of N + 1 terms is low by at most (N + 1)(N + 2)/2, and the
    tail after term N is at most t_N <= t'_N + N + 1 (ratio <= 1/2).
    """
    if num == 0:
        return 0, 0
    s2 = num * num + den * den
    p2 = num * num
    t = (num * den << w) // s2
    total, n = 0, 0
    while True:
        total += t
        if t == 0:
            break
        t = t * (2 * n + 2) * p2 // ((2 * n + 3) * s2)
        n += 1
    # terms 0..n were summed (t'_n = 0 is the last); tail after n is <= t_n <= n + 1
    return total, total + (n + 1) * (n + 2) // 2 + n + 1


@lru_cache(maxsize=64)
def pi_bounds(w: int) -> tuple[int, int]:
    """Return lo, hi with lo <= 2^w pi <= hi, from pi = 4 arctan 1."""
    lo, hi = _atan_unit(1, 1, w)
    return 4 * lo, 4 * hi


@lru_cache(maxsize=256)
def _atan_eighths(j: int, w: int) -> tuple[int, int]:
    """Return lo, hi with lo <= 2^w arctan(j/8) <= hi (cached reduction constants)."""
    return _atan_unit(j, 8, w)


def _atan_reduced(p: int, q: int, w: int) -> tuple[int, int]:
    """arctan(p/q), 0 <= p <= q: arctan(j/8) + arctan((8p - jq)/(8q + jp)), j = round(8p/q).

    The reduced argument has modulus <= 1/16, so the series ratio is <= 1/257.
    """
    j = (16 * p + q) // (2 * q)
    clo, chi = _atan_eighths(j, w)
    s, t = 8 * p - j * q, 8 * q + j * p
    lo, hi = _atan_unit(abs(s), t, w)
    return (clo + lo, chi + hi) if s >= 0 else (clo - hi, chi - lo)


def _atan_pq(p: int, q: int, w: int) -> tuple[int, int]:
    """Return lo, hi with lo <= 2^w arctan(p/q) <= hi for integers p >= 0, q > 0 (pi/2 - arctan(q/p) for p > q)."""
    if p <= q:
        return _atan_reduced(p, q, w)
    plo, phi = pi_bounds(w)
    lo, hi = _atan_reduced(q, p, w)
    return plo // 2 - hi, -(-phi // 2) - lo


def atan_bounds(z: Fraction, w: int) -> tuple[int, int]:
    """Return lo, hi with lo <= 2^w arctan(z) <= hi for a rational z (odd symmetry, pi/2 - arctan(1/z) for z > 1)."""
    if z < 0:
        lo, hi = _atan_pq(-z.numerator, z.denominator, w)
        return -hi, -lo
    return _atan_pq(z.numerator, z.denominator, w)


def _from_half_plus(g_lo: int, g_hi: int, w: int, p: int) -> tuple[int, int]:
    """2^p (1/2 + g/pi) bracketed, for 0 <= g_lo <= 2^w g <= g_hi."""
    plo, phi = pi_bounds(w)
    return (1 << (p - 1)) + (g_lo << p) // phi, (1 << (p - 1)) - (-(g_hi << p) // plo)


def _symmetric(half: Callable[[int, int, int, int], tuple[int, int]]) -> CdfBounds:
    def bounds(num: int, den: int, p: int) -> tuple[int, int]:
        w = p + _guard(p)
        if num >= 0:
            return half(num, den, w, p)
        lo, hi = half(-num, den, w, p)  # F(x) = 1 - F(-x)
        return (1 << p) - hi, (1 << p) - lo

    return bounds


def _cauchy_half(num: int, den: int, w: int, p: int) -> tuple[int, int]:
    lo, hi = _atan_pq(num, den, w)
    return _from_half_plus(lo, hi, w, p)


@lru_cache(maxsize=64)
def _isqrt3(w: int) -> int:
    """Return the r with r <= 2^w sqrt 3 < r + 1."""
    return math.isqrt(3 << (2 * w))


def _t3_half(num: int, den: int, w: int, p: int) -> tuple[int, int]:
    """g(u) = arctan u + u/(1+u^2), u = x/sqrt3, is increasing with g'(u) = 2/(1+u^2)^2.

    u_lo = a/c <= u <= a/c' = u_hi (sqrt 3 bracketed by isqrt); the lower bound is g(u_lo),
    the upper one g(u_lo) + g'(u_lo)(u_hi - u_lo) (g' is decreasing on u >= 0).
    """
    r = _isqrt3(w)
    a, c, c2 = num << w, den * (r + 1), den * r  # c - c2 = den
    s2 = a * a + c * c
    rat = (a * c << w) // s2  # floor 2^w u_lo/(1 + u_lo^2)
    lo, hi = _atan_pq(a, c, w)
    # 2^w g'(u_lo)(u_hi - u_lo) = 2^(w+1) a den c^3 / (c2 (a^2 + c^2)^2), rounded up
    extra = -(-(a * den * c * c * c << (w + 1)) // (c2 * s2 * s2))
    return _from_half_plus(lo + rat, hi + rat + 1 + extra, w, p)


#: lo <= 2^P F(x) <= hi for the standard Cauchy law (polynomial gamma = 2, Student t df = 1).
cauchy_cdf_bounds: CdfBounds = _symmetric(_cauchy_half)
#: lo <= 2^P F(x) <= hi for Student t with 3 degrees of freedom.
t3_cdf_bounds: CdfBounds = _symmetric(_t3_half)
#: The laws with an exact grid sampler: name -> (cdf bounds, float quantile for the guess).
ATAN_LAWS: dict[str, tuple[CdfBounds, Callable[[np.ndarray], np.ndarray]]] = {
    "cauchy": (cauchy_cdf_bounds, lambda u: np.tan(np.pi * (u - 0.5))),
    "t3": (t3_cdf_bounds, lambda u: stdtrit(3, u)),
}

_P0 = 128  # starting precision (bits) of the cdf brackets
_CLAMP = 2**51  # released indices are clamped like grid_index's (post-processing)


class _Draw:
    """One inversion: U = (m + r)/2^L with r in [0, 1) not yet drawn; F brackets cached per (k, P)."""

    def __init__(self, m: int, src: IntegerSource, cell: Callable[[int, int], tuple[int, int]]) -> None:
        self.m, self.bits, self.prec, self.src, self.cell = m, 64, _P0, src, cell

    def below(self, k: int) -> bool:
        """Whether F(B(k)) <= U, decided rigorously (refining U and P until it is)."""
        while True:
            lo, hi = self.cell(k, self.prec)
            # F in [lo, hi] / 2^prec and U in [m, m + 1) / 2^bits: compare over the common 2^-(prec + bits)
            if hi << self.bits <= self.m << self.prec:
                return True
            if lo << self.bits >= (self.m + 1) << self.prec:
                return False
            self.m = (self.m << 64) | self.src.below(1 << 64)
            self.bits += 64
            self.prec = max(2 * self.prec, self.bits + 64)

    def search(self, k0: int, kmin: int, kmax: int) -> int:
        """min(max(K, kmin), kmax), K = max{k : F(B(k)) <= U}: gallop from the guess inside [kmin, kmax], bisect.

        Never evaluates F outside [kmin, kmax], so at most 2 log2(kmax - kmin) + 3 cells are
        bracketed whatever the value and scale (P[clamped K = kmax] = P[F(B(kmax)) <= U]:
        the same law as clamping the unrestricted K).
        """
        k0 = min(max(k0, kmin), kmax)
        step = 1
        if self.below(k0):  # K >= k0: find hi with F(B(hi)) > U
            lo = k0
            while True:
                if lo == kmax:
                    return kmax
                nxt = min(lo + step, kmax)
                if not self.below(nxt):
                    hi = nxt
                    break
                lo, step = nxt, 2 * step
        else:  # K < k0: find lo with F(B(lo)) <= U
            hi = k0
            while True:
                if hi == kmin:
                    return kmin
                nxt = max(hi - step, kmin)
                if self.below(nxt):
                    lo = nxt
                    break
                hi, step = nxt, 2 * step
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.below(mid):
                lo = mid
            else:
                hi = mid
        return lo


def _law(value: Any, name: str) -> str | CdfBounds:
    if isinstance(value, str):
        if value not in ATAN_LAWS:
            raise ValueError(f"{name} must be one of {tuple(ATAN_LAWS)}, got {value!r}")
        return value
    if not callable(value):
        raise TypeError(f"{name} must be one of {tuple(ATAN_LAWS)} or a callable, got {type(value).__name__}")
    return value


def _index_range(value: Any, name: str) -> Any:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
        raise TypeError(f"{name} must be a pair (kmin, kmax) of ints, got {type(value).__name__}")
    return value


#: The range of released indices: None (+-2^51) or a pair (kmin, kmax).
_INDEX_RANGE = Rule("a pair (kmin, kmax) of ints", check=_index_range, none=True)


@validate_params(
    {
        "law": Rule(f"one of {tuple(ATAN_LAWS)} or a cdf-bounds callable", check=_law),
        # the statistic and S(x)/alpha are data-derived: messages name them without their values
        "value": DATA_FINITE,
        "scale": Rule("a float > 0", check=lambda v, n: check_positive(v, n, quote=False)),
        "lam": positive(),
        "n": int_at_least(1),
        "rng": SEED,
        "quantile": callable_(none=True),
        "index_range": _INDEX_RANGE,  # kmin <= kmax within +-2^51: checked in the body
    }
)
def sample_snapped_atan(
    law: str | CdfBounds,
    value: float,
    scale: float,
    lam: float,
    n: int,
    *,
    rng: SeedLike = None,
    quantile: Callable[[np.ndarray], np.ndarray] | None = None,
    index_range: tuple[int, int] | None = None,
) -> np.ndarray:
    r"""Return n exact draws of the grid-rounded release lambda K, K = floor((value + scale Z)/lambda + 1/2).

    .. math::

        P[K = k] = F(B(k + 1)) - F(B(k)), \quad B(k) = ((k - 1/2)\lambda - v)/b,

    with F the cdf of Z (Student t_3 or standard Cauchy), K clamped to ``index_range``
    (default +-2^51).  The search for K never leaves that range, so the running time is
    bounded by a function of its length (at most 2 log2(length) + 3 brackets of F, each on
    integers no longer than the floats' exact fractions) whatever the value and scale: a huge
    (private) scale cannot slow a draw down (issue 30: > 20 s per draw at scale 1e306 before).

    Parameters
    ----------
    law : str or callable
        "t3" or "cauchy"; or (tests) a function (x, P) -> (lo, hi) with
        lo <= 2^P F(num/den) <= hi, called as (num, den, P) with den > 0.
    value : float
        v, the statistic.
    scale : float
        b > 0, the noise scale.
    lam : float
        lambda, the grid (a power of two).
    n : int
        number of independent draws.
    rng : None, int, Generator or "secure", default=None
        source of the uniform bits (keyword-only).
    quantile : callable or None, default=None
        float quantile of Z for the starting guess (only with a callable ``law``).
    index_range : (int, int) or None, default=None
        (kmin, kmax): K is clamped to it (post-processing of K, decided without leaving it);
        None: (-2^51, 2^51).

    Returns
    -------
    ndarray
        n float64 multiples of lambda.

    References
    ----------
    Devroye (1986), *Non-Uniform Random Variate Generation*, §II.2 (inversion);
    the documentation page "Floating point and side channels".

    Examples
    --------
    >>> y = sample_snapped_atan("t3", 0.3, 1.0, 0.5, 4, rng=0)
    >>> bool(((y / 0.5) == np.round(y / 0.5)).all())
    True
    """
    if isinstance(law, str):
        bounds, quant = ATAN_LAWS[law]
    else:
        bounds, quant = law, quantile if quantile is not None else ATAN_LAWS["cauchy"][1]
    if index_range is None:
        kmin, kmax = -_CLAMP, _CLAMP
    else:
        kmin, kmax = (check_int(k, "index_range", minimum=-_CLAMP) for k in index_range)
        if not kmin <= kmax <= _CLAMP:
            raise ValueError("index_range must satisfy -2**51 <= kmin <= kmax <= 2**51")
    src = IntegerSource(rng)
    # B(k) = ((2k - 1) lambda/2 - v)/b = ((2k - 1) h - c) bq / (d bp), all integers (floats are rationals)
    half, v, b = Fraction(lam) / 2, Fraction(value), Fraction(scale)
    d = math.lcm(half.denominator, v.denominator)
    h, c = half.numerator * (d // half.denominator), v.numerator * (d // v.denominator)
    bq, den = b.denominator, d * b.numerator
    cache: dict[tuple[int, int], tuple[int, int]] = {}

    def cell(k: int, p: int) -> tuple[int, int]:  # brackets of F(B(k)) at precision p
        key = (k, p)
        if key not in cache:
            cache[key] = bounds(((2 * k - 1) * h - c) * bq, den, p)
        return cache[key]

    first = [src.below(1 << 64) for _ in range(n)]
    u = (np.array(first, dtype=np.float64) + 0.5) * 2.0**-64
    with np.errstate(all="ignore"):
        guess = np.floor(np.clip((value + scale * quant(u)) / lam, -(2.0**60), 2.0**60) + 0.5)
    guess = np.nan_to_num(guess, nan=0.0)
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        out[i] = _Draw(first[i], src, cell).search(int(guess[i]), kmin, kmax)
    return out.astype(np.float64) * lam
