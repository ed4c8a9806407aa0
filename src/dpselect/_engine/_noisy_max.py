"""Sampling argmax_r (u_r + b Z_r) and its exact law by quadrature (the engine's core).

The method, its accuracy and its limits: :mod:`dpselect._engine`.
"""

from __future__ import annotations

from typing import Any, overload

import numpy as np
from scipy.special import logsumexp

from .._params import SEED, SIZE, Rule, positive, validate_params
from .._validation import check_random_state
from ..noise import MIN_TAIL_EXPONENT, Laplace, NoiseDistribution
from ..typing import SeedLike
from . import _laplace, _separated
from . import _mesh as mesh

__all__ = ["check_noise", "log_probabilities", "sample_argmax", "standardised"]

_CHUNK_ELEMENTS = 1 << 22  # bound on temporaries (elements) in sampling and quadrature


def check_noise(noise: NoiseDistribution) -> NoiseDistribution:
    """Reject power tails too heavy for floating point.

    With a tail exponent below ``dpselect.noise.MIN_TAIL_EXPONENT`` draws overflow and the
    law's mass lies beyond the largest double.

    Parameters
    ----------
    noise : NoiseDistribution
        The standard noise law.

    Returns
    -------
    NoiseDistribution
        ``noise`` itself.
    """
    if not isinstance(noise, NoiseDistribution):
        raise TypeError(f"noise must be a NoiseDistribution, got {type(noise).__name__}")
    kappa = float(getattr(noise, "tail_exponent", np.inf))
    if kappa < MIN_TAIL_EXPONENT:
        raise ValueError(
            f"noise {noise!r} has a tail P[|Z| > z] ~ z^-{kappa:g} too heavy for floating point "
            f"(draws overflow, the law's mass lies beyond 1.8e308): use df >= {MIN_TAIL_EXPONENT} "
            f"or gamma >= {1 + MIN_TAIL_EXPONENT}"
        )
    return noise


def _scores(value: Any, name: str) -> np.ndarray:
    """The mechanism's checked scores: only their container is looked at (the hot path)."""
    if not isinstance(value, np.ndarray) or value.ndim != 1 or value.dtype != np.float64:
        raise TypeError(f"{name} must be a 1-D float64 array, got {type(value).__name__}")
    return value


#: The scores, a finite 1-D float array: the calling mechanism has checked them (its problem's).
SCORES = Rule("a 1-D float array (checked by the calling mechanism)", check=_scores)
#: The standard noise law, its tails within floating point (:func:`check_noise`).
NOISE = Rule(
    "a noise distribution of dpselect.noise with tail exponent >= MIN_TAIL_EXPONENT",
    check=lambda value, name: check_noise(value),
)
#: The noise scale b.
SCALE = positive()


@validate_params({"scores": SCORES, "scale": SCALE})
def standardised(scores: np.ndarray, scale: float) -> np.ndarray:
    """Return a_r = (u_r - max u) / b: shift-invariant, so huge scores cannot overflow.

    With a tiny (e.g. subnormal) scale the gaps may overflow to -inf, which is
    the limit for every noise whose tail beyond 1.8e308 is negligible (:mod:`dpselect._engine`).

    Parameters
    ----------
    scores : np.ndarray
        The scores u, a finite 1-D float array.
    scale : float
        The noise scale b > 0.

    Returns
    -------
    np.ndarray
        The standardised gaps a (0 at the maximum, <= 0 elsewhere).
    """
    top = scores.max()
    with np.errstate(over="ignore"):
        a = (scores - top) / scale
        wide = np.isinf(a)  # the difference itself may overflow (e.g. 1e308 - (-1e308)): halve first
        if wide.any():
            a[wide] = (scores[wide] * 0.5 - top * 0.5) / scale * 2.0
    return a


@overload
def sample_argmax(
    scores: np.ndarray, scale: float, noise: NoiseDistribution, size: None = None, *, rng: SeedLike = None
) -> int: ...
@overload
def sample_argmax(
    scores: np.ndarray, scale: float, noise: NoiseDistribution, size: int, *, rng: SeedLike = None
) -> np.ndarray: ...
@validate_params({"scores": SCORES, "scale": SCALE, "noise": NOISE, "size": SIZE, "rng": SEED})
def sample_argmax(
    scores: np.ndarray, scale: float, noise: NoiseDistribution, size: int | None = None, *, rng: SeedLike = None
) -> int | np.ndarray:
    """Draw argmax_r (scores_r + scale * Z_r), Z_r iid ``noise``; ``size`` batched draws.

    Memory is bounded by drawing the (size, m) noise matrix in row chunks; there is no
    Python loop over draws or candidates.

    Parameters
    ----------
    scores : np.ndarray
        The scores, a finite 1-D float array (already checked by the caller).
    scale : float
        The noise scale b > 0.
    noise : NoiseDistribution
        The standard noise law of Z.
    size : int or None, default=None
        Number of draws; None for one.
    rng : SeedLike, default=None
        The randomness (keyword-only).

    Returns
    -------
    int or np.ndarray
        The winning index (``size=None``), or an int64 array of ``size`` of them.
    """
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
    """Log Pr[a given member of distinct group k wins], k = 0..K-1 (values ascending, finite)."""
    if type(noise) is Laplace:
        return _laplace.group_log_probabilities(values, counts, noise)
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
    """Log Pr at the scores from log Pr at their panels' Chebyshev points.

    Barycentric weights ``ell``; None where a panel's interpolant is not positive.
    """
    top = accX.max(axis=1)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        val = np.einsum("kp,kp->k", ell, np.exp(accX - top[:, None])[panel])
        out = np.log(val) + top[panel]
    return out if np.all(val > 0) else None


