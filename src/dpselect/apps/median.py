"""Compatibility module: the Duff median/mode/mean and the NRS order-statistic sensitivities.

The code lives in :mod:`dpselect.apps.duff` (Duff median, mode and mean,
add/remove) and :mod:`dpselect.apps.order_stats` (NRS local / smooth
sensitivity of order statistics, replace-one); this module re-exports their
public names so that ``dpselect.apps.median.private_median`` (the
documented convenience name) and existing imports keep working.  Signatures: data (and epsilon)
positional, everything else keyword-only.

Examples
--------
>>> from dpselect.apps.median import private_median
>>> 0.0 <= private_median([0.2, 0.4, 0.6], 1.0, bounds=(0.0, 1.0), rng=0) <= 1.0
True
"""

from __future__ import annotations

from .duff import (
    PrivacyLeakWarning,
    duff_mean,
    duff_mean_intervals,
    duff_mean_levels,
    duff_mean_utility,
    duff_median,
    duff_median_intervals,
    duff_median_pdf,
    duff_median_utility,
    duff_mode,
    duff_mode_probabilities,
    duff_mode_utility,
    expected_absolute_error,
    mode_problem,
    neighbours,
    output_cdf,
    private_median,
)
from .order_stats import (
    local_sensitivity_median,
    local_sensitivity_quantile,
    smooth_sensitivity_median,
    smooth_sensitivity_quantile,
)

__all__ = [
    "PrivacyLeakWarning",
    "duff_mean",
    "duff_mean_intervals",
    "duff_mean_levels",
    "duff_mean_utility",
    "duff_median",
    "duff_median_intervals",
    "duff_median_pdf",
    "duff_median_utility",
    "duff_mode",
    "duff_mode_probabilities",
    "duff_mode_utility",
    "expected_absolute_error",
    "local_sensitivity_median",
    "local_sensitivity_quantile",
    "mode_problem",
    "neighbours",
    "output_cdf",
    "private_median",
    "smooth_sensitivity_median",
    "smooth_sensitivity_quantile",
]
