"""Certified fixed-point bounds on ``2^j e^{-num/den}`` and the exact Bernoulli draw they decide.

The bounds behind :mod:`dpselect.noise._exact_em`'s acceptance step, computed in fixed
point with directed rounding from series with explicit remainders (ln 2 = sum 1/(k 2^k);
e^{-f} = sum (-f)^i/i! for f in [0, 1], alternating; e^{-k} = (e^{-1})^k), so every
decision is an integer comparison: no float enters it.
"""

from __future__ import annotations

from functools import lru_cache

from ._integers import IntegerSource

__all__ = ["pow2_exp_bounds"]

#: Guard bits of the fixed-point bounds beyond the precision they are returned at.
_GUARD = 32


@lru_cache(maxsize=64)
def _ln2_fixed(w: int) -> tuple[int, int]:
    """(lo, hi) with lo <= 2^w ln 2 <= hi: ln 2 = sum_{k >= 1} 1/(k 2^k), w terms rounded down, tail < 1."""
    s = sum((1 << (w - k)) // k for k in range(1, w + 1))
    return s, s + w + 1


def _exp_neg_unit(f: int, w: int) -> tuple[int, int]:
    """(lo, hi) with lo <= 2^w e^{-f / 2^w} <= hi for an integer 0 <= f <= 2^w.

    Alternating Taylor series with decreasing terms t_i = x^i/i! (x <= 1): each
    term bounded below (floor) and above (ceil) in units of 2^-w, and the
    remainder after the last term kept is at most the next term.
    """
    one = 1 << w
    lo_sum = hi_sum = 0
    tl = tu = one
    i = 0
    while True:
        if i % 2 == 0:
            lo_sum, hi_sum = lo_sum + tl, hi_sum + tu
        else:
            lo_sum, hi_sum = lo_sum - tu, hi_sum - tl
        i += 1
        tl = (tl * f) // (i << w)
        tu = -((-tu * f) // (i << w))
        if tu <= 1:
            return max(lo_sum - tu, 0), min(hi_sum + tu, one)


@lru_cache(maxsize=64)
def _exp_neg1(w: int) -> tuple[int, int]:
    return _exp_neg_unit(1 << w, w)


def _mul(a: int, b: int, w: int, up: bool) -> int:
    """Return a b / 2^w rounded up or down."""
    return -((-(a * b)) >> w) if up else (a * b) >> w


def _exp_neg_fixed(y: int, w: int, up: bool) -> int:
    """An upper (``up``) or lower bound on 2^w e^{-y / 2^w} for an integer y >= 0."""
    k, f = y >> w, y & ((1 << w) - 1)
    if k >= w:  # e^{-y/2^w} <= e^{-w} < 2^{-w}
        return 1 if up else 0
    side = 1 if up else 0
    x, r = _exp_neg1(w)[side], 1 << w
    while k:  # (e^{-1})^k by squaring, every product rounded in the same direction
        if k & 1:
            r = _mul(r, x, w, up)
        x = _mul(x, x, w, up)
        k >>= 1
    return _mul(r, _exp_neg_unit(f, w)[side], w, up)


def pow2_exp_bounds(num: int, den: int, j: int, bits: int) -> tuple[int, int]:
    """Integers (lo, hi) with lo <= 2^bits 2^j e^{-num/den} <= hi <= 2^bits, for 0 <= j ln 2 <= num/den.

    With y = num/den - j ln 2 >= 0 bracketed by the ln 2 bounds, e^{-y} is
    bounded through :func:`_exp_neg_fixed` at ``bits + 32`` bits and rounded
    outwards; ``hi - lo`` is a few units for every ``bits``.
    """
    w = bits + _GUARD
    l2lo, l2hi = _ln2_fixed(w)
    a = num << w
    y_lo = max(0, (a - j * l2hi * den) // den)
    y_hi = -((j * l2lo * den - a) // den)
    lo = _exp_neg_fixed(y_hi, w, up=False) >> _GUARD
    hi = -((-_exp_neg_fixed(y_lo, w, up=True)) >> _GUARD)
    return lo, min(hi, 1 << bits)


def _bernoulli_pow2_exp(src: IntegerSource, num: int, den: int, j: int, v: int, bits: int) -> bool:
    """Exact Bernoulli(2^j e^{-num/den}) given the first ``bits`` bits ``v`` of a uniform U in [0, 1).

    Returns [U < p]: true if (v + 1)/2^bits <= lo, false if v/2^bits >= hi,
    else 64 more bits of U are drawn and the bounds refined.
    """
    while True:
        lo, hi = pow2_exp_bounds(num, den, j, bits)
        if v < lo:
            return True
        if v >= hi:
            return False
        v = (v << 64) | src.below(1 << 64)
        bits += 64
