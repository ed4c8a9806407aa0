"""Special-function helpers of the noise laws (mathematics §2).

Log-space incomplete beta, safeguarded Newton inversion, Lambert W of huge arguments,
argument checks.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from dpselect._validation import MIN_TAIL_EXPONENT as MIN_TAIL_EXPONENT  # re-bound for the noise face
from dpselect._validation import check_delta, check_int, check_size

Array = NDArray[np.float64]
LOG2 = math.log(2.0)
LOG_HALF = -LOG2
_INF = math.inf


def _log1mexp(x: Array) -> Array:
    """log(1 - exp(-x)) for x >= 0, accurate everywhere (Maechler's log1mexp)."""
    return np.where(x > LOG2, np.log1p(-np.exp(-x)), np.log(-np.expm1(-x)))


def _beta_args(a: Array, g: float) -> tuple[Array, Array, Array, Array]:
    """Return x = 1/(1+a^g), y = a^g/(1+a^g) and log x, log y for a >= 0, without overflow."""
    t = a**g
    lt = g * np.log(a)
    x = 1.0 / (1.0 + t)
    y = np.where(t > 1.0, 1.0 / (1.0 + 1.0 / t), t / (1.0 + t))
    return x, y, -np.logaddexp(0.0, lt), -np.logaddexp(0.0, -lt)


def _log_ibeta(p: float, q: float, x: Array, y: Array, logx: Array, logy: Array) -> Array:
    """Return log I_x(p, q) (regularised incomplete beta), y = 1 - x given separately.

    Where I_x > 1/2 it is log1p(-I_y(q, p)) (accurate when x rounds to 1); elsewhere
    ``betainc`` and, where that underflows, the exact series
    I_x(p,q) = x^p y^q 2F1(p+q, 1; p+1; x) / (p B(p,q)) in log form.
    """
    c = special.betainc(q, p, y)
    out = np.log1p(-c)
    m = np.flatnonzero(c > 0.5)
    if m.size:
        v = special.betainc(p, q, x[m])
        tiny = v < 1e-280
        v = np.log(v)
        v[tiny] = (
            p * logx[m][tiny]
            + q * logy[m][tiny]
            - math.log(p)
            - special.betaln(p, q)
            + np.log(special.hyp2f1(p + q, 1.0, p + 1.0, x[m][tiny]))
        )
        out[m] = v
    return out


def _ibeta_tail_logx(w: Array, p: float, q: float) -> Array:
    """Rough log x with log I_x(p, q) = w (starting value for Newton)."""
    x = special.betaincinv(p, q, np.exp(w))
    asym = (w + math.log(p) + special.betaln(p, q)) / p  # I_x ~ x^p / (p B(p,q))
    return np.minimum(np.where(x > 1e-300, np.log(x), asym), -1e-12)


def _solve_increasing(
    fun: Callable[[Array], tuple[Array, Array]], target: Array, x0: Array, maxiter: int = 100
) -> Array:
    """Vectorised safeguarded Newton for fun(x) = target, fun increasing.

    ``fun`` returns (value, derivative).  A bracket [lo, hi] is kept per element;
    Newton steps leaving it are replaced by bisection (or by a doubling step
    while the root is not yet bracketed).  Only unconverged elements are evaluated.
    """
    x = np.array(x0, dtype=float)
    lo, hi = np.full_like(x, -_INF), np.full_like(x, _INF)
    step = np.ones_like(x)
    idx = np.flatnonzero(np.isfinite(x) & np.isfinite(target))
    for _ in range(maxiter):
        if idx.size == 0:
            break
        xa, st = x[idx], step[idx]
        val, der = fun(xa)
        r = val - target[idx]
        lo_a, hi_a = np.where(r < 0, xa, lo[idx]), np.where(r > 0, xa, hi[idx])
        both = np.isfinite(lo_a) & np.isfinite(hi_a)
        d = -r / der
        xn = xa + np.where(both, d, np.clip(d, -st, st))
        ok = (xn > lo_a) & (xn < hi_a)
        xn = np.where(ok, xn, np.where(both, 0.5 * (lo_a + hi_a), np.where(r < 0, xa + st, xa - st)))
        tol = 1e-15 * np.maximum(1.0, np.abs(xa))
        done = (r == 0) | np.isnan(r) | (np.abs(xn - xa) <= tol) | (both & (hi_a - lo_a <= 4 * tol))
        x[idx] = np.where(r == 0, xa, np.where(np.isnan(r), np.nan, xn))
        lo[idx], hi[idx], step[idx] = lo_a, hi_a, 2.0 * st
        idx = idx[~done]
    return x


def _lambertw_exp(L: Array) -> Array:
    """W(exp(L)) (principal branch) without overflow for large L."""
    big = L > 700.0
    Lb = np.where(big, L, 701.0)
    w = np.where(big, Lb - np.log(Lb), special.lambertw(np.exp(np.minimum(L, 700.0))).real)
    for _ in range(3):  # Newton on w + log w = L, asymptotic branch only
        w = np.where(big, w - (w + np.log(w) - Lb) * w / (1.0 + w), w)
    return w


def _random_sign(rng: np.random.Generator, a: Array) -> Array:
    return np.copysign(a, rng.random(np.shape(a)) - 0.5, out=a)


def _apply(fn: Callable[[Array], Array], x: ArrayLike) -> Any:
    arr = np.asarray(x, dtype=float)
    with np.errstate(all="ignore"):
        out = np.asarray(fn(arr.reshape(-1)), dtype=float)
    return out.reshape(arr.shape)[()]


def _check_shape(size: Any) -> tuple[int, ...] | None:
    if isinstance(size, tuple):
        return tuple(check_int(s, "size", minimum=1) for s in size)
    n = check_size(size)
    return None if n is None else (n,)


def _require_pure(delta: Any, law: str) -> None:
    if check_delta(delta) != 0.0:
        raise ValueError(f"delta must be 0: {law} noise is pure (epsilon, 0)-admissible, got delta={delta!r}")
