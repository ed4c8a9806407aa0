"""The exact output law of :class:`~dpselect.mechanisms.sensitivity_bound.PrivateSensitivityBound`.

P[r] = ∫ f(l) q_r(min(e^l, GS)) dl, f the Laplace density of the released log-bound L̂ and q the
fixed-scale selector's law: composite Gauss–Legendre in log space (the quadrature is described in
the class Notes; mathematics §9.2).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from functools import lru_cache

import numpy as np
from scipy.special import logsumexp

from ..problem import SelectionProblem

#: The selector's log law at a fixed sensitivity Ŝ.
Conditional = Callable[[float], np.ndarray]

__all__ = ["argmax_log_law", "integrated_log_law"]

_TAIL = 40.0  # Laplace mass beyond 40 scales: e^-40 / 2 = 2e-18, far below the 1e-9 target
_NODES = 12
_WIDTH = 1.0  # largest panel in l = ln Ŝ (the selector's law varies on a scale of ~1 in ln Ŝ)
_STEPS = np.array([0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 24.0, 32.0])  # Laplace-scale breakpoints around loc


@lru_cache(maxsize=8)
def _legendre(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss–Legendre nodes and weights on [-1, 1]."""
    x, w = np.polynomial.legendre.leggauss(n)
    return x, w


def argmax_log_law(problem: SelectionProblem) -> np.ndarray:
    """The noiseless argmax's log law: uniform over the maximal scores."""
    top = problem.optimal()
    with np.errstate(divide="ignore"):
        return np.where(top, -math.log(top.sum()), -np.inf)


def _law_at(conditional: Conditional, problem: SelectionProblem, level: float, l_q: float) -> np.ndarray:
    """The selector's log law at Ŝ = e^level (the noiseless argmax at or below l_q)."""
    if level <= l_q:
        return argmax_log_law(problem)
    return conditional(math.exp(level))


def integrated_log_law(
    conditional: Conditional, epsilon2: float, problem: SelectionProblem, loc: float, scale: float, cap: float
) -> np.ndarray:
    """Log P[r], integrated over L̂ ~ Laplace(loc, scale) capped at ``cap`` = ln GS.

    ``conditional(s)`` is the selector's log law at Ŝ = s, ``epsilon2`` its budget.
    """
    if math.isinf(loc):  # S(x) = 0: the scores can never change; noiseless argmax
        return argmax_log_law(problem)
    u = problem.scores
    distinct = np.unique(u)
    if distinct.size == 1:
        return np.full(u.size, -math.log(u.size))
    gap = float(distinct[-1]) - float(distinct[-2])  # Python floats: inf, not an overflow warning
    # below l_q every loser has probability < e^-750 (scale <= 2 Ŝ/eps2, P[loser] <= e^{-gap/scale})
    l_q = math.log(epsilon2 / 1500.0) + math.log(gap)
    # a few units below the cap are always integrated: losers whose law is < e^-750 at every Ŝ <= GS
    # still get their exact (log) probability from the last units before the cap
    lo = max(min(l_q, cap - 8.0), loc - _TAIL * scale)
    hi = min(cap, loc + _TAIL * scale)
    if lo >= hi:  # the integrand is constant wherever the Laplace mass is (up to 2e-18)
        if hi < cap:  # all the mass is below l_q: the noiseless argmax
            return argmax_log_law(problem)
        # the cap: P[L̂ >= ln GS] at the law at GS, the rest at the argmax (cap <= l_q) or at GS
        at_cap = conditional(problem.global_sensitivity)
        below = argmax_log_law(problem) if cap <= l_q else at_cap
        out = np.logaddexp(_laplace_log_cdf(-cap, -loc, scale) + at_cap, _laplace_log_cdf(cap, loc, scale) + below)
        return out - logsumexp(out)
    # breakpoints: the Laplace kink and geometric steps of the Laplace weight away from it
    steps = loc + scale * np.concatenate([-_STEPS[::-1], [0.0], _STEPS])
    # when even at Ŝ = GS the losers are far out (standardised gap z >> 1), their integrand below the cap
    # falls like exp(-z e^{cap - l}): geometric panels cap - 2^-k resolve that last stretch
    z_cap = epsilon2 * gap / (2.0 * problem.global_sensitivity)
    if hi == cap and z_cap > 20.0:
        k_max = min(60, math.ceil(math.log2(z_cap)) + 12)
        steps = np.concatenate([steps, cap - 2.0 ** -np.arange(0, k_max + 1)])
    edges = np.unique(np.concatenate([[lo, hi], steps[(steps > lo) & (steps < hi)]]))
    nodes, log_w = [], []
    x, w = _legendre(_NODES)
    for a, b in itertools.pairwise(edges):
        n_pan = max(1, math.ceil((b - a) / _WIDTH))
        panel = np.linspace(a, b, n_pan + 1)
        half = 0.5 * np.diff(panel)
        mid = 0.5 * (panel[:-1] + panel[1:])
        nodes.append((mid[:, None] + half[:, None] * x[None, :]).ravel())
        log_w.append((np.log(half)[:, None] + np.log(w)[None, :]).ravel())
    ls, lw = np.concatenate(nodes), np.concatenate(log_w)
    log_f = -math.log(2.0 * scale) - np.abs(ls - loc) / scale  # Laplace density of L̂
    cond = np.stack([conditional(math.exp(v)) for v in ls])
    terms = [(lw + log_f)[:, None] + cond]
    # the two outer masses: P[L̂ < lo] at the lower edge's law, P[L̂ > hi] at the upper edge's
    log_below = _laplace_log_cdf(lo, loc, scale)
    log_above = _laplace_log_cdf(-hi, -loc, scale)
    terms.append(log_below + _law_at(conditional, problem, lo, l_q)[None, :])
    terms.append(log_above + conditional(math.exp(hi))[None, :])
    out = logsumexp(np.concatenate(terms, axis=0), axis=0)
    return out - logsumexp(out)


def _laplace_log_cdf(t: float, loc: float, scale: float) -> float:
    """Log P[L <= t] for L ~ Laplace(loc, scale)."""
    z = (t - loc) / scale
    if z <= 0:
        return math.log(0.5) + z
    return math.log1p(-0.5 * math.exp(-z))
