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
from typing import Any

import numpy as np

from .._validation import as_real_array, check_epsilon, check_positive, check_size
from ..accounting import grid_steps
from ..privacy import Privacy
from .exact import IntegerSource, discrete_laplace_batch, discrete_laplace_logpmf

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


def check_granularity(value: Any, name: str = "granularity") -> float:
    """A positive power of two (2^j for an integer j), as a float."""
    g = check_positive(value, name)
    mant, _ = math.frexp(g)
    if mant != 0.5:
        raise ValueError(f"{name} must be a power of two (e.g. 2**-20), got {value!r}")
    return g


def default_granularity(*scales: float) -> float:
    """2^(floor(log2(min(scales))) - GRID_BITS): the default grid from public scales.

    Examples
    --------
    >>> default_granularity(1.0) == 2.0**-20
    True
    >>> default_granularity(3.0, 10.0) == 2.0**-19
    True
    """
    s = min(check_positive(v, "scale") for v in scales)
    return math.ldexp(1.0, math.frexp(s)[1] - 1 - GRID_BITS)


def dyadic_ceil(x: Fraction, bits: int = 40) -> Fraction:
    """The smallest p / 2^q >= x with p < 2^(bits + 1): relative increase below 2^-bits."""
    if x <= 0:
        raise ValueError("x must be > 0")
    q = bits - (x.numerator.bit_length() - x.denominator.bit_length())
    scale = Fraction(2) ** q
    return Fraction(math.ceil(x * scale)) / scale


def grid_index(values: Any, granularity: float, name: str = "value") -> np.ndarray:
    """C = floor(v / lambda + 1/2) as int64, clamped to +-2^51 (exact: lambda is a power of two).

    The clamp is 1-Lipschitz, so it never increases a sensitivity; it only
    matters for |v| >= 2^51 lambda.
    """
    v = as_real_array(values, name)
    if not np.isfinite(v).all():
        raise ValueError(f"{name} must be finite")
    c = np.floor(np.clip(v / granularity, -(2.0**51), 2.0**51) + 0.5)
    return c.astype(np.int64)


def grid_values(index: Any, granularity: float) -> np.ndarray:
    """K lambda as float64, k clamped to +-2^52 (post-processing) so that every value is exact."""
    k = np.clip(np.asarray(index, dtype=np.int64), -MAX_INDEX, MAX_INDEX)
    return k.astype(np.float64) * granularity


@dataclass(frozen=True)
class GridLaplace:
    r"""Exact discrete Laplace release on the grid lambda Z for a statistic of sensitivity Delta.

    .. math::

        A(x) = \lambda \, (c(x) + K), \quad c(x) = \lfloor f(x)/\lambda + 1/2 \rfloor, \quad
        P[K = k] \propto e^{-|k| / t}, \quad t \ge \lceil \Delta / \lambda \rceil / \varepsilon .

    epsilon-DP under any relation in which |f(x) - f(y)| <= Delta: the rounded
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

    def __post_init__(self) -> None:
        set_ = lambda k, v: object.__setattr__(self, k, v)
        d = check_positive(self.sensitivity, "sensitivity")
        eps = check_epsilon(self.epsilon)
        g = default_granularity(d, d / eps) if self.granularity is None else check_granularity(self.granularity)
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

    def privacy(self, relation: str | None = None) -> Privacy:
        """epsilon-DP (the loss is at most steps / scale_units <= epsilon)."""
        return Privacy(self.epsilon, 0.0, relation, f"discrete Laplace on the grid {self.lam!r} Z (exact sampler)")

    def release(self, value: Any, *, size: int | None = None, rng: Any = None) -> Any:
        """Lambda (c(value) + K); ``value`` a float or an array (one independent K per entry).

        ``size`` (scalar ``value`` only) draws that many independent releases.
        """
        scalar = np.ndim(value) == 0
        c = grid_index(value, self.lam).reshape(-1)
        size = check_size(size)
        if size is not None and not scalar:
            raise ValueError("size applies to a scalar value only")
        src = IntegerSource(rng)
        n = c.size if size is None else size
        t = self.scale_units
        k = discrete_laplace_batch(src, t.denominator, t.numerator, n)
        out = grid_values(c + k, self.lam)
        if scalar and size is None:
            return float(out[0])
        return out if size is not None else out.reshape(np.shape(value))

    def log_tail(self, x: Any) -> np.ndarray:
        """Log P[lambda K >= x] for the noise lambda K alone (exact formula, vectorised).

        With k = ceil(x / lambda) and q = e^{-1/t}: P[K >= k] = q^k / (1 + q) for k >= 1,
        1 - q^(1-k) / (1 + q) for k <= 0.  For noisy threshold tests (PTR, stable
        histograms) on the grid, where the continuous e^{-x/b}/2 no longer applies.
        """
        k = np.ceil(as_real_array(x, "x") / self.lam)
        r = 1.0 / float(self.scale_units)
        log1pq = np.log1p(np.exp(-r))
        upper = -np.maximum(k, 1.0) * r - log1pq
        lower = np.log1p(-np.exp(-np.maximum(1.0 - k, 1.0) * r - log1pq))
        return np.where(k >= 1, upper, lower)

    def log_law(self, value: float, window: int) -> tuple[np.ndarray, np.ndarray]:
        """(grid points, log-probabilities) of the release at the 2 window + 1 points around c(value).

        Exact up to float evaluation of the discrete Laplace pmf; the mass outside the
        window is 2 q^(window+1)/(1 + q), q = e^{-1/t}.
        """
        c = int(grid_index(value, self.lam)[()])
        j = np.arange(-window, window + 1)
        return grid_values(c + j, self.lam), discrete_laplace_logpmf(j, self.scale_units)
