"""What a private percentile estimates: the grid value of rank k and its stability (not private).

The target rank k follows :data:`RANK_CONVENTIONS` (:mod:`.grid`); j_l and j_g, the copies of the
percentile value below and above rank k, give the indicator utility's smooth sensitivity
(mathematics §4.3).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from ...._docstrings import fill_doc
from ...._params import validate_params
from .._rules import BOOLEAN, GRID, PERCENT, RANK_CONVENTION, SAMPLE
from .grid import counts_and_rank, stability

__all__ = ["PercentileStability", "percentile_stability", "true_percentile"]


@dataclass(frozen=True)
class PercentileStability:
    """Where the percentile record sits among its copies (returned by :func:`percentile_stability`).

    Parameters
    ----------
    rank : int
        The 1-indexed target rank k (:data:`RANK_CONVENTIONS`).
    index : int
        Grid index of the percentile value v (the grid point holding rank k).
    below : int
        j_l: the copies of v at ranks < k.
    above : int
        j_g: the copies of v at ranks > k.

    See Also
    --------
    percentile_stability : The rank k, the grid index of the percentile value and its copies below / above rank ...
    true_percentile : The (non-private) grid value of rank k -- what :func:`private_percentile` estimates
    percentile_neighbours : Neighbouring raw datasets of a small dataset, for exact audits
    """

    rank: int
    index: int
    below: int
    above: int


@validate_params({"x": SAMPLE, "p": PERCENT, "grid": GRID, "histogram": BOOLEAN, "rank_convention": RANK_CONVENTION})
@fill_doc
def percentile_stability(
    x: ArrayLike,
    p: float,
    grid: ArrayLike,
    *,
    histogram: bool = False,
    rank_convention: Literal["paper", "code"] = "paper",
) -> PercentileStability:
    """The rank k, the grid index of the percentile value and its copies below / above rank k (not private).

    Parameters
    ----------
    x : array_like
        Raw records (1-D, finite), or per-grid-point counts with ``histogram=True``
        (checked against ``grid``).
    %(percentile_grid)s
    rank_convention : {"paper", "code"}, default="paper"
        The target rank (:data:`RANK_CONVENTIONS`).

    Returns
    -------
    PercentileStability
        ``rank``, ``index``, ``below`` (j_l) and ``above`` (j_g) of mathematics §4.3.

    See Also
    --------
    PercentileStability : Where the percentile record sits among its copies (returned by ...
    true_percentile : The (non-private) grid value of rank k -- what :func:`private_percentile` estimates
    percentile_neighbours : Neighbouring raw datasets of a small dataset, for exact audits

    Examples
    --------
    >>> from dpselect.apps.quantiles import percentile_stability
    >>> percentile_stability([0, 1, 1, 2], 50, [0, 1, 2])
    PercentileStability(rank=2, index=1, below=0, above=1)
    """
    h, _, _, k = counts_and_rank(x, p, grid, histogram, rank_convention)
    return PercentileStability(k, *stability(h, k))


@validate_params({"x": SAMPLE, "p": PERCENT, "grid": GRID, "histogram": BOOLEAN, "rank_convention": RANK_CONVENTION})
@fill_doc
def true_percentile(
    x: ArrayLike,
    p: float,
    grid: ArrayLike,
    *,
    histogram: bool = False,
    rank_convention: Literal["paper", "code"] = "paper",
) -> float | int:
    """The (non-private) grid value of rank k -- what :func:`private_percentile` estimates.

    Parameters
    ----------
    x : array_like
        Raw records (1-D, finite), or per-grid-point counts with ``histogram=True``.
    %(percentile_grid)s
    rank_convention : {"paper", "code"}, default="paper"
        The target rank (:data:`RANK_CONVENTIONS`).

    Returns
    -------
    float or int
        The grid value holding rank k (the grid's own type).

    See Also
    --------
    PercentileStability : Where the percentile record sits among its copies (returned by ...
    percentile_stability : The rank k, the grid index of the percentile value and its copies below / above rank ...
    percentile_neighbours : Neighbouring raw datasets of a small dataset, for exact audits

    Examples
    --------
    >>> from dpselect.apps.quantiles import true_percentile
    >>> true_percentile([1, 1, 2, 2, 2, 4], 50, [0, 1, 2, 3, 4])
    2
    """
    v = percentile_stability(x, p, grid, histogram=histogram, rank_convention=rank_convention).index
    return np.asarray(grid)[v].item()
