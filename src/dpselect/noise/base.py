"""The noise-law interface :class:`NoiseDistribution`.

Symmetric laws (built from their folded law |Z|) and their one-sided versions
(:class:`~dpselect.noise.OneSided`) are in :mod:`dpselect.noise._symmetric`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from functools import cached_property
from typing import ClassVar, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpselect._params import Rule, validate_fields
from dpselect._validation import check_epsilon, check_random_state
from dpselect.typing import SeedLike

from .._docstrings import fill_doc
from ._special import _INF, Array, _apply, _check_shape, _require_pure

#: What the evaluation methods return: a NumPy float for a scalar argument, else an array.
Values = NDArray[np.float64]


class NoiseDistribution(ABC):
    """Abstract standard noise law (location 0, unit scale).

    Subclasses implement the ``_``-primitives on 1-D float arrays; the public methods
    add conversion, vectorisation and warning-free evaluation.  ``pdf = exp(logpdf)``,
    ``cdf = exp(logcdf)``, ``sf = exp(logsf)``; ``ppf``/``isf`` go through
    ``ilogcdf``/``ilogsf`` on the side where the probability is at most 1/2 (full
    relative accuracy).  Every evaluation method takes a scalar or an array and returns
    a NumPy float or a float64 array of the same shape.
    """

    #: One rule per constructor parameter (checked by ``__post_init__`` in the dataclass laws).
    _parameter_constraints: ClassVar[dict[str, Rule]] = {}

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
        """Return E|Z|.

        Returns
        -------
        float
            E|Z| (``inf`` when infinite).
        """

    @abstractmethod
    def var(self) -> float:
        """Return Var Z.

        Returns
        -------
        float
            Var Z (``inf`` when infinite).
        """

    def __post_init__(self) -> None:
        """Check the dataclass fields against :attr:`_parameter_constraints`."""
        validate_fields(self, self._parameter_constraints)

    def logpdf(self, z: ArrayLike) -> Values:
        """Return the log density; ``-inf`` outside the support.

        Parameters
        ----------
        z : array_like
            Points (any shape).

        Returns
        -------
        numpy.ndarray or numpy.float64
            log h(z), shaped like ``z``.
        """
        return _apply(self._logpdf, z)

    def pdf(self, z: ArrayLike) -> Values:
        """Return the density.

        Parameters
        ----------
        z : array_like
            Points (any shape).

        Returns
        -------
        numpy.ndarray or numpy.float64
            h(z), shaped like ``z``.
        """
        return _apply(lambda v: np.exp(self._logpdf(v)), z)

    def logcdf(self, z: ArrayLike) -> Values:
        """Return log P[Z <= z].

        Parameters
        ----------
        z : array_like
            Points (any shape).

        Returns
        -------
        numpy.ndarray or numpy.float64
            log F(z), shaped like ``z``.
        """
        return _apply(self._logcdf, z)

    def cdf(self, z: ArrayLike) -> Values:
        """Return P[Z <= z].

        Parameters
        ----------
        z : array_like
            Points (any shape).

        Returns
        -------
        numpy.ndarray or numpy.float64
            F(z), shaped like ``z``.
        """
        return _apply(lambda v: np.exp(self._logcdf(v)), z)

    def logsf(self, z: ArrayLike) -> Values:
        """Return log P[Z > z].

        Parameters
        ----------
        z : array_like
            Points (any shape).

        Returns
        -------
        numpy.ndarray or numpy.float64
            log(1 - F(z)), shaped like ``z``.
        """
        return _apply(self._logsf, z)

    def sf(self, z: ArrayLike) -> Values:
        """Return P[Z > z].

        Parameters
        ----------
        z : array_like
            Points (any shape).

        Returns
        -------
        numpy.ndarray or numpy.float64
            1 - F(z), shaped like ``z``.
        """
        return _apply(lambda v: np.exp(self._logsf(v)), z)

    def ilogsf(self, w: ArrayLike) -> Values:
        """Return the z with logsf(z) = w.

        Parameters
        ----------
        w : array_like
            Log-probabilities in [-inf, 0] (any shape).

        Returns
        -------
        numpy.ndarray or numpy.float64
            z, shaped like ``w`` (NaN where w > 0).
        """
        return _apply(lambda v: self._inverse(self._ilogsf, v), w)

    def ilogcdf(self, w: ArrayLike) -> Values:
        """Return the z with logcdf(z) = w.

        Parameters
        ----------
        w : array_like
            Log-probabilities in [-inf, 0] (any shape).

        Returns
        -------
        numpy.ndarray or numpy.float64
            z, shaped like ``w`` (NaN where w > 0).
        """
        return _apply(lambda v: self._inverse(self._ilogcdf, v), w)

    def ppf(self, q: ArrayLike) -> Values:
        """Return the quantile function (inverse cdf).

        Parameters
        ----------
        q : array_like
            Probabilities in [0, 1] (any shape).

        Returns
        -------
        numpy.ndarray or numpy.float64
            F^{-1}(q), shaped like ``q`` (NaN outside [0, 1]).
        """
        return _apply(lambda v: self._quantile(v, self._ilogcdf, self._ilogsf), q)

    def isf(self, q: ArrayLike) -> Values:
        """Return the inverse survival function.

        Parameters
        ----------
        q : array_like
            Probabilities in [0, 1] (any shape).

        Returns
        -------
        numpy.ndarray or numpy.float64
            The z with P[Z > z] = q, shaped like ``q`` (NaN outside [0, 1]).
        """
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

    @overload
    def sample(self, size: None = None, rng: SeedLike = None) -> float: ...
    @overload
    def sample(self, size: int | tuple[int, ...], rng: SeedLike = None) -> NDArray[np.float64]: ...

    def sample(self, size: int | tuple[int, ...] | None = None, rng: SeedLike = None) -> float | NDArray[np.float64]:
        """Draw iid samples with NumPy's native generators.

        Parameters
        ----------
        size : int, tuple of int or None, default=None
            None for one draw, else the shape of the array of draws.
        rng : None, int, Generator, SeedSequence or RandomState, default=None
            The randomness (a seed reproduces the draws).

        Returns
        -------
        float or numpy.ndarray
            One float for ``size=None``, else a float64 array of shape ``size``.
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

    def _lipschitz_admissible(self, epsilon: float, delta: float) -> tuple[float, float]:
        """(alpha, beta) = (eps/(2 L_s), eps/(2 L_d)) for a pure law (mathematics §2.1, [DERIVED])."""
        eps = check_epsilon(epsilon)
        _require_pure(delta, type(self).__name__)
        assert self.shift_constant is not None and self.dilation_constant is not None
        return eps / (2.0 * self.shift_constant), eps / (2.0 * self.dilation_constant)

    @fill_doc
    def admissible(self, epsilon: float, delta: float = 0.0) -> tuple[float, float]:
        """Return (alpha, beta) such that the law is (alpha, beta)-admissible for (epsilon, delta).

        Admissibility (mathematics §2.1) is a property of the noise; the neighbour relation
        is that of the smooth bound the mechanism uses.

        %(smooth_target)s
            The target delta, in [0, 1).

        %(alpha_beta)s

        Raises
        ------
        NotImplementedError
            For laws that are not admissible for smooth sensitivity (mathematics §2.6:
            their dilation loss is unbounded in z and there is no (epsilon, delta)
            calibration; use them only with a data-independent scale).
        """
        raise NotImplementedError(
            f"{self!r} is not admissible for smooth sensitivity (mathematics §2.6): use it only with a "
            "data-independent (global-sensitivity) scale"
        )

    def one_sided(self) -> NoiseDistribution:
        """Return the law restricted to z >= 0 and renormalised (symmetric laws only).

        Returns
        -------
        NoiseDistribution
            The one-sided law (:class:`~dpselect.noise.OneSided`).

        Raises
        ------
        TypeError
            If the law is not symmetric.
        """
        raise TypeError(f"{self!r} is not symmetric: one_sided() is defined for symmetric laws only")
