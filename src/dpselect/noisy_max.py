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
scores and Q quadrature nodes, whatever the number of tied candidates.  With
Laplace noise the K x Q sums are done in closed form instead
(:mod:`dpselect._engine_laplace`: power sums and linear recurrences over the
sorted scores, O((K + Q) N) with N ~ 50 + log2 m series terms), on the same nodes.

Quadrature (:mod:`dpselect._engine_mesh`).  The integral runs over a composite
12-point Gauss–Legendre rule whose panels are placed in *local* coordinates
around the scores: a_r are grouped into clusters (consecutive gaps at most two
noise widths); inside a cluster, panels of half the noise's interquartile
width (at most the width s of the strip |Im z| < s where the law is analytic,
for Student t, even-gamma polynomial tails and Gumbel, which need no further
breakpoint) and otherwise a breakpoint at every score (the kinks of Laplace-type densities)
and geometric refinement around each score for laws narrower at the mode than
their quartiles; away from a cluster, a per-law profile of panel lengths that
grow geometrically with the distance d (ratio 2) but never let the log-density
or log-CDF change by more than 4 nats in one panel until it has dropped by 800
nats (light tails), then ratio 2 up to 1.7e308.  Every node is stored as (its
cluster's anchor score, offset), and every argument y - a_s is formed as
offset + (anchor - a_s), so panels of width ~1 next to a score at a_r = -1e300
stay exact (an absolute y grid would round them away).  Beyond
Y = min(2^56 max(1, |min a|), 1.7e308) above the top score all arguments y - a_s
equal y to relative 2^-56 and every candidate's integral is (1 - F(Y)^m)/m in
closed form; likewise F(-Y)^m/m below -Y when the noisy maximum's log-CDF there
is not below -750.  Everything is accumulated in log space and the result is
renormalised (the correction is the quadrature error).  The region below the
point where the noisy maximum's log-CDF falls under -750 + L is dropped, L a lower
bound on the least likely candidate's log-probability, so the cut is relative.

Measured accuracy (tests/test_engine_exact.py), |error in log Pr| against
independent references: <= 2e-13 for Cauchy (closed form) at gap/scale 1e2 - 1e300;
<= 4e-15 for t_3, P_4, P_1.5 (both sidednesses, 60-digit mpmath) at 10 - 1e12 and
for LLN (2-D reference) at 10 - 1e12 (log Pr down to -1410); relative 1e-16 of
log Pr for Laplace, Gumbel and exponential at gaps up to 1e300.  The test bound
is 1e-9 max(1, |log Pr|).  Unnormalised mass defect <= 1e-14 for P_1.1 - P_1.5,
t_0.5 and LLN(1.2).  Not covered: gap/scale in (1e300, 1.8e308] for power tails
(the far region's arguments then differ from y by up to 1e-8 relative, and a
~1e-29-level mass beyond 1.8e308 is approximated), and gaps that overflow
(gap/scale > 1.8e308), which give the limit Pr = 0: exact for light tails and
LLN, within ~(1.8e308)^-kappa (< 1e-30 for kappa >= 0.1) for power tails.

Scores far below the integration range.  With many candidates the cut lies above
every score; for laws whose density and log-CDF are analytic on a sector |arg z| < theta
(one-sided P_gamma and t, Laplace-log-normal) the scores at distance >= r0 below the cut
are replaced by Chebyshev points (:mod:`dpselect._engine_separated`, mathematics §13):
measured <= 5e-16 relative in log Pr against the direct sum.  10^5 distinct scores,
one-sided SPS or SNM-LLN: under 1 s CPU (``benchmarks/bench_core.py``).

Sampling agrees with the law everywhere: power tails too heavy for floating
point (tail exponent below ``dpselect.noise.MIN_TAIL_EXPONENT`` = 0.1, e.g.
Student t with df = 0.01 or P_1.01, whose draws overflow to inf 1e-3 - 1e-2 of
the time) are rejected with a ValueError by :func:`check_noise`; for the laws
admitted, a draw beyond the largest double has probability below ~1e-29.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import logsumexp

from . import _engine_laplace, _engine_separated
from . import _engine_mesh as mesh
from ._validation import check_positive, check_random_state, check_size
from .noise import MIN_TAIL_EXPONENT, Laplace

__all__ = ["check_noise", "sample_argmax", "log_probabilities", "probabilities", "standardised"]

_CHUNK_ELEMENTS = 1 << 22  # bound on temporaries (elements) in sampling and quadrature


def check_noise(noise: Any) -> Any:
    """Reject power tails too heavy for floating point: with a tail
    exponent below ``dpselect.noise.MIN_TAIL_EXPONENT`` draws overflow and the law's mass
    lies beyond the largest double."""
    kappa = float(getattr(noise, "tail_exponent", np.inf))
    if kappa < MIN_TAIL_EXPONENT:
        raise ValueError(
            f"noise {noise!r} has a tail P[|Z| > z] ~ z^-{kappa:g} too heavy for floating point "
            f"(draws overflow, the law's mass lies beyond 1.8e308): use df >= {MIN_TAIL_EXPONENT} "
            f"or gamma >= {1 + MIN_TAIL_EXPONENT}")
    return noise


def standardised(scores: np.ndarray, scale: float) -> np.ndarray:
    """a_r = (u_r - max u) / b: shift-invariant, so huge scores cannot overflow.

    With a tiny (e.g. subnormal) scale the gaps may overflow to -inf, which is
    the limit for every noise whose tail beyond 1.8e308 is negligible (module
    docstring).
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
    check_noise(noise)
    gen = check_random_state(rng)
    m = scores.size
    n_draws = 1 if size is None else size
    out = np.empty(n_draws, dtype=np.int64)
    rows = max(1, _CHUNK_ELEMENTS // m)
    a = standardised(scores, scale)
    for start in range(0, n_draws, rows):
        n = min(rows, n_draws - start)
        z = np.asarray(noise.sample((n, m), gen), dtype=np.float64)
        z += a
        out[start : start + n] = np.argmax(z, axis=1)
    return int(out[0]) if size is None else out


def _group_log_probabilities(values: np.ndarray, counts: np.ndarray, noise: Any) -> np.ndarray:
    """log Pr[a given member of distinct group k wins], k = 0..K-1 (values ascending, finite)."""
    if type(noise) is Laplace:
        return _engine_laplace.group_log_probabilities(values, counts, noise)
    return _dense_group_log_probabilities(values, counts, noise)


def _dense_group_log_probabilities(values: np.ndarray, counts: np.ndarray, noise: Any) -> np.ndarray:
    """The same by summing every candidate's log-CDF on every node (O(K Q), any law).

    For laws analytic in a strip |Im z| < s, when the scores are dense (many per
    noise width), the candidates are replaced by Chebyshev points: on panels of
    length L = min(s, half the interquartile width) covering the scores, both
    a -> log F(y - a) (summed into G) and a -> Pr[a] are analytic in a Bernstein
    ellipse of ratio >= 2 + sqrt(5), so degree-25 interpolation is exact to ~1e-16
    relative; G is summed over the points with the scores' interpolation weights and
    Pr is interpolated back (barycentric formula).  Cost O((K + P) 26 + P Q), P points.
    """
    grid = _chebyshev_grid(values, counts, noise)
    if grid is None:
        return _separated_group_log_probabilities(values, counts, noise)
    anchor, w, logw, far = mesh.nodes(values, counts, noise)
    X, ell, panel, W = grid
    accX = _node_sums(X.ravel(), W.ravel(), noise, anchor, w, logw).reshape(X.shape)
    acc = _interpolate_back(accX, ell, panel)
    if acc is None:  # interpolation cannot resolve a panel: sum directly
        acc = _node_sums(values, counts, noise, anchor, w, logw)
    return np.logaddexp(acc, far)


def _interpolate_back(accX: np.ndarray, ell: np.ndarray, panel: np.ndarray) -> np.ndarray | None:
    """log Pr at the scores from log Pr at their panels' Chebyshev points (barycentric
    weights ``ell``), or None where a panel's interpolant is not positive."""
    top = accX.max(axis=1)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        val = np.einsum("kp,kp->k", ell, np.exp(accX - top[:, None])[panel])
        out = np.log(val) + top[panel]
    return out if np.all(val > 0) else None


