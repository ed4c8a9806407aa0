"""Private percentiles: over a public grid (permute-and-flip on the rank distance) or without one.

:func:`private_percentile` releases a grid value of :func:`~.problem.percentile_problem`
(the counts, the target rank and the two utilities are described in :mod:`.problem`), or,
with ``bounds`` and no grid, :func:`~.._exponential.quantile.private_quantile` at q = p / 100.
:func:`absolute_error_loss` is the loss of the exact expected error in value units.
This module also re-exports the percentile helpers of its siblings (the target, its stability, the
rank distances).

Sources: Chaves et al., Smooth Noisy Max §5 (Def. 5.1); H. Asi & J. Duchi, NeurIPS 2020;
the mathematics page §9.1 and §12.1.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from ...._params import validate_params
from ...._validation import check_array_1d, check_pair, check_random_state, clip_to_bounds
from ....accounting import Accountant, charge
from ....mechanisms import Mechanism, resolve_mechanism
from ....typing import Relation, SeedLike
from .._exponential.quantile import private_quantile
from .._rules import (
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
    SAMPLE,
    SAMPLER,
    SEED,
    SIZE,
    options,
)
from .grid import RANK_CONVENTIONS, check_grid
from .problem import UTILITIES, percentile_problem
from .rank_distance import rank_distances
from .target import PercentileStability, percentile_stability, true_percentile

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


@validate_params(
    {
        "x": SAMPLE,
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
        "size": SIZE,
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
    size: int | None = None,
    accountant: Accountant | None = None,
    granularity: float | None = None,
    sampler: Literal["exact", "float"] | None = None,
    on_out_of_bounds: Literal["clip", "raise"] = "clip",
) -> Any:
    r"""Privately select the p-th percentile (p in [0, 100]): over a public grid, or without one.

    With ``grid``: permute-and-flip on the rank-distance utility (Asi & Duchi
    2020 inverse sensitivity; mathematics §9.1) returns a grid value; the
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
    size : int or None, default=None
        None: one draw; an int: an array of ``size`` independent draws, charged
        as ``size`` releases (mathematics §10.1).
    accountant : Accountant or None, default=None
        charged ``mech.privacy(problem)`` (``size`` times) before any randomness is drawn.
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
        return private_quantile(  # type: ignore[misc]
            x,
            q,
            epsilon if epsilon is not None else float("nan"),
            bounds=bounds,
            integer=integer,
            relation=relation,
            rng=rng,
            size=size,  # type: ignore[arg-type]
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
    charge(accountant, mech.privacy(prob), size=size)
    idx = mech.select(prob, size=size, rng=gen)
    return np.asarray(grid)[idx] if size is not None else np.asarray(grid)[int(idx)].item()


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
