"""One private quantile without a candidate grid: real or integer outputs, exact law and error.

The exponential mechanism over the pieces between consecutive order
statistics (Smith 2011; the inverse-sensitivity view of Asi & Duchi 2020),
with the score of :mod:`.quantile_pieces` (the larger of the rank distance and
IndExp's normalised distance); integer data give integer outputs (ties exact),
real data outputs on the public power-of-two grid lambda Z (``granularity``,
default about 2^-40 of the bounds' magnitude; a data value on the grid is an
atom of its own; 0 gives the continuous law sampled with floats, not
floating-point safe).  Records outside the bounds are clamped to them.  On
the grid the piece and the grid point are drawn exactly by default
(``sampler="exact"``: exact rational scores and the exact exponential-weights
rejection of :mod:`dpselect.noise.exact`); ``sampler="float"`` draws the piece
with the float sampler.  O(n log n) (one ``np.unique``), log space.
"""

from __future__ import annotations

from typing import Literal, overload

import numpy as np
from numpy.typing import ArrayLike

from ...._params import validate_params
from ....accounting import Accountant
from ....typing import Relation, SeedLike
from .._rules import (
    ACCOUNTANT,
    BOUNDS,
    EPSILON,
    FLOAT_SAMPLER,
    GRANULARITY,
    INTEGER,
    LEVEL,
    OUT_OF_BOUNDS_RULE,
    RELATION,
    SAMPLE,
    SAMPLER,
    SEED,
    SIZE,
)
from .mechanism import _release

__all__ = ["private_median", "private_quantile"]


_QUANTILE_RULES = {
    "x": SAMPLE,
    "q": LEVEL,
    "epsilon": EPSILON,
    "bounds": BOUNDS.or_none(),
    "integer": INTEGER,
    "relation": RELATION,
    "rng": SEED,
    "size": SIZE,
    "float_sampler": FLOAT_SAMPLER,
    "accountant": ACCOUNTANT,
    "granularity": GRANULARITY,
    "sampler": SAMPLER,
    "on_out_of_bounds": OUT_OF_BOUNDS_RULE,
}
Method = Literal["auto", "race", "inverse"]
Sampler = Literal["exact", "float"]
OutOfBounds = Literal["clip", "raise"]