def _separated_group_log_probabilities(values: np.ndarray, counts: np.ndarray, noise: Any) -> np.ndarray:
    """The dense sum, with the scores far below the lower cut replaced by Chebyshev points
    (:mod:`dpselect._engine_separated`) for laws analytic on a sector |arg z| < theta."""
    sep = None
    if float(getattr(noise, "right_sector", 0.0)) > 0:
        y_lo = mesh.lower_end(values, counts, noise)
        sep = _engine_separated.separated_grid(values, counts, noise, y_lo)
    if sep is None:
        anchor, w, logw, far = mesh.nodes(values, counts, noise)
        return np.logaddexp(_node_sums(values, counts, noise, anchor, w, logw), far)
    anchor, w, logw, far = mesh.nodes(values, counts, noise, y_lo, sep.r0)
    direct = ~sep.proxied
    acc_all = _node_sums(np.concatenate([sep.X.ravel(), values[direct]]),
                         np.concatenate([sep.W.ravel(), counts[direct]]), noise, anchor, w, logw)
    n = sep.X.size
    acc_proxied = _interpolate_back(acc_all[:n].reshape(sep.X.shape), sep.ell, sep.panel)
    if acc_proxied is None:
        return np.logaddexp(_node_sums(values, counts, noise, anchor, w, logw), far)
    acc = np.empty(values.size)
    acc[sep.proxied] = acc_proxied
    acc[direct] = acc_all[n:]
    return np.logaddexp(acc, far)


