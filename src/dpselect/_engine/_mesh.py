"""Quadrature mesh of the noisy-max engine (see :mod:`dpselect._engine`).

Nodes are returned as (anchor, offset) pairs: the point y = anchor + offset is
never formed, every argument y - a_s is computed as offset + (anchor - a_s), so
panels of width ~1 next to a score at a_s = -1e300 are resolved exactly.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

__all__ = ["Panels", "half_width", "nodes", "panels", "profile"]

_NODES_PER_PANEL = 12
_GL_X, _GL_W = np.polynomial.legendre.leggauss(_NODES_PER_PANEL)
_LOG_FLOOR = -750.0
_LIFT_FLOOR = -60.0  # above the top score the cut drops at most e^-60 P_min (relative 9e-27)
_BIG = 1.7e308
_NATS_PER_PANEL = 4.0  # 12-point Gauss-Legendre on e^{c x} over a 4-nat change: error ~3e-17
_NEGLIGIBLE = 800.0  # below e^-800 of the mode a law's tail is not refined any further
_NEGLIGIBLE_LOG_CONCAVE = 80.0
_FAR = 2.0**56  # beyond 2^56 |a_min| all arguments y - a_s agree to relative 2^-56
_BOUND_GROUPS = 256  # groups in the upper bound on G used to place the lower cut


@lru_cache(maxsize=256)
def half_width(noise: Any) -> float:
    """The z > 0 where the density has fallen to half its value at the mode 0 (by bisection).

    Every law here has its mode at 0 and a density non-increasing on [0, inf).
    Heavy-tailed or spiky laws (polynomial tails with gamma near 1, LLN with a
    large sigma) have a half-width far below their interquartile width, so
    panels sized by the latter would not resolve the mode.  Cached per
    (immutable, hashable) noise law.
    """
    target = float(noise.logpdf(0.0)) - np.log(2.0)
    lo, hi = 0.0, float(noise.width)
    while float(noise.logpdf(hi)) > target and hi < 1e300:
        lo, hi = hi, 2.0 * hi
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if float(noise.logpdf(mid)) > target else (lo, mid)
    return hi


@lru_cache(maxsize=256)
def refine_start(noise: Any) -> float:
    """Smallest panel next to a score.

    The mode's half-width for spiky laws, and h 2^-30 for laws whose density is not
    analytic on either side of the mode (|z|^gamma with gamma not an even integer, LLN),
    where Gauss-Legendre needs geometric panels towards the mode.
    """
    h = 0.5 * float(noise.width)
    start = min(half_width(noise), h)
    if not getattr(noise, "analytic_mode", True):
        start = min(start, h * 2.0**-30)
    return start


@lru_cache(maxsize=256)
def profile(noise: Any, side: int) -> np.ndarray:
    """Panel edges 0 = o_0 < o_1 < ... (>= 1.7e308) for distances from a score on ``side`` (+1/-1).

    Near 0: geometric refinement from the mode's half-width up to h (half the
    interquartile width), then panels of length min(max(o, h), 4 / slope), slope
    the largest rate of change of log f and log F on the panel, so that neither
    varies by more than 4 nats per panel; once log f has dropped 800 nats below
    its mode (and log F below -800 on the left; 80 nats for log-concave laws, whose
    integrands all decay at least as fast away from a cluster) the panels double.
    """
    if side < 0 and np.isfinite(noise.support[0]):
        return np.zeros(1)
    h = 0.5 * float(noise.width)
    spike = refine_start(noise)
    lo = spike * 2.0**-4
    with np.errstate(over="ignore"):
        d = lo * 2.0 ** (np.arange(0, int(8 * (np.log2(_BIG) - np.log2(lo))) + 2) / 8.0)
    d[-1] = np.inf
    with np.errstate(all="ignore"):
        lp = np.asarray(noise.logpdf(side * d), dtype=float)
        lc = np.asarray(noise.logcdf(side * d), dtype=float)
        dd = np.diff(d)
        slope = np.maximum(np.abs(np.diff(lp)), np.abs(np.diff(lc))) / dd
    slope = np.nan_to_num(slope, nan=0.0, posinf=0.0)
    slope = np.maximum(slope, np.concatenate([slope[1:], [0.0]]))  # cover the next interval too
    lp0 = float(noise.logpdf(0.0))
    # log-concave laws: every integrand decays at least as fast as the anchor's own factor
    # away from a cluster, so 80 nats suffice; otherwise the tail is refined down to e^-800
    cut = _NEGLIGIBLE_LOG_CONCAVE if getattr(noise, "log_concave", False) else _NEGLIGIBLE
    gone = (lp0 - lp[:-1] > cut) & ((side > 0) | (lc[:-1] < -cut))
    out = [0.0]
    o = spike
    while o < h:
        out.append(o)
        o *= 2.0
    o = out[-1]
    while o < _BIG:
        i = min(int(np.searchsorted(d, o, side="right")) - 1, slope.size - 1)
        length = max(o, h)
        if i >= 0 and not gone[i] and slope[i] > 0:
            length = min(length, _NATS_PER_PANEL / float(slope[i]))
            j = min(int(np.searchsorted(d, o + length, side="right")) - 1, slope.size - 1)
            if slope[j] > 0:
                length = min(length, _NATS_PER_PANEL / float(slope[j]))
            length = max(length, 1e-3 * h)
        o = min(float(o) + float(length), _BIG)  # Python floats: inf without a warning
        out.append(o)
    return np.asarray(out)


def _ragged(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(owner, index) pairs enumerating range(n[i]) for every i, without a Python loop."""
    owner = np.repeat(np.arange(n.size), n)
    starts = np.repeat(np.cumsum(n) - n, n)
    return owner, np.arange(owner.size) - starts


