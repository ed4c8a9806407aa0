"""beta_max of the TDT smooth bounds (Yamamoto & Shibuya Thm 4 / Thm 5; mathematics §4.4).

beta_max(N) = min over the states x = (b, c), b + c <= 2N, with LS(x) > 0 and
dist(x) > 0 of

    f(x) = ln(GS / LS(x)) / dist(x),          dist = gd (Thm 4) or ud (Thm 5),

with LS, gd, ud in closed form (:mod:`._sensitivity`).  There are
(2N + 1)(2N + 2)/2 states; :func:`beta_max_scan` evaluates every one (O(N^2),
kept as the reference) and :func:`beta_max_unchecked` (what the library uses)
returns the **same minimum** by branch and bound:

* the state space is covered by rectangles [b0, b1] x [c0, c1] (cut by
  b + c <= 2N); on each one a lower bound of f is computed in O(1):
  ``ln(GS / LS_hi) / dist_hi`` with LS_hi >= LS and dist_hi >= dist on the
  block (both sides of f are monotone: f falls as LS or dist grows);
* ``LS_hi``: a move (db, dc) changes chi2 = d^2 / s (d = b - c, s = b + c,
  r = d / s) by ``q(r, 1/s) * s / (s + Ds)`` with ``Dd = db - dc``,
  ``Ds = db + dc`` and ``q = 2 r Dd - r^2 Ds + Dd^2 / s``; r is increasing in
  b and decreasing in c, so r ranges over [(b0-c1)/(b0+c1), (b1-c0)/(b1+c0)];
  q is quadratic in r (vertex Dd / Ds) and linear in 1/s, so |q| is largest
  at one of six points; ``s / (s + Ds)`` is monotone in s; moves that are
  illegal everywhere in the block (b1 + db < 0, c1 + dc < 0 or
  b0 + c0 + Ds > 2N) are left out; for Thm 5 LS_hi <= T (every state with
  ud > 0 is outside U = {LS > T}).  Blocks reaching s < 3 get no bound;
* ``dist_hi = dist(p) + max_x d(x, p)`` for a state p of the block: a
  distance to a set is 1-Lipschitz in the path metric (YS-supp Lemma 3);
* blocks whose lower bound exceeds the best f found so far (by a relative
  margin that covers the floating-point error) are dropped, the others split
  in four until they are at most ``_LEAF`` x ``_LEAF`` states, which are then
  evaluated exactly with the scan's own code.  The result is therefore the
  scan's float, bit for bit (tests: every N <= 150 and more, slow test).

The minimum lies one move from G (Thm 4, the row 2N - 1) or on the top rows
at |b - c| / (b + c) near 0.4 (Thm 5, T = 6, N >= 23), but nothing here
relies on that: the bound only fails to drop blocks where f is within a small
factor of the minimum, so some 10^3 - 10^5 states are evaluated instead of
O(N^2) (0.1 s at N = 10^4).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator

import numpy as np
from numpy.typing import ArrayLike

from ...._docstrings import fill_doc
from ...._params import positive, validate_params
from ....sensitivity import distance_to_instability_bound
from .._rules import BOUND, COUNTS, N_FAMILIES, THRESHOLD
from ._sensitivity import (
    EXACT_LS_MAX_N,
    MOVES,
    check_tables,
    check_threshold,
    exact_local_sensitivity,
    global_sensitivity,
)
from ._set_distance import gs_dist, unstable_dist

__all__ = ["beta_max", "beta_max_scan", "beta_max_unchecked", "smooth_upper_bound"]

#: States processed at once by the full scan.
_SCAN_BLOCK = 1 << 20

#: Branch and bound: blocks at most this many states wide in b and in c are evaluated exactly.
_LEAF = 8

#: Unit roundoff of float64 and the absolute slack taken off each float ln(GS/LS) (> 8 u + rounding).
_UNIT_ROUNDOFF = 2.0**-53
_LOG_ROUNDING = 4e-15

#: Smallest b + c at which the block bound on LS is used (moves from s <= 2 may reach (0, 0)).
_MIN_S = 3


def _dist_fn(n: int, bound: str, threshold: float) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    if bound == "thm4":
        return lambda b, c: gs_dist(b, c, n)
    return lambda b, c: unstable_dist(b, c, n, threshold)


def _ratios(b: np.ndarray, c: np.ndarray, n: int, gs: float, dist: np.ndarray) -> np.ndarray:
    """F = max(ln(GS/LS), 0) / dist of each state, rounded down; +inf where LS = 0 or dist = 0 (no constraint).

    The float ln(GS/LS) is within a few units in the last place of the exact
    value (LS = num/den of int64 integers, GS = 8(N-1)/N, one division, one
    log), i.e. within 8 u + 2 u |ln| (u = 2^-53); it is lowered by more than
    that, so f never exceeds the exact ratio (it matters for Thm 4, whose
    minimiser has GS/LS = 1 + 1/(2N^2 - 3N)).
    """
    ls = exact_local_sensitivity(b, c, n)
    keep = (dist > 0) & (ls > 0)
    ls = ls[keep]
    out = np.full(b.shape, np.inf)
    log_ratio = np.log(gs / ls) * (1.0 - 1e-14) - _LOG_ROUNDING
    if n > EXACT_LS_MAX_N:  # LS is a float difference of chi2 values <= 2N
        log_ratio -= 16.0 * n * _UNIT_ROUNDOFF / ls
    out[keep] = np.maximum(log_ratio, 0.0) / dist[keep]
    return out


def _state_blocks(n: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """All (2N+1)(2N+2)/2 states, streamed in blocks of whole rows of constant b."""
    rows = max(1, _SCAN_BLOCK // (2 * n + 1))
    for start in range(0, 2 * n + 1, rows):
        bs = np.arange(start, min(start + rows, 2 * n + 1), dtype=np.int64)
        lengths = 2 * n + 1 - bs
        b = np.repeat(bs, lengths)
        c = np.arange(b.size, dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        yield b, c


def beta_max_scan(n: int, bound: str, threshold: float) -> float:
    """The theorems' minimum over every state, O(N^2): the reference for :func:`beta_max_unchecked`."""
    gs = global_sensitivity(n)
    dist_fn = _dist_fn(n, bound, threshold)
    return min(float(_ratios(b, c, n, gs, dist_fn(b, c)).min()) for b, c in _state_blocks(n))


