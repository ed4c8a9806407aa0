r"""Duff mean: the exponential mechanism on the add/remove distance to "mean = v".

Gillenwater & Muñoz Medina (Duff); mathematics §6.1.  Neighbour relation:
**add/remove**.  Level sets ``J_k = [L_k, U_k]`` of means reachable with at
most ``k`` add/remove operations (at least one addition) are exact up to a
finite set (derivation in :func:`duff_mean_levels`); the utility is ``-k`` on
the ring ``J_k \ J_{k-1}`` and ``-(K+1)`` beyond the public number of levels
``K``.  Floating point: the level-set ends are exact rationals of Python
integers (every float is a multiple of a common power of two); the grid
release uses their exact grid indices, the continuous law and
:func:`duff_mean_levels` their correctly rounded floats.  Re-exported by
:mod:`dpselect.apps.quantiles`.

Examples
--------
>>> from dpselect.apps.quantiles import duff_mean
>>> v = duff_mean([0.2, 0.4, 0.5, 0.9], 1.0, bounds=(0.0, 1.0), rng=0)
>>> 0.0 <= v <= 1.0
True
"""

from __future__ import annotations

from typing import Any, Literal, overload

import numpy as np
from numpy.typing import ArrayLike

from ...._docstrings import fill_doc
from ...._params import int_at_least, validate_params
from ...._validation import check_random_state
from ....accounting import Accountant, charge
from ....output_law import OutputLaw
from ....typing import SeedLike
from .._exponential.piecewise_em import (
    check_output_grid,
    em_privacy,
    grid_ceil,
    piecewise_probabilities,
    sample_piecewise_em,
    sample_piecewise_grid,
)
from .._order_stats import check_points, sorted_padded
from .._rules import (
    ACCOUNTANT,
    BOUNDS,
    EPSILON,
    FLOAT_SAMPLER,
    GRANULARITY,
    OUT_OF_BOUNDS_RULE,
    REALS,
    SAMPLE,
    SEED,
    SIZE,
)
from .mean_levels import LEVELS, _check_levels, _Levels, _mean_levels

__all__ = ["duff_mean", "duff_mean_intervals", "duff_mean_utility"]