def _log_cdf_bound(values: np.ndarray, counts: np.ndarray, noise: Any, ys: np.ndarray) -> np.ndarray:
    """An upper bound on G(y) = sum_k c_k log F(y - v_k) at every y of ``ys``.

    Exact for at most _BOUND_GROUPS groups; otherwise the top groups exactly and the rest
    in blocks of consecutive scores, each block's count at its lowest score (log F is
    nondecreasing).
    """
    K = values.size
    if K > _BOUND_GROUPS:
        half = _BOUND_GROUPS // 2
        starts = np.r_[np.linspace(0, K - half, half, endpoint=False).astype(np.int64), np.arange(K - half, K)]
        starts = np.unique(starts)
        values, counts = values[starts], np.add.reduceat(counts, starts)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        return counts @ noise.logcdf(ys[None, :] - values[:, None])


def _lower_end(values: np.ndarray, counts: np.ndarray, noise: Any, y_far: float) -> float:
    """A y_lo >= -y_far with G(y_lo) <= -750 + L (or -60 + L above the top score), or -y_far.

    Below y_lo every group's integrand integrates to at most P[max <= y_lo] <= e^{-750 + L},
    L a lower bound on the smallest group probability: with q >= 0 such that
    F(q)^{m-1} >= e^{-1}, P_k >= P[Z_k > q - a_k] F(q)^{m-1}, so L = log sf(q - a_min) - 1.
    The cut is thus relative to the least likely candidate (whose own neighbourhood
    matters for heavy tails), not absolute.  With many candidates the cut may lie above
    the top score (the maximum of m noises is then never near it): it is searched on
    (0, q] as well, at G <= -60 + L (each group's dropped mass is at most e^-60 = 9e-27 of
    its probability).  G is bounded above by :func:`_log_cdf_bound`, so the cuts are safe.
    """
    m = float(counts.sum())
    with np.errstate(all="ignore"):
        q = max(0.0, float(noise.ilogcdf(-1.0 / (m - 1.0))))
        L = min(0.0, float(noise.logsf(q - values[0])) - 1.0)
    floor = _LOG_FLOOR + L
    lo_support = noise.support[0]
    if np.isfinite(floor) and _log_cdf_bound(values, counts, noise, np.zeros(1))[0] <= _LIFT_FLOOR + L:
        return _lift(values, counts, noise, 0.0, q, L)
    if np.isfinite(lo_support):
        return float(values[-1] + lo_support)
    with np.errstate(all="ignore"):
        far = float(noise.ilogcdf(floor / counts[-1])) if np.isfinite(floor) else -np.inf
    if not far > -y_far:
        far = -y_far
    if far >= -1e-12:
        return far
    step = min(float(noise.width), -far) * 1e-3
    n = int(np.ceil(np.log2(-far) - np.log2(step))) + 1
    with np.errstate(over="ignore"):
        pts = np.append(-step * (2.0 ** np.arange(n, 0, -1) - 1.0), 0.0)
    pts = np.concatenate([[far], pts[pts > far]])
    G = _log_cdf_bound(values, counts, noise, pts)
    ok = np.nonzero(G <= floor)[0]
    return float(pts[ok[-1]]) if ok.size else far


