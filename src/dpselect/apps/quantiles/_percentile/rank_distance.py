"""The rank-distance utility of percentiles over a public grid (mathematics §9.1).

Counts h per grid point and the target rank k as in :mod:`.problem`; write
L_j = sum_{i<j} h_i and C_j = L_j + h_j: grid point j holds the ranks L_j + 1 .. C_j.

Rank-distance utility (``utility="rank"``, the default of :func:`private_percentile`)
--------------------------------------------------------------------------------------
u(x, j) = -d_j, d_j a 1-Lipschitz lower bound on d(x, Y_j), the number of
neighbour steps after which j is the percentile value (mathematics §9.1, "inverse
sensitivity", Asi & Duchi 2020).  Any function that moves by at most 1 per
neighbour step and is <= 0 on Y_j is such a bound; d_j is the largest of
these (and 0):

* a_j = L_j + 1 - k and b_j = k - C_j, the distance of the target rank k
  from the block of ranks of point j (both relations).  For an empty bin
  max(a_j, b_j) = |k - (L_j + 1/2)| + 1/2 >= 1: the bin sits half a rank
  between its neighbours' blocks and needs one record (mathematics §9.1 prints a
  value half a step smaller; both are valid, this one is tighter).  Each
  slack moves by at most 1 per step: adding (removing) a record changes L_j,
  C_j by 0 or +1 (-1) and k by 0 or +1 (-1) (k(n + 1) - k(n) is 0 or 1 in
  both conventions); replacing a record keeps n and k and moves L_j, C_j by
  at most 1.  Under replace this is the exact distance.
* add/remove only, q = p/100 = P/Q in lowest terms, w = max(P, Q - P): k
  moves with n, so a removal below j lowers the slack a_j by only 1 - q and
  an addition above by q.  Q L_j - P n moves by at most w per step, so
  (paper ranks) psi_a = min(L_j, ceil((Q (L_j + 1) - P n)/w)) and
  psi_b = ceil((P n - Q (C_j + 1) + 1)/w), (code ranks) psi_a =
  ceil((Q L_j - P n)/w) and psi_b = ceil((P n - Q C_j + 1[p < 100])/w) are
  1-Lipschitz (a ceiling keeps an integer lower bound integer and
  1-Lipschitz) and <= 0 on Y_j (from L_j + 1 <= k <= C_j and floor(q n) <=
  q n < floor(q n) + 1).  For p = 50 they double the slopes.  Integer
  arithmetic throughout (Python integers where int64 could overflow).

d_j = 0 exactly when j is the percentile value.  Checked by breadth-first
search on small histograms (``tests/test_distance.py``): max |Delta d| = 1
under both relations and conventions, d is exact under replace, and exact
under add/remove in ~95-100% of the states (the rest: lower bound).  The
utility is not monotone (scores move in opposite directions), so EM uses
P ∝ exp(eps u / 2) and PF the same scale; eps-DP under ``relation``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from ...._docstrings import fill_doc
from ...._params import validate_params
from ....typing import Relation
from .._rules import BOOLEAN, GRID, PERCENT, RANK_CONVENTION, RELATION, SAMPLE
from .grid import counts_and_rank

__all__ = ["rank_distances"]


def _ceil_div(a: Any, b: int) -> Any:
    return -((-a) // b)


def _rank_distances(h: np.ndarray, k: int, p: float, convention: str, relation: str) -> np.ndarray:
    """d_j of the module docstring for every bin; O(m), exact integer arithmetic, float64 result."""
    c = np.cumsum(h)
    low = c - h
    d = np.maximum(np.maximum(low + 1 - k, k - c), 0)
    if relation == "replace":
        return d.astype(np.float64)
    n = int(c[-1])
    q = Fraction(p) / 100
    P, Q = q.numerator, q.denominator
    w = max(P, Q - P)
    if Q * (n + 2) >= 2**62:  # exact Python integers (object arrays) where int64 could overflow
        low, c = low.astype(object), c.astype(object)
    if convention == "paper":
        psi_a = np.minimum(low, _ceil_div(Q * (low + 1) - P * n, w))
        psi_b = _ceil_div(P * n - Q * (c + 1) + 1, w)
    else:
        psi_a = _ceil_div(Q * low - P * n, w)
        psi_b = _ceil_div(P * n - Q * c + (1 if P < Q else 0), w)
    return np.maximum(d, np.maximum(psi_a, psi_b)).astype(np.float64)


@validate_params(
    {
        "x": SAMPLE,
        "p": PERCENT,
        "grid": GRID,
        "histogram": BOOLEAN,
        "relation": RELATION,
        "rank_convention": RANK_CONVENTION,
    }
)
@fill_doc
def rank_distances(
    x: ArrayLike,
    p: float,
    grid: ArrayLike,
    *,
    histogram: bool = False,
    relation: Relation = "add_remove",
    rank_convention: Literal["paper", "code"] = "paper",
) -> np.ndarray:
    """Per grid point j, a 1-Lipschitz lower bound d_j on the steps after which j is the p-th percentile.

    d_j = max(0, L_j + 1 - k, k - C_j) under replace (exact); under
    add/remove also the slope-corrected terms psi_a, psi_b (module
    docstring, mathematics §9.1).  Vectorised, O(len(grid)).

    Parameters
    ----------
    x : array_like or dask array
        Raw records (1-D, finite; clamped to the grid range), or per-grid-point counts with
        ``histogram=True``.
    %(percentile_grid)s
    relation : {"add_remove", "replace"}, default="add_remove"
        The neighbour relation the distance counts steps of (mathematics §1).
    rank_convention : {"paper", "code"}, default="paper"
        The target rank (:data:`RANK_CONVENTIONS`).

    Returns
    -------
    ndarray of float64
        d_j for every grid point (0 exactly at the percentile value).

    Examples
    --------
    >>> from dpselect.apps.quantiles import rank_distances
    >>> grid = [0, 1, 2, 3, 4]
    >>> rank_distances([1, 1, 2, 2, 2, 4], 50, grid, relation="replace")  # k = 3: the first 2
    array([3., 1., 0., 3., 3.])
    >>> rank_distances([1, 1, 2, 2, 2, 4], 50, grid)  # add/remove: k moves with n
    array([5., 1., 0., 5., 5.])
    """
    h, _, _, k = counts_and_rank(x, p, grid, histogram, rank_convention)
    return _rank_distances(h, k, float(p), str(rank_convention), relation)