# ---------------------------------------------------------------------------
# branch and bound
# ---------------------------------------------------------------------------

_DB = np.array([m[0] for m in MOVES], dtype=np.int64)
_DC = np.array([m[1] for m in MOVES], dtype=np.int64)
_DD = (_DB - _DC).astype(np.float64)  # change of d = b - c
_DS = _DB + _DC  # change of s = b + c
_VERTEX = np.divide(_DD, _DS, out=np.zeros(_DD.size), where=_DS != 0)  # r maximising |q| inside, if any


def _ls_upper(b0: np.ndarray, b1: np.ndarray, c0: np.ndarray, c1: np.ndarray, n: int) -> np.ndarray:
    """Upper bound on LS over each block's states (+inf where the block reaches b + c < _MIN_S).

    Blocks along axis 0, the 18 moves along axis 1: |q(r, 1/s)| at r in {r_lo, r_hi,
    vertex} and 1/s in {1/s_hi, 1/s_lo}, times max s/(s + Ds), for the moves legal
    somewhere in the block.
    """
    s_lo = (b0 + c0)[:, None]
    s_hi = np.minimum(b1 + c1, 2 * n)[:, None]
    s_lo_f = np.maximum(s_lo, _MIN_S).astype(np.float64)
    s_hi_f = np.maximum(s_hi, _MIN_S).astype(np.float64)
    r_lo = ((b0 - c1) / np.maximum(b0 + c1, 1))[:, None]
    r_hi = ((b1 - c0) / np.maximum(b1 + c0, 1))[:, None]
    vertex = np.where(_DS != 0, np.clip(_VERTEX, r_lo, r_hi), r_lo)
    q_max = np.zeros((b0.size, _DD.size))
    for r in (r_lo, r_hi, vertex):
        lin = 2.0 * _DD * r - _DS * r * r
        for s_f in (s_lo_f, s_hi_f):
            np.maximum(q_max, np.abs(lin + _DD * _DD / s_f), out=q_max)
    rho = np.where(_DS > 0, s_hi_f / (s_hi_f + _DS), np.where(_DS < 0, s_lo_f / (s_lo_f + _DS), 1.0))
    possible = (b1[:, None] + _DB >= 0) & (c1[:, None] + _DC >= 0) & (s_lo + _DS <= 2 * n)
    out = np.where(possible, q_max * rho, 0.0).max(axis=1, initial=0.0)
    out[s_lo[:, 0] < _MIN_S] = np.inf
    return out


