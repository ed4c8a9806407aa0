"""The noisy-max engine: sampling argmax_r (u_r + b Z_r) and its exact law.

Every noisy-max mechanism (report-noisy-max, the exponential mechanism as
Gumbel noisy max, permute-and-flip as exponential noisy max, Smooth Noisy Max,
Smooth Private Selection) is a calibration (scale b, noise law h) handed to
this module; none re-implements sampling or the integral.

Exact output distribution.  With a_r = (u_r - max u)/b and Z_r iid with
density f and CDF F, candidate r wins with probability

    Pr[r] = ∫ f(y - a_r) prod_{s != r} F(y - a_s) dy
          = ∫ exp( log f(y - a_r) + G(y) - log F(y - a_r) ) dy,
    G(y)  = sum_s log F(y - a_s)         (log-CDF of the noisy maximum),

(Dwork & Roth 2014, §3.3, written for a general noise density).  Candidates
with equal scores share one integral, so the cost is O(K Q) for K distinct
scores and Q quadrature nodes, whatever the number of tied candidates.  The
integral runs over a composite Gauss–Legendre rule in y: uniform panels of
half the noise's interquartile width around the scores (with a breakpoint at
every distinct score, where densities such as Laplace's have a kink, and, for
densities much narrower at the mode than their quartiles, geometrically
refined panels around every score),
geometrically growing panels into both tails up to where the noisy maximum's
log-CDF is below -750 (lower end) and the noise's log-survival is below -745
(upper end).  Everything is accumulated in log space, so probabilities down
to ~1e-300 keep their relative accuracy; the result is renormalised to sum
to one (the correction is at the level of the quadrature error, ~1e-12).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
from scipy.special import logsumexp

from ._validation import check_positive, check_random_state, check_size

__all__ = ["sample_argmax", "log_probabilities", "probabilities", "standardised"]

_CHUNK_ELEMENTS = 1 << 22  # bound on temporaries (elements) in sampling and quadrature
_NODES_PER_PANEL = 12
_MAX_CORE_PANELS = 20_000
_LOG_FLOOR = -750.0
_Y_CAP = 1e250

_GL_X, _GL_W = np.polynomial.legendre.leggauss(_NODES_PER_PANEL)


def standardised(scores: np.ndarray, scale: float) -> np.ndarray:
    """a_r = (u_r - max u) / b: shift-invariant, so huge scores cannot overflow.

    With a tiny (e.g. subnormal) scale the gaps may overflow to -inf, which is
    the right limit: such candidates can never win.
    """
    top = scores.max()
    with np.errstate(over="ignore"):
        a = (scores - top) / scale
        wide = np.isinf(a)  # the difference itself may overflow (e.g. 1e308 - (-1e308)): halve first
        if wide.any():
            a[wide] = (scores[wide] * 0.5 - top * 0.5) / scale * 2.0
    return a


def sample_argmax(scores: np.ndarray, scale: float, noise: Any, size: int | None = None, rng: Any = None) -> Any:
    """Draw argmax_r (scores_r + scale * Z_r), Z_r iid ``noise``; ``size`` batched draws.

    ``scores`` must already be validated (finite 1-D float array).  Memory is
    bounded by drawing the (size, m) noise matrix in row chunks; there is no
    Python loop over draws or candidates.
    """
    scale = check_positive(scale, "scale")
    size = check_size(size)
    gen = check_random_state(rng)
    a = standardised(scores, scale)
    m = a.size
    if size is None:
        z = np.asarray(noise.sample(m, gen), dtype=np.float64)
        z += a
        return int(np.argmax(z))
    out = np.empty(size, dtype=np.int64)
    rows = max(1, _CHUNK_ELEMENTS // m)
    for start in range(0, size, rows):
        n = min(rows, size - start)
        z = np.asarray(noise.sample((n, m), gen), dtype=np.float64)
        z += a
        out[start : start + n] = np.argmax(z, axis=1)
    return out


def _geometric(start: float, stop: float, step: float) -> np.ndarray:
    """Points start ± step*(2^i - 1) moving towards ``stop`` (exclusive), then ``stop``."""
    direction = 1.0 if stop > start else -1.0
    span = abs(stop - start)
    if span <= step:
        return np.array([stop])
    n = int(np.ceil(np.log2(span / step + 1.0)))
    pts = start + direction * step * (2.0 ** np.arange(1, n + 1) - 1.0)
    pts = pts[direction * (stop - pts) > 0]
    return np.append(pts, stop)


def _lower_end(values: np.ndarray, counts: np.ndarray, noise: Any) -> float:
    """A y_lo with G(y_lo) <= -750: the noisy maximum falls below it with probability <= e^-750.

    Below y_lo every candidate's integrand integrates to at most P[max <= y_lo],
    so the quadrature may start there.  Found on a geometric grid between the
    point where the top group alone guarantees it and the top score.
    """
    lo_support = noise.support[0]
    if np.isfinite(lo_support):
        return float(values[-1] + lo_support)
    far = max(float(noise.ilogcdf(_LOG_FLOOR / counts[-1])), -_Y_CAP)
    if far >= -1e-12:
        return far
    pts = _geometric(0.0, far, min(float(noise.width), -far) * 1e-3)[::-1]
    pts = np.concatenate([pts, [0.0]])
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        G = counts @ noise.logcdf(pts[None, :] - values[:, None])
    ok = np.nonzero(G <= _LOG_FLOOR)[0]
    return float(pts[ok[-1]]) if ok.size else far


@lru_cache(maxsize=256)
def _half_width(noise: Any) -> float:
    """The z > 0 where the density has fallen to half its value at the mode 0 (by bisection).

    Every law here has its mode at 0 and a density non-increasing on [0, inf).
    Heavy-tailed or spiky laws (polynomial tails with gamma near 1, LLN with a
    large sigma) have a half-width far below their interquartile width, so
    panels sized by the latter would not resolve the mode.  Cached per (immutable,
    hashable) noise law: it is on the path of every exact-probability call.
    """
    target = float(noise.logpdf(0.0)) - np.log(2.0)
    lo, hi = 0.0, float(noise.width)
    while float(noise.logpdf(hi)) > target and hi < 1e300:
        lo, hi = hi, 2.0 * hi
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if float(noise.logpdf(mid)) > target else (lo, mid)
    return hi


def _nodes(values: np.ndarray, counts: np.ndarray, noise: Any) -> tuple[np.ndarray, np.ndarray]:
    """Quadrature nodes and log-weights in y for distinct standardised scores ``values``."""
    width = float(noise.width)
    lo_support, hi_support = noise.support
    y_lo = _lower_end(values, counts, noise)
    y_hi = float(noise.ilogsf(-745.0))
    y_hi = min(y_hi, _Y_CAP) if np.isfinite(y_hi) else _Y_CAP
    y_hi = max(y_hi, 20.0 * width)
    core_lo = max(y_lo, values[0] - 20.0 * width)
    core_hi = 20.0 * width
    h = 0.5 * width
    n_core = int(np.ceil((core_hi - core_lo) / h))
    if n_core > _MAX_CORE_PANELS:
        n_core = _MAX_CORE_PANELS
    core = np.linspace(core_lo, core_hi, n_core + 1)
    kinks = values[(values > core_lo) & (values < core_hi)]
    if np.isfinite(lo_support):
        kinks = kinks + lo_support
        kinks = kinks[kinks > core_lo]
    pieces = [core, kinks]
    spike = _half_width(noise)
    if spike < h:  # a density narrower at its mode than the panels: refine around each score
        offsets = spike * 2.0 ** np.arange(int(np.ceil(np.log2(h / spike))))
        sides = offsets if np.isfinite(lo_support) else np.concatenate([offsets, -offsets])
        centres = values[(values >= core_lo) & (values <= core_hi)]
        centres = centres + (lo_support if np.isfinite(lo_support) else 0.0)
        refined = (centres[:, None] + sides[None, :]).ravel()
        pieces.append(refined[(refined > core_lo) & (refined < core_hi)])
    if y_lo < core_lo:
        pieces.append(_geometric(core_lo, y_lo, h))
    pieces.append(_geometric(core_hi, y_hi, h))
    edges = np.unique(np.concatenate(pieces))
    left, right = edges[:-1], edges[1:]
    half = 0.5 * (right - left)
    mid = 0.5 * (right + left)
    y = (mid[:, None] + half[:, None] * _GL_X[None, :]).ravel()
    logw = (np.log(half)[:, None] + np.log(_GL_W)[None, :]).ravel()
    return y, logw


def _group_log_probabilities(values: np.ndarray, counts: np.ndarray, noise: Any) -> np.ndarray:
    """log Pr[a given member of distinct group k wins], k = 0..K-1 (values ascending)."""
    y, logw = _nodes(values, counts, noise)
    K = values.size
    bounded_below = bool(np.isfinite(noise.support[0]))
    acc = np.full(K, -np.inf)
    step = max(1, _CHUNK_ELEMENTS // K)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for start in range(0, y.size, step):
            z = y[None, start : start + step] - values[:, None]
            logF = noise.logcdf(z)
            G = counts @ logF
            term = noise.logpdf(z)
            term -= logF
            term += G[None, :] + logw[None, start : start + step]
            if bounded_below:  # below a candidate's support its integrand is 0 (not -inf - -inf)
                term[logF == -np.inf] = -np.inf
            acc = np.logaddexp(acc, _logsumexp_rows(term))
    return acc


def _logsumexp_rows(term: np.ndarray) -> np.ndarray:
    """log sum_j exp(term[i, j]) for each row, -inf for all -inf rows (in place on ``term``)."""
    mx = term.max(axis=1)
    mx[~np.isfinite(mx)] = 0.0
    term -= mx[:, None]
    np.exp(term, out=term)
    with np.errstate(divide="ignore"):
        return np.log(term.sum(axis=1)) + mx


def log_probabilities(scores: np.ndarray, scale: float, noise: Any) -> np.ndarray:
    """Exact log Pr[argmax_r (scores_r + scale Z_r) = r] for every candidate (module docstring)."""
    scale = check_positive(scale, "scale")
    a = standardised(scores, scale)
    m = a.size
    values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True)
    if values.size == 1:
        return np.full(m, -np.log(m))
    group = _group_log_probabilities(values, counts.astype(np.float64), noise)
    total = logsumexp(group + np.log(counts))
    return group[inverse] - total


def probabilities(scores: np.ndarray, scale: float, noise: Any) -> np.ndarray:
    """Exact Pr[argmax_r (scores_r + scale Z_r) = r] (sums to 1)."""
    return np.exp(log_probabilities(scores, scale, noise))
