"""Standard noise distributions and their admissibility parameters (SPEC.md §2).

Every law here is *standard* (location 0, unit scale); mechanisms scale it.
All distributions are immutable, hashable frozen dataclasses (equality by
parameters) sharing the :class:`NoiseDistribution` interface:

* ``logpdf, pdf, logcdf, cdf, logsf, sf, ppf, isf`` - vectorised, computed in
  log space so that far tails stay finite and accurate (``Laplace().logsf(1e6)``
  is ``-1e6 - log 2``); out-of-support arguments give ``logpdf = -inf`` etc.
  without warnings.  Scalars in give NumPy floats out.
* ``ilogsf(w)`` / ``ilogcdf(w)``: the ``z`` with ``logsf(z) = w`` / ``logcdf(z) = w``
  for ``w`` in ``[-inf, 0]`` (NaN outside), accurate down to ``w = -700`` and
  beyond; used by quadrature to place panels in extreme tails.
* ``sample(size=None, rng=None)`` with NumPy's native generators.
* ``support``, ``symmetric``, ``width`` (interquartile range), ``mean_abs()``,
  ``var()``, the Lipschitz constants ``shift_constant`` (L_s) and
  ``dilation_constant`` (L_d) of SPEC §2.1/§2.7 (``None`` when not pure), and
  ``admissible(epsilon, delta) -> (alpha, beta)``.

Symmetric laws (Laplace, StudentT, LaplaceLogNormal, PolynomialTail) are
implemented through their folded law |Z|; ``.one_sided()`` returns
:class:`OneSided`, the law restricted to ``z >= 0`` and renormalised (density
2h(z), cdf 2F(z)-1, logsf = log 2 + logsf of the parent, samples |Z|).  A
one-sided law keeps its parent's constants and ``admissible``: SPEC §3.1 uses a
one-sided h that is nonincreasing on [0, inf) with L_s, L_d computed on the
support, which for a symmetric unimodal parent are the parent's constants.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, Callable, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize, special

from dpselect._validation import (
    check_delta,
    check_epsilon,
    check_finite_float,
    check_int,
    check_positive,
    check_probability_in,
    check_random_state,
    check_size,
)

__all__ = [
    "NoiseDistribution",
    "OneSided",
    "Laplace",
    "Gumbel",
    "Exponential",
    "StudentT",
    "LaplaceLogNormal",
    "PolynomialTail",
    "laplace_smooth_delta",
    "nrs_laplace_parameters",
    "zcdp_to_dp",
    "dp_to_zcdp",
]

Array = NDArray[np.float64]
LOG2 = math.log(2.0)
LOG_HALF = -LOG2
_INF = math.inf


# ----------------------------------------------------------------------------- numerics
def _log1mexp(x: Array) -> Array:
    """log(1 - exp(-x)) for x >= 0, accurate everywhere (Maechler's log1mexp)."""
    return np.where(x > LOG2, np.log1p(-np.exp(-x)), np.log(-np.expm1(-x)))


def _beta_args(a: Array, g: float) -> tuple[Array, Array, Array, Array]:
    """x = 1/(1+a^g), y = a^g/(1+a^g) and log x, log y for a >= 0, without overflow."""
    t = a**g
    lt = g * np.log(a)
    x = 1.0 / (1.0 + t)
    y = np.where(t > 1.0, 1.0 / (1.0 + 1.0 / t), t / (1.0 + t))
    return x, y, -np.logaddexp(0.0, lt), -np.logaddexp(0.0, -lt)


def _log_ibeta(p: float, q: float, x: Array, y: Array, logx: Array, logy: Array) -> Array:
    """log I_x(p, q) (regularised incomplete beta), y = 1 - x given separately.

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
        v[tiny] = (p * logx[m][tiny] + q * logy[m][tiny] - math.log(p) - special.betaln(p, q)
                   + np.log(special.hyp2f1(p + q, 1.0, p + 1.0, x[m][tiny])))
        out[m] = v
    return out


def _ibeta_tail_logx(w: Array, p: float, q: float) -> Array:
    """Rough log x with log I_x(p, q) = w (starting value for Newton)."""
    x = special.betaincinv(p, q, np.exp(w))
    asym = (w + math.log(p) + special.betaln(p, q)) / p  # I_x ~ x^p / (p B(p,q))
    return np.minimum(np.where(x > 1e-300, np.log(x), asym), -1e-12)


def _solve_increasing(fun: Callable[[Array], tuple[Array, Array]], target: Array, x0: Array,
                      maxiter: int = 100) -> Array:
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


#: Smallest tail exponent kappa (P[|Z| > z] ~ z^-kappa: df for Student t, gamma - 1 for
#: P_gamma) admitted for smooth-sensitivity calibration: with kappa >= 1/2 a draw exceeds
#: the largest double with probability ~1e-154, so the sampler never overflows and the
#: exact law (which integrates up to 1.7e308 plus a closed-form tail) stays exact.
MIN_TAIL_EXPONENT = 0.5


def _check_tail_exponent(kappa: float, name: str, value: float) -> None:
    if kappa < MIN_TAIL_EXPONENT:
        raise ValueError(
            f"{name}={value!r} gives a tail P[|Z| > z] ~ z^-{kappa:g} too heavy for smooth-sensitivity "
            f"calibration: draws beyond the largest double are not negligible (use a tail exponent "
            f">= {MIN_TAIL_EXPONENT}: df >= 0.5 or gamma >= 1.5)")


def _require_pure(delta: Any, law: str) -> None:
    if check_delta(delta) != 0.0:
        raise ValueError(f"delta must be 0: {law} noise is pure (epsilon, 0)-admissible, got delta={delta!r}")


def _require_approx(delta: Any, why: str) -> float:
    d = check_delta(delta)
    if d == 0.0:
        raise ValueError(f"delta must be > 0: {why}, got delta={delta!r}")
    return d


# ----------------------------------------------------------------------------- base classes
class NoiseDistribution(ABC):
    """Abstract standard noise law.  Subclasses implement the ``_``-primitives on
    1-D float arrays; the public methods add conversion, vectorisation and
    warning-free evaluation.  ``pdf = exp(logpdf)``, ``cdf = exp(logcdf)``,
    ``sf = exp(logsf)``; ``ppf``/``isf`` go through ``ilogcdf``/``ilogsf`` on the
    side where the probability is at most 1/2 (full relative accuracy)."""

    support: ClassVar[tuple[float, float]] = (-_INF, _INF)
    symmetric: ClassVar[bool] = False
    #: L_s of SPEC §2.1: privacy loss per noise unit of shift (None: not pure).
    shift_constant: ClassVar[float | None] = None
    #: L_d of SPEC §2.1: privacy loss per unit of log-scale change (None: not pure).
    dilation_constant: ClassVar[float | None] = None
    #: Whether the density is analytic on each side of the mode 0 (quadrature needs no
    #: geometric refinement towards the scores; False for |z|^gamma cusps and LLN).
    analytic_mode: ClassVar[bool] = True

    @abstractmethod
    def _logpdf(self, z: Array) -> Array: ...
    @abstractmethod
    def _logsf(self, z: Array) -> Array: ...
    @abstractmethod
    def _logcdf(self, z: Array) -> Array: ...
    @abstractmethod
    def _ilogsf(self, w: Array) -> Array: ...
    @abstractmethod
    def _ilogcdf(self, w: Array) -> Array: ...
    @abstractmethod
    def _sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> Array: ...
    @abstractmethod
    def mean_abs(self) -> float:
        """E|Z| (``inf`` when infinite)."""
    @abstractmethod
    def var(self) -> float:
        """Var Z (``inf`` when infinite)."""

    def logpdf(self, z: ArrayLike) -> Any:
        """Log density; ``-inf`` outside the support."""
        return _apply(self._logpdf, z)

    def pdf(self, z: ArrayLike) -> Any:
        """Density."""
        return _apply(lambda v: np.exp(self._logpdf(v)), z)

    def logcdf(self, z: ArrayLike) -> Any:
        """log P[Z <= z]."""
        return _apply(self._logcdf, z)

    def cdf(self, z: ArrayLike) -> Any:
        """P[Z <= z]."""
        return _apply(lambda v: np.exp(self._logcdf(v)), z)

    def logsf(self, z: ArrayLike) -> Any:
        """log P[Z > z]."""
        return _apply(self._logsf, z)

    def sf(self, z: ArrayLike) -> Any:
        """P[Z > z]."""
        return _apply(lambda v: np.exp(self._logsf(v)), z)

    def ilogsf(self, w: ArrayLike) -> Any:
        """The z with logsf(z) = w, for w in [-inf, 0] (NaN otherwise)."""
        return _apply(lambda v: self._inverse(self._ilogsf, v), w)

    def ilogcdf(self, w: ArrayLike) -> Any:
        """The z with logcdf(z) = w, for w in [-inf, 0] (NaN otherwise)."""
        return _apply(lambda v: self._inverse(self._ilogcdf, v), w)

    def ppf(self, q: ArrayLike) -> Any:
        """Quantile function (inverse cdf), NaN outside [0, 1]."""
        return _apply(lambda v: self._quantile(v, self._ilogcdf, self._ilogsf), q)

    def isf(self, q: ArrayLike) -> Any:
        """Inverse survival function, NaN outside [0, 1]."""
        return _apply(lambda v: self._quantile(v, self._ilogsf, self._ilogcdf), q)

    @staticmethod
    def _inverse(fn: Callable[[Array], Array], w: Array) -> Array:
        valid = w <= 0.0
        out = np.full_like(w, np.nan)
        out[valid] = fn(w[valid])
        return out

    @staticmethod
    def _quantile(q: Array, same: Callable[[Array], Array], other: Callable[[Array], Array]) -> Array:
        out = np.full_like(q, np.nan)
        low, high = (q >= 0.0) & (q <= 0.5), (q > 0.5) & (q <= 1.0)
        out[low] = same(np.log(q[low]))
        out[high] = other(np.log1p(-q[high]))
        return out

    def sample(self, size: int | tuple[int, ...] | None = None, rng: Any = None) -> Any:
        """Draw iid samples: ``size=None`` gives a float, an int or tuple an ndarray.

        ``rng`` is None, an int seed, a SeedSequence or a ``numpy.random.Generator``.
        """
        shape = _check_shape(size)
        gen = check_random_state(rng)
        with np.errstate(all="ignore"):
            out = self._sample(gen, () if shape is None else shape)
        return float(out) if shape is None else np.asarray(out, dtype=float)

    @cached_property
    def width(self) -> float:
        """Characteristic width for quadrature panels: the interquartile range."""
        return float(self.isf(0.25) - self.ppf(0.25))

    def _lipschitz_admissible(self, epsilon: Any, delta: Any) -> tuple[float, float]:
        """(alpha, beta) = (eps/(2 L_s), eps/(2 L_d)) for a pure law (SPEC §2.1, [DERIVED])."""
        eps = check_epsilon(epsilon)
        _require_pure(delta, type(self).__name__)
        assert self.shift_constant is not None and self.dilation_constant is not None
        return eps / (2.0 * self.shift_constant), eps / (2.0 * self.dilation_constant)

    def admissible(self, epsilon: Any, delta: Any = 0.0) -> tuple[float, float]:
        """(alpha, beta) such that the law is (alpha, beta)-admissible for (epsilon, delta).

        Raises NotImplementedError for laws that are not admissible for smooth
        sensitivity (SPEC §2.6: their dilation loss is unbounded in z and there is
        no (epsilon, delta) calibration; use them only with a data-independent scale).
        """
        raise NotImplementedError(
            f"{self!r} is not admissible for smooth sensitivity (SPEC §2.6): use it only with a "
            "data-independent (global-sensitivity) scale")

    def one_sided(self) -> OneSided:
        """The law restricted to z >= 0 and renormalised (symmetric laws only)."""
        raise TypeError(f"{self!r} is not symmetric: one_sided() is defined for symmetric laws only")


class _Symmetric(NoiseDistribution):
    """Symmetric law with density h, built from its folded law |Z| (density 2h on a >= 0).

    Subclasses implement ``_fold_logpdf``, ``_fold_logsf`` (log P[|Z| > a]),
    ``_fold_logcdf`` (log P[|Z| <= a]), ``_fold_sample`` and either
    ``_fold_tail_guess`` (starting point for the generic Newton inversion in
    u = log a) or ``_fold_inv`` itself.
    """

    symmetric: ClassVar[bool] = True

    @abstractmethod
    def _fold_logpdf(self, a: Array) -> Array: ...
    @abstractmethod
    def _fold_logsf(self, a: Array) -> Array: ...
    @abstractmethod
    def _fold_logcdf(self, a: Array) -> Array: ...
    @abstractmethod
    def _fold_sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> Array: ...

    def _fold_tail_guess(self, w: Array) -> Array:
        return np.zeros_like(w)

    def _fold_inv(self, w: Array, upper: bool) -> Array:
        """a >= 0 with log P[|Z| > a] = w (upper) or log P[|Z| <= a] = w (not upper).

        Inverts whichever of the two probabilities is <= 1/2 (full accuracy)."""
        c = _log1mexp(-w)
        ws, wc = (w, c) if upper else (c, w)
        use_sf = ws <= LOG_HALF
        out = np.empty_like(w)
        out[use_sf] = self._fold_newton(ws[use_sf], upper=True)
        out[~use_sf] = self._fold_newton(wc[~use_sf], upper=False)
        return out

    def _fold_newton(self, w: Array, upper: bool) -> Array:
        out = np.full_like(w, _INF if upper else 0.0)
        fin = np.isfinite(w)
        if upper:
            def fun(u: Array) -> tuple[Array, Array]:
                a = np.exp(u)
                ls = self._fold_logsf(a)
                return -ls, np.exp(u + self._fold_logpdf(a) - ls)
            u = _solve_increasing(fun, -w[fin], self._fold_tail_guess(w[fin]))
            big = np.flatnonzero(u > 709.0)  # root beyond the largest float: inf, not DBL_MAX
            if big.size:
                ls = self._fold_logsf(np.exp(u[big]))
                u[big[ls > w[fin][big] * (1.0 - 1e-12)]] = _INF
        else:
            def fun(u: Array) -> tuple[Array, Array]:
                a = np.exp(u)
                lc = self._fold_logcdf(a)
                return lc, np.exp(u + self._fold_logpdf(a) - lc)
            u = _solve_increasing(fun, w[fin], w[fin] - self._fold_logpdf(np.zeros(1))[0])
        out[fin] = np.exp(u)
        return out

    def _logpdf(self, z: Array) -> Array:
        return self._fold_logpdf(np.abs(z)) - LOG2

    def _logsf(self, z: Array) -> Array:
        s = self._fold_logsf(np.abs(z))
        return np.where(z < 0, np.log1p(-0.5 * np.exp(s)), s - LOG2)

    def _logcdf(self, z: Array) -> Array:
        return self._logsf(-z)

    def _ilogsf(self, w: Array) -> Array:
        upper = w <= LOG_HALF  # then z >= 0 and P[|Z| > z] = 2 e^w, else P[|Z| > -z] = 2 (1 - e^w)
        a = self._fold_inv(np.where(upper, w + LOG2, LOG2 + _log1mexp(-w)), upper=True)
        return np.where(upper, a, -a) + 0.0  # no -0.0

    def _ilogcdf(self, w: Array) -> Array:
        return -self._ilogsf(w)

    def _sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> Array:
        return _random_sign(rng, self._fold_sample(rng, shape))

    def one_sided(self) -> OneSided:
        """The law of |Z|: density 2h(z) on z >= 0 (see :class:`OneSided`)."""
        return OneSided(self)


@dataclass(frozen=True)
class OneSided(NoiseDistribution):
    """One-sided version of a symmetric law h: density g(z) = 2h(z) 1[z >= 0].

    cdf G(z) = 2F(z) - 1, logsf = log 2 + logsf_parent, sampler |Z| (SPEC §2.2-2.5,
    YS Def. 12).  Constants and ``admissible`` are the parent's (SPEC §3.1: for a
    one-sided h nonincreasing on [0, inf) the constants are computed on the
    support, where they coincide with the parent's); the one-sided accounting of
    the selection itself is done by the mechanism (SPEC §3.1/§3.2).
    """

    parent: _Symmetric
    support: ClassVar[tuple[float, float]] = (0.0, _INF)

    def __post_init__(self) -> None:
        if not isinstance(self.parent, _Symmetric):
            raise TypeError(f"parent must be a symmetric NoiseDistribution, got {self.parent!r}")

    def _logpdf(self, z: Array) -> Array:
        return np.where(z < 0, -_INF, self.parent._fold_logpdf(np.maximum(z, 0.0)))

    def _logsf(self, z: Array) -> Array:
        return np.where(z < 0, 0.0, self.parent._fold_logsf(np.maximum(z, 0.0)))

    def _logcdf(self, z: Array) -> Array:
        return np.where(z < 0, -_INF, self.parent._fold_logcdf(np.maximum(z, 0.0)))

    def _ilogsf(self, w: Array) -> Array:
        return self.parent._fold_inv(w, upper=True)

    def _ilogcdf(self, w: Array) -> Array:
        return self.parent._fold_inv(w, upper=False)

    def _sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> Array:
        return self.parent._fold_sample(rng, shape)

    def mean_abs(self) -> float:
        return self.parent.mean_abs()

    def var(self) -> float:
        m2, m1 = self.parent.var(), self.parent.mean_abs()
        return m2 - m1 * m1 if math.isfinite(m2) else _INF

    @property
    def analytic_mode(self) -> bool:  # type: ignore[override]
        return self.parent.analytic_mode

    @property
    def shift_constant(self) -> float | None:
        return self.parent.shift_constant

    @property
    def dilation_constant(self) -> float | None:
        return self.parent.dilation_constant

    def admissible(self, epsilon: Any, delta: Any = 0.0, **kwargs: Any) -> tuple[float, float]:
        """Same (alpha, beta) as the parent (keyword options are passed on)."""
        return self.parent.admissible(epsilon, delta, **kwargs)


# ----------------------------------------------------------------------------- Laplace family
@dataclass(frozen=True)
class Laplace(_Symmetric):
    """Standard Laplace: h(z) = e^{-|z|}/2, F(z) = e^z/2 (z < 0), 1 - e^{-z}/2 (z >= 0).

    Sampler ``rng.laplace``; Var = 2.  L_s = 1, dilation not pure (SPEC §2.2).
    ``one_sided()`` is the Exp(1) law (same formulas as :class:`Exponential`,
    but with Laplace's ``admissible``).
    """

    shift_constant: ClassVar[float] = 1.0

    def _fold_logpdf(self, a: Array) -> Array:
        return -a

    def _fold_logsf(self, a: Array) -> Array:
        return -a

    def _fold_logcdf(self, a: Array) -> Array:
        return _log1mexp(a)

    def _fold_inv(self, w: Array, upper: bool) -> Array:
        return -w if upper else -_log1mexp(-w)

    def _fold_sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> Array:
        return rng.standard_exponential(shape)

    def _sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> Array:
        return rng.laplace(size=shape)

    def mean_abs(self) -> float:
        return 1.0

    def var(self) -> float:
        return 2.0

    def admissible(self, epsilon: Any, delta: Any = 0.0, alpha_fraction: Any = 0.5) -> tuple[float, float]:
        """(alpha, beta) from the EXACT sufficient condition of SPEC §2.2 [DERIVED; Duff
        Prop. 2 quoting Bun-Steinke Thm 34, plus errata 26]: noise scale S(x)/alpha with
        S beta-smooth is (epsilon, delta)-DP whenever

            epsilon >= alpha + beta   and   delta >= exp(-(epsilon - alpha + beta) / (e^beta - 1)).

        alpha = alpha_fraction * epsilon; beta is the largest value satisfying both:
        (r + beta)/(e^beta - 1) with r = epsilon - alpha is strictly decreasing in
        beta, so the delta condition is solved by brentq and capped at r, then
        nudged down (nextafter) until ``laplace_smooth_delta`` certifies delta.
        delta must be > 0.  (Not NRS's beta = eps/(2 ln(2/delta)), which fails for
        epsilon >= 20, SPEC errata 30; see :func:`nrs_laplace_parameters`.)
        """
        eps = check_epsilon(epsilon)
        d = _require_approx(delta, "Laplace noise is not pure-admissible (SPEC §2.2)")
        alpha = check_probability_in(alpha_fraction, "alpha_fraction", 0.0, 1.0) * eps
        r, log_l = eps - alpha, math.log(-math.log(d))

        def psi(b: float) -> float:  # log[(r + b)/(e^b - 1)] - log ln(1/delta), decreasing
            log_expm1 = b + math.log1p(-math.exp(-b)) if b > 1.0 else math.log(math.expm1(b))
            return math.log(r + b) - log_expm1 - log_l

        lo = math.log1p(r * math.exp(-log_l))  # r/(e^lo - 1) = ln(1/delta), so psi(lo) > 0
        hi = 2.0 * lo + 1.0
        while psi(hi) >= 0.0:
            hi *= 2.0
        beta = min(optimize.brentq(psi, lo, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps), r)
        for _ in range(64):
            if laplace_smooth_delta(eps, alpha, beta) <= d:
                break
            beta = float(np.nextafter(beta, 0.0))
        return alpha, beta


@dataclass(frozen=True)
class Exponential(OneSided):
    """Standard exponential Exp(1): g(z) = e^{-z}, G(z) = 1 - e^{-z} on z >= 0.

    Sampler ``rng.standard_exponential``; mean 1, Var 1 (PF noise, SPEC §2.2/§2.6).
    It is literally the one-sided Laplace (``OneSided(Laplace())``), but as
    report-noisy-max noise it is not admissible for smooth scales (SPEC §2.6).
    """

    parent: _Symmetric = field(default_factory=Laplace, init=False, repr=False)
    shift_constant: ClassVar[None] = None  # type: ignore[assignment]
    dilation_constant: ClassVar[None] = None  # type: ignore[assignment]

    def admissible(self, epsilon: Any, delta: Any = 0.0, **kwargs: Any) -> tuple[float, float]:
        """Not admissible: raises NotImplementedError (SPEC §2.6)."""
        return NoiseDistribution.admissible(self, epsilon, delta)


def laplace_smooth_delta(epsilon: Any, alpha: Any, beta: Any) -> float:
    """Smallest delta certified by SPEC §2.2's exact condition for Laplace noise of scale
    S(x)/alpha with S beta-smooth: exp(-(epsilon - alpha + beta)/(e^beta - 1)), or 1.0
    when epsilon < alpha + beta (0.0 when beta = 0: fixed scale, pure)."""
    eps, a = check_epsilon(epsilon), check_positive(alpha, "alpha")
    b = check_positive(beta, "beta", allow_zero=True)
    if eps < a + b:
        return 1.0
    if b == 0.0:
        return 0.0
    return math.exp(-(eps - a + b) * math.exp(-b) / -math.expm1(-b))


def nrs_laplace_parameters(epsilon: Any, delta: Any) -> tuple[float, float]:
    """NRS07's Laplace calibration (alpha, beta) = (eps/2, eps/(2 ln(2/delta))).

    WARNING: for reproductions only.  It is NOT a valid (epsilon, delta)
    guarantee in general: with delta = 1e-6 it fails for epsilon >= 20 (SPEC
    §2.2 [NUM nrs_lap.py], errata 30).  Use :meth:`Laplace.admissible`.
    """
    eps = check_epsilon(epsilon)
    d = _require_approx(delta, "Laplace noise is not pure-admissible (SPEC §2.2)")
    return eps / 2.0, eps / (2.0 * math.log(2.0 / d))


# ----------------------------------------------------------------------------- Gumbel
@dataclass(frozen=True)
class Gumbel(NoiseDistribution):
    """Standard Gumbel: h(z) = exp(-z - e^{-z}), F(z) = exp(-e^{-z}).

    Sampler ``rng.gumbel``; Var = pi^2/6.  EM noise (SPEC §2.6); not admissible
    for smooth scales.
    """

    def _logpdf(self, z: Array) -> Array:
        return np.where(z == -_INF, -_INF, -z - np.exp(-z))

    def _logcdf(self, z: Array) -> Array:
        return -np.exp(-z)

    def _logsf(self, z: Array) -> Array:
        return np.where(z > 700.0, -z, _log1mexp(np.exp(-z)))  # log(1 - exp(-e^{-z})) ~ -z - e^{-z}/2

    def _ilogcdf(self, w: Array) -> Array:
        return -np.log(-w)

    def _ilogsf(self, w: Array) -> Array:
        return np.where(w < -700.0, -w, -np.log(-_log1mexp(-w)))

    def _sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> Array:
        return rng.gumbel(size=shape)

    def mean_abs(self) -> float:
        return float(np.euler_gamma + 2.0 * special.exp1(1.0))  # E G + 2 int_1^inf e^{-t}/t dt

    def var(self) -> float:
        return math.pi**2 / 6.0


# ----------------------------------------------------------------------------- Student t
@dataclass(frozen=True)
class StudentT(_Symmetric):
    """Student's t with ``df`` = d degrees of freedom (SPEC §2.4, Bun-Steinke 2019).

    h(z) = (1 + z^2/d)^{-(d+1)/2} / (sqrt(d) B(d/2, 1/2));
    P[|Z| > a] = I_{d/(d+a^2)}(d/2, 1/2) (so F(z) = 1 - I/2 for z >= 0), evaluated
    in log space (accurate far in the tails, e.g. logsf(1e8)).  Sampler
    ``rng.standard_t``; Var = d/(d-2) (d > 2).
    Constants: L_s = (d+1)/(2 sqrt d); L_d = d+1 (Bun-Steinke's constant, used by
    ``admissible``; the tight derived value is max(d, 1), SPEC §2.4/§2.7).
    """

    df: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "df", check_positive(self.df, "df"))

    def _args(self, a: Array) -> tuple[Array, Array, Array, Array]:
        return _beta_args(a / math.sqrt(self.df), 2.0)

    def _fold_logpdf(self, a: Array) -> Array:
        d = self.df
        logx = self._args(a)[2]
        return LOG2 - 0.5 * math.log(d) - special.betaln(d / 2, 0.5) + 0.5 * (d + 1) * logx

    def _fold_logsf(self, a: Array) -> Array:
        x, y, lx, ly = self._args(a)
        return _log_ibeta(self.df / 2, 0.5, x, y, lx, ly)

    def _fold_logcdf(self, a: Array) -> Array:
        x, y, lx, ly = self._args(a)
        return _log_ibeta(0.5, self.df / 2, y, x, ly, lx)

    def _fold_tail_guess(self, w: Array) -> Array:
        lx = _ibeta_tail_logx(w, self.df / 2, 0.5)
        return 0.5 * (math.log(self.df) + _log1mexp(-lx) - lx)

    def _fold_sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> Array:
        return np.abs(rng.standard_t(self.df, size=shape))

    def _sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> Array:
        return rng.standard_t(self.df, size=shape)

    def mean_abs(self) -> float:
        d = self.df
        if d <= 1:
            return _INF
        return float(2.0 * math.sqrt(d) / (d - 1) * math.exp(-special.betaln(d / 2, 0.5)))

    def var(self) -> float:
        return self.df / (self.df - 2) if self.df > 2 else _INF

    @property
    def shift_constant(self) -> float:
        return (self.df + 1) / (2.0 * math.sqrt(self.df))

    @property
    def dilation_constant(self) -> float:
        return self.df + 1.0

    def admissible(self, epsilon: Any, delta: Any = 0.0) -> tuple[float, float]:
        """alpha = eps sqrt(d)/(d+1), beta = eps/(2(d+1)): pure, BS19 Theorem 31
        (eps = (d+1)/(2 sqrt d) |s| + (d+1)|t|), SPEC §2.4.  delta must be 0.

        Requires df >= 1/2 (:data:`MIN_TAIL_EXPONENT`): heavier tails put mass
        beyond the largest double (P[|Z| > 1.8e308] ~ 1.8e308^-df), which the
        sampler cannot draw and the exact law cannot integrate.
        """
        _check_tail_exponent(self.df, "df", self.df)
        return self._lipschitz_admissible(epsilon, delta)


# ----------------------------------------------------------------------------- polynomial tail
@dataclass(frozen=True)
class PolynomialTail(_Symmetric):
    """Polynomial-tail law P_gamma: h(z) = c_gamma / (1 + |z|^gamma), gamma > 1 (SPEC §2.3).

    c_gamma = gamma sin(pi/gamma)/(2 pi) (gamma = 2: 1/pi, 4: sqrt2/pi).
    F(z) = 1/2 + sgn(z)/2 I_{u}(1/gamma, 1 - 1/gamma), u = |z|^gamma/(1+|z|^gamma); the
    upper tail uses P[|Z| > a] = I_{1/(1+a^gamma)}(1 - 1/gamma, 1/gamma) in log space.
    Exact sampler: |Z| = (G1/G2)^{1/gamma}, G1 ~ Gamma(1/gamma), G2 ~ Gamma(1 - 1/gamma),
    random sign (SPEC §2.3 (b)); the small-shape gammas are drawn in log space as
    log Gamma(k+1) - E/k (E ~ Exp(1)), so nothing underflows.
    E|Z| = 1/(2 cos(pi/gamma)) (gamma > 2), Var = sin(pi/gamma)/sin(3 pi/gamma) (gamma > 3).
    Constants: L_s = (gamma-1)^{(gamma-1)/gamma}, L_d = max(1, gamma-1).
    """

    gamma: float

    def __post_init__(self) -> None:
        g = check_finite_float(self.gamma, "gamma")
        if not g > 1.0:
            raise ValueError(f"gamma must be > 1, got {g!r}")
        object.__setattr__(self, "gamma", g)

    @property
    def analytic_mode(self) -> bool:  # type: ignore[override]
        """|z|^gamma is analytic at 0 only for even integer gamma."""
        return self.gamma % 2.0 == 0.0

    @property
    def c_gamma(self) -> float:
        """Normalising constant gamma sin(pi/gamma)/(2 pi)."""
        return self.gamma * math.sin(math.pi / self.gamma) / (2.0 * math.pi)

    def _fold_logpdf(self, a: Array) -> Array:
        return math.log(2.0 * self.c_gamma) + _beta_args(a, self.gamma)[2]

    def _fold_logsf(self, a: Array) -> Array:
        x, y, lx, ly = _beta_args(a, self.gamma)
        return _log_ibeta(1.0 - 1.0 / self.gamma, 1.0 / self.gamma, x, y, lx, ly)

    def _fold_logcdf(self, a: Array) -> Array:
        x, y, lx, ly = _beta_args(a, self.gamma)
        return _log_ibeta(1.0 / self.gamma, 1.0 - 1.0 / self.gamma, y, x, ly, lx)

    def _fold_tail_guess(self, w: Array) -> Array:
        lx = _ibeta_tail_logx(w, 1.0 - 1.0 / self.gamma, 1.0 / self.gamma)
        return (_log1mexp(-lx) - lx) / self.gamma

    def _fold_sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> Array:
        k1, k2 = 1.0 / self.gamma, 1.0 - 1.0 / self.gamma
        out = rng.standard_gamma(k1 + 1.0, shape)
        out /= rng.standard_gamma(k2 + 1.0, shape)
        np.log(out, out=out)
        out -= rng.standard_exponential(shape) / k1
        out += rng.standard_exponential(shape) / k2
        out /= self.gamma
        return np.exp(out, out=out)

    def mean_abs(self) -> float:
        return 1.0 / (2.0 * math.cos(math.pi / self.gamma)) if self.gamma > 2 else _INF

    def var(self) -> float:
        g = self.gamma
        return math.sin(math.pi / g) / math.sin(3 * math.pi / g) if g > 3 else _INF

    @property
    def shift_constant(self) -> float:
        return (self.gamma - 1.0) ** ((self.gamma - 1.0) / self.gamma)

    @property
    def dilation_constant(self) -> float:
        return max(1.0, self.gamma - 1.0)

    def admissible(self, epsilon: Any, delta: Any = 0.0, method: str = "ys") -> tuple[float, float]:
        """(alpha, beta) for pure (epsilon, 0); delta must be 0.

        * ``"ys"``: Yamamoto-Shibuya Thm 6 corrected (SPEC §2.3, errata 1):
          alpha = eps/(2 (gamma-1)^{(gamma-1)/gamma}), beta = eps/(2 max(1, gamma-1)).
        * ``"nrs"``: NRS07 (SPEC §2.3): alpha = beta = eps/(2 (gamma+1)) (conservative).

        Requires gamma >= 3/2 (tail exponent gamma - 1 >= :data:`MIN_TAIL_EXPONENT`, see
        :meth:`StudentT.admissible`).
        """
        _check_tail_exponent(self.gamma - 1.0, "gamma", self.gamma)
        if method == "ys":
            return self._lipschitz_admissible(epsilon, delta)
        if method == "nrs":
            eps = check_epsilon(epsilon)
            _require_pure(delta, "PolynomialTail")
            v = eps / (2.0 * (self.gamma + 1.0))
            return v, v
        raise ValueError(f"method must be 'ys' or 'nrs', got {method!r}")


# ----------------------------------------------------------------------------- Laplace log-normal
@lru_cache(maxsize=16)
def _gh_rule(n: int) -> tuple[Array, Array]:
    """Probabilists' Gauss-Hermite nodes and log weights, with the N(0,1) density divided out
    (so that int exp(G(y)) dy = logsumexp(logw + G(x))).  Underflowed weights are dropped."""
    x, w = special.roots_hermitenorm(n)
    keep = w > 0
    return x[keep], np.log(w[keep]) + 0.5 * x[keep] ** 2


def _q(t: Array) -> Array:
    """t / (e^t - 1), with its limits 1 (t = 0) and 0 (t = inf)."""
    return np.where(t == 0, 1.0, np.where(np.isinf(t), 0.0, t / np.expm1(t)))


@dataclass(frozen=True)
class LaplaceLogNormal(_Symmetric):
    """Laplace log-normal LLN(sigma): Z = X e^{sigma Y}, X ~ Laplace(1), Y ~ N(0,1) indep.

    Source: Bun-Steinke 2019 §3.1.1, SPEC §2.5.

    h(z) = E_Y[e^{-sigma Y} exp(-|z| e^{-sigma Y})]/2,  P[Z > z] = E_Y[exp(-z e^{-sigma Y})]/2 (z >= 0).
    The expectations are computed in log space by a Gauss-Hermite rule (~64 sigma^2 nodes,
    at least 32, at most 2048: accurate to ~1e-13 relative for sigma <= 5)
    re-centred at the maximiser y* of the log-integrand (y* = W(a sigma^2)/sigma for
    the sf, via Lambert W; bisection for the small-a cdf) and scaled by its
    curvature (Laplace-method centring), so the far tails stay accurate too and
    finite out to |z| = 1e300.  Inverses by vectorised safeguarded Newton.
    Sampler: random sign * Exp(1) * exp(sigma N(0,1)) with NumPy's generators.
    E|Z| = e^{sigma^2/2}, Var = 2 e^{2 sigma^2}.  Not pure: it gives zCDP (:meth:`zcdp_rho`).
    """

    sigma: float
    analytic_mode: ClassVar[bool] = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_positive(self.sigma, "sigma"))

    def _quad(self, a: Array, kind: str) -> Array:
        """log E_Y[f(Y)] for finite a >= 0; kind in sf / pdf / cdf (see class docstring)."""
        n = int(min(2048, max(32, 32 * math.ceil(2.0 * self.sigma**2))))  # ~64 sigma^2 nodes
        x, logw = _gh_rule(n)
        out, chunk = np.empty_like(a), max(1, 2**19 // n)
        for i in range(0, a.size, chunk):
            out[i:i + chunk] = self._quad_chunk(a[i:i + chunk], kind, x, logw)
        return out

    def _quad_chunk(self, a: Array, kind: str, x: Array, logw: Array) -> Array:
        s, la = self.sigma, np.log(a)
        if kind == "sf":  # maximise -y^2/2 - a e^{-s y}
            c = _lambertw_exp(la + 2 * math.log(s)) / s
            curv = 1.0 + s * c
        elif kind == "pdf":  # maximise -y^2/2 - s y - a e^{-s y}
            c = _lambertw_exp(la + 2 * math.log(s) + s * s) / s - s
            curv = 1.0 + s * (c + s)
        else:  # maximise -y^2/2 + log(1 - exp(-a e^{-s y})): root of -y - s q(t) in [-s, 0]
            lo, hi = np.full_like(a, -s), np.zeros_like(a)
            for _ in range(30):
                mid = 0.5 * (lo + hi)
                pos = -mid - s * _q(np.exp(la - s * mid)) > 0
                lo, hi = np.where(pos, mid, lo), np.where(pos, hi, mid)
            c = 0.5 * (lo + hi)
            t = np.exp(la - s * c)
            q = _q(t)
            curv = 1.0 + s * s * q * np.maximum(t + q - 1.0, 0.0)
        scale = 1.0 / np.sqrt(curv)
        y = c[:, None] + scale[:, None] * x
        t = np.exp(la[:, None] - s * y)
        g = -t if kind == "sf" else (-s * y - t if kind == "pdf" else _log1mexp(t))
        g += logw - 0.5 * y * y - 0.5 * math.log(2.0 * math.pi)
        m = np.max(g, axis=1)
        m = np.where(np.isfinite(m), m, 0.0)
        return np.log(scale) + m + np.log(np.sum(np.exp(g - m[:, None]), axis=1))

    def _fold_eval(self, a: Array, kind: str, at_inf: float) -> Array:
        out = np.where(np.isnan(a), np.nan, at_inf)
        fin = np.isfinite(a)
        out[fin] = self._quad(a[fin], kind)
        return out

    def _fold_logpdf(self, a: Array) -> Array:
        return self._fold_eval(a, "pdf", -_INF)

    def _fold_logsf(self, a: Array) -> Array:
        return self._fold_eval(a, "sf", -_INF)

    def _fold_logcdf(self, a: Array) -> Array:
        ls = self._fold_logsf(a)
        out = _log1mexp(-ls)
        direct = ls > LOG_HALF  # cdf < 1/2: integrate 1 - exp(-a e^{-sigma y}) directly
        out[direct] = self._fold_eval(a[direct], "cdf", 0.0)
        return out

    def _fold_tail_guess(self, w: Array) -> Array:
        # Laplace method: log sf ~ -y*^2/2 - y*/sigma with a = (y*/sigma) e^{sigma y*}
        s = self.sigma
        y = -2.0 * w / (1.0 / s + np.sqrt(1.0 / s**2 - 2.0 * w))
        return np.log(np.maximum(y, 1e-300) / s) + s * y

    def _fold_sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> Array:
        out = rng.standard_normal(shape)
        out *= self.sigma
        np.exp(out, out=out)
        out *= rng.standard_exponential(shape)
        return out

    def mean_abs(self) -> float:
        return math.exp(self.sigma**2 / 2.0)

    def var(self) -> float:
        return 2.0 * math.exp(2.0 * self.sigma**2)

    def zcdp_rho(self, alpha: Any, beta: Any) -> float:
        """rho = (beta/sigma + e^{3 sigma^2/2} alpha)^2 / 2: noise scale S(x)/alpha with S
        beta-smooth is rho-zCDP (BS19 §3.1.1, SPEC §2.5; one coordinate)."""
        a = check_positive(alpha, "alpha")
        b = check_positive(beta, "beta", allow_zero=True)
        return 0.5 * (b / self.sigma + math.exp(1.5 * self.sigma**2) * a) ** 2

    def admissible(self, epsilon: Any, delta: Any = 0.0) -> tuple[float, float]:
        """(alpha, beta) giving (epsilon, delta)-DP through zCDP (SPEC §2.5); delta > 0.

        rho = dp_to_zcdp(epsilon, delta), eps_c = sqrt(2 rho), split in halves between
        the t- and s-terms of eps_c = beta/sigma + e^{3 sigma^2/2} alpha:
        beta = sigma eps_c/2, alpha = e^{-3 sigma^2/2} eps_c/2 (so zcdp_rho(alpha, beta) = rho).
        """
        eps = check_epsilon(epsilon)
        d = _require_approx(delta, "LaplaceLogNormal noise is not pure; it gives zCDP (SPEC §2.5)")
        eps_c = math.sqrt(2.0 * dp_to_zcdp(eps, d))
        return math.exp(-1.5 * self.sigma**2) * eps_c / 2.0, self.sigma * eps_c / 2.0

    @staticmethod
    def optimal_sigma(epsilon_c: Any, beta: Any) -> float:
        """Variance-optimal sigma for eps_c = t/sigma + e^{3 sigma^2/2} s with t = beta (SPEC §2.5):
        the root of 5 (eps/t) sigma^3 - 5 sigma^2 - 1 = 0 in (t/eps, max(2t/eps, 1/2)],
        solved as x^2 (x - 1) = k^2/5 with x = k sigma, k = eps/t (no cancellation)."""
        k = check_epsilon(epsilon_c, "epsilon_c") / check_positive(beta, "beta")
        x = optimize.brentq(lambda v: v * v * (v - 1.0) - k * k / 5.0, 1.0, max(2.0, k / 2.0),
                            xtol=1e-300, rtol=4 * np.finfo(float).eps)
        return x / k


def zcdp_to_dp(rho: Any, delta: Any) -> float:
    """rho-zCDP => (rho + 2 sqrt(rho ln(1/delta)), delta)-DP (SPEC §2.5)."""
    r = check_positive(rho, "rho", allow_zero=True)
    d = _require_approx(delta, "zCDP converts to (epsilon, delta)-DP only for delta > 0")
    return r + 2.0 * math.sqrt(r * -math.log(d))


def dp_to_zcdp(epsilon: Any, delta: Any) -> float:
    """Largest rho with rho + 2 sqrt(rho ln(1/delta)) <= epsilon:
    rho = (sqrt(L + eps) - sqrt(L))^2 = (eps / (sqrt(L + eps) + sqrt(L)))^2, L = ln(1/delta)."""
    eps = check_epsilon(epsilon)
    L = -math.log(_require_approx(delta, "zCDP converts to (epsilon, delta)-DP only for delta > 0"))
    return (eps / (math.sqrt(L + eps) + math.sqrt(L))) ** 2