@overload
def private_quantile(
    x: ArrayLike,
    q: float,
    epsilon: float,
    *,
    bounds: tuple[float, float] | None = ...,
    integer: bool | None = ...,
    relation: Relation = ...,
    rng: SeedLike = ...,
    size: None = ...,
    float_sampler: Method = ...,
    accountant: Accountant | None = ...,
    granularity: float | None = ...,
    sampler: Sampler = ...,
    on_out_of_bounds: OutOfBounds = ...,
) -> float | int: ...
@overload
def private_quantile(
    x: ArrayLike,
    q: float,
    epsilon: float,
    *,
    bounds: tuple[float, float] | None = ...,
    integer: bool | None = ...,
    relation: Relation = ...,
    rng: SeedLike = ...,
    size: int,
    float_sampler: Method = ...,
    accountant: Accountant | None = ...,
    granularity: float | None = ...,
    sampler: Sampler = ...,
    on_out_of_bounds: OutOfBounds = ...,
) -> np.ndarray: ...
@validate_params(_QUANTILE_RULES)
def private_quantile(
    x: ArrayLike,
    q: float,
    epsilon: float,
    *,
    bounds: tuple[float, float] | None = None,
    integer: bool | None = None,
    relation: Relation = "add_remove",
    rng: SeedLike = None,
    size: int | None = None,
    float_sampler: Method = "auto",
    accountant: Accountant | None = None,
    granularity: float | None = None,
    sampler: Sampler = "exact",
    on_out_of_bounds: OutOfBounds = "clip",
) -> float | int | np.ndarray:
    r"""Privately estimate the q-th quantile of ``x`` (no candidate grid): epsilon-DP under ``relation``.

    The target is the order statistic :math:`x_{(k)}`, :math:`k = \max(1, \lceil q n \rceil)`
    (``numpy.quantile(x, q, method="inverted_cdf")``).  The output space is
    the grid points :math:`\lambda\mathbb{Z} \cap [a, b]` (real outputs,
    :math:`\lambda` = ``granularity``) or the integers of ``bounds``
    (``integer=True``, the default for an integer dtype): the exponential
    mechanism with the score

    .. math:: \psi(t) = \max\Big(R(t),\ \frac{\max(L - qn,\ qn - C)}{w}\Big),
              \qquad P(t) \propto e^{-\varepsilon \psi(t) / 2},

    :math:`L = \#\{x_i < t\}`, :math:`C = \#\{x_i \le t\}`, :math:`R` the
    rank distance (integer and real outputs alike, the integers being the grid 1:
    :math:`\max(0, \min(C, L + 1) - k, k - C)`; the median: Duff's exact
    add/remove distance) and :math:`w = \max(q, 1 - q)` under add/remove
    (IndExp's normalisation; 1 under replace): the pointwise larger of two
    sensitivity-1 losses (docs/mathematics.md §12.1); at q = 1/2 and
    :math:`\varepsilon \le 0.1` (a public rule) also OpenDP's balance
    :math:`|(1 - q) L - q (n - C)| / w`, which doubles the score of the atoms next to
    a tied median.  :math:`\psi` is
    constant on the pieces between consecutive distinct values and on each
    data value (an atom: integer outputs, or a real value on the grid, such as
    0, an integer or a bound), so the mechanism draws a piece with probability
    :math:`\propto |p| e^{-\varepsilon\psi_p/2}` (:math:`|p|` its number of
    grid points) and a uniform point of it, with integer arithmetic.  On the
    grid the piece and the point are drawn together exactly
    (``sampler="exact"``, the default): the rates
    :math:`\varepsilon(\psi_p - \min\psi)/2` are exact rationals and a
    rejection with exact Bernoulli(:math:`2^j e^{-\gamma}`) acceptances decides
    with integers only (about 1.2 rounds per draw).  The output is an exact
    multiple of :math:`\lambda` (floating-point safe: no output is possible
    under one dataset and impossible under a neighbour).  Integer outputs land exactly on a run of ties; real outputs
    never fall between tied records; a tied value on the grid is output
    exactly with the probability its score gives.  Records outside ``bounds``
    are clamped to them (no exception, no warning).

    Parameters
    ----------
    x : array_like or dask array
        1-D sample, finite (records outside ``bounds`` are clamped to them).
    q : float
        quantile level in [0, 1].
    epsilon : float
        privacy budget (> 0): epsilon-DP under ``relation`` (add/remove or replace
        neighbours; mathematics §12.1, and §15.2 without bounds).
    bounds : tuple of float or None, default=None
        public ``(a, b)``, ``a < b``; None: no bounds (:func:`unbounded_quantile`:
        a quarter of epsilon releases bounds by AboveThreshold, no bound is read from the data).
    integer : bool or None, default=None
        integer outputs; None: whether ``x`` has an integer dtype.
    relation : str, default="add_remove"
        "add_remove" or "replace" (the utility is adapted; docs/mathematics.md).
    rng : None, int or numpy.random.Generator, default=None
        randomness; a seed reproduces.
    size : int or None, default=None
        None for one value, else the number of iid draws (an array).
    float_sampler : str, default="auto"
        "auto", "race" or "inverse": how the float sampler draws the piece
        (same law; ``sampler="float"``, integer outputs and ``granularity=0``).
    accountant : Accountant or None, default=None
        charged ``Privacy(epsilon, 0, relation)`` before any randomness is drawn.
    granularity : float or None, default=None
        real outputs: the grid :math:`\lambda`, a power of two <= b - a with
        max(|a|, |b|) < 2^51 lambda; None gives
        :func:`~dpselect.apps.quantiles._exponential.piecewise_em.default_quantile_granularity`:
        2^(floor(log2 max(|a|, |b|)) - 40), at most 2^(floor(log2(b - a)) - 20),
        from the public bounds only (100x looser bounds move it by 2^7 only).  0 gives the continuous law sampled with
        floats (a uniform float in the piece: not floating-point safe, for
        reproductions).  Integer outputs: None (or 1).
    sampler : str, default="exact"
        real outputs on the grid: "exact" draws the piece and the grid point
        with integer arithmetic only (:func:`dpselect.noise.exact.exponential_weights`:
        no float in any decision; with ``rng="secure"`` every integer comes
        from the OS); "float" chooses the piece with the float sampler of
        ``float_sampler`` (faster, with the float sampler's worst-case gap:
        docs/floating-point.md).  Integer outputs and ``granularity=0`` always
        use the float piece sampler.
    on_out_of_bounds : str, default="clip"
        "clip": records outside ``bounds`` are clamped to them (private: no
        exception, no warning); "raise": refuse them with a ValueError -- a
        curator's data check, **not private** (the exception reveals a record).

    Returns
    -------
    float, int or ndarray
        the private quantile (int for integer outputs, a multiple of
        ``granularity`` for real ones).

    See Also
    --------
    private_median : Private (lower) median :math:`x_{(\lceil n/2 \rceil)}`: epsilon-DP under ``relation``
    local_sensitivity_quantile : LS of the order statistic x_(index) (0-based) under replace-one, data in [a, b]
    quantile_expected_error : Exact E|private_quantile(x, q) - target| (default target: x_(k)), closed form per ...

    References
    ----------
    A. Smith, "Privacy-preserving statistical estimation with optimal
    convergence rates", STOC 2011 (§3, the exponential mechanism for quantiles);
    H. Asi & J. Duchi, "Instance-optimality in differential privacy via
    approximate inverse sensitivity mechanisms", NeurIPS 2020 (Def. 2.1);
    F. McSherry & K. Talwar, FOCS 2007 (Thm 6); I. Mironov, "On significance of
    the least significant bits for differential privacy", CCS 2012 (why a
    grid).  Proof: docs/mathematics.md §12.1.

    Examples
    --------
    >>> import numpy as np
    >>> from dpselect.apps.quantiles import private_quantile
    >>> x = np.random.default_rng(0).normal(size=1000)
    >>> y = private_quantile(x, 0.9, 1.0, bounds=(-5, 5), rng=1)
    >>> round(y, 2), (y * 2**38).is_integer()  # default grid 2^(floor(log2 5) - 40)
    (1.24, True)
    >>> private_quantile(x, 0.9, 1.0, bounds=(-5, 5), rng=1, granularity=2**-4)
    1.25
    >>> private_quantile(np.array([3, 5, 5, 5, 9]), 0.5, 5.0, bounds=(0, 10), rng=1)
    5
    >>> private_quantile(np.r_[np.zeros(700), np.arange(1.0, 301.0)], 0.25, 1.0, bounds=(0, 1000), rng=1)
    0.0
    """
    return _release(
        x,
        q,
        epsilon,
        bounds,
        integer,
        relation,
        rng,
        size,
        float_sampler,
        accountant,
        granularity,
        sampler,
        on_out_of_bounds,
    )


