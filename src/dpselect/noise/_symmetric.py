"""Symmetric noise laws through their folded law |Z| (``_Symmetric``) and their one-sided versions.

:class:`OneSided` is the law restricted to z >= 0 and renormalised (mathematics §2.2-§2.5).
"""

from __future__ import annotations

import math
from abc import abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpselect._params import Rule

from .._docstrings import fill_doc
from ._special import _INF, LOG2, LOG_HALF, Array, _log1mexp, _random_sign, _solve_increasing
from .base import NoiseDistribution


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
        """Return the a >= 0 with log P[|Z| > a] = w (upper) or log P[|Z| <= a] = w (not upper).

        Inverts whichever of the two probabilities is <= 1/2 (full accuracy).
        """
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
        """Return the law of |Z|: density 2h(z) on z >= 0 (see :class:`OneSided`).

        Returns
        -------
        OneSided
            The one-sided law.
        """
        return OneSided(self)


def _symmetric_parent(value: Any, name: str) -> _Symmetric:
    if not isinstance(value, _Symmetric):
        raise TypeError(f"{name} must be a symmetric NoiseDistribution, got {value!r}")
    return value


@dataclass(frozen=True)
class OneSided(NoiseDistribution):
    """One-sided version of a symmetric law h: density g(z) = 2h(z) 1[z >= 0].

    cdf G(z) = 2F(z) - 1, logsf = log 2 + logsf_parent, sampler |Z| (mathematics §2.2-2.5,
    YS Def. 12).  Constants and ``admissible`` are the parent's (mathematics §3.1: for a
    one-sided h nonincreasing on [0, inf) the constants are computed on the
    support, where they coincide with the parent's); the one-sided accounting of
    the selection itself is done by the mechanism (mathematics §3.1/§3.2).

    Parameters
    ----------
    parent : NoiseDistribution
        A symmetric law (Laplace, StudentT, LaplaceLogNormal, PolynomialTail).

    Examples
    --------
    >>> from dpselect.noise import Laplace
    >>> float(Laplace().one_sided().cdf(1.0)) == float(1 - np.exp(-1.0))
    True
    """

    parent: _Symmetric
    support: ClassVar[tuple[float, float]] = (0.0, _INF)
    _parameter_constraints: ClassVar[dict[str, Rule]] = {
        "parent": Rule("a symmetric NoiseDistribution", check=_symmetric_parent)
    }

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
        """Return E|Z|, the parent's.

        Returns
        -------
        float
            E|Z| (``inf`` when infinite).
        """
        return self.parent.mean_abs()

    def var(self) -> float:
        """Return Var |Z| = E Z^2 - (E|Z|)^2 of the parent.

        Returns
        -------
        float
            The variance (``inf`` when infinite).
        """
        m2, m1 = self.parent.var(), self.parent.mean_abs()
        return m2 - m1 * m1 if math.isfinite(m2) else _INF

    @property
    def analytic_mode(self) -> bool:  # type: ignore[override]
        """Whether the parent's density is analytic on each side of 0."""
        return self.parent.analytic_mode

    @property
    def log_concave(self) -> bool:  # type: ignore[override]
        """Whether the parent's density is log-concave."""
        return self.parent.log_concave

    @property
    def tail_exponent(self) -> float:  # type: ignore[override]
        """The parent's tail exponent kappa."""
        return self.parent.tail_exponent

    @property
    def right_sector(self) -> float:  # type: ignore[override]
        """The parent's folded-law sector (:attr:`NoiseDistribution.right_sector`)."""
        return self.parent.fold_sector

    @property
    def shift_constant(self) -> float | None:  # type: ignore[override]
        """The parent's L_s (mathematics §2.1)."""
        return self.parent.shift_constant

    @property
    def dilation_constant(self) -> float | None:  # type: ignore[override]
        """The parent's L_d (mathematics §2.1)."""
        return self.parent.dilation_constant

    @fill_doc
    def admissible(self, epsilon: float, delta: float = 0.0, **kwargs: float | str) -> tuple[float, float]:
        """Return the parent's (alpha, beta) (mathematics §3.1).

        %(smooth_target)s
            The target delta, in [0, 1).
        **kwargs : float or str
            The parent's keyword options (``alpha_fraction``, ``method``), passed on.

        %(alpha_beta)s
        """
        return self.parent.admissible(epsilon, delta, **kwargs)
