"""Percentile selection over a public grid: the rank-distance utility and the paper's indicator.

Candidates are a **public, data-independent grid** ``grid`` (sorted,
strictly increasing, finite).  Records are snapped to the nearest grid point
(half-way values go to the lower one; values outside
``[grid[0], grid[-1]]`` are clamped to it, ``on_out_of_bounds="raise"``
refuses them) and reduced to per-bin counts h (``histogram=True`` takes the
counts directly, e.g. the DPBench files).  With n records the target rank k
follows one of two conventions (``rank_convention``, see :func:`rank`):
"paper" k = max(1, floor(p n / 100)) (default) or "code"
k = min(floor(p n / 100) + 1, n).  Write L_j = sum_{i<j} h_i and
C_j = L_j + h_j: grid point j holds the ranks L_j + 1 .. C_j.

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

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from ..._validation import (
    check_array_1d,
    check_out_of_bounds,
    check_pair,
    check_random_state,
    check_relation,
    clip_to_bounds,
)
from ...accounting import Accountant, charge
from ...mechanisms import distance_problem, resolve_mechanism
from ...problem import SelectionProblem
from ...sensitivity import StepProfile
from ._grid import (
    RANK_CONVENTIONS,
    bin_counts,
    check_grid,
    check_p,
    check_rank_convention,
    rank,
    stability,
)
from ._percentile_paper import DPBENCH_NAMES, load_dpbench, paper_problem, percentile_neighbours
from ._quantile import private_quantile

__all__ = [
    "DPBENCH_NAMES",
    "RANK_CONVENTIONS",
    "UTILITIES",
    "absolute_error_loss",
    "load_dpbench",
    "percentile_neighbours",
    "paper_problem",
    "percentile_stability",
    "private_percentile",
    "percentile_problem",
    "rank",
    "rank_distances",
    "true_percentile",
]

#: Utilities of :func:`problem`: the rank distance (mathematics §9.1) and the paper's indicator (mathematics §4.3).
UTILITIES = ("rank", "indicator")

def _check_utility(utility: Any) -> str:
    if utility not in UTILITIES:
        raise ValueError(f"utility must be one of {UTILITIES}, got {utility!r}")
    return str(utility)


def _counts_and_rank(
    x: Any, p: Any, grid: Any, histogram: bool, rank_convention: Any, on_out_of_bounds: str = "clip"
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(counts h, float grid, original grid, rank k), every argument validated.

    Raw records outside [grid[0], grid[-1]] are clamped to it (a per-record map; they then
    snap to the end points as the nearest grid points), or refused with ``"raise"`` (not private).
    """
    p = check_p(p)
    g, g_orig = check_grid(grid)
    convention = check_rank_convention(rank_convention)
    check_out_of_bounds(on_out_of_bounds)
    raw = isinstance(histogram, (bool, np.bool_)) and not histogram
    if raw and not hasattr(x, "dask"):
        x = clip_to_bounds(check_array_1d(x, "x"), (g[0], g[-1]), on_out_of_bounds)
    elif raw and on_out_of_bounds == "clip":
        x = x.clip(g[0], g[-1])  # dask: lazily, chunk by chunk
    h = bin_counts(x, g, histogram)
    return h, g, g_orig, rank(p, int(h.sum()), convention=convention)


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


def rank_distances(
    x: Any,
    p: float,
    grid: Any,
    *,
    histogram: bool = False,
    relation: str = "add_remove",
    rank_convention: str = "paper",
) -> np.ndarray:
    """Per grid point j, a 1-Lipschitz lower bound d_j on the steps after which j is the p-th percentile.

    d_j = max(0, L_j + 1 - k, k - C_j) under replace (exact); under
    add/remove also the slope-corrected terms psi_a, psi_b (module
    docstring, mathematics §9.1).  Vectorised, O(len(grid)).

    Examples
    --------
    >>> from dpselect.apps.quantiles import rank_distances
    >>> grid = [0, 1, 2, 3, 4]
    >>> rank_distances([1, 1, 2, 2, 2, 4], 50, grid, relation="replace")  # k = 3: the first 2
    array([3., 1., 0., 3., 3.])
    >>> rank_distances([1, 1, 2, 2, 2, 4], 50, grid)  # add/remove: k moves with n
    array([5., 1., 0., 5., 5.])
    """
    relation = check_relation(relation)
    h, _, _, k = _counts_and_rank(x, p, grid, histogram, rank_convention)
    return _rank_distances(h, k, float(p), str(rank_convention), relation)


