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

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy.special import logsumexp

from .. import _engine as noisy_max
from .._docstrings import fill_doc
from .._mechanism_support import check_problem
from .._params import EPSILON, Rule, validate_fields
from ..noise import Exponential, Gumbel
from ..privacy import Privacy
from ..problem import SelectionProblem
from ._classic_common import SAMPLER, ExactSampling, global_scale, pure_privacy
from ._pf_law import pf_fast_log_probabilities, pf_log_probabilities
from ._rnm import ReportNoisyMax
from .base import Calibration

__all__ = ["ExponentialMechanism", "PermuteAndFlip", "ReportNoisyMax"]

_PF_CLOSED_FORM_MAX_M = 64


@dataclass(frozen=True)
class ExponentialMechanism(ExactSampling):
    """Exponential mechanism, P[r] ∝ exp(eps u_r / (2 Delta u)); sampled as Gumbel noisy max.

    Source: McSherry & Talwar (2007) Thm 6; Gumbel-max form: Yamamoto & Shibuya
    Def. 8 (mathematics §2.6).  epsilon-DP under the problem's neighbour
    relation (add/remove or replace, ``problem.relation``); monotone utilities
    use Delta u / eps.
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

    See Also
    --------
    PermuteAndFlip : Permute-and-flip (McKenna & Sheldon 2020), sampled as exponential noisy max
    Mechanism : Abstract selection mechanism (see module docstring)
    NoisyMaxMechanism : Report noisy max for a calibration (b, h) chosen by the subclass

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
    _parameter_constraints: ClassVar[dict[str, Rule]] = {"epsilon": EPSILON, "sampler": SAMPLER}

    def __post_init__(self) -> None:
        validate_fields(self, self._parameter_constraints)

    @fill_doc
    def calibrate(self, problem: SelectionProblem) -> Calibration:
        """The noise scale 2 Delta u / eps (Delta u / eps if monotone) and the Gumbel law.

        %(calibrate_sections)s
        >>> scale, noise = dpselect.ExponentialMechanism(2.0).calibrate(p)
        >>> scale, type(noise).__name__
        (1.0, 'Gumbel')
        """
        return Calibration(global_scale(self.epsilon, problem), Gumbel())

    @fill_doc
    def log_probabilities(self, problem: SelectionProblem) -> np.ndarray:
        """Closed form: log-softmax of u / eta.

        %(problem_sections)s
        numpy.ndarray of float, shape (m,)
            ``log P[select(problem) = r]``, eta the scale of :meth:`calibrate`.

        %(log_probabilities_example)s
        """
        check_problem(problem)
        a = noisy_max.standardised(problem.scores, global_scale(self.epsilon, problem))
        return a - logsumexp(a)

    @fill_doc
    def privacy(self, problem: SelectionProblem) -> Privacy:
        """epsilon-DP and epsilon-bounded-range (``bounded_range=epsilon``).

        %(privacy_sections)s
        >>> dpselect.ExponentialMechanism(1.0).privacy(dpselect.SelectionProblem([1.0, 0.0])).bounded_range
        1.0
        """
        check_problem(problem)
        return pure_privacy(
            self.epsilon, problem, "exponential mechanism (McSherry-Talwar; mathematics §2.6)", bounded_range=True
        )


@dataclass(frozen=True)
class PermuteAndFlip(ExactSampling):
    """Permute-and-flip (McKenna & Sheldon 2020), sampled as exponential noisy max.

    Equivalent to argmax_r (u_r + E_r), E_r iid exponential with mean
    2 Delta u / eps (mathematics §2.6; Ding et al. 2021), which is O(m) per draw.
    epsilon-DP under the problem's neighbour relation (add/remove or replace,
    ``problem.relation``); monotone utilities use mean Delta u / eps (mathematics §2.6, derived
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

    See Also
    --------
    ExponentialMechanism : Exponential mechanism, P[r] ∝ exp(eps u_r / (2 Delta u)); sampled as Gumbel noisy max

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
    _parameter_constraints: ClassVar[dict[str, Rule]] = {"epsilon": EPSILON, "sampler": SAMPLER}

    def __post_init__(self) -> None:
        validate_fields(self, self._parameter_constraints)

    @fill_doc
    def calibrate(self, problem: SelectionProblem) -> Calibration:
        """The noise scale 2 Delta u / eps (Delta u / eps if monotone) and the Exponential law.

        %(calibrate_sections)s
        >>> scale, noise = dpselect.PermuteAndFlip(2.0).calibrate(p)
        >>> scale, type(noise).__name__
        (1.0, 'Exponential')
        """
        return Calibration(global_scale(self.epsilon, problem), Exponential())

    @fill_doc
    def log_probabilities(self, problem: SelectionProblem) -> np.ndarray:
        """Exact law: a polynomial integral (m <= 64), its O(18 m) power-sum evaluation beyond.

        The degree-(m-1) polynomial integral is exact by Gauss–Legendre for
        m <= 64 candidates; the power-sum evaluation of the same integral
        beyond agrees with it to ~1e-15.

        %(problem_sections)s
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
        scale = global_scale(self.epsilon, problem)
        if problem.n_candidates <= _PF_CLOSED_FORM_MAX_M:
            return pf_log_probabilities(problem.scores, scale)
        return pf_fast_log_probabilities(problem.scores, scale)

    @fill_doc
    def privacy(self, problem: SelectionProblem) -> Privacy:
        """epsilon-DP (no bounded-range certificate).

        %(privacy_sections)s
        >>> print(dpselect.PermuteAndFlip(1.0).privacy(dpselect.SelectionProblem([1.0, 0.0])))
        1-DP [add_remove]
        """
        check_problem(problem)
        return pure_privacy(self.epsilon, problem, "permute-and-flip (McKenna-Sheldon; mathematics §2.6)")
