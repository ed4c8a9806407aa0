"""Exact laws of the grid releases of the Duff median and mean, per piece (test oracles).

Each returns ``(first grid index, n_j, P[each grid point of piece j])``: the grid releases
(``duff_median`` / ``duff_mean`` with ``granularity > 0``) draw piece j with probability
``n_j P_j`` and a uniform grid point of it.  Used by the exactness and floating-point tests only
(moved out of the library, which never calls them).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpselect._validation import check_epsilon
from dpselect.apps.quantiles._duff.mean import _grid_pieces
from dpselect.apps.quantiles._duff.mean_levels import _check_levels
from dpselect.apps.quantiles._duff.median_masses import _median_costs
from dpselect.apps.quantiles._exponential.piecewise_em import _grid_groups, check_output_grid, grid_counts
from dpselect.apps.quantiles._order_stats import sorted_padded
from dpselect.apps.quantiles._rules import check_bounds


def piecewise_grid_law(
    lefts: Any, utilities: Any, epsilon: float, a: float, b: float, lam: float, starts: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact law of :func:`sample_piecewise_grid` per piece: (first grid index, n_j, P[each point of j]).

    P[point of piece j] = exp(epsilon u_j / 2) / sum_h n_h exp(epsilon u_h / 2),
    normalised in the log domain; pieces without grid points have n_j = 0.
    """
    if starts is None:
        starts, counts = _grid_groups(np.asarray(lefts, dtype=np.float64), a, b, lam)
    else:
        counts = grid_counts(starts, b, lam)
    logw = 0.5 * epsilon * np.asarray(utilities, dtype=np.float64)
    with np.errstate(divide="ignore"):
        logm = np.log(counts.astype(np.float64)) + logw
    top = logm.max()
    log_norm = top + math.log(float(np.exp(logm - top).sum()))
    return starts, counts, np.where(counts > 0, np.exp(logw - log_norm), 0.0)


def median_grid_law(ext: np.ndarray, epsilon: float, lam: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact law of :func:`sample_median_grid`: (first grid index, n_j, P[each point]) per interval."""
    n = ext.size - 2
    return piecewise_grid_law(ext[:-1], -_median_costs(n, 0, n), epsilon, ext[0], ext[-1], lam)


def duff_mean_grid_law(
    x: Any, epsilon: float, *, bounds: Any, levels: Any = None, granularity: float | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact law of :func:`duff_mean` on its grid: (first grid index, n_j, P[each point of piece j])."""
    epsilon = check_epsilon(epsilon)
    a, b = check_bounds(bounds)
    K = _check_levels(levels, epsilon)
    lam = check_output_grid(granularity, a, b)
    if not lam:
        raise ValueError("granularity must be > 0 for the grid law (0 is the continuous law: duff_mean_intervals)")
    ext = sorted_padded(x, a, b)
    starts, utilities = _grid_pieces(ext, a, b, K, lam)
    return piecewise_grid_law(None, utilities, epsilon, a, b, lam, starts=starts)