def percentile_stability(
    x: Any, p: float, grid: Any, *, histogram: bool = False, rank_convention: str = "paper"
) -> tuple[int, int, int, int]:
    """(k, v_index, j_l, j_g): rank, grid index of the percentile value, copies of it below / above rank k."""
    h, _, _, k = _counts_and_rank(x, p, grid, histogram, rank_convention)
    return (k, *stability(h, k))


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


def percentile_problem(
    x: Any,
    p: float,
    grid: Any,
    *,
    histogram: bool = False,
    relation: str = "add_remove",
    utility: str = "indicator",
    rank_convention: str = "paper",
    on_out_of_bounds: str = "clip",
) -> SelectionProblem:
    """Percentile :class:`~dpselect.problem.SelectionProblem` over a public grid.

    Parameters
    ----------
    x
        raw values (1-D, finite, within ``[grid[0], grid[-1]]``), or with
        ``histogram=True`` non-negative integer counts, one per grid point.
    p
        percentile in [0, 100].
    grid
        public candidate values, finite and strictly increasing.
    histogram
        whether ``x`` holds per-grid-point counts.
    relation
        "add_remove" (default) or "replace".
    utility
        "indicator" (default here, for the seed papers' smooth
        mechanisms: scores 1[j = percentile], ``local_sensitivity``
        ``StepProfile(np.array([0, t*]), np.array([0, 1]))`` with t* of mathematics §4.3) or "rank"
        (scores -d_j of :func:`rank_distances`, global sensitivity 1, built by
        :func:`~dpselect.mechanisms.distance.distance_problem`; the accurate
        choice for EM / PF, the default of :func:`private_percentile`).
    rank_convention
        "paper" or "code" (:func:`rank`).
    on_out_of_bounds
        "clip" (default): raw records outside [grid[0], grid[-1]] are clamped to it (nothing
        observable depends on it); "raise": ValueError instead, **not private**.

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
    relation = check_relation(relation)
    utility = _check_utility(utility)
    h, g, g_orig, k = _counts_and_rank(x, p, grid, histogram, rank_convention, on_out_of_bounds)
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


def true_percentile(
    x: Any, p: float, grid: Any, *, histogram: bool = False, rank_convention: str = "paper"
) -> Any:
    """The (non-private) grid value of rank k — what :func:`private_percentile` estimates."""
    _, v, _, _ = percentile_stability(x, p, grid, histogram=histogram, rank_convention=rank_convention)
    return np.asarray(grid)[v].item()


def private_percentile(
    x: Any,
    p: float,
    epsilon: float | None,
    grid: Any = None,
    *,
    bounds: Any = None,
    integer: bool | None = None,
    mechanism: Any = "pf",
    utility: str = "rank",
    delta: float = 0.0,
    histogram: bool = False,
    relation: str = "add_remove",
    rank_convention: str = "paper",
    rng: Any = None,
    accountant: Accountant | None = None,
    granularity: float | None = None,
    sampler: str | None = None,
    on_out_of_bounds: str = "clip",
) -> Any:
    r"""Privately select the p-th percentile (p in [0, 100]): over a public grid, or without one.

    With ``grid``: permute-and-flip on the rank-distance utility (Asi & Duchi
    2020 inverse sensitivity; the module docstring) returns a grid value; the
    target rank follows ``rank_convention``.  ``utility="indicator"`` with
    ``mechanism="em"`` is Chaves et al.'s utility, and the seed papers' smooth
    mechanisms ("snm_laplace", "snm_t", "snm_lln", "sps", "ld") are meant for it.

    With ``bounds`` and no grid: :func:`~dpselect.apps.quantiles.private_quantile`
    at q = p / 100 (real outputs on the public power-of-two grid ``granularity``,
    or integers for integer data; target
    :math:`x_{(k)}`, :math:`k = \max(1, \lceil p n / 100 \rceil)`, numpy's
    ``inverted_cdf``).  The guarantee is epsilon-DP under ``relation`` either way.

    Parameters
    ----------
    x : array_like or dask array
        1-D sample (or per-grid-point counts with ``histogram=True``).
    p : float
        percentile in [0, 100].
    epsilon : float or None
        privacy budget (None when ``mechanism`` is an instance).
    grid : array_like or None, default=None
        public candidate values, finite and strictly increasing.
    bounds : tuple of float or None, default=None
        public ``(a, b)`` for the grid-free mechanism (exactly one of grid, bounds).
    integer : bool or None, default=None
        grid-free path only: integer outputs (None: from the dtype of ``x``).
    mechanism : str or mechanism, default="pf"
        grid path: a name of :data:`dpselect.mechanisms.registry.MECHANISM_NAMES`
        or an instance; the grid-free path is the exponential mechanism ("em"/"pf" accepted).
    utility : str, default="rank"
        grid path: "rank" or "indicator".
    delta : float, default=0.0
        for the approximate-DP grid mechanisms only.
    histogram : bool, default=False
        grid path: ``x`` holds per-grid-point counts.
    relation : str, default="add_remove"
        "add_remove" or "replace".
    rank_convention : str, default="paper"
        grid path: "paper" or "code" (:func:`rank`).
    rng : None, int or numpy.random.Generator, default=None
        randomness; a seed reproduces.
    accountant : Accountant or None, default=None
        charged ``mech.privacy(problem)`` before any randomness is drawn.
    granularity : float or None, default=None
        grid-free path with real outputs: the output grid, a power of two
        (None: 2^(floor(log2(b - a)) - 20) from the bounds; 0: continuous floats,
        not floating-point safe); see :func:`~dpselect.apps.quantiles.private_quantile`.
    sampler : str or None, default=None
        grid-free path with real outputs on the grid: "exact" (None; integer
        arithmetic only, no float in any decision) or "float" (the float piece
        sampler, faster); see :func:`~dpselect.apps.quantiles.private_quantile`.
    on_out_of_bounds : str, default="clip"
        records outside the grid range (or ``bounds``) are clamped to it: a per-record map,
        so the guarantee is unchanged and nothing observable depends on it; "raise": a
        ValueError instead, for finding data errors -- **not private**.

    References
    ----------
    Chaves et al., "Smooth noisy max" (Def. 5.1); H. Asi & J. Duchi, NeurIPS
    2020; A. Smith, STOC 2011; docs/mathematics.md, "Percentiles over a grid"
    and "Quantiles without a grid".

    Examples
    --------
    >>> import numpy as np
    >>> from dpselect.apps.quantiles import private_percentile
    >>> x = np.random.default_rng(0).normal(size=10_000)
    >>> grid = np.linspace(-5, 5, 1001)
    >>> round(private_percentile(x, 90, 1.0, grid, rng=1), 2)
    1.28
    >>> round(private_percentile(x, 90, 1.0, bounds=(-5, 5), rng=1), 2)
    1.28
    """
    if grid is None:
        if bounds is None:
            raise ValueError("give one of grid (a public candidate grid) and bounds (grid-free outputs)")
        if mechanism not in ("pf", "em") or utility != "rank" or histogram:
            raise ValueError("without a grid only the exponential mechanism on the rank utility is offered "
                             "(mechanism 'em'/'pf', utility 'rank', histogram=False)")
        q = check_p(p) / 100.0
        if check_out_of_bounds(on_out_of_bounds) == "raise":
            clip_to_bounds(check_array_1d(x, "x"), check_pair(bounds, "bounds"), "raise")
        return private_quantile(x, q, epsilon if epsilon is not None else float("nan"), bounds=bounds,
                                integer=integer, relation=relation, rng=rng, accountant=accountant,
                                granularity=granularity, sampler="exact" if sampler is None else sampler)
    if bounds is not None:
        raise ValueError("give one of grid and bounds, not both")
    if granularity is not None:
        raise ValueError("granularity applies to the grid-free path (bounds=) only; the grid fixes the outputs")
    if sampler is not None:
        raise ValueError("sampler applies to the grid-free path (bounds=) only; with a grid pass a mechanism "
                         "instance (e.g. ExponentialMechanism(epsilon, sampler='exact'))")
    if integer is not None:
        raise ValueError("integer applies to the grid-free path (bounds=) only; the grid fixes the outputs")
    prob = percentile_problem(x, p, grid, histogram=histogram, relation=relation, utility=utility,
                              rank_convention=rank_convention, on_out_of_bounds=on_out_of_bounds)
    mech = resolve_mechanism(mechanism, epsilon, delta)
    gen = check_random_state(rng)
    charge(accountant, mech.privacy(prob))
    idx = int(mech.select(prob, rng=gen))
    return np.asarray(grid)[idx].item()


def absolute_error_loss(grid: Any, true_value: float) -> Callable[[np.ndarray], np.ndarray]:
    """Loss for :func:`dpselect.analysis.expected_error`: |grid_r - true_value| in value units.

    ``expected_error(mech, percentile_problem(x, p, grid), loss=absolute_error_loss(grid,
    true_percentile(data, p, grid)))`` is the expected absolute error.
    """
    g, _ = check_grid(grid)
    t = float(true_value)
    if not math.isfinite(t):
        raise ValueError("true_value must be finite")
    err = np.abs(g - t)

    def loss(scores: np.ndarray) -> np.ndarray:
        if np.shape(scores) != err.shape:
            raise ValueError(f"the problem has {np.size(scores)} candidates but the grid has {err.size} points")
        return err

    return loss
