"""Classic global-sensitivity selection mechanisms (mathematics §2.6, §3.1).

All three are epsilon-DP under the problem's neighbour relation with the
global sensitivity Delta u; for ``monotone`` problems (every score moves in
the same direction between neighbours) the noise is halved.

* Exponential mechanism (McSherry & Talwar 2007): P[r] ∝ exp(eps u_r/(2 Delta u))
  (exp(eps u_r / Delta u) if monotone) ≡ argmax_r (u_r + G_r), G_r iid
  Gumbel(0, eta), eta = 2 Delta u/eps (Delta u/eps if monotone) (mathematics §2.6).
* Permute-and-flip (McKenna & Sheldon 2020) ≡ argmax_r (u_r + E_r), E_r iid
  exponential with mean 2 Delta u/eps (Delta u/eps if monotone) (mathematics §2.6,
  Ding et al.).  Sampling uses the exponential-noise form: O(m) per draw.
* Report noisy max with Laplace noise of scale 2 Delta u/eps (Delta u/eps if
  monotone): mathematics §3.1 with a constant scale (beta = 0): loss 2A L_s with
  A = eps/2, L_s = 1 (A L_s for monotone utilities); Dwork & Roth Claim 3.9.

Samplers.  ``sampler="float"`` (default) draws NumPy float noise: fast and
vectorised, but NumPy's noise is bounded (Gumbel in [-3.60, 36.74], exponential
below 44.44, from 53-bit uniforms), so a candidate more than about 40 noise
units behind the leader can never win although its exact probability is
positive: on neighbours this is a delta of order e^-40 (about 4e-18), not pure
epsilon.  ``sampler="exact"`` (EM and PF, and RNM with Gumbel or exponential
noise) samples the exact law with integer arithmetic (exact Bernoulli(e^-x),
Canonne, Kamath & Steinke 2020): pure epsilon-DP for the law as stated, for
the exact rationals the float arguments represent.  See the documentation
page "Floating point and side channels".
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from scipy.special import logsumexp, roots_legendre

from .. import _engine as noisy_max
from .._validation import check_epsilon, check_size
from ..noise import Exponential, Gumbel, IntegerSource, Laplace
from ..privacy import Privacy
from ..problem import SelectionProblem
from ..typing import SeedLike
from ._exact_selection import check_sampler, exact_rates, sample_em_exact, sample_pf_exact
from .base import NoisyMaxMechanism, check_problem, no_guarantee

__all__ = ["ExponentialMechanism", "PermuteAndFlip", "ReportNoisyMax"]

_PF_CLOSED_FORM_MAX_M = 64


_TINY = float(np.nextafter(0.0, 1.0))


def _global_scale(epsilon: float, problem: SelectionProblem) -> float:
    """2 Delta u / eps, or Delta u / eps for monotone utilities.

    A scale that overflows (epsilon far below Delta u / 1e308) is rejected with an
    error naming epsilon.  A scale that underflows (epsilon above ~1e308 Delta u)
    is floored at the smallest positive double: the gaps then overflow to -inf
    and the output is uniform over the maximal scores, which is the exact limit
    for these light-tailed noises (Gumbel, exponential, Laplace: a candidate
    1e308 noise units behind wins with probability below e^-1e308).
    """
    factor = 1.0 if problem.monotone else 2.0
    scale = factor * problem.global_sensitivity / epsilon
    if math.isinf(scale):
        raise ValueError(
            f"epsilon={epsilon!r} is too small for global_sensitivity={problem.global_sensitivity!r}: "
            f"the noise scale {factor:g} * global_sensitivity / epsilon overflows (use epsilon >= "
            f"{factor * problem.global_sensitivity / 1.7e308:.3g})")
    return max(scale, _TINY)


def _pure(epsilon: float, problem: SelectionProblem, source: str, bounded_range: bool = False) -> Privacy:
    """epsilon-DP; epsilon-bounded-range for the exponential mechanism (Durfee & Rogers 2019, §3;
    derived in the mathematics page §10.1)."""
    return no_guarantee(problem) or Privacy(epsilon, 0.0, problem.relation, source,
                                            bounded_range=epsilon if bounded_range else None)


class _ExactSampling(NoisyMaxMechanism):
    """``sampler="exact"``: draw the mechanism's exact law with integer arithmetic."""

    epsilon: float
    sampler: str
    _EXACT: str | None = None  # "em" or "pf": the law sampled exactly

    def _exact_kind(self) -> str | None:
        return self._EXACT

    def select(self, problem: SelectionProblem, *, size: int | None = None, rng: SeedLike = None) -> Any:
        if self.sampler != "exact":
            return super().select(problem, size=size, rng=rng)
        check_problem(problem)
        size = check_size(size)
        src = IntegerSource(rng)
        nums, den = exact_rates(problem, self.epsilon)
        draw = sample_em_exact if self._exact_kind() == "em" else sample_pf_exact
        out = draw(nums, den, 1 if size is None else size, src)
        return int(out[0]) if size is None else out