def _lift(values: np.ndarray, counts: np.ndarray, noise: Any, y_lo: float, q: float, L: float) -> float:
    """The largest of ``y_lo`` and the points where the bound on G is still <= -60 + L.

    The points are q 2^-j (j < 64), refined by q 2^-j (1 + i/16), in (0, q]
    (G(q) >= -1: q is never one).
    """
    floor = _LIFT_FLOOR + L
    if not (q > 0.0 and y_lo >= -1e-12 and np.isfinite(floor)):
        return y_lo
    coarse = q * 2.0 ** -np.arange(1.0, 64.0)
    ok = np.flatnonzero(_log_cdf_bound(values, counts, noise, coarse) <= floor)
    if not ok.size:
        return y_lo
    fine = coarse[ok[0]] * (1.0 + np.arange(1.0, 16.0) / 16.0)
    good = np.flatnonzero(_log_cdf_bound(values, counts, noise, fine) <= floor)
    best = float(fine[good[-1]]) if good.size else float(coarse[ok[0]])
    return max(y_lo, best)


def lower_end(values: np.ndarray, counts: np.ndarray, noise: Any) -> float:
    """The integration's lower end y_lo for these scores (see :func:`_lower_end`)."""
    return _lower_end(values, counts, noise, _y_far(values))


def _n_refine(r0: float, h: float) -> int:
    """Number of edges r0 (2^j - 1), j = 0, 1, ..., up to the first beyond h."""
    return int(np.ceil(np.log2(max(h / r0, 1.0) + 1.0))) + 1


def _y_far(values: np.ndarray) -> float:
    return min(_FAR * max(1.0, -float(values[0])), _BIG)


class Panels(NamedTuple):
    """Quadrature panels in local coordinates.

    Panel i is [left[i], right[i]] around ``anchor[i]`` (its cluster's top score);
    ``first``/``last`` index the scores of each kept cluster, ``cluster[i]`` is panel i's
    cluster (into ``first``/``last``/``top``); ``far`` is every group's log closed-form
    far tail.
    """

    anchor: np.ndarray
    left: np.ndarray
    right: np.ndarray
    cluster: np.ndarray
    first: np.ndarray
    last: np.ndarray
    top: np.ndarray
    far: np.ndarray


def nodes(
    values: np.ndarray, counts: np.ndarray, noise: Any, y_lo: float | None = None, lo_refine: float = 0.0
) -> tuple[np.ndarray, ...]:
    """(anchor, offset, log-weight) of every node, and each group's log closed-form far tails.

    ``values`` are the distinct finite standardised scores (ascending, max 0),
    ``counts`` their multiplicities; ``y_lo``, ``lo_refine``: see :func:`panels`.
    """
    p = panels(values, counts, noise, y_lo, lo_refine)
    half = 0.5 * p.right - 0.5 * p.left
    mid = p.left + half
    w = (mid[:, None] + half[:, None] * _GL_X[None, :]).ravel()
    with np.errstate(divide="ignore"):  # a panel narrower than 2 subnormals has weight 0
        logw = (np.log(half)[:, None] + np.log(_GL_W)[None, :]).ravel()
    return np.repeat(p.anchor, _NODES_PER_PANEL), w, logw, p.far


