"""Classic global-sensitivity selection mechanisms (SPEC.md §2.6, §3.1).

All three are epsilon-DP under the problem's neighbour relation with the
global sensitivity Delta u; for ``monotone`` problems (every score moves in
the same direction between neighbours) the noise is halved.

* Exponential mechanism (McSherry & Talwar 2007): P[r] ∝ exp(eps u_r/(2 Delta u))
  (exp(eps u_r / Delta u) if monotone) ≡ argmax_r (u_r + G_r), G_r iid
  Gumbel(0, eta), eta = 2 Delta u/eps (Delta u/eps if monotone) (SPEC §2.6).
* Permute-and-flip (McKenna & Sheldon 2020) ≡ argmax_r (u_r + E_r), E_r iid
  exponential with mean 2 Delta u/eps (Delta u/eps if monotone) (SPEC §2.6,
  Ding et al.).  Sampling uses the exponential-noise form: O(m) per draw.
* Report noisy max with Laplace noise of scale 2 Delta u/eps (Delta u/eps if
  monotone): SPEC §3.1 with a constant scale (beta = 0): loss 2A L_s with
  A = eps/2, L_s = 1 (A L_s for monotone utilities); Dwork & Roth Claim 3.9.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from scipy.special import logsumexp, roots_legendre

from .. import noisy_max
from .._validation import check_epsilon
from ..noise import Exponential, Gumbel, Laplace
from ..privacy import Privacy
from ..problem import SelectionProblem
from .base import NoisyMaxMechanism, check_problem

__all__ = ["ExponentialMechanism", "PermuteAndFlip", "ReportNoisyMax"]

_PF_CLOSED_FORM_MAX_M = 4096


def _global_scale(epsilon: float, problem: SelectionProblem) -> float:
    """2 Delta u / eps, or Delta u / eps for monotone utilities."""
    factor = 1.0 if problem.monotone else 2.0
    return factor * problem.global_sensitivity / epsilon


def _pure(epsilon: float, problem: SelectionProblem, source: str) -> Privacy:
    return Privacy(epsilon, 0.0, problem.relation, source)


@dataclass(frozen=True)
class ExponentialMechanism(NoisyMaxMechanism):
    """Exponential mechanism, P[r] ∝ exp(eps u_r / (2 Delta u)); sampled as Gumbel noisy max.

    Source: McSherry & Talwar (2007) Thm 6; Gumbel-max form: Yamamoto & Shibuya
    Def. 8 (SPEC.md §2.6).  epsilon-DP; monotone utilities use Delta u / eps.
    """

    epsilon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))

    def calibrate(self, problem: SelectionProblem) -> tuple[float, Any]:
        return _global_scale(self.epsilon, problem), Gumbel()

    def log_probabilities(self, problem: SelectionProblem) -> np.ndarray:
        """Closed form: log-softmax of u / eta."""
        check_problem(problem)
        a = problem.scores / _global_scale(self.epsilon, problem)
        a = a - a.max()
        return a - logsumexp(a)

    def privacy(self, problem: SelectionProblem) -> Privacy:
        check_problem(problem)
        return _pure(self.epsilon, problem, "exponential mechanism (McSherry-Talwar; SPEC §2.6)")


@lru_cache(maxsize=32)
def _legendre01(n: int) -> tuple[np.ndarray, np.ndarray]:
    x, w = roots_legendre(n)
    return 0.5 * (x + 1.0), np.log(0.5 * w)


def _pf_log_probabilities(scores: np.ndarray, scale: float) -> np.ndarray:
    """Permute-and-flip closed form.

    With p_r = exp((u_r - u*)/b), giving every candidate an independent uniform
    arrival time t turns the random permutation into P[r] = p_r ∫_0^1
    prod_{s != r} (1 - p_s t) dt, an integral of a polynomial of degree m - 1,
    which Gauss–Legendre with ceil(m/2) nodes computes exactly.  Ties share one
    evaluation; cost O(K m) for K distinct scores.
    """
    a = (scores - scores.max()) / scale
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


@dataclass(frozen=True)
class PermuteAndFlip(NoisyMaxMechanism):
    """Permute-and-flip (McKenna & Sheldon 2020), sampled as exponential noisy max.

    Equivalent to argmax_r (u_r + E_r), E_r iid exponential with mean
    2 Delta u / eps (SPEC.md §2.6; Ding et al. 2021), which is O(m) per draw.
    epsilon-DP; monotone utilities use mean Delta u / eps (SPEC §2.6, derived
    by the one-sided argument of §3.1).
    """

    epsilon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))

    def calibrate(self, problem: SelectionProblem) -> tuple[float, Any]:
        return _global_scale(self.epsilon, problem), Exponential()

    def log_probabilities(self, problem: SelectionProblem) -> np.ndarray:
        """Closed form for m <= 4096 candidates, the noisy-max integral beyond."""
        check_problem(problem)
        scale = _global_scale(self.epsilon, problem)
        if problem.n_candidates <= _PF_CLOSED_FORM_MAX_M:
            return _pf_log_probabilities(problem.scores, scale)
        return noisy_max.log_probabilities(problem.scores, scale, Exponential())

    def privacy(self, problem: SelectionProblem) -> Privacy:
        check_problem(problem)
        return _pure(self.epsilon, problem, "permute-and-flip (McKenna-Sheldon; SPEC §2.6)")


_RNM_NOISE = {"gumbel": Gumbel, "exponential": Exponential, "laplace": Laplace}


@dataclass(frozen=True)
class ReportNoisyMax(NoisyMaxMechanism):
    """Report noisy max: argmax_r (u_r + (c Delta u / eps) Z_r), c = 2 (1 if monotone).

    ``noise="gumbel"`` is the exponential mechanism, ``"exponential"`` is
    permute-and-flip, ``"laplace"`` is Laplace report-noisy-max (Dwork & Roth
    Claim 3.9; SPEC §3.1 with constant scale).  Output probabilities always
    come from the noisy-max integral (so they independently check the closed
    forms of ExponentialMechanism and PermuteAndFlip).  epsilon-DP.
    """

    epsilon: float
    noise: str = "gumbel"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        if self.noise not in _RNM_NOISE:
            raise ValueError(f"noise must be one of {tuple(_RNM_NOISE)}, got {self.noise!r}")

    def calibrate(self, problem: SelectionProblem) -> tuple[float, Any]:
        return _global_scale(self.epsilon, problem), _RNM_NOISE[self.noise]()

    def privacy(self, problem: SelectionProblem) -> Privacy:
        check_problem(problem)
        return _pure(self.epsilon, problem, f"report noisy max ({self.noise}; SPEC §2.6/§3.1)")