@overload
def private_median(
    x: ArrayLike,
    epsilon: float,
    *,
    bounds: tuple[float, float] | None = ...,
    integer: bool | None = ...,
    relation: Relation = ...,
    rng: SeedLike = ...,
    size: None = ...,
    float_sampler: Method = ...,
    accountant: Accountant | None = ...,
    granularity: float | None = ...,
    sampler: Sampler = ...,
    on_out_of_bounds: OutOfBounds = ...,
) -> float | int: ...
@overload
def private_median(
    x: ArrayLike,
    epsilon: float,
    *,
    bounds: tuple[float, float] | None = ...,
    integer: bool | None = ...,
    relation: Relation = ...,
    rng: SeedLike = ...,
    size: int,
    float_sampler: Method = ...,
    accountant: Accountant | None = ...,
    granularity: float | None = ...,
    sampler: Sampler = ...,
    on_out_of_bounds: OutOfBounds = ...,
) -> np.ndarray: ...
@validate_params({k: v for k, v in _QUANTILE_RULES.items() if k != "q"})
def private_median(
    x: ArrayLike,
    epsilon: float,
    *,
    bounds: tuple[float, float] | None = None,
    integer: bool | None = None,
    relation: Relation = "add_remove",
    rng: SeedLike = None,
    size: int | None = None,
    float_sampler: Method = "auto",
    accountant: Accountant | None = None,
    granularity: float | None = None,
    sampler: Sampler = "exact",
    on_out_of_bounds: OutOfBounds = "clip",
) -> float | int | np.ndarray:
    r"""Private (lower) median :math:`x_{(\lceil n/2 \rceil)}`: epsilon-DP under ``relation``.

    :func:`private_quantile` at q = 1/2.  Under add/remove its utility is the
    exact add/remove distance of the Duff median (Gillenwater & Muñoz Medina),
    so real outputs off the grid have exactly the law of
    :func:`~dpselect.apps.quantiles.duff_median` (on the same grid
    ``granularity``, the exponential mechanism over the grid points of
    ``bounds``; with ``granularity=0`` its continuous law); a data value on the
    grid is an atom scored by the same distance (released exactly; at epsilon <= 0.1
    the atoms also by OpenDP's balance, mathematics §12.1); integer
    data (or ``integer=True``) give integer outputs, exactly on a run of tied
    records.  Records outside ``bounds`` are clamped to them.

    .. math:: P(t) \propto e^{-\varepsilon \psi(t) / 2}, \quad t \in \lambda\mathbb{Z} \cap [a, b].

    Parameters
    ----------
    x : array_like or dask array
        1-D sample (records outside ``bounds`` are clamped to them).
    epsilon : float
        privacy budget (> 0): epsilon-DP under ``relation`` (add/remove or replace
        neighbours; mathematics §12.1).
    bounds : tuple of float or None, default=None
        public ``(a, b)``, ``a < b``; None: no bounds, the route of :func:`private_quantile`
        (:func:`unbounded_quantile`: a quarter of epsilon releases bounds by AboveThreshold,
        mathematics §15.2).
    integer : bool or None, default=None
        integer outputs; None: whether ``x`` has an integer dtype.
    relation : str, default="add_remove"
        "add_remove" or "replace".
    rng : None, int or numpy.random.Generator, default=None
        randomness; a seed reproduces.
    size : int or None, default=None
        None for one value, else the number of iid draws.
    float_sampler : str, default="auto"
        "auto", "race" or "inverse": the float piece sampler (same law).
    accountant : Accountant or None, default=None
        charged ``Privacy(epsilon, 0, relation)`` before any randomness is drawn.
    granularity : float or None, default=None
        real outputs: the output grid, a power of two (None: about 2^-40 max(|a|, |b|);
        0: continuous, floats); see :func:`private_quantile`.
    sampler : str, default="exact"
        "exact" (integer arithmetic only) or "float": how a real output on the
        grid is drawn (same law); see :func:`private_quantile`.
    on_out_of_bounds : str, default="clip"
        "clip" (private) or "raise" (a data check, not private); see :func:`private_quantile`.

    Returns
    -------
    float, int or ndarray
        the private median (a multiple of ``granularity`` for real outputs).

    See Also
    --------
    private_quantile : Privately estimate the q-th quantile of ``x`` (no candidate grid): epsilon-DP under ...
    duff_median : Sample the Duff exponential mechanism for the (lower) median
    duff_median_intervals : Exact output law of :func:`duff_median` (``granularity=0``) as a piecewise-uniform ...

    References
    ----------
    J. Gillenwater & A. Muñoz Medina (Duff median: exact add/remove distance);
    A. Smith, STOC 2011; docs/mathematics.md §12.1 (the grid: Mironov, CCS 2012).

    Examples
    --------
    >>> import numpy as np
    >>> from dpselect.apps.quantiles import private_median
    >>> private_median(np.array([30, 38, 40, 40, 40, 40, 45, 50]), 1.0, bounds=(0, 99), rng=0)
    40
    """
    return _release(
        x,
        0.5,
        epsilon,
        bounds,
        integer,
        relation,
        rng,
        size,
        float_sampler,
        accountant,
        granularity,
        sampler,
        on_out_of_bounds,
    )