def panels(
    values: np.ndarray, counts: np.ndarray, noise: Any, y_lo: float | None = None, lo_refine: float = 0.0
) -> Panels:
    """The composite rule's panels (see :class:`Panels`).

    Every score of a kept cluster is a panel edge, so no panel straddles a score.
    ``y_lo``: the lower end if already computed (:func:`lower_end`); ``lo_refine`` > 0 adds
    edges y_lo + lo_refine (2^j - 1) up to half the noise width above y_lo (panels resolving
    a singularity lo_refine below y_lo).
    """
    h = 0.5 * float(noise.width)
    spike = refine_start(noise)
    m = float(counts.sum())
    y_far = y_far_lo = _y_far(values)
    if getattr(noise, "log_concave", False):  # f(G + y)/f(G) <= f(y)/f(0): beyond 4 ilogsf(-800), < e^-800
        with np.errstate(all="ignore"):
            tail = 4.0 * max(1.0, float(np.nan_to_num(noise.ilogsf(-_NEGLIGIBLE), nan=_BIG, posinf=_BIG)))
        y_far = min(y_far, tail)
    if y_lo is None:
        y_lo = _lower_end(values, counts, noise, y_far_lo)
    # clusters of scores with gaps <= 4h share an anchor (their top score)
    brk = np.flatnonzero(np.diff(values) > 4.0 * h)
    first = np.concatenate([[0], brk + 1])
    last = np.concatenate([brk, [values.size - 1]])
    a, b = values[first], values[last]
    rlim = np.append(0.5 * (a[1:] - b[:-1]), y_far)
    llim = np.concatenate([[np.inf], 0.5 * (a[1:] - b[:-1])])
    keep = b + rlim > y_lo
    first, last, a, b, rlim, llim = (x[keep] for x in (first, last, a, b, rlim, llim))
    llim = np.minimum(llim, np.maximum(a - y_lo, 0.0))
    C = a.size
    pieces_c, pieces_e = [], []

    def add(owner: np.ndarray, edge: np.ndarray) -> None:
        pieces_c.append(owner)
        pieces_e.append(edge)

    # interior: uniform panels of length <= h across each cluster (above y_lo)
    a_in = np.minimum(np.maximum(a, y_lo), b)
    # laws analytic in the strip |Im z| < s (s = analytic_strip) need no breakpoint at the
    # scores: panels of length <= s keep every integrand analytic in a Bernstein ellipse
    # of ratio >= 2 + sqrt(5) around each panel (12-point Gauss-Legendre: error ~ 4.2^-24)
    strip = float(getattr(noise, "analytic_strip", 0.0))
    step = min(h, strip) if strip > 0 else h
    n_in = np.ceil((b - a_in) / step).astype(np.int64) + 1
    c, j = _ragged(n_in)
    span = (a_in - b)[c]
    add(c, np.where(n_in[c] > 1, span - span * j / np.maximum(n_in[c] - 1, 1), 0.0))
    # otherwise every score is a breakpoint; spiky laws also refine geometrically around each score
    cl, j = _ragged(last - first + 1)
    local = values[first[cl] + j] - b[cl]
    near = local + h > y_lo - b[cl]  # the other scores' edges would all be clipped to y_lo
    cl, local = cl[near], local[near]
    if strip <= 0:
        add(cl, local)
    if spike < h and strip <= 0:
        offs = spike * 2.0 ** np.arange(int(np.ceil(np.log2(h / spike))))
        sides = offs if np.isfinite(noise.support[0]) else np.concatenate([offs, -offs])
        add(np.repeat(cl, sides.size), (local[:, None] + sides[None, :]).ravel())
    # right and left profiles out to the half-gaps (the top cluster to y_far, the bottom to y_lo)
    for side, lim, base in ((1, rlim, np.zeros(C)), (-1, llim, a - b)):
        prof = profile(noise, side)
        n = np.searchsorted(prof, lim, side="left")
        c, j = _ragged(n)
        add(c, base[c] + side * prof[j])
        ok = lim > 0
        add(np.flatnonzero(ok), base[ok] + side * lim[ok])
    if lo_refine > 0 and C:  # the lowest kept cluster's cell starts at y_lo
        add(
            np.zeros(_n_refine(lo_refine, h), dtype=np.int64),
            (y_lo - b[0]) + lo_refine * (2.0 ** np.arange(_n_refine(lo_refine, h)) - 1.0),
        )
    cid = np.concatenate(pieces_c)
    e = np.concatenate(pieces_e)
    lo_b, hi_b = np.maximum((a - b) - llim, y_lo - b), rlim  # clip everything to each cluster's cell
    e = np.clip(e, lo_b[cid], hi_b[cid])
    order = np.lexsort((e, cid))
    cid, e = cid[order], e[order]
    same = (cid[1:] == cid[:-1]) & (e[1:] > e[:-1])
    left, right, owner = e[:-1][same], e[1:][same], cid[:-1][same]
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        far_up = np.log(-np.expm1(m * float(noise.logcdf(y_far)))) - np.log(m)
        far_lo = m * float(noise.logcdf(-y_far_lo)) - np.log(m) if y_lo <= -y_far_lo else -np.inf
    far = np.full(values.size, float(np.logaddexp(far_up, far_lo)))
    return Panels(b[owner], left, right, owner, first, last, b, far)
