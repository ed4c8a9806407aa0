"""The law of a numeric release's error, before any budget is spent.

:class:`ErrorDistribution` is the law of E = A(x) - f(x) = scale * Z for a
smooth-sensitivity release A(x) = f(x) + (S(x)/alpha') Z
(:class:`~dpselect.mechanisms.release.SmoothSensitivityRelease`), and
:func:`error_distribution` builds it for a release and a sensitivity.  It
depends on the data only through S(x): publishing it is not private; it is
for the analyst's own planning (on data they may look at, or public proxies).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Literal, overload

import numpy as np

from .._docstrings import fill_doc
from .._params import SEED, SENSITIVITY, SIZE, Rule, instance_of, positive, validate_fields, validate_params
from .._validation import as_real_array, check_finite_float, check_probability_in, check_random_state, check_real
from ..mechanisms import SmoothSensitivityRelease
from ..noise import NoiseDistribution
from ..typing import ArrayLike, SeedLike
from ._error_integrals import clipped_abs_error, shifted_abs_error

__all__ = ["ErrorDistribution", "error_distribution"]


def _probabilities(q: ArrayLike) -> np.ndarray:
    q = as_real_array(q, "q")
    if np.isnan(q).any() or (q < 0).any() or (q > 1).any():
        raise ValueError("q must be in [0, 1]")
    return q


def _out(arr: np.ndarray) -> float | np.ndarray:
    arr = np.asarray(arr, dtype=np.float64)
    return float(arr) if arr.ndim == 0 else arr


@dataclass(frozen=True)
@fill_doc
class ErrorDistribution:
    """Law of the release error E = A(x) - f(x) = scale * Z (scaled, symmetric noise).

    Computable before any privacy budget is spent (it depends on the data
    only through S(x), so *publishing* it is not private -- it is for the
    analyst's own planning on data they may look at, or on public proxies).

    Parameters
    ----------
    noise : NoiseDistribution
        The standard noise law h (a :mod:`dpselect.noise` object).
    scale : float
        S(x) / alpha'.

    %(error_example)s
    >>> dist.expected_abs_error(), round(dist.quantile(0.5), 4)   # 2 E|Z|; 2 ln 2
    (2.0, 1.3863)
    """

    noise: NoiseDistribution
    scale: float

    _parameter_constraints: ClassVar[dict[str, Rule]] = {
        "noise": instance_of(NoiseDistribution, description="a noise distribution of dpselect.noise"),
        "scale": positive(allow_zero=True, allow_inf=True),
    }

    def __post_init__(self) -> None:
        validate_fields(self, self._parameter_constraints)

    @property
    def mean_abs_noise(self) -> float:
        """E|Z| of the standard law (inf when infinite, e.g. polynomial gamma <= 2)."""
        return float(self.noise.mean_abs())

    @fill_doc
    def pdf(self, t: ArrayLike) -> float | np.ndarray:
        """Density of the error at t: h(t/scale)/scale.

        %(error_at_t)s
            The density (a float for scalar t).

        %(error_example)s
        >>> dist.pdf(0.0)   # 1 / (2 * scale)
        0.25
        """
        t = as_real_array(t, "t")
        return _out(np.asarray(self.noise.pdf(t / self.scale)) / self.scale)

    @fill_doc
    def logpdf(self, t: ArrayLike) -> float | np.ndarray:
        """Log density of the error at t: log h(t/scale) - log scale.

        %(error_at_t)s
            The log density (a float for scalar t).

        %(error_example)s
        >>> round(dist.logpdf(0.0), 6)
        -1.386294
        """
        t = as_real_array(t, "t")
        return _out(np.asarray(self.noise.logpdf(t / self.scale)) - math.log(self.scale))

    @fill_doc
    def cdf(self, t: ArrayLike) -> float | np.ndarray:
        """Distribution function P(E <= t).

        %(error_at_t)s
            P(E <= t) (a float for scalar t).

        %(error_example)s
        >>> dist.cdf([0.0, 2.0]).round(4)
        array([0.5   , 0.8161])
        """
        t = as_real_array(t, "t")
        return _out(self.noise.cdf(t / self.scale))

    @fill_doc
    def sf(self, t: ArrayLike) -> float | np.ndarray:
        """Survival function P(E > t).

        %(error_at_t)s
            P(E > t) (a float for scalar t).

        %(error_example)s
        >>> round(dist.sf(2.0), 4)   # e^-1 / 2
        0.1839
        """
        t = as_real_array(t, "t")
        return _out(self.noise.sf(t / self.scale))

    @fill_doc
    def ppf(self, q: ArrayLike) -> float | np.ndarray:
        """Quantile function of the (signed) error.

        %(error_at_q)s
            The t with P(E <= t) = q (a float for scalar q).

        %(error_example)s
        >>> dist.ppf([0.25, 0.75]).round(4)   # -+ 2 ln 2
        array([-1.3863,  1.3863])
        """
        q = _probabilities(q)
        return _out(self.scale * np.asarray(self.noise.ppf(q)))

    @fill_doc
    def quantile(self, q: ArrayLike) -> float | np.ndarray:
        """q-quantile of the absolute error |E| (the noise is symmetric): scale * isf((1 - q)/2).

        %(error_at_q)s
            The h with P(|E| <= h) = q (a float for scalar q).

        %(error_example)s
        >>> round(dist.quantile(0.5), 6)   # median |E| = 2 ln 2
        1.386294
        """
        q = _probabilities(q)
        return _out(self.scale * np.asarray(self.noise.isf((1.0 - q) / 2.0)))

    @fill_doc
    def interval(self, coverage: float) -> tuple[float, float]:
        """Central interval (-h, h) with P(|E| <= h) = coverage.

        Parameters
        ----------
        coverage : float
            The probability in (0, 1).

        Returns
        -------
        tuple of (float, float)
            ``(-h, h)``.

        %(error_example)s
        >>> tuple(round(v, 4) for v in dist.interval(0.5))
        (-1.3863, 1.3863)
        """
        coverage = check_probability_in(coverage, "coverage", 0.0, 1.0)
        h = float(self.quantile(coverage))
        return (-h, h)

    @fill_doc
    def expected_abs_error(self, within: tuple[float, float] | None = None) -> float:
        r"""E|E| = scale * E|Z| (inf when the noise has no mean).

        ``within=(lo, hi)`` with lo <= 0 <= hi gives E|clip(E, lo, hi)|, the
        expected absolute error after clipping the release to
        [f(x) + lo, f(x) + hi] (post-processing, e.g. to the data bounds):

        .. math::

            E|\mathrm{clip}(E, lo, hi)| = s\,\bigl(G(hi/s) + G(-lo/s)\bigr),
            \qquad G(u) = \int_0^u P(Z > v)\, dv,

        with s the scale.

        Parameters
        ----------
        within : tuple of (float, float), default=None
            The clipping offsets ``(lo, hi)``, lo <= 0 <= hi (infinite
            allowed); None for no clipping.

        Returns
        -------
        float
            The expected absolute error.

        %(error_example)s
        >>> dist.expected_abs_error()   # scale * E|Z|
        2.0
        >>> round(dist.expected_abs_error(within=(-1.0, 1.0)), 4)   # 2 (1 - e^-1/2)
        0.7869
        """
        if within is None:
            return self.scale * self.mean_abs_noise
        if isinstance(within, (str, bytes)) or not hasattr(within, "__len__") or len(within) != 2:
            raise ValueError("within must be a pair (lo, hi) with lo <= 0 <= hi")
        lo_raw, hi_raw = (check_real(v, f"within[{i}]") for i, v in enumerate(within))
        if not (lo_raw <= 0.0 <= hi_raw):  # also rejects NaN
            raise ValueError(f"within must satisfy lo <= 0 <= hi, got ({lo_raw!r}, {hi_raw!r})")
        return clipped_abs_error(self.noise, self.scale, -lo_raw, hi_raw)  # distances to the clipping points

    @fill_doc
    def expected_error(self, truth: float = 0.0, loss: Literal["absolute", "squared"] = "absolute") -> float:
        r"""Expected loss of the error against ``truth``, as :meth:`dpselect.OutputLaw.expected_error`.

        .. math::

            E|E - c| = E|E| + |c| - 2 s\, G(|c| / s), \qquad E[(E - c)^2] = s^2 \mathrm{Var}(Z) + c^2,

        with s the scale and G as in :meth:`expected_abs_error`.

        Parameters
        ----------
        truth : float, default=0.0
            The value c the error is compared with (0: the error's own size).
        loss : {"absolute", "squared"}, default="absolute"
            ``|E - c|`` or ``(E - c)**2``.

        Returns
        -------
        float
            The exact expectation (inf when the noise lacks the moment).

        %(error_example)s
        >>> dist.expected_error(), dist.expected_error(loss="squared")   # 2 E|Z|; 4 Var(Z)
        (2.0, 8.0)
        """
        c = check_finite_float(truth, "truth")
        if loss not in ("absolute", "squared"):
            raise ValueError(f"loss must be 'absolute' or 'squared', got {loss!r}")
        if loss == "absolute":
            return shifted_abs_error(self.noise, self.scale, c)
        var = float(self.noise.var())
        return (self.scale * self.scale * var if self.scale > 0 else 0.0) + c * c

    @overload
    def sample(self, size: None = None, *, rng: SeedLike = None) -> float: ...
    @overload
    def sample(self, size: int, *, rng: SeedLike = None) -> np.ndarray: ...
    @validate_params({"size": SIZE, "rng": SEED})
    @fill_doc
    def sample(self, size: int | None = None, *, rng: SeedLike = None) -> float | np.ndarray:
        """Draws of the error (float for size=None).

        Parameters
        ----------
        size : int, default=None
            ``None`` for one draw, else the number of draws.
        rng : SeedLike, default=None
            The randomness (keyword-only).

        Returns
        -------
        float or numpy.ndarray
            One draw, or an array of ``size`` draws.

        %(error_example)s
        >>> dist.sample(size=3, rng=0).shape
        (3,)
        """
        gen = check_random_state(rng)
        z = np.asarray(self.noise.sample(1 if size is None else size, gen), dtype=np.float64)
        return float(self.scale * z.reshape(-1)[0]) if size is None else self.scale * z


@validate_params({"release": instance_of(SmoothSensitivityRelease), "sensitivity": SENSITIVITY})
def error_distribution(
    release: SmoothSensitivityRelease, sensitivity: float | Callable[[float], float]
) -> ErrorDistribution:
    """The law of ``release.release(value, sensitivity) - value`` (any value), before the output grid.

    On a grid (``release.granularity`` > 0) the release's exact law is discrete
    (``release.log_law``): rounding moves the error by at most lambda/2 and the
    Laplace release's scale uses S + 32 lambda; this continuous law ignores both.

    Parameters
    ----------
    release : SmoothSensitivityRelease
        The release (its noise law, alpha' and beta).
    sensitivity : float or callable
        The smooth sensitivity S at ``release.beta``, or a callable
        ``beta -> S_beta(x)`` (called with ``release.beta``).

    Returns
    -------
    ErrorDistribution
        The law of the error ``scale * Z``.

    Examples
    --------
    >>> import dpselect
    >>> from dpselect.analysis import error_distribution
    >>> rel = dpselect.SmoothSensitivityRelease(1.0, noise="polynomial", gamma=4)
    >>> dist = error_distribution(rel, 0.5)
    >>> round(dist.expected_abs_error(), 4)   # (S/alpha') E|Z| = (0.5/0.2193) (1/sqrt 2)
    1.6119
    """
    return ErrorDistribution(release.noise_distribution, release.scale(sensitivity))