@dataclass(frozen=True)
class ExponentialMechanism(_ExactSampling):
    """Exponential mechanism, P[r] ∝ exp(eps u_r / (2 Delta u)); sampled as Gumbel noisy max.

    Source: McSherry & Talwar (2007) Thm 6; Gumbel-max form: Yamamoto & Shibuya
    Def. 8 (mathematics §2.6).  epsilon-DP; monotone utilities use Delta u / eps.
    Also epsilon-bounded-range (Durfee & Rogers 2019), reported in
    ``privacy().bounded_range``: the accountant composes it through zCDP /
    bounded-range composition (mathematics page §10.1).

    ``sampler="exact"`` samples by rejection, gamma_r = (u* - u_r) eps / (2 Delta u)
    (Delta u if monotone): propose r with probability ∝ 2^{-j_r}, j_r =
    min(floor(gamma_r / ln 2), J) (certified j_r ln 2 <= gamma_r; J =
    bitlength(m) + 2), accept with an exact Bernoulli(2^{j_r} e^{-gamma_r}),
    repeat until acceptance.  A round outputs r with probability ∝ e^{-gamma_r},
    so P[r] = e^{-gamma_r} / sum_s e^{-gamma_s}: exactly the exponential
    mechanism, with at most 2.5 rounds expected (documentation page "Floating
    point and side channels").  Scores, epsilon and Delta u are converted
    exactly to rationals.

    Parameters
    ----------
    epsilon : float
        The privacy parameter, > 0.
    sampler : {"float", "exact"}, default="float"
        "float": Gumbel noisy max with NumPy float noise (fast; see the module
        docstring for its e^-40-order deviation); "exact": the exact
        rejection sampler above.

    Examples
    --------
    >>> import dpselect
    >>> p = dpselect.SelectionProblem([1.0, 0.0])
    >>> dpselect.ExponentialMechanism(2.0, sampler="exact").select(p, size=3, rng=0).shape
    (3,)
    """

    epsilon: float
    sampler: str = "float"
    _EXACT = "em"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "sampler", check_sampler(self.sampler))

    def calibrate(self, problem: SelectionProblem) -> tuple[float, Any]:
        """The noise scale 2 Delta u / eps (Delta u / eps if monotone) and the Gumbel law.

        Parameters
        ----------
        problem : SelectionProblem
            The candidates' utilities, global sensitivity and ``monotone`` flag.

        Returns
        -------
        tuple of (float, noise distribution)
            The scale and the standard noise law (a :mod:`dpselect.noise` object).

        Examples
        --------
        >>> import dpselect
        >>> p = dpselect.SelectionProblem([1.0, 0.0])
        >>> scale, noise = dpselect.ExponentialMechanism(2.0).calibrate(p)
        >>> scale, type(noise).__name__
        (1.0, 'Gumbel')
        """
        return _global_scale(self.epsilon, problem), Gumbel()

    def log_probabilities(self, problem: SelectionProblem) -> np.ndarray:
        """Closed form: log-softmax of u / eta.

        Parameters
        ----------
        problem : SelectionProblem
            The candidates' utilities and sensitivities.

        Returns
        -------
        numpy.ndarray of float, shape (m,)
            ``log P[select(problem) = r]``, eta the scale of :meth:`calibrate`.

        Examples
        --------
        >>> import dpselect
        >>> p = dpselect.SelectionProblem([1.0, 0.0])
        >>> dpselect.ExponentialMechanism(2.0).log_probabilities(p).round(4)
        array([-0.3133, -1.3133])
        """
        check_problem(problem)
        a = noisy_max.standardised(problem.scores, _global_scale(self.epsilon, problem))
        return a - logsumexp(a)

    def privacy(self, problem: SelectionProblem) -> Privacy:
        """epsilon-DP and epsilon-bounded-range (``bounded_range=epsilon``).

        Parameters
        ----------
        problem : SelectionProblem
            The problem (its ``relation`` and ``private`` flag matter).

        Returns
        -------
        Privacy
            The guarantee under ``problem.relation``.

        Examples
        --------
        >>> import dpselect
        >>> p = dpselect.SelectionProblem([1.0, 0.0])
        >>> q = dpselect.ExponentialMechanism(1.0).privacy(p)
        >>> str(q), q.bounded_range
        ('1-DP [add_remove]', 1.0)
        """
        check_problem(problem)
        return _pure(self.epsilon, problem, "exponential mechanism (McSherry-Talwar; mathematics §2.6)",
                     bounded_range=True)


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
    """log P[a given member of group k wins] for PF, distinct standardised ``values`` (max 0).

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


def _pf_fast_log_probabilities(scores: np.ndarray, scale: float) -> np.ndarray:
    """Permute-and-flip's exact law in O(18 m) (see :func:`_pf_group_log_probabilities`)."""
    a = noisy_max.standardised(scores, scale)
    values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True)
    if values.size == 1:
        return np.full(a.size, -np.log(a.size))
    c = counts.astype(np.float64)
    group = _pf_group_log_probabilities(values, c)
    return group[inverse] - logsumexp(group + np.log(c))