def _separated_group_log_probabilities(values: np.ndarray, counts: np.ndarray, noise: Any) -> np.ndarray:
    """The dense sum, with the scores far below the lower cut replaced by Chebyshev points.

    For laws analytic on a sector |arg z| < theta (:mod:`dpselect._engine._separated`).
    """
    sep = None
    if float(getattr(noise, "right_sector", 0.0)) > 0:
        y_lo = mesh.lower_end(values, counts, noise)
        sep = _separated.separated_grid(values, counts, noise, y_lo)
    if sep is None:
        anchor, w, logw, far = mesh.nodes(values, counts, noise)
        return np.logaddexp(_node_sums(values, counts, noise, anchor, w, logw), far)
    anchor, w, logw, far = mesh.nodes(values, counts, noise, y_lo, sep.r0)
    direct = ~sep.proxied
    acc_all = _node_sums(
        np.concatenate([sep.X.ravel(), values[direct]]),
        np.concatenate([sep.W.ravel(), counts[direct]]),
        noise,
        anchor,
        w,
        logw,
    )
    n = sep.X.size
    acc_proxied = _interpolate_back(acc_all[:n].reshape(sep.X.shape), sep.ell, sep.panel)
    if acc_proxied is None:
        return np.logaddexp(_node_sums(values, counts, noise, anchor, w, logw), far)
    acc = np.empty(values.size)
    acc[sep.proxied] = acc_proxied
    acc[direct] = acc_all[n:]
    return np.logaddexp(acc, far)


def _chebyshev_grid(values: np.ndarray, counts: np.ndarray, noise: Any) -> Any:
    """Chebyshev points for an analytic-strip law whose scores are at least 4 per point.

    Returns (points (P, 26), interpolation weights (K, 26), panel of each score, summed
    weights), or None.
    """
    strip = float(getattr(noise, "analytic_strip", 0.0))
    if not strip > 0:
        return None
    length = min(strip, 0.5 * float(noise.width))
    lo = float(values[0])
    idx = np.floor((values - lo) / length)  # panels [lo + i L, lo + (i + 1) L), only those with scores
    used, panel = np.unique(idx, return_inverse=True)
    if not (used.size * _separated.CHEB_POINTS * 4 < values.size and np.isfinite(used[-1])):
        return None
    half = 0.5 * length
    mid = lo + used * length + half
    X = _separated.chebyshev_points(mid, half)
    ell = _separated.barycentric_weights(values[:, None] - X[panel])
    W = np.zeros_like(X)
    np.add.at(W, panel, counts[:, None] * ell)
    return X, ell, panel, W


def _node_sums(
    values: np.ndarray, counts: np.ndarray, noise: Any, anchor: np.ndarray, w: np.ndarray, logw: np.ndarray
) -> np.ndarray:
    """Log sum over nodes of f/F(y - v_k) e^{G(y)} w(y), G = sum_s counts_s log F(y - v_s)."""
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
    """Log sum_j exp(term[i, j]) for each row, -inf for all -inf rows (in place on ``term``)."""
    mx = term.max(axis=1)
    mx[~np.isfinite(mx)] = 0.0
    term -= mx[:, None]
    np.exp(term, out=term)
    with np.errstate(divide="ignore"):
        return np.log(term.sum(axis=1)) + mx


@validate_params({"scores": SCORES, "scale": SCALE, "noise": NOISE})
def log_probabilities(scores: np.ndarray, scale: float, noise: NoiseDistribution) -> np.ndarray:
    """Exact log Pr[argmax_r (scores_r + scale Z_r) = r] for every candidate (:mod:`dpselect._engine`).

    Parameters
    ----------
    scores : np.ndarray
        The utilities u_r (finite, 1-D; the calling mechanism has checked them).
    scale : float
        b > 0, the scale the standard noise is multiplied by.
    noise : NoiseDistribution
        The standard law h of every Z_r.

    Returns
    -------
    np.ndarray
        log Pr[r] for every candidate r (logsumexp 0; -inf where the gap overflows).
    """
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
