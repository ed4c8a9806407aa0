"""Standard noise distributions and their admissibility parameters (mathematics §2).

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
  ``dilation_constant`` (L_d) of mathematics §2.1/§2.7 (``None`` when not pure), and
  ``admissible(epsilon, delta) -> (alpha, beta)``.

Symmetric laws (Laplace, StudentT, LaplaceLogNormal, PolynomialTail) are
implemented through their folded law |Z|; ``.one_sided()`` returns
:class:`OneSided`, the law restricted to ``z >= 0`` and renormalised (density
2h(z), cdf 2F(z)-1, logsf = log 2 + logsf of the parent, samples |Z|).  A
one-sided law keeps its parent's constants and ``admissible``: mathematics §3.1 uses a
one-sided h that is nonincreasing on [0, inf) with L_s, L_d computed on the
support, which for a symmetric unimodal parent are the parent's constants.

Exact integer samplers (:mod:`dpselect.noise.exact`: ``bernoulli_exp``,
``discrete_laplace``, ``discrete_gaussian``) and the output grid (:mod:`dpselect.noise.grid`:
``GridLaplace``, ``default_granularity``, ``grid_values``) make released numbers floating-point
safe.
"""

from ._special import MIN_TAIL_EXPONENT
from ._symmetric import OneSided
from .base import NoiseDistribution
from .exact import (
    IntegerSource,
    bernoulli_exp,
    bernoulli_exp_batch,
    discrete_gaussian,
    discrete_laplace,
    discrete_laplace_batch,
    discrete_laplace_logpmf,
    exponential_weights_batch,
    rational_rates,
    sample_snapped_atan,
)
from .grid import GridLaplace, default_granularity, grid_values
from .heavy import PolynomialTail, StudentT
from .laplace import Exponential, Gumbel, Laplace
from .lln import LaplaceLogNormal

__all__ = [
    "MIN_TAIL_EXPONENT",
    "Exponential",
    "GridLaplace",
    "Gumbel",
    "IntegerSource",
    "Laplace",
    "LaplaceLogNormal",
    "NoiseDistribution",
    "OneSided",
    "PolynomialTail",
    "StudentT",
    "bernoulli_exp",
    "bernoulli_exp_batch",
    "default_granularity",
    "discrete_gaussian",
    "discrete_laplace",
    "discrete_laplace_batch",
    "discrete_laplace_logpmf",
    "exponential_weights_batch",
    "grid_values",
    "rational_rates",
    "sample_snapped_atan",
]