def _margin(n: int) -> float:
    """Relative slack on LS_hi.

    It covers the float error of the bound and the rounding-down of f in _ratios (for N <= EXACT_LS_MAX_N; above,
    the result is still a lower bound of the scan's minimum).
    """
    return max(1e-12, 1e-15 * n)


def _split(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Halves of each interval wider than _LEAF (others kept whole): (lo, hi) per child and the parent index."""
    wide = hi - lo + 1 > _LEAF
    mid = (lo + hi) // 2
    w = np.flatnonzero(wide)
    return (
        np.concatenate([lo, mid[w] + 1]),
        np.concatenate([np.where(wide, mid, hi), hi[w]]),
        np.concatenate([np.arange(lo.size), w]),
    )


def _leaf_states(
    b0: np.ndarray, b1: np.ndarray, c0: np.ndarray, c1: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """Every state of the (small) blocks, b + c <= 2N."""
    wb = b1 - b0 + 1
    wc = c1 - c0 + 1
    size = wb * wc
    blk = np.repeat(np.arange(b0.size), size)
    k = np.arange(blk.size) - np.repeat(np.cumsum(size) - size, size)
    b = b0[blk] + k // wc[blk]
    c = c0[blk] + k % wc[blk]
    ok = b + c <= 2 * n
    return b[ok], c[ok]


def block_lower_bounds(
    b0: np.ndarray, b1: np.ndarray, c0: np.ndarray, c1: np.ndarray, n: int, bound: str, threshold: float
) -> tuple[np.ndarray, np.ndarray]:
    """(lower bound of f over each block's states, f at one state of each block).

    Blocks are [b0, b1] x [c0, c1] with b0 + c0 <= 2N, cut by b + c <= 2N.
    The bound is ``ln(GS / LS_hi) / dist_hi`` (+inf if dist_hi = 0: no state
    of the block constrains beta), LS_hi from :func:`_ls_upper` (capped at T
    for thm5: outside U, LS <= T), dist_hi = dist(p) + ceil(max_x h(x - p) / 2).
    """
    gs = global_sensitivity(n)
    dist_fn = _dist_fn(n, bound, threshold)
    top = 2 * n
    pb = np.minimum((b0 + b1) // 2, top - c0)  # a state of the block: b0 <= pb, c0 <= pc, pb + pc <= 2N
    pc = np.minimum((c0 + c1) // 2, top - pb)
    s_hi = np.minimum(b1 + c1, top)
    reach = np.maximum.reduce([b1 - pb, pb - b0, c1 - pc, pc - c0, s_hi - pb - pc, pb + pc - b0 - c0])
    dist_p = dist_fn(pb, pc)
    dist_hi = dist_p + (reach + 1) // 2
    ls_hi = _ls_upper(b0, b1, c0, c1, n)
    if bound == "thm5":  # only states outside U = {LS > T} count, and there LS <= T
        np.minimum(ls_hi, threshold, out=ls_hi)
    ls_hi *= 1.0 + _margin(n)
    with np.errstate(divide="ignore"):
        lower = np.where(dist_hi > 0, np.maximum(np.log(gs / ls_hi), 0.0) / np.maximum(dist_hi, 1), np.inf)
    return lower, _ratios(pb, pc, n, gs, dist_p)


def beta_max_branch_and_bound(n: int, bound: str, threshold: float) -> float:
    """The scan's minimum (same float), evaluating exactly only blocks that may hold it."""
    gs = global_sensitivity(n)
    dist_fn = _dist_fn(n, bound, threshold)
    top = 2 * n
    # first cut: b and c in {0, 1} or {2, ..., 2N} (moves with db or dc = -2 are illegal at 0 and 1)
    lo, hi = np.array([0, 2]), np.array([1, top])
    b0, c0 = (x.ravel() for x in np.meshgrid(lo, lo, indexing="ij"))
    b1, c1 = (x.ravel() for x in np.meshgrid(hi, hi, indexing="ij"))
    best = math.inf
    while b0.size:
        keep = b0 + c0 <= top
        b0, b1, c0, c1 = b0[keep], b1[keep], c0[keep], c1[keep]
        lower, f_p = block_lower_bounds(b0, b1, c0, c1, n, bound, threshold)
        best = min(best, float(f_p.min()))
        live = lower <= best
        leaf = live & (b1 - b0 < _LEAF) & (c1 - c0 < _LEAF)
        if leaf.any():
            lb, lc = _leaf_states(b0[leaf], b1[leaf], c0[leaf], c1[leaf], n)
            best = min(best, float(_ratios(lb, lc, n, gs, dist_fn(lb, lc)).min()))
        split = live & ~leaf
        nb0, nb1, pi = _split(b0[split], b1[split])
        nc0, nc1, pj = _split(c0[split][pi], c1[split][pi])
        b0, b1, c0, c1 = nb0[pj], nb1[pj], nc0, nc1
    return best


@functools.lru_cache(maxsize=64)
def beta_max_unchecked(n: int, bound: str, threshold: float) -> float:
    """beta_max of validated arguments by branch and bound (equal to :func:`beta_max_scan`), cached.

    ValueError if no beta > 0 is certified (Thm 4 above N = EXACT_LS_MAX_N, where
    ln(GS/LS) ~ 1/(2N^2) is below the error of the float LS).
    """
    value = beta_max_branch_and_bound(n, bound, threshold)
    if not value > 0:
        raise ValueError(
            f"bound={bound!r} at n_families={n}: no beta > 0 can be certified in float64 (the Thm 4 beta_max "
            f"is about 1/(2N^2) and LS is a float difference above N = {EXACT_LS_MAX_N}); use bound='thm5'"
        )
    return value


@validate_params({"n_families": N_FAMILIES, "bound": BOUND, "threshold": THRESHOLD})
def beta_max(n_families: int, bound: str = "thm5", threshold: float = 6) -> float:
    r"""Largest beta for which the Theorem 4 / Theorem 5 bound is valid.

    thm4: ``min over states with LS != GS of ln(GS/LS)/gd`` (then
    ``GS e^{-beta gd}`` is exactly the beta-smooth sensitivity); thm5:
    ``min over states outside U of ln(GS/LS)/ud`` (then ``GS e^{-beta ud}``
    is a beta-smooth upper bound):

    .. math::

        \beta_{\max} = \min_{x:\ LS(x) > 0,\ d(x) > 0} \frac{\ln(GS / LS(x))}{d(x)},
        \qquad d = gd \text{ (thm4) or } ud \text{ (thm5)}.

    The minimum over all (2N+1)(2N+2)/2 states is found exactly by branch
    and bound (rigorous lower bounds of the ratio on blocks of states, exact
    evaluation of the blocks that may hold the minimum; docs/mathematics.md
    §4.4), cached per argument set.  mathematics §4.4: thm4 5.8e-4 (N = 30),
    2.0e-5 (N = 150); thm5, T = 6: 0.1457 (N = 30), 0.0337 (N = 150).

    Parameters
    ----------
    n_families : int
        N >= 1 families.
    bound : {"thm5", "thm4"}, default="thm5"
        Theorem 5 (distance to U = {LS > threshold}) or Theorem 4 (distance to
        G = {LS = GS}).
    threshold : float, default=6
        Theorem 5's T, ``6 <= T < global_sensitivity(n_families)`` (ignored for thm4).

    Returns
    -------
    float
        beta_max (never above the exact minimum: each float ratio is rounded down).

    Raises
    ------
    ValueError
        For a bad argument, or for thm4 when no beta > 0 can be certified in
        float64 (N > 500,000, where ln(GS/LS) ~ 1/(2N^2) is below the error of LS).

    References
    ----------
    Yamamoto & Shibuya, private top-SNP selection by the TDT statistic with
    smooth sensitivity, IPCCC 2024, Theorems 4 and 5 and supplement Lemmas
    2–3; docs/mathematics.md §4.4.

    Examples
    --------
    >>> from dpselect.apps.genomics import beta_max
    >>> round(beta_max(30, "thm5"), 4)
    0.1456
    """
    n = n_families
    t = check_threshold(threshold, n) if bound == "thm5" else 0.0
    return beta_max_unchecked(n, bound, t)


@validate_params(
    {"b": COUNTS, "c": COUNTS, "n_families": N_FAMILIES, "beta": positive(), "bound": BOUND, "threshold": THRESHOLD}
)
@fill_doc
def smooth_upper_bound(
    b: ArrayLike, c: ArrayLike, n_families: int, beta: float, bound: str = "thm5", threshold: float = 6
) -> float | np.ndarray:
    """beta-smooth upper bound S(x, r) = GS exp(-beta dist) on each SNP's local sensitivity.

    dist = gd (bound="thm4", YS Thm 4: the exact smooth sensitivity) or ud
    with ``U = {LS > threshold}`` (bound="thm5", YS Thm 5).  ValueError if
    ``beta > beta_max(n_families, bound, threshold)``.  One family change
    ("replace" neighbours) moves every table by one move, so each S(., r) and
    max_r S(x, r) are beta-smooth for the panel (mathematics §4.4).

    Parameters
    ----------
    %(tdt_table_counts)s
    beta : float
        The smoothness, ``0 < beta <= beta_max(n_families, bound, threshold)``.
    bound : {"thm5", "thm4"}, default="thm5"
        Theorem 5 (distance to U) or Theorem 4 (distance to G).
    threshold : float, default=6
        Theorem 5's T, ``6 <= T < global_sensitivity(n_families)`` (ignored for thm4).

    Returns
    -------
    float or ndarray
        S(x, r) of each table (a float for scalar counts).

    Examples
    --------
    >>> from dpselect.apps.genomics import smooth_upper_bound
    >>> round(float(smooth_upper_bound(30, 10, 150, 0.03)), 4)
    7.2627
    """
    n = n_families
    b, c = check_tables(b, c, n)
    t = check_threshold(threshold, n) if bound == "thm5" else 0.0
    bmax = beta_max_unchecked(n, bound, t)
    if beta > bmax:
        raise ValueError(
            f"beta = {beta!r} exceeds beta_max = {bmax!r} for bound={bound!r}, "
            f"n_families={n}" + (f", threshold={t!r}" if bound == "thm5" else "")
        )
    dist = gs_dist(b, c, n) if bound == "thm4" else unstable_dist(b, c, n, t)
    return distance_to_instability_bound(global_sensitivity(n), dist, beta)
