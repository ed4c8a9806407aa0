"""The noise-law interface: :class:`NoiseDistribution`, symmetric laws through their
folded law |Z| (``_Symmetric``) and their one-sided versions (:class:`OneSided`)."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from dpselect._validation import check_epsilon, check_random_state

from ._special import (
    _INF,
    LOG2,
    LOG_HALF,
    Array,
    _apply,
    _check_shape,
    _log1mexp,
    _random_sign,
    _require_pure,
    _solve_increasing,
)


class NoiseDistribution(ABC):
    """Abstract standard noise law.  Subclasses implement the ``_``-primitives on
    1-D float arrays; the public methods add conversion, vectorisation and
    warning-free evaluation.  ``pdf = exp(logpdf)``, ``cdf = exp(logcdf)``,
    ``sf = exp(logsf)``; ``ppf``/``isf`` go through ``ilogcdf``/``ilogsf`` on the
    side where the probability is at most 1/2 (full relative accuracy)."""

    support: ClassVar[tuple[float, float]] = (-_INF, _INF)
    symmetric: ClassVar[bool] = False
    #: L_s of mathematics §2.1: privacy loss per noise unit of shift (None: not pure).
    shift_constant: ClassVar[float | None] = None
    #: L_d of mathematics §2.1: privacy loss per unit of log-scale change (None: not pure).
    dilation_constant: ClassVar[float | None] = None
    #: Whether the density is analytic on each side of the mode 0 (quadrature needs no
    #: geometric refinement towards the scores; False for |z|^gamma cusps and LLN).
    analytic_mode: ClassVar[bool] = True
    #: Whether the density is log-concave (Laplace, Gumbel, exponential): then
    #: f(G + y)/f(G) <= f(y)/f(0), which lets quadrature cut the upper tail early.
    log_concave: ClassVar[bool] = False
    #: s > 0 if the density and log-CDF are analytic in the strip |Im z| < s (inf: entire),
    #: 0 otherwise (kinks, support edges): quadrature then needs no breakpoint at the scores.
    analytic_strip: ClassVar[float] = 0.0
    #: kappa with P[|Z| > z] ~ z^-kappa (inf for tails lighter than every power).
    tail_exponent: ClassVar[float] = _INF
    #: theta > 0 if the density and log-CDF are analytic on the sector {z != 0: |arg z| < theta}
    #: (0: not declared): scores far below the integration range are then replaced by
    #: Chebyshev points (quadrature, mathematics §13).
    right_sector: ClassVar[float] = 0.0

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
        """(alpha, beta) = (eps/(2 L_s), eps/(2 L_d)) for a pure law (mathematics §2.1, [DERIVED])."""
        eps = check_epsilon(epsilon)
        _require_pure(delta, type(self).__name__)
        assert self.shift_constant is not None and self.dilation_constant is not None
        return eps / (2.0 * self.shift_constant), eps / (2.0 * self.dilation_constant)

    def admissible(self, epsilon: Any, delta: Any = 0.0) -> tuple[float, float]:
        """(alpha, beta) such that the law is (alpha, beta)-admissible for (epsilon, delta).

        Raises NotImplementedError for laws that are not admissible for smooth
        sensitivity (mathematics §2.6: their dilation loss is unbounded in z and there is
        no (epsilon, delta) calibration; use them only with a data-independent scale).
        """
        raise NotImplementedError(
            f"{self!r} is not admissible for smooth sensitivity (mathematics §2.6): use it only with a "
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
    #: :attr:`NoiseDistribution.right_sector` of the folded law |Z| (density 2h, cdf 2F - 1).
    fold_sector: ClassVar[float] = 0.0

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

    cdf G(z) = 2F(z) - 1, logsf = log 2 + logsf_parent, sampler |Z| (mathematics §2.2-2.5,
    YS Def. 12).  Constants and ``admissible`` are the parent's (mathematics §3.1: for a
    one-sided h nonincreasing on [0, inf) the constants are computed on the
    support, where they coincide with the parent's); the one-sided accounting of
    the selection itself is done by the mechanism (mathematics §3.1/§3.2).
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
    def log_concave(self) -> bool:  # type: ignore[override]
        return self.parent.log_concave

    @property
    def tail_exponent(self) -> float:  # type: ignore[override]
        return self.parent.tail_exponent

    @property
    def right_sector(self) -> float:  # type: ignore[override]
        return self.parent.fold_sector

    @property
    def shift_constant(self) -> float | None:  # type: ignore[override]
        return self.parent.shift_constant

    @property
    def dilation_constant(self) -> float | None:  # type: ignore[override]
        return self.parent.dilation_constant

    def admissible(self, epsilon: Any, delta: Any = 0.0, **kwargs: Any) -> tuple[float, float]:
        """Same (alpha, beta) as the parent (keyword options are passed on)."""
        return self.parent.admissible(epsilon, delta, **kwargs)
