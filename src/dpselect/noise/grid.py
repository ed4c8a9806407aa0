"""The output grid: released real numbers are exact multiples of a public power of two.

A float Laplace release f(x) + b Z leaves gaps: the set of floats reachable
from f(x) differs from the set reachable from a neighbour's f(y), so an output
can identify the dataset (Mironov 2012).  Releases here are integers k times a
granularity lambda = 2^j instead, and k is sampled *exactly*
(:mod:`dpselect.noise.exact`): every grid point has the probability the
mathematics says, and k lambda is an exact float for |k| < 2^53.

* :func:`default_granularity`: lambda = 2^j, by default
  j = floor(log2(min(scales))) - :data:`GRID_BITS` from public scales only (never from
  the data);
* the rounding c = floor(v/lambda + 1/2), exact in float arithmetic
  (:mod:`dpselect._exact_numbers`, shared with the releases);
* :class:`GridLaplace`: f(x) of sensitivity Delta released as lambda (c + K),
  K ~ discrete Laplace with scale t = ceil(Delta/lambda)/epsilon (rounded up to a
  dyadic with 40 significant bits), epsilon-DP, with its exact output law.

References: Mironov (2012), *On significance of the least significant bits for
differential privacy*, CCS; Canonne, Kamath & Steinke (2020), NeurIPS; the
documentation page "Floating point and side channels".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import ClassVar, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._exact_numbers import dyadic_ceil, grid_index
from .._params import EPSILON, GRANULARITY, SEED, SIZE, Rule, positive, validate_fields
from .._validation import as_real_array
from ..accounting import grid_steps
from ..privacy import Privacy
from ..typing import Relation, SeedLike
from ._exact_core import _discrete_laplace_batch
from ._grid_points import GRID_BITS, MAX_INDEX, _grid_values, default_granularity, grid_values
from .exact import IntegerSource

__all__ = ["GRID_BITS", "MAX_INDEX", "GridLaplace", "default_granularity", "grid_values"]


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

    See Also
    --------
    Laplace : Standard Laplace: h(z) = e^{-|z|}/2, F(z) = e^z/2 (z < 0), 1 - e^{-z}/2 (z >= 0)
    LaplaceLogNormal : Laplace log-normal LLN(sigma): Z = X e^{sigma Y}, X ~ Laplace(1), Y ~ N(0,1) indep
    discrete_laplace : Exact discrete Laplace on the integers with rational ``scale`` > 0

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
        "granularity": GRANULARITY,
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

    def release(
        self, value: ArrayLike, *, size: int | None = None, rng: SeedLike = None
    ) -> float | NDArray[np.float64]:
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
        c = grid_index(value, self.lam).reshape(-1)
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