def _mean_pieces(ext: np.ndarray, a: float, b: float, K: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    L, U = _mean_levels(ext, a, b, K)
    lefts, rights = _piece_ends(L, U, a, b)
    return lefts, rights, _piece_utilities(L.size - 1, K)


def _piece_ends(L: np.ndarray, U: np.ndarray, a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    """Pieces [a, L_K'], [L_k, L_{k-1}] (k = K'..1), [U_{k-1}, U_k] (k = 1..K'), [U_K', b]."""
    lefts = np.concatenate(([a], L[::-1][:-1], U[:-1], [U[-1]]))
    rights = np.concatenate(([L[-1]], L[::-1][1:], U[1:], [b]))
    return lefts, rights


def _piece_utilities(Kp: int, K: int) -> np.ndarray:
    k = np.arange(Kp, 0, -1, dtype=np.float64)
    return -np.concatenate(([K + 1.0], k, k[::-1], [K + 1.0]))


def _grid_pieces(ext: np.ndarray, a: float, b: float, K: int, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """(first grid index, utility) of each piece, the indices ceil(l_j / lambda) exact."""
    levels = _Levels(ext, K, lam)
    L, U = levels.grid_starts(a, b, lam)
    return _piece_ends(L, U, grid_ceil(np.array([a]), lam)[0], None)[0], _piece_utilities(levels.Kp, K)


@validate_params({"x": SAMPLE, "epsilon": EPSILON, "bounds": BOUNDS, "levels": int_at_least(1, none=True)})
@fill_doc
def duff_mean_intervals(
    x: ArrayLike, epsilon: float, *, bounds: tuple[float, float], levels: int | None = None
) -> OutputLaw:
    """Exact output law of :func:`duff_mean` (``granularity=0``), uniform on each piece.

    Pieces, left to right: [a, L_K'] (utility -(K+1)), the left rings
    [L_k, L_{k-1}] (utility -k, k = K'..1), the right rings [U_{k-1}, U_k]
    (k = 1..K'), and [U_K', b] (utility -(K+1)); empty pieces have probability 0.
    The utilities are :func:`duff_mean_utility` at the pieces' interiors.

    Parameters
    ----------
    %(duff_data)s
    levels : int or None, default=None
        K (public); None: ``min(max(ceil(80/epsilon), 8), 10**6)``.

    Returns
    -------
    OutputLaw
        The pieces (``law.lo``, ``law.hi``) and their probabilities.

    See Also
    --------
    duff_mean : Duff exponential mechanism for the mean: epsilon-DP under add/remove
    duff_mean_utility : Truncated Duff utility of the mean: ``-min(d(v), K + 1)`` (a.e
    duff_mean_levels : Ends ``(L, U)`` of the level sets J_k, k = 0..K' (K' = min(levels, n + 1))

    Examples
    --------
    >>> from dpselect.apps.quantiles import duff_mean_intervals
    >>> law = duff_mean_intervals([1.0, 3.0], 1.0, bounds=(0.0, 4.0), levels=2)
    >>> law.lo.round(3).tolist()
    [0.0, 0.5, 1.333, 2.0, 2.667, 3.5]
    """
    a, b = bounds
    K = _check_levels(levels, epsilon)
    ext = sorted_padded(x, a, b)
    lefts, rights, utilities = _mean_pieces(ext, a, b, K)
    return OutputLaw(piecewise_probabilities(lefts, rights, utilities, epsilon), lo=lefts, hi=rights)


@validate_params({"v": REALS, "x": SAMPLE, "bounds": BOUNDS, "levels": LEVELS})
@fill_doc
def duff_mean_utility(v: ArrayLike, x: ArrayLike, *, bounds: tuple[float, float], levels: int) -> float | np.ndarray:
    """Truncated Duff utility of the mean: ``-min(d(v), K + 1)`` (a.e. exact).

    ``d(v) = min{k : v in J_k}`` (:func:`duff_mean_levels`), 0 at mean(x).  It
    equals the true add/remove distance to "mean = v" except on the finite set
    of means reachable by pure removals (and the level-0 point), where it is
    larger -- i.e. off a null set it is exact, never a lower bound on the
    distance.  Hence for neighbours |u_x(v) - u_y(v)| <= 1 for all v outside a
    finite set (e.g. x = {0}, y = {0, 10} on [0, 10]: at v = 0 the values are
    0 and -2), which does not change the EM density, so the mechanism is
    epsilon-DP.  Clipping at K + 1 preserves the bound; K must be public.

    Parameters
    ----------
    v : array_like
        Points of [a, b] (any shape).
    %(clamped_data)s
    levels : int
        K (public, >= 1).

    Returns
    -------
    float or ndarray
        The utility at ``v`` (a float for a scalar ``v``), in [-(K + 1), 0].

    See Also
    --------
    duff_mean : Duff exponential mechanism for the mean: epsilon-DP under add/remove
    duff_mean_intervals : Exact output law of :func:`duff_mean` (``granularity=0``), uniform on each piece
    duff_mean_levels : Ends ``(L, U)`` of the level sets J_k, k = 0..K' (K' = min(levels, n + 1))

    Examples
    --------
    >>> from dpselect.apps.quantiles import duff_mean_utility
    >>> duff_mean_utility([2.0, 0.5], [1.0, 3.0], bounds=(0.0, 4.0), levels=2).tolist()
    [0.0, -2.0]
    """
    a, b = bounds
    ext = sorted_padded(x, a, b)
    K = levels
    L, U = _mean_levels(ext, a, b, K)
    vv = check_points(v, "v")
    if ((vv < a) | (vv > b)).any():
        raise ValueError("v must lie within bounds")
    mu = L[0]
    left = np.searchsorted(-L, -vv, side="left")
    right = np.searchsorted(U, vv, side="left")
    d = np.where(vv < mu, left, np.where(vv > mu, right, 0))
    d = np.where(d > L.size - 1, K + 1, d).astype(np.float64)
    u = 0.0 - d
    return float(u) if u.ndim == 0 else u


@overload
def duff_mean(
    x: ArrayLike,
    epsilon: float,
    *,
    bounds: tuple[float, float],
    levels: int | None = ...,
    rng: SeedLike = ...,
    size: None = ...,
    float_sampler: Literal["auto", "race", "inverse"] = ...,
    accountant: Accountant | None = ...,
    granularity: float | None = ...,
    on_out_of_bounds: Literal["clip", "raise"] = ...,
) -> float: ...
@overload
def duff_mean(
    x: ArrayLike,
    epsilon: float,
    *,
    bounds: tuple[float, float],
    levels: int | None = ...,
    rng: SeedLike = ...,
    size: int,
    float_sampler: Literal["auto", "race", "inverse"] = ...,
    accountant: Accountant | None = ...,
    granularity: float | None = ...,
    on_out_of_bounds: Literal["clip", "raise"] = ...,
) -> np.ndarray: ...
@validate_params(
    {
        "x": SAMPLE,
        "epsilon": EPSILON,
        "bounds": BOUNDS,
        "levels": int_at_least(1, none=True),
        "rng": SEED,
        "size": SIZE,
        "float_sampler": FLOAT_SAMPLER,
        "accountant": ACCOUNTANT,
        "granularity": GRANULARITY,
        "on_out_of_bounds": OUT_OF_BOUNDS_RULE,
    }
)
def duff_mean(
    x: ArrayLike,
    epsilon: float,
    *,
    bounds: tuple[float, float],
    levels: int | None = None,
    rng: SeedLike = None,
    size: int | None = None,
    float_sampler: Literal["auto", "race", "inverse"] = "auto",
    accountant: Accountant | None = None,
    granularity: float | None = None,
    on_out_of_bounds: Literal["clip", "raise"] = "clip",
) -> float | np.ndarray:
    """Duff exponential mechanism for the mean: epsilon-DP under add/remove.

    Utility ``u(v) = -min(d(v), K + 1)`` with ``K = levels`` (public; default
    ``min(max(ceil(80/epsilon), 8), 10**6)``, depending on epsilon only): the
    rings between consecutive level sets J_k get ``-k`` and the rest of
    [a, b] beyond J_K gets ``-(K+1)`` (for n + 1 <= K, J_{n+1} = [a, b] already).
    Density ∝ exp(epsilon u / 2) on [a, b] (Delta = 1); sampled with the same
    piecewise sampler as the median.  See :func:`duff_mean_levels`.

    ``accountant`` (optional :class:`~dpselect.accounting.Accountant`) is
    charged ``Privacy(epsilon, 0, "add_remove")`` before any randomness is drawn.

    ``granularity`` (a power of two <= b - a; None: 2^(floor(log2(b - a)) - 20)):
    the output is a grid point k lambda of [a, b] drawn exactly with
    probability ∝ exp(epsilon u(k lambda) / 2) (the exponential mechanism over
    the public grid, floating-point safe; ``float_sampler`` unused); 0 gives the
    continuous mechanism sampled with floats (paper reproductions).

    Parameters
    ----------
    x : array_like
        1-D array of finite floats (n >= 1); records outside ``bounds`` are clamped to them.
    epsilon : float
        Privacy parameter (> 0): epsilon-DP under add/remove neighbours (mathematics §6.1).
    bounds : tuple of float
        Public ``(a, b)`` with ``a < b``.
    levels : int or None, default=None
        K (public); None: ``min(max(ceil(80/epsilon), 8), 10**6)``.
    rng : None, int, Generator or "secure", default=None
        The randomness (keyword-only); a seed reproduces.
    size : int or None, default=None
        None (one float) or the number of iid draws (an array).
    float_sampler : {"auto", "race", "inverse"}, default="auto"
        How the piece is chosen on the continuous path (same law).
    accountant : Accountant or None, default=None
        Charged ``Privacy(epsilon, 0, "add_remove")`` before any randomness is drawn.
    granularity : float or None, default=None
        The output grid (a power of two <= b - a; None: 2^(floor(log2(b - a)) - 20); 0: floats).
    on_out_of_bounds : {"clip", "raise"}, default="clip"
        "clip": records outside ``bounds`` are clamped to them (private); "raise": a
        ValueError instead, **not private**.

    Returns
    -------
    float or ndarray
        The private mean (an array of ``size`` draws).

    See Also
    --------
    duff_mean_intervals : Exact output law of :func:`duff_mean` (``granularity=0``), uniform on each piece
    duff_mean_utility : Truncated Duff utility of the mean: ``-min(d(v), K + 1)`` (a.e
    duff_mean_levels : Ends ``(L, U)`` of the level sets J_k, k = 0..K' (K' = min(levels, n + 1))
    """
    a, b = bounds
    K = _check_levels(levels, epsilon)
    lam = check_output_grid(granularity, a, b)
    ext = sorted_padded(x, a, b, on_out_of_bounds=on_out_of_bounds)
    gen = check_random_state(rng)
    charge(accountant, em_privacy(epsilon), size=size)
    if lam:
        starts, utilities = _grid_pieces(ext, a, b, K, lam)
        return sample_piecewise_grid(None, utilities, epsilon, a, b, lam, size, gen, starts=starts)
    lefts, rights, utilities = _mean_pieces(ext, a, b, K)
    return sample_piecewise_em(lefts, rights, utilities, epsilon, size, gen, float_sampler)