@dataclass(frozen=True)
class PermuteAndFlip(_ExactSampling):
    """Permute-and-flip (McKenna & Sheldon 2020), sampled as exponential noisy max.

    Equivalent to argmax_r (u_r + E_r), E_r iid exponential with mean
    2 Delta u / eps (mathematics §2.6; Ding et al. 2021), which is O(m) per draw.
    epsilon-DP; monotone utilities use mean Delta u / eps (mathematics §2.6, derived
    by the one-sided argument of §3.1).

    ``sampler="exact"`` runs McKenna & Sheldon's Algorithm 1 itself (as
    OpenDP does): candidates in a uniformly random order, stop at the first r
    whose exact Bernoulli(exp(-(u* - u_r) eps / (2 Delta u))) succeeds.

    Parameters
    ----------
    epsilon : float
        The privacy parameter, > 0.
    sampler : {"float", "exact"}, default="float"
        "float": exponential noisy max with NumPy float noise (fast; see the
        module docstring for its e^-40-order deviation); "exact": Algorithm 1
        with exact Bernoulli draws.

    Examples
    --------
    >>> import dpselect
    >>> p = dpselect.SelectionProblem([1.0, 0.0])
    >>> dpselect.PermuteAndFlip(2.0).probabilities(p).round(4)
    array([0.8161, 0.1839])
    """

    epsilon: float
    sampler: str = "float"
    _EXACT = "pf"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "sampler", check_sampler(self.sampler))

    def calibrate(self, problem: SelectionProblem) -> tuple[float, Any]:
        """The noise scale 2 Delta u / eps (Delta u / eps if monotone) and the Exponential law.

        Parameters
        ----------
        problem : SelectionProblem
            The candidates' utilities, global sensitivity and ``monotone`` flag.

        Returns
        -------
        tuple of (float, noise distribution)
            The scale and the standard noise law (a :mod:`dpselect.noise` object).

        Examples
        --------
        >>> import dpselect
        >>> p = dpselect.SelectionProblem([1.0, 0.0])
        >>> scale, noise = dpselect.PermuteAndFlip(2.0).calibrate(p)
        >>> scale, type(noise).__name__
        (1.0, 'Exponential')
        """
        return _global_scale(self.epsilon, problem), Exponential()

    def log_probabilities(self, problem: SelectionProblem) -> np.ndarray:
        """Exact law: the degree-(m-1) polynomial integral for m <= 64 candidates, the
        O(18 m) power-sum evaluation of the same integral beyond (equal to ~1e-15).

        Parameters
        ----------
        problem : SelectionProblem
            The candidates' utilities and sensitivities.

        Returns
        -------
        numpy.ndarray of float, shape (m,)
            ``log P[select(problem) = r]``.

        Examples
        --------
        >>> import dpselect
        >>> p = dpselect.SelectionProblem([1.0, 0.0])
        >>> dpselect.PermuteAndFlip(2.0).log_probabilities(p).round(4)
        array([-0.2033, -1.6931])
        """
        check_problem(problem)
        scale = _global_scale(self.epsilon, problem)
        if problem.n_candidates <= _PF_CLOSED_FORM_MAX_M:
            return _pf_log_probabilities(problem.scores, scale)
        return _pf_fast_log_probabilities(problem.scores, scale)

    def privacy(self, problem: SelectionProblem) -> Privacy:
        """epsilon-DP (no bounded-range certificate).

        Parameters
        ----------
        problem : SelectionProblem
            The problem (its ``relation`` and ``private`` flag matter).

        Returns
        -------
        Privacy
            The guarantee under ``problem.relation``.

        Examples
        --------
        >>> import dpselect
        >>> p = dpselect.SelectionProblem([1.0, 0.0])
        >>> q = dpselect.PermuteAndFlip(1.0).privacy(p)
        >>> str(q), q.bounded_range
        ('1-DP [add_remove]', None)
        """
        check_problem(problem)
        return _pure(self.epsilon, problem, "permute-and-flip (McKenna-Sheldon; mathematics §2.6)")