_CHEB_POINTS = 26


def _chebyshev_grid(values: np.ndarray, counts: np.ndarray, noise: Any) -> Any:
    """(points (P, 26), interpolation weights (K, 26), panel of each score, summed weights)
    for an analytic-strip law whose scores are at least 4 per Chebyshev point; else None."""
    strip = float(getattr(noise, "analytic_strip", 0.0))
    if not strip > 0:
        return None
    length = min(strip, 0.5 * float(noise.width))
    lo = float(values[0])
    idx = np.floor((values - lo) / length)  # panels [lo + i L, lo + (i + 1) L), only those with scores
    used, panel = np.unique(idx, return_inverse=True)
    if not (used.size * _CHEB_POINTS * 4 < values.size and np.isfinite(used[-1])):
        return None
    half = 0.5 * length
    mid = lo + used * length + half
    k = np.arange(_CHEB_POINTS)
    X = mid[:, None] + half * np.cos(np.pi * k / (_CHEB_POINTS - 1))[None, :]
    lam = np.where(k % 2 == 0, 1.0, -1.0)
    lam[[0, -1]] *= 0.5
    D = values[:, None] - X[panel]
    hit = D == 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        C = lam[None, :] / D
        ell = C / C.sum(axis=1, keepdims=True)
    rows = hit.any(axis=1)
    ell[rows] = hit[rows]
    W = np.zeros_like(X)
    np.add.at(W, panel, counts[:, None] * ell)
    return X, ell, panel, W


def _node_sums(values: np.ndarray, counts: np.ndarray, noise: Any, anchor: np.ndarray, w: np.ndarray,
               logw: np.ndarray) -> np.ndarray:
    """log sum over nodes of f/F(y - v_k) e^{G(y)} w(y), G = sum_s counts_s log F(y - v_s)."""
    K = values.size
    bounded_below = bool(np.isfinite(noise.support[0]))
    acc = np.full(K, -np.inf)
    step = max(1, _CHUNK_ELEMENTS // K)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for start in range(0, w.size, step):
            sl = slice(start, start + step)
            z = (anchor[None, sl] - values[:, None]) + w[None, sl]
            logF = noise.logcdf(z)
            G = counts @ logF
            term = noise.logpdf(z)
            term -= logF
            term += G[None, :] + logw[None, sl]
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
    check_noise(noise)
    a = standardised(scores, scale)
    m = a.size
    values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True)
    if values.size == 1:
        return np.full(m, -np.log(m))
    group = np.full(values.size, -np.inf)
    fin = np.isfinite(values)  # overflowed gaps (-inf): the limit Pr = 0 (module docstring)
    if fin.sum() == 1:
        group[fin] = 0.0
    else:
        group[fin] = _group_log_probabilities(values[fin], counts[fin].astype(np.float64), noise)
    total = logsumexp(group + np.log(counts))
    return group[inverse] - total


def probabilities(scores: np.ndarray, scale: float, noise: Any) -> np.ndarray:
    """Exact Pr[argmax_r (scores_r + scale Z_r) = r] (sums to 1)."""
    return np.exp(log_probabilities(scores, scale, noise))
