"""The percentile problem over a public grid: the rank-distance utility and the paper's indicator.

Candidates are a **public, data-independent grid** ``grid`` (sorted,
strictly increasing, finite).  Records are snapped to the nearest grid point
(half-way values go to the lower one; values outside
``[grid[0], grid[-1]]`` are clamped to it, ``on_out_of_bounds="raise"``
refuses them) and reduced to per-bin counts h (``histogram=True`` takes the
counts directly, e.g. the DPBench files).  With n records the target rank k
follows one of two conventions (``rank_convention``, :data:`RANK_CONVENTIONS`):
"paper" k = max(1, floor(p n / 100)) (default) or "code"
k = min(floor(p n / 100) + 1, n).  Write L_j = sum_{i<j} h_i and
C_j = L_j + h_j: grid point j holds the ranks L_j + 1 .. C_j.

Rank-distance utility (``utility="rank"``, the default of :func:`private_percentile`): the
1-Lipschitz lower bound d_j of :mod:`.rank_distance` (mathematics §9.1).

Indicator utility (``utility="indicator"``, Chaves et al. Def. 5.1 corrected)
--------------------------------------------------------------------------
u_p(x, r) = 1 if r is the grid value of rank k, else 0; global sensitivity 1.
It carries almost no signal: with n = 10^5 N(0, 1) records, a 1001-point grid
on [-5, 5], p = 90 and eps = 1, EM on it has an expected absolute error of
2.66, PF on the rank utility 2.6e-4 on average over 30 seeded data sets
(median 8e-11; ``tests/test_percentile.py``).
It is kept for the smooth-sensitivity mechanisms of the seed papers
(SNM, SPS, local dampening), which need its local-sensitivity profile.
Let v be the grid value at rank k, j_l (j_g) the copies of v at ranks < k
(> k) (:func:`percentile_stability`).  LS is 0 or 1, so S*_beta = exp(-beta
t*), t* the distance to the nearest dataset where one more step changes the
percentile value (mathematics §4.3):

* add_remove, p = 50: t* = min(2 j_l + 1[n odd], 2 j_g + 1[n even]), for
  both rank conventions — exact (BFS);
* add_remove, other p: t* = min(j_l, j_g), a valid lower bound (each step
  moves both slacks by at most one);
* replace: t* = floor(min(j_l, j_g) / 2) (valid lower bound).

Sources: Chaves et al., Smooth Noisy Max §5 (Def. 5.1, Prop. 5.3/5.4); the mathematics page
§4.3, §9.1 and mathematics §7 items 14–16.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from ...._docstrings import fill_doc
from ...._params import validate_params
from ....mechanisms import distance_problem
from ....problem import SelectionProblem
from ....sensitivity import StepProfile
from ....typing import Relation
from .._rules import BOOLEAN, GRID, OUT_OF_BOUNDS_RULE, PERCENT, RANK_CONVENTION, RELATION, SAMPLE, options
from .grid import counts_and_rank, stability
from .rank_distance import _rank_distances

__all__ = ["UTILITIES", "percentile_problem"]


#: Utilities of :func:`problem`: the rank distance (mathematics §9.1) and the paper's indicator (mathematics §4.3).
UTILITIES = ("rank", "indicator")


def _tstar(p: float, n: int, j_l: int, j_g: int, relation: str) -> int:
    if relation == "replace":
        return min(j_l, j_g) // 2
    if p == 50:
        odd = n % 2  # the same parities for both rank conventions (mathematics §4.3; BFS-checked in the tests)
        return min(2 * j_l + odd, 2 * j_g + 1 - odd)
    return min(j_l, j_g)


def _profile(tstar: int) -> StepProfile:
    if tstar == 0:
        return StepProfile(np.array([0]), np.array([1.0]))
    return StepProfile(np.array([0, tstar]), np.array([0.0, 1.0]))


@validate_params(
    {
        "x": SAMPLE,
        "p": PERCENT,
        "grid": GRID,
        "histogram": BOOLEAN,
        "relation": RELATION,
        "utility": options(*UTILITIES),
        "rank_convention": RANK_CONVENTION,
        "on_out_of_bounds": OUT_OF_BOUNDS_RULE,
    }
)
@fill_doc
def percentile_problem(
    x: ArrayLike,
    p: float,
    grid: ArrayLike,
    *,
    histogram: bool = False,
    relation: Relation = "add_remove",
    utility: Literal["rank", "indicator"] = "indicator",
    rank_convention: Literal["paper", "code"] = "paper",
    on_out_of_bounds: Literal["clip", "raise"] = "clip",
) -> SelectionProblem:
    """Percentile :class:`~dpselect.problem.SelectionProblem` over a public grid.

    Parameters
    ----------
    x : array_like or dask array
        Raw values (1-D, finite; records outside ``[grid[0], grid[-1]]`` are clamped to it),
        or with ``histogram=True`` non-negative integer counts, one per grid point.
    %(percentile_grid)s
    relation : {"add_remove", "replace"}, default="add_remove"
        The neighbour relation (mathematics §1) the utility's sensitivity refers to.
    utility : {"indicator", "rank"}, default="indicator"
        "indicator" (default here, for the seed papers' smooth
        mechanisms: scores 1[j = percentile], ``local_sensitivity``
        ``StepProfile(np.array([0, t*]), np.array([0, 1]))`` with t* of mathematics §4.3) or "rank"
        (scores -d_j of :func:`rank_distances`, global sensitivity 1, built by
        :func:`~dpselect.mechanisms.distance.distance_problem`; the accurate
        choice for EM / PF, the default of :func:`private_percentile`).
    rank_convention : {"paper", "code"}, default="paper"
        The target rank (:data:`RANK_CONVENTIONS`).
    on_out_of_bounds : {"clip", "raise"}, default="clip"
        "clip": raw records outside [grid[0], grid[-1]] are clamped to it (nothing
        observable depends on it); "raise": ValueError instead, **not private**.

    Returns
    -------
    SelectionProblem
        Scores per grid point, labelled by the grid values.

    See Also
    --------
    PercentileStability : Where the percentile record sits among its copies (returned by ...
    percentile_neighbours : Neighbouring raw datasets of a small dataset, for exact audits
    percentile_stability : The rank k, the grid index of the percentile value and its copies below / above rank ...

    Notes
    -----
    Labels are the grid values.  Neighbour relation: ``relation``.

    Examples
    --------
    >>> import dpselect
    >>> from dpselect.apps.quantiles import percentile_problem
    >>> prob = percentile_problem([1, 1, 2, 2, 2, 4], 50, [0, 1, 2, 3, 4], utility="rank")
    >>> prob.scores
    array([-5., -1.,  0., -5., -5.])
    >>> dpselect.PermuteAndFlip(2.0).probabilities(prob).round(3)
    array([0.003, 0.183, 0.808, 0.003, 0.003])
    """
    h, g, g_orig, k = counts_and_rank(x, p, grid, histogram, rank_convention, on_out_of_bounds)
    labels = g_orig.tolist()
    if utility == "rank":
        d = _rank_distances(h, k, float(p), str(rank_convention), relation)
        return distance_problem(d, relation=relation, labels=labels)
    v, j_l, j_g = stability(h, k)
    tstar = _tstar(float(p), int(h.sum()), j_l, j_g, relation)
    scores = np.zeros(g.size)
    scores[v] = 1.0
    return SelectionProblem(
        scores,
        labels=labels,
        global_sensitivity=1.0,
        local_sensitivity=_profile(tstar),
        max_distance=tstar + 1,
        monotone=False,
        relation=relation,
    )