_RNM_NOISE: dict[str, Callable[[], Any]] = {"gumbel": Gumbel, "exponential": Exponential, "laplace": Laplace}


@dataclass(frozen=True)
class ReportNoisyMax(_ExactSampling):
    """Report noisy max: argmax_r (u_r + (c Delta u / eps) Z_r), c = 2 (1 if monotone).

    ``noise="gumbel"`` is the exponential mechanism, ``"exponential"`` is
    permute-and-flip, ``"laplace"`` is Laplace report-noisy-max (Dwork & Roth
    Claim 3.9; mathematics §3.1 with constant scale).  Output probabilities always
    come from the noisy-max integral (so they independently check the closed
    forms of ExponentialMechanism and PermuteAndFlip).  epsilon-DP.

    ``sampler="exact"`` is available for ``noise="gumbel"`` (the exponential
    mechanism's exact rejection sampler) and ``"exponential"`` (exact
    permute-and-flip); Laplace report-noisy-max has no exact sampler here.

    Parameters
    ----------
    epsilon : float
        The privacy parameter, > 0.
    noise : {"gumbel", "exponential", "laplace"}, default="gumbel"
        The noise law Z_r.
    sampler : {"float", "exact"}, default="float"
        "float": NumPy float noise; "exact": the exact sampler of the
        equivalent mechanism (not with ``noise="laplace"``).

    Examples
    --------
    >>> import dpselect
    >>> p = dpselect.SelectionProblem([1.0, 0.0])
    >>> dpselect.ReportNoisyMax(2.0, noise="exponential").probabilities(p).round(4)   # = PF
    array([0.8161, 0.1839])
    """

    epsilon: float
    noise: str = "gumbel"
    sampler: str = "float"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        if self.noise not in _RNM_NOISE:
            raise ValueError(f"noise must be one of {tuple(_RNM_NOISE)}, got {self.noise!r}")
        object.__setattr__(self, "sampler", check_sampler(self.sampler))
        if self.sampler == "exact" and self.noise == "laplace":
            raise ValueError("sampler='exact' needs noise='gumbel' or 'exponential' (no exact Laplace noisy max)")

    def _exact_kind(self) -> str | None:
        return "em" if self.noise == "gumbel" else "pf"

    def calibrate(self, problem: SelectionProblem) -> tuple[float, Any]:
        """The noise scale 2 Delta u / eps (Delta u / eps if monotone) and the law named by ``noise``.

        Parameters
        ----------
        problem : SelectionProblem
            The candidates' utilities, global sensitivity and ``monotone`` flag.

        Returns
        -------
        tuple of (float, noise distribution)
            The scale and the standard noise law (a :mod:`dpselect.noise` object).

        Examples
        --------
        >>> import dpselect
        >>> p = dpselect.SelectionProblem([1.0, 0.0])
        >>> scale, noise = dpselect.ReportNoisyMax(2.0, noise="laplace").calibrate(p)
        >>> scale, type(noise).__name__
        (1.0, 'Laplace')
        """
        return _global_scale(self.epsilon, problem), _RNM_NOISE[self.noise]()

    def privacy(self, problem: SelectionProblem) -> Privacy:
        """epsilon-DP; also epsilon-bounded-range with ``noise="gumbel"`` (the exponential mechanism).

        Parameters
        ----------
        problem : SelectionProblem
            The problem (its ``relation`` and ``private`` flag matter).

        Returns
        -------
        Privacy
            The guarantee under ``problem.relation``.

        Examples
        --------
        >>> import dpselect
        >>> p = dpselect.SelectionProblem([1.0, 0.0])
        >>> q = dpselect.ReportNoisyMax(1.0, noise="laplace").privacy(p)
        >>> str(q), q.bounded_range
        ('1-DP [add_remove]', None)
        """
        check_problem(problem)
        return _pure(self.epsilon, problem, f"report noisy max ({self.noise}; mathematics §2.6/§3.1)",
                     bounded_range=self.noise == "gumbel")
