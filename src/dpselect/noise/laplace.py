"""Laplace, exponential (one-sided Laplace) and Gumbel noise (mathematics §2.2, §2.6)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import special

from dpselect._params import Rule
from dpselect._validation import check_delta_positive, check_epsilon, check_probability_in

from .._docstrings import fill_doc
from ..accounting import laplace_smooth_beta
from ._special import _INF, Array, _log1mexp
from ._symmetric import OneSided, _Symmetric
from .base import NoiseDistribution


@dataclass(frozen=True)
class Laplace(_Symmetric):
    """Standard Laplace: h(z) = e^{-|z|}/2, F(z) = e^z/2 (z < 0), 1 - e^{-z}/2 (z >= 0).

    Sampler ``rng.laplace``; Var = 2.  L_s = 1, dilation not pure (mathematics §2.2).
    ``one_sided()`` is the Exp(1) law (same formulas as :class:`Exponential`,
    but with Laplace's ``admissible``).  It has no parameters.

    See Also
    --------
    Exponential : Standard exponential Exp(1): g(z) = e^{-z}, G(z) = 1 - e^{-z} on z >= 0
    Gumbel : Standard Gumbel: h(z) = exp(-z - e^{-z}), F(z) = exp(-e^{-z})
    GridLaplace : Exact discrete Laplace release on the grid lambda Z for a statistic of sensitivity Delta

    Examples
    --------
    >>> round(float(Laplace().cdf(0.0)), 3), Laplace().var()
    (0.5, 2.0)
    """

    _parameter_constraints: ClassVar[dict[str, Rule]] = {}
    shift_constant: ClassVar[float] = 1.0
    log_concave: ClassVar[bool] = True

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
        """Return E|Z| = 1.

        Returns
        -------
        float
            1.0.
        """
        return 1.0

    def var(self) -> float:
        """Return Var Z = 2.

        Returns
        -------
        float
            2.0.
        """
        return 2.0

    @fill_doc
    def admissible(self, epsilon: float, delta: float = 0.0, alpha_fraction: float = 0.5) -> tuple[float, float]:
        """Return (alpha, beta) from the exact sufficient condition of mathematics §2.2.

        [DERIVED; Duff Prop. 2 quoting Bun-Steinke Thm 34, plus mathematics §7 item 26]: noise
        scale S(x)/alpha with S beta-smooth is (epsilon, delta)-DP whenever

            epsilon >= alpha + beta   and   delta >= exp(-(epsilon - alpha + beta) / (e^beta - 1)).

        alpha = alpha_fraction * epsilon; beta is the largest value satisfying both:
        (r + beta)/(e^beta - 1) with r = epsilon - alpha is strictly decreasing in
        beta, so the delta condition is solved by brentq and capped at r, then
        nudged down (nextafter) until ``laplace_smooth_delta`` certifies delta
        (:func:`dpselect.accounting.laplace_smooth_beta`).
        delta must be > 0.  (Not NRS's beta = eps/(2 ln(2/delta)), which fails for
        epsilon >= 20, mathematics §7 item 30; see :func:`nrs_laplace_parameters`.)

        %(smooth_target)s
            The target delta, in (0, 1): must be > 0.
        alpha_fraction : float, default=0.5
            alpha = alpha_fraction * epsilon, in (0, 1).

        %(alpha_beta)s
        """
        eps = check_epsilon(epsilon)
        d = check_delta_positive(delta, "Laplace noise is not pure-admissible (mathematics §2.2)")
        alpha = check_probability_in(alpha_fraction, "alpha_fraction", 0.0, 1.0) * eps
        return alpha, laplace_smooth_beta(eps, d, alpha)


@dataclass(frozen=True, init=False, repr=False)
class Exponential(OneSided):
    """Standard exponential Exp(1): g(z) = e^{-z}, G(z) = 1 - e^{-z} on z >= 0.

    Sampler ``rng.standard_exponential``; mean 1, Var 1 (PF noise, mathematics §2.2/§2.6).
    It is literally the one-sided Laplace (``OneSided(Laplace())``), but as
    report-noisy-max noise it is not admissible for smooth scales (mathematics §2.6).
    It has no parameters.

    See Also
    --------
    Gumbel : Standard Gumbel: h(z) = exp(-z - e^{-z}), F(z) = exp(-e^{-z})
    Laplace : Standard Laplace: h(z) = e^{-|z|}/2, F(z) = e^z/2 (z < 0), 1 - e^{-z}/2 (z >= 0)
    exponential_weights_batch : Return n exact draws of (g, o): P ∝ e^{-nums_g/den}, o uniform below counts_g

    Examples
    --------
    >>> Exponential().mean_abs(), Exponential().var()
    (1.0, 1.0)
    """

    _parameter_constraints: ClassVar[dict[str, Rule]] = {}
    shift_constant: ClassVar[None] = None
    dilation_constant: ClassVar[None] = None

    def __init__(self) -> None:
        object.__setattr__(self, "parent", Laplace())

    def __repr__(self) -> str:
        return "Exponential()"

    def admissible(self, epsilon: float, delta: float = 0.0, **kwargs: float | str) -> tuple[float, float]:
        """Not admissible: raises NotImplementedError (mathematics §2.6).

        Parameters
        ----------
        epsilon : float
            The target epsilon (unused).
        delta : float, default=0.0
            The target delta (unused).
        **kwargs : float or str
            Ignored (the signature of :meth:`OneSided.admissible`).

        Returns
        -------
        tuple of (float, float)
            Never: it raises.

        Raises
        ------
        NotImplementedError
            Always.
        """
        return NoiseDistribution.admissible(self, epsilon, delta)


# ----------------------------------------------------------------------------- Gumbel
@dataclass(frozen=True)
class Gumbel(NoiseDistribution):
    """Standard Gumbel: h(z) = exp(-z - e^{-z}), F(z) = exp(-e^{-z}).

    Sampler ``rng.gumbel``; Var = pi^2/6.  EM noise (mathematics §2.6); not admissible
    for smooth scales.  It has no parameters.

    See Also
    --------
    Exponential : Standard exponential Exp(1): g(z) = e^{-z}, G(z) = 1 - e^{-z} on z >= 0
    Laplace : Standard Laplace: h(z) = e^{-|z|}/2, F(z) = e^z/2 (z < 0), 1 - e^{-z}/2 (z >= 0)

    Examples
    --------
    >>> round(Gumbel().var(), 4)
    1.6449
    """

    _parameter_constraints: ClassVar[dict[str, Rule]] = {}

    log_concave: ClassVar[bool] = True
    analytic_strip: ClassVar[float] = _INF  # log f and log F are entire

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
        """Return E|Z| = gamma_E + 2 E_1(1).

        Returns
        -------
        float
            E|Z|.
        """
        return float(np.euler_gamma + 2.0 * special.exp1(1.0))  # E G + 2 int_1^inf e^{-t}/t dt

    def var(self) -> float:
        """Return Var Z = pi^2/6.

        Returns
        -------
        float
            pi^2/6.
        """
        return math.pi**2 / 6.0
