"""Permute-and-flip's exact output law (mathematics §2.6): the closed form and its O(18 m) evaluation.

Both compute P[r] = p_r ∫_0^1 prod_{s != r} (1 - p_s t) dt with p_r = exp((u_r - u*)/b):
:func:`pf_log_probabilities` by Gauss–Legendre, exact for the degree-(m-1) polynomial
(m <= 64 candidates in :class:`~dpselect.mechanisms.classic.PermuteAndFlip`), and
:func:`pf_fast_log_probabilities` by power sums beyond.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.special import logsumexp, roots_legendre

from .. import _engine as noisy_max

__all__ = ["pf_fast_log_probabilities", "pf_log_probabilities"]


@lru_cache(maxsize=32)
def _legendre01(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss–Legendre nodes on [0, 1] and their log-weights."""
    x, w = roots_legendre(n)
    return 0.5 * (x + 1.0), np.log(0.5 * w)


def pf_log_probabilities(scores: np.ndarray, scale: float) -> np.ndarray:
    """Permute-and-flip closed form.

    With p_r = exp((u_r - u*)/b), giving every candidate an independent uniform
    arrival time t turns the random permutation into P[r] = p_r ∫_0^1
    prod_{s != r} (1 - p_s t) dt, an integral of a polynomial of degree m - 1,
    which Gauss–Legendre with ceil(m/2) nodes computes exactly.  Ties share one
    evaluation; cost O(K m) for K distinct scores.
    """
    a = noisy_max.standardised(scores, scale)
    m = a.size
    values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True)
    if values.size == 1:
        return np.full(m, -np.log(m))
    t, logw = _legendre01(max(1, (m + 1) // 2))
    p = np.exp(values)
    with np.errstate(divide="ignore"):
        log1m = np.log1p(-p[:, None] * t[None, :])  # (K, n)
    total = counts @ log1m
    logint = logsumexp(total[None, :] - log1m + logw[None, :], axis=1)
    group = values + logint
    return group[inverse] - logsumexp(group + np.log(counts))


_TAYLOR_TERMS = 18  # (p t)^k <= 0.1^18: truncation far below double rounding
_GL16 = np.polynomial.legendre.leggauss(16)


def _pf_mesh(S: float, t_max: float) -> tuple[np.ndarray, np.ndarray]:
    """Composite 16-point Gauss-Legendre nodes and log-weights on [0, t_max].

    Panels are at most 4/S long (the integrand decays like e^{-S t} near 0, S =
    sum_s p_s) and, when t_max = 1, also halve geometrically towards t = 1,
    where the factors 1 - p_s t with p_s ~ 1 vanish.
    """
    edges = [np.linspace(0.0, t_max, int(np.ceil(S * t_max / 4.0)) + 1)]
    if t_max == 1.0:
        edges.append(1.0 - 2.0 ** -np.arange(1.0, 45.0))  # last node stays < 1
    e = np.unique(np.concatenate(edges))
    half, mid = 0.5 * np.diff(e), 0.5 * (e[1:] + e[:-1])
    x, w = _GL16
    return (mid[:, None] + half[:, None] * x).ravel(), (np.log(half)[:, None] + np.log(w)).ravel()


def _pf_group_log_probabilities(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Log P[a given member of group k wins] for PF, distinct standardised ``values`` (max 0).

    P[r] = p_r J(p_r), J(p) = int_0^1 Phi(t) / (1 - p t) dt, Phi(t) = prod_s (1 - p_s t)^{c_s},
    p = e^{values}.  Since -log Phi(t) >= S t (S = sum_s c_s p_s) the integrand is below
    e^{-80} Phi(0) beyond t_max = min(1, 80/S), where the integral is cut (relative error
    < e^{-80} S).  Groups with p t_max <= 0.1 ("small": all but at most 800 of them)
    enter log Phi through their power sums M_k = sum c_s p_s^k (log(1 - x) =
    -sum x^k / k) and get J(p) = sum_k p^k mu_k, mu_k = int Phi t^k (Horner); the
    others are evaluated directly on the nodes.  18 terms: truncation <= 0.1^18
    relative.  Cost O(18 K + 800 Q) for K groups and Q <= ~1,400 nodes.
    """
    p = np.exp(values)
    S = float(counts @ p)
    t_max = min(1.0, 80.0 / S)
    t, logw = _pf_mesh(S, t_max)
    small = p * t_max <= 0.1
    ps, cs = p[small], counts[small]
    powers = np.empty((_TAYLOR_TERMS, ps.size))  # row k-1: p^k
    powers[0] = ps
    for k in range(1, _TAYLOR_TERMS):
        np.multiply(powers[k - 1], ps, out=powers[k])
    M = powers @ cs
    ks = np.arange(1, _TAYLOR_TERMS + 1)
    T = -(np.power.outer(t, ks) @ (M / ks))  # log Phi from the small groups
    big = np.flatnonzero(~small)
    log1m = np.log1p(-p[big, None] * t[None, :])  # (B, Q)
    T += counts[big] @ log1m
    lw = T + logw
    shift = float(lw.max())
    W = np.exp(lw - shift)
    mu = np.power.outer(t, np.arange(_TAYLOR_TERMS + 1)).T @ W  # mu_k = sum_j W_j t_j^k
    out = np.empty(values.size)
    J = np.full(ps.size, mu[-1])
    for k in range(_TAYLOR_TERMS - 1, -1, -1):
        J *= ps
        J += mu[k]
    out[small] = np.log(J)
    out[big] = logsumexp(lw[None, :] - log1m, axis=1) - shift
    return values + out + shift


def pf_fast_log_probabilities(scores: np.ndarray, scale: float) -> np.ndarray:
    """Permute-and-flip's exact law in O(18 m) (see :func:`_pf_group_log_probabilities`)."""
    a = noisy_max.standardised(scores, scale)
    values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True)
    if values.size == 1:
        return np.full(a.size, -np.log(a.size))
    c = counts.astype(np.float64)
    group = _pf_group_log_probabilities(values, c)
    return group[inverse] - logsumexp(group + np.log(c))
