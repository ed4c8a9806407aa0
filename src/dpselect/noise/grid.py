"""The output grid: released real numbers are exact multiples of a public power of two.

A float Laplace release f(x) + b Z leaves gaps: the set of floats reachable
from f(x) differs from the set reachable from a neighbour's f(y), so an output
can identify the dataset (Mironov 2012).  Releases here are integers k times a
granularity lambda = 2^j instead, and k is sampled *exactly*
(:mod:`dpselect.noise.exact`): every grid point has the probability the
mathematics says, and k lambda is an exact float for |k| < 2^53.

* :func:`check_granularity`, :func:`default_granularity`: lambda = 2^j, by
  default j = floor(log2(min(scales))) - :data:`GRID_BITS` from public scales
  only (never from the data);
* :func:`grid_index`: c = floor(v/lambda + 1/2), exact in float arithmetic;
* :class:`GridLaplace`: f(x) of sensitivity Delta released as lambda (c + K),
  K ~ discrete Laplace with scale t = ceil(Delta/lambda)/epsilon (rounded up to a
  dyadic with 40 significant bits), epsilon-DP, with its exact output law.

References: Mironov (2012), *On significance of the least significant bits for
differential privacy*, CCS; Canonne, Kamath & Steinke (2020), NeurIPS; the
documentation page "Floating point and side channels".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._params import (
    ANY,
    EPSILON,
    SEED,
    SIZE,
    Rule,
    instance_of,
    int_at_least,
    positive,
    validate_fields,
    validate_params,
)
from .._validation import as_real_array, check_positive
from ..accounting import grid_steps
from ..privacy import Privacy
from ..typing import Relation, SeedLike
from .exact import IntegerSource, _discrete_laplace_batch, discrete_laplace_logpmf

__all__ = [
    "GRID_BITS",
    "GridLaplace",
    "check_granularity",
    "default_granularity",
    "dyadic_ceil",
    "grid_index",
    "grid_values",
]

#: Default grid: 2^-GRID_BITS of the smallest public scale (rounding error <= 2^-21 scale).
GRID_BITS = 20
#: Grid indices are kept within +-2^52 so that k * lambda is an exact float.
MAX_INDEX = 2**52


def _check_granularity(value: Any, name: str = "granularity") -> float:
    g = check_positive(value, name)
    mant, _ = math.frexp(g)
    if mant != 0.5:
        raise ValueError(f"{name} must be a power of two (e.g. 2**-20), got {value!r}")
    return g


_NAME = instance_of(str)


@validate_params({"value": ANY, "name": _NAME})  # value: checked here, under ``name``
def check_granularity(value: float, name: str = "granularity") -> float:
    """Return ``value`` as a float if it is a positive power of two (2^j for an integer j).

    Parameters
    ----------
    value : float
        The granularity (checked here; messages name ``name``).
    name : str, default="granularity"
        The argument's name, for messages.

    Returns
    -------
    float
        ``value``.

    Raises
    ------
    TypeError
        If ``value`` is not a real number.
    ValueError
        If it is not a positive power of two.

    Examples
    --------
    >>> check_granularity(0.25)
    0.25
    """
    return _check_granularity(value, name)


@validate_params({})  # the scales are checked one by one in the body
def default_granularity(*scales: float) -> float:
    """Return 2^(floor(log2(min(scales))) - GRID_BITS): the default grid from public scales.

    Parameters
    ----------
    *scales : float
        Public scales, each > 0 (at least one).

    Returns
    -------
    float
        The granularity, a power of two.

    Examples
    --------
    >>> default_granularity(1.0) == 2.0**-20
    True
    >>> default_granularity(3.0, 10.0) == 2.0**-19
    True
    """
    s = min(check_positive(v, "scale") for v in scales)
    return math.ldexp(1.0, math.frexp(s)[1] - 1 - GRID_BITS)


def _positive_fraction(value: Any, name: str) -> Fraction:
    if not isinstance(value, Fraction):
        raise TypeError(f"{name} must be a fractions.Fraction, got {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{name} must be > 0")
    return value


@validate_params({"x": Rule("a Fraction > 0", check=_positive_fraction), "bits": int_at_least(1)})
def dyadic_ceil(x: Fraction, bits: int = 40) -> Fraction:
    """Return the smallest p / 2^q >= x with p < 2^(bits + 1): relative increase below 2^-bits.

    Parameters
    ----------
    x : fractions.Fraction
        The number to round up, > 0.
    bits : int, default=40
        The significant bits kept, >= 1.

    Returns
    -------
    fractions.Fraction
        The dyadic upper bound.

    Examples
    --------
    >>> dyadic_ceil(Fraction(1, 3), bits=4)
    Fraction(11, 32)
    """
    q = bits - (x.numerator.bit_length() - x.denominator.bit_length())
    scale = Fraction(2) ** q
    return Fraction(math.ceil(x * scale)) / scale


@validate_params({"values": ANY, "granularity": positive(), "name": _NAME})  # values: checked here, under name
def grid_index(values: ArrayLike, granularity: float, name: str = "value") -> NDArray[np.int64]:
    """Return c = floor(v / lambda + 1/2) as int64, clamped to +-2^51 (exact: lambda is a power of two).

    The clamp is 1-Lipschitz, so it never increases a sensitivity; it only
    matters for |v| >= 2^51 lambda.

    Parameters
    ----------
    values : array_like
        Finite reals v (any shape; messages name ``name``).
    granularity : float
        lambda, a power of two.
    name : str, default="value"
        The argument's name, for messages.

    Returns
    -------
    numpy.ndarray of int64
        c, shaped like ``values``.

    Examples
    --------
    >>> grid_index([0.3, -0.7], 0.5).tolist()
    [1, -1]
    """
    return _grid_index(values, granularity, name)


def _grid_index(values: Any, granularity: float, name: str = "value") -> NDArray[np.int64]:
    """:func:`grid_index` without the parameter layer."""
    v = as_real_array(values, name)
    if not np.isfinite(v).all():
        raise ValueError(f"{name} must be finite")
    c = np.floor(np.clip(v / granularity, -(2.0**51), 2.0**51) + 0.5)
    return c.astype(np.int64)


def _integer_like(value: Any, name: str) -> Any:
    if np.asarray(value).dtype.kind not in "biuf":
        raise TypeError(f"{name} must be integers, got dtype {np.asarray(value).dtype}")
    return value


@validate_params({"index": Rule("integers (a scalar or an array)", check=_integer_like), "granularity": positive()})
def grid_values(index: ArrayLike, granularity: float) -> NDArray[np.float64]:
    """Return k lambda as float64, k clamped to +-2^52 (post-processing) so that every value is exact.

    Parameters
    ----------
    index : array_like of int
        Grid indices k (any shape; converted to int64).
    granularity : float
        lambda, a power of two.

    Returns
    -------
    numpy.ndarray
        k lambda, shaped like ``index``.

    Examples
    --------
    >>> grid_values([1, -3], 0.25).tolist()
    [0.25, -0.75]
    """
    return _grid_values(index, granularity)


def _grid_values(index: Any, granularity: float) -> NDArray[np.float64]:
    """:func:`grid_values` without the parameter layer (the releases' inner loops)."""
    k = np.clip(np.asarray(index, dtype=np.int64), -MAX_INDEX, MAX_INDEX)
    return k.astype(np.float64) * granularity


@dataclass(frozen=True)
class GridLaplace:
    r"""Exact discrete Laplace release on the grid lambda Z for a statistic of sensitivity Delta.

    .. math::

        A(x) = \lambda \, (c(x) + K), \quad c(x) = \lfloor f(x)/\lambda + 1/2 \rfloor, \quad
        P[K = k] \propto e^{-|k| / t}, \quad t \ge \lceil \Delta / \lambda \rceil / \varepsilon .

    epsilon-DP under any neighbour relation (add/remove or replace neighbours) in which
    |f(x) - f(y)| <= Delta (the discrete counterpart of mathematics §2.2's Laplace
    release; the grid derivation is on the page "Floating point and side channels"): the rounded
    indices of neighbours differ by at most m = ceil(Delta/lambda), and the
    discrete Laplace loses at most m/t <= epsilon for a shift of m (Ghosh,
    Roughgarden & Sundararajan 2009).  t is m/epsilon rounded *up* to a dyadic
    with 40 significant bits (only less privacy loss), so the exact sampler
    works on int64.

    Parameters
    ----------
    sensitivity : float
        Delta > 0 (public).
    epsilon : float
        epsilon > 0.
    granularity : float or None, default=None
        lambda, a power of two; None gives
        ``default_granularity(sensitivity, sensitivity / epsilon)``.  Accuracy
        cost: rounding error <= lambda/2 and the noise scale grows from
        Delta/epsilon to ceil(Delta/lambda) lambda / epsilon <= (Delta + lambda)/epsilon
        (relative 2^-20 at the default).

    References
    ----------
    Ghosh, Roughgarden & Sundararajan (2009), *Universally utility-maximizing
    privacy mechanisms*, STOC; Canonne, Kamath & Steinke (2020), NeurIPS,
    Algorithm 2 (the sampler); Mironov (2012), CCS (why a grid).

    Examples
    --------
    >>> rel = GridLaplace(1.0, 0.5, granularity=0.25)
    >>> rel.steps, float(rel.scale_units)
    (4, 8.0)
    >>> y = rel.release(3.1, size=5, rng=0)
    >>> bool(((y / 0.25) == np.round(y / 0.25)).all())
    True
    """

    sensitivity: float
    epsilon: float
    granularity: float | None = None
    steps: int = field(init=False)
    scale_units: Fraction = field(init=False, repr=False)
    _parameter_constraints: ClassVar[dict[str, Rule]] = {
        "sensitivity": positive(),
        "epsilon": EPSILON,
        "granularity": Rule("a power of two", check=_check_granularity, none=True),
    }

    def __post_init__(self) -> None:
        """Check the parameters and resolve the grid, the steps and the scale."""
        validate_fields(self, self._parameter_constraints)
        set_ = lambda k, v: object.__setattr__(self, k, v)
        d, eps = self.sensitivity, self.epsilon
        g = default_granularity(d, d / eps) if self.granularity is None else self.granularity
        set_("sensitivity", d)
        set_("epsilon", eps)
        set_("granularity", g)
        set_("steps", grid_steps(d, g))
        set_("scale_units", dyadic_ceil(Fraction(self.steps) / Fraction(eps)))

    @property
    def lam(self) -> float:
        """The resolved granularity lambda."""
        assert self.granularity is not None
        return self.granularity

    def privacy(self, relation: Relation | None = None) -> Privacy:
        """Return the guarantee: epsilon-DP (the loss is at most steps / scale_units <= epsilon).

        Parameters
        ----------
        relation : {"add_remove", "replace"} or None, default=None
            The neighbour relation in which the sensitivity holds (None: not tied to one).

        Returns
        -------
        Privacy
            epsilon-DP.
        """
        return Privacy(self.epsilon, 0.0, relation, f"discrete Laplace on the grid {self.lam!r} Z (exact sampler)")

    @overload
    def release(self, value: float, *, size: None = None, rng: SeedLike = None) -> float: ...
    @overload
    def release(self, value: ArrayLike, *, size: int | None = None, rng: SeedLike = None) -> NDArray[np.float64]: ...

    def release(self, value: ArrayLike, *, size: int | None = None,
                rng: SeedLike = None) -> float | NDArray[np.float64]:
        """Return lambda (c(value) + K), one independent K per entry of ``value``.

        Parameters
        ----------
        value : float or array_like
            The statistic f(x) (a float, or an array of statistics of sensitivity Delta each).
        size : int or None, default=None
            With a scalar ``value`` only: the number of independent releases.
        rng : None, int, Generator or "secure", default=None
            The randomness (keyword-only); ``"secure"`` uses the OS CSPRNG.

        Returns
        -------
        float or numpy.ndarray
            A float for a scalar ``value`` and ``size=None``; else an array (shaped like
            ``value``, or of length ``size``).
        """
        scalar = np.ndim(value) == 0
        c = _grid_index(value, self.lam).reshape(-1)
        size = SIZE(size, "size")
        rng = SEED(rng, "rng")
        if size is not None and not scalar:
            raise ValueError("size applies to a scalar value only")
        src = IntegerSource(rng)
        n = c.size if size is None else size
        t = self.scale_units
        k = _discrete_laplace_batch(src, t.denominator, t.numerator, n)
        out = _grid_values(c + k, self.lam)
        if scalar and size is None:
            return float(out[0])
        return out if size is not None else out.reshape(np.shape(value))

    def log_tail(self, x: ArrayLike) -> NDArray[np.float64]:
        """Return log P[lambda K >= x] for the noise lambda K alone (exact formula, vectorised).

        With k = ceil(x / lambda) and q = e^{-1/t}: P[K >= k] = q^k / (1 + q) for k >= 1,
        1 - q^(1-k) / (1 + q) for k <= 0.  For noisy threshold tests (PTR, stable
        histograms) on the grid, where the continuous e^{-x/b}/2 no longer applies.

        Parameters
        ----------
        x : array_like
            Thresholds (any shape).

        Returns
        -------
        numpy.ndarray
            log P[lambda K >= x], shaped like ``x``.
        """
        k = np.ceil(as_real_array(x, "x") / self.lam)
        r = 1.0 / float(self.scale_units)
        log1pq = np.log1p(np.exp(-r))
        upper = -np.maximum(k, 1.0) * r - log1pq
        lower = np.log1p(-np.exp(-np.maximum(1.0 - k, 1.0) * r - log1pq))
        return np.where(k >= 1, upper, lower)

    def log_law(self, value: float, window: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Return (grid points, log-probabilities) of the release at the 2 window + 1 points around c(value).

        Exact up to float evaluation of the discrete Laplace pmf; the mass outside the
        window is 2 q^(window+1)/(1 + q), q = e^{-1/t}.

        Parameters
        ----------
        value : float
            The statistic f(x).
        window : int
            The half-width, in grid steps, >= 0.

        Returns
        -------
        tuple of (numpy.ndarray, numpy.ndarray)
            The grid points and their log-probabilities.
        """
        c = int(_grid_index(value, self.lam)[()])
        j = np.arange(-window, window + 1)
        return _grid_values(c + j, self.lam), discrete_laplace_logpmf(j, self.scale_units)
