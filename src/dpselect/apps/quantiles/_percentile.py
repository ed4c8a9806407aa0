"""Percentile selection over a public grid: the rank-distance utility and the paper's indicator.

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
1-Lipschitz lower bound d_j of :mod:`._rank_distance` (mathematics §9.1).

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

from collections.abc import Callable
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from ..._params import validate_params
from ..._validation import check_array_1d, check_pair, check_random_state, clip_to_bounds
from ...accounting import Accountant, charge
from ...mechanisms import Mechanism, distance_problem, resolve_mechanism
from ...problem import SelectionProblem
from ...sensitivity import StepProfile
from ...typing import Relation, SeedLike
from ._grid import RANK_CONVENTIONS, check_grid, counts_and_rank, stability
from ._percentile_target import PercentileStability, percentile_stability, true_percentile
from ._quantile import private_quantile
from ._rank_distance import _rank_distances, rank_distances
from ._rules import (
    ACCOUNTANT,
    ANY,
    BOOLEAN,
    BOUNDS,
    DATA_FINITE,
    DELTA,
    EPSILON,
    GRANULARITY,
    GRID,
    INTEGER,
    OUT_OF_BOUNDS_RULE,
    PERCENT,
    RANK_CONVENTION,
    RELATION,
    SAMPLER,
    SEED,
    options,
)

__all__ = [
    "RANK_CONVENTIONS",
    "UTILITIES",
    "PercentileStability",
    "absolute_error_loss",
    "percentile_problem",
    "percentile_stability",
    "private_percentile",
    "rank_distances",
    "true_percentile",
]

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
        "x": ANY,
        "p": PERCENT,
        "grid": GRID,
        "histogram": BOOLEAN,
        "relation": RELATION,
        "utility": options(*UTILITIES),
        "rank_convention": RANK_CONVENTION,
        "on_out_of_bounds": OUT_OF_BOUNDS_RULE,
    }
)
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
    p : float
        Percentile in [0, 100].
    grid : array_like
        Public candidate values, finite and strictly increasing.
    histogram : bool, default=False
        Whether ``x`` holds per-grid-point counts.
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


@validate_params(
    {
        "x": ANY,
        "p": PERCENT,
        "epsilon": EPSILON.or_none(),
        "grid": GRID.or_none(),
        "bounds": BOUNDS.or_none(),
        "integer": INTEGER,
        "mechanism": ANY,
        "utility": options(*UTILITIES),
        "delta": DELTA,
        "histogram": BOOLEAN,
        "relation": RELATION,
        "rank_convention": RANK_CONVENTION,
        "rng": SEED,
        "accountant": ACCOUNTANT,
        "granularity": GRANULARITY,
        "sampler": SAMPLER.or_none(),
        "on_out_of_bounds": OUT_OF_BOUNDS_RULE,
    }
)
def private_percentile(
    x: ArrayLike,
    p: float,
    epsilon: float | None,
    grid: ArrayLike | None = None,
    *,
    bounds: tuple[float, float] | None = None,
    integer: bool | None = None,
    mechanism: str | Mechanism = "pf",
    utility: Literal["rank", "indicator"] = "rank",
    delta: float = 0.0,
    histogram: bool = False,
    relation: Relation = "add_remove",
    rank_convention: Literal["paper", "code"] = "paper",
    rng: SeedLike = None,
    accountant: Accountant | None = None,
    granularity: float | None = None,
    sampler: Literal["exact", "float"] | None = None,
    on_out_of_bounds: Literal["clip", "raise"] = "clip",
) -> float | int:
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
        grid path: "paper" or "code" (:data:`RANK_CONVENTIONS`).
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

    Returns
    -------
    float or int
        The released grid value (with ``grid``), or the private quantile (with ``bounds``).

    Notes
    -----
    The guarantee: epsilon-DP (or (epsilon, delta) for the approximate grid mechanisms) under
    ``relation`` (add/remove neighbours by default, replace neighbours with
    ``relation="replace"``); proofs in mathematics §9.1 (grid, rank distance) and
    mathematics §12.1 (no grid).

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
            raise ValueError(
                "without a grid only the exponential mechanism on the rank utility is offered "
                "(mechanism 'em'/'pf', utility 'rank', histogram=False)"
            )
        q = p / 100.0
        if on_out_of_bounds == "raise":
            clip_to_bounds(check_array_1d(x, "x"), check_pair(bounds, "bounds"), "raise")
        return private_quantile(
            x,
            q,
            epsilon if epsilon is not None else float("nan"),
            bounds=bounds,
            integer=integer,
            relation=relation,
            rng=rng,
            accountant=accountant,
            granularity=granularity,
            sampler="exact" if sampler is None else sampler,
        )
    if bounds is not None:
        raise ValueError("give one of grid and bounds, not both")
    if granularity is not None:
        raise ValueError("granularity applies to the grid-free path (bounds=) only; the grid fixes the outputs")
    if sampler is not None:
        raise ValueError(
            "sampler applies to the grid-free path (bounds=) only; with a grid pass a mechanism "
            "instance (e.g. ExponentialMechanism(epsilon, sampler='exact'))"
        )
    if integer is not None:
        raise ValueError("integer applies to the grid-free path (bounds=) only; the grid fixes the outputs")
    prob = percentile_problem(
        x,
        p,
        grid,
        histogram=histogram,
        relation=relation,
        utility=utility,
        rank_convention=rank_convention,
        on_out_of_bounds=on_out_of_bounds,
    )
    mech = resolve_mechanism(mechanism, epsilon, delta)
    gen = check_random_state(rng)
    charge(accountant, mech.privacy(prob))
    idx = int(mech.select(prob, rng=gen))
    return np.asarray(grid)[idx].item()


@validate_params({"grid": GRID, "true_value": DATA_FINITE})
def absolute_error_loss(grid: ArrayLike, true_value: float) -> Callable[[np.ndarray], np.ndarray]:
    """Loss for :func:`dpselect.analysis.expected_error`: |grid_r - true_value| in value units.

    ``expected_error(mech, percentile_problem(x, p, grid), loss=absolute_error_loss(grid,
    true_percentile(data, p, grid)))`` is the expected absolute error.

    Parameters
    ----------
    grid : array_like
        The public candidate values of the problem.
    true_value : float
        The non-private answer (finite).

    Returns
    -------
    callable
        ``loss(scores) -> ndarray``: the absolute error of every candidate.

    Examples
    --------
    >>> from dpselect.apps.quantiles import absolute_error_loss
    >>> absolute_error_loss([0, 1, 2], 1.5)([0.0, 0.0, 0.0]).tolist()
    [1.5, 0.5, 0.5]
    """
    g, _ = check_grid(grid)
    t = float(true_value)
    err = np.abs(g - t)

    def loss(scores: np.ndarray) -> np.ndarray:
        if np.shape(scores) != err.shape:
            raise ValueError(f"the problem has {np.size(scores)} candidates but the grid has {err.size} points")
        return err

    return loss
