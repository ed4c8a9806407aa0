"""Quantiles, percentiles and medians of a one-dimensional sample.

- Percentiles over a public grid: :func:`private_percentile`, :func:`percentile_problem`
  (rank-distance and indicator utilities), :func:`rank_distances`, :func:`true_percentile`.
- Quantiles without a grid (numpy conventions, target ``numpy.quantile(x, q,
  method="inverted_cdf")``): :func:`private_quantile`, :func:`private_quantiles` (many at
  once: JointExp, recursive), :func:`private_median`, :func:`quantile_law`,
  :func:`quantile_expected_error`, :func:`true_quantile`; real outputs on a public power-of-two
  grid (``granularity``) or integer outputs.
- No bounds (``bounds=None``): :func:`private_bounds` and :func:`private_max` release bounds by
  AboveThreshold on a geometric grid (Durfee 2023), then the bounded mechanisms run on the
  clamped records: :func:`unbounded_quantile`, :func:`unbounded_quantiles`.
- Many groups or columns: :func:`grouped_quantiles` (parallel composition over public keys,
  epsilon charged once; keys released privately first without them) and :func:`describe`
  (a noisy row count and every numeric column's quantiles, the budget split shown).
- Duff's exponential mechanism over continuous output ranges: :func:`duff_median`,
  :func:`duff_mean`, their exact laws.
- Order-statistic sensitivities (Nissim, Raskhodnikova & Smith 2007) and the smooth-sensitivity
  median baselines: :func:`smooth_sensitivity_median`, :func:`smooth_sens_pure`, ...

Every exact law (:func:`quantile_law`, :func:`duff_median_intervals`,
:func:`duff_mean_intervals`) is a :class:`dpselect.OutputLaw` over pieces (``law.lo``,
``law.hi``); every entry point declares its parameters once (checked before any randomness
is drawn).  The paper-only helpers of the percentile experiment (Chaves et al.'s non-private
problem, the DPBench loader) live in :mod:`dpselect.experiments`.

Neighbour relation: add/remove one record (percentiles, quantiles, Duff; ``relation="replace"``
is offered by the percentile and quantile functions); replace one record for the
order-statistic sensitivities and their baselines.  The one name for a 1-D sample is ``x``.

Examples
--------
>>> from dpselect.apps.quantiles import private_percentile
>>> float(private_percentile([1, 2, 2, 3, 9], 50, grid=range(11), epsilon=5.0, rng=0))
2.0
"""

from __future__ import annotations

from ._duff.mean import duff_mean, duff_mean_intervals, duff_mean_utility
from ._duff.mean_levels import MeanLevels, duff_mean_levels
from ._duff.median import duff_median, duff_median_utility, median_neighbours
from ._duff.median_law import duff_median_intervals, duff_median_pdf, expected_absolute_error, output_cdf
from ._exponential.law import quantile_expected_error, quantile_law, true_quantile
from ._exponential.quantile import private_median, private_quantile
from ._multi.quantiles import QUANTILES_METHODS, private_quantiles
from ._order_stats import (
    local_sensitivity_median,
    local_sensitivity_quantile,
    smooth_sensitivity_median,
    smooth_sensitivity_quantile,
)
from ._percentile.grid import RANK_CONVENTIONS
from ._percentile.neighbours import percentile_neighbours
from ._percentile.percentile import UTILITIES, absolute_error_loss, percentile_problem, private_percentile
from ._percentile.rank_distance import rank_distances
from ._percentile.target import PercentileStability, percentile_stability, true_percentile
from ._smooth.baselines import expected_abs_error_smooth_sens_pure, smooth_sens_pure, smooth_sens_pure_mechanism
from ._smooth.laplace_ln import expected_abs_error_laplace_ln, laplace_ln, laplace_ln_mechanism
from ._smooth.smooth_sens_approx import (
    expected_abs_error_smooth_sens_approx,
    smooth_sens_approx,
    smooth_sens_approx_mechanism,
)
from ._tables.describe import Description, describe
from ._tables.grouped import GroupedQuantiles, grouped_quantiles
from ._unbounded.bounds import Bounds, private_bounds, private_max
from ._unbounded.quantiles import unbounded_quantile, unbounded_quantiles

__all__ = [
    "QUANTILES_METHODS",
    "RANK_CONVENTIONS",
    "UTILITIES",
    "Bounds",
    "Description",
    "GroupedQuantiles",
    "MeanLevels",
    "PercentileStability",
    "absolute_error_loss",
    "describe",
    "duff_mean",
    "duff_mean_intervals",
    "duff_mean_levels",
    "duff_mean_utility",
    "duff_median",
    "duff_median_intervals",
    "duff_median_pdf",
    "duff_median_utility",
    "expected_abs_error_laplace_ln",
    "expected_abs_error_smooth_sens_approx",
    "expected_abs_error_smooth_sens_pure",
    "expected_absolute_error",
    "grouped_quantiles",
    "laplace_ln",
    "laplace_ln_mechanism",
    "local_sensitivity_median",
    "local_sensitivity_quantile",
    "median_neighbours",
    "output_cdf",
    "percentile_neighbours",
    "percentile_problem",
    "percentile_stability",
    "private_bounds",
    "private_max",
    "private_median",
    "private_percentile",
    "private_quantile",
    "private_quantiles",
    "quantile_expected_error",
    "quantile_law",
    "rank_distances",
    "smooth_sens_approx",
    "smooth_sens_approx_mechanism",
    "smooth_sens_pure",
    "smooth_sens_pure_mechanism",
    "smooth_sensitivity_median",
    "smooth_sensitivity_quantile",
    "true_percentile",
    "true_quantile",
    "unbounded_quantile",
    "unbounded_quantiles",
]
