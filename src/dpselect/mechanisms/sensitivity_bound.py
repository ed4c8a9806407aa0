r"""Private sensitivity bound, then a fixed-scale mechanism (generalized PTR; mathematics §9.2).

Step 1 releases a private upper bound on the local sensitivity,

.. math::

    \hat L = \ln S(x) + \frac{\beta}{\varepsilon_1}\Bigl(Z + \ln\frac{1}{2\delta}\Bigr),
    \quad Z \sim \mathrm{Laplace}(1), \qquad \hat S = \min(e^{\hat L}, GS),

with S a beta-smooth upper bound on LS_u(x) = max_r LS_u(x, r)
(``problem.smooth_sensitivity(beta)``) and GS the global sensitivity (the cap
is post-processing).  Step 2 runs a fixed-scale selector (permute-and-flip,
the exponential mechanism, or Laplace report-noisy-max) with budget eps2 on
the scores, as if their sensitivity were Ŝ.  Unlike smooth report-noisy-max
(mathematics §3.1) no noise is rescaled per dataset inside the selector, so there is
no m-fold dilation.
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, dataclass
from typing import ClassVar, NamedTuple

import numpy as np

from .. import accounting
from .._docstrings import fill_doc
from .._mechanism_support import check_problem
from .._params import EPSILON, Rule, options, positive, validate_fields
from .._validation import check_delta, check_positive, check_random_state
from ..privacy import Privacy
from ..problem import SelectionProblem
from ..typing import SeedLike
from ._sensitivity_bound_law import argmax_log_law, integrated_log_law
from .base import Mechanism, no_guarantee
from .classic import ExponentialMechanism, PermuteAndFlip, ReportNoisyMax

__all__ = ["SELECTORS", "PrivateSensitivityBound"]

#: Fixed-scale selectors run at the released sensitivity.
SELECTORS = ("pf", "em", "rnm_laplace")

_TINY = float(np.nextafter(0.0, 1.0))


class _BoundParameters(NamedTuple):
    """Parameters of the released log-bound: L̂ ~ Laplace(loc, scale), Ŝ = min(e^L̂, e^cap).

    Not a law object: :meth:`PrivateSensitivityBound.probabilities` integrates over it.

    Attributes
    ----------
    loc : float
        ln S(x) + (beta/eps1) ln(1/(2 delta)) (``-inf`` when S(x) = 0).
    scale : float
        beta / eps1.
    cap : float
        ln GS.
    """

    loc: float
    scale: float
    cap: float


def _check_delta_half(value: object, name: str) -> float:
    """Delta in (0, 1/2): the bound fails with probability delta."""
    d = check_delta(value, name)
    if not 0.0 < d < 0.5:
        raise ValueError(f"delta must be in (0, 1/2) (the bound fails with probability delta), got {d!r}")
    return d


def _selector(name: str, epsilon: float) -> Mechanism:
    """The fixed-scale selector called ``name`` with budget ``epsilon``."""
    if name == "pf":
        return PermuteAndFlip(epsilon)
    if name == "em":
        return ExponentialMechanism(epsilon)
    return ReportNoisyMax(epsilon, noise="laplace")


@dataclass(frozen=True)
class PrivateSensitivityBound(Mechanism):
    r"""Release a private bound Ŝ on the local sensitivity, then select at that fixed scale.

    L̂ = ln S(x) + (beta/eps1)(Z + ln(1/(2 delta))), Z ~ Lap(1), Ŝ = min(e^L̂, GS);
    then ``selector`` ("pf", "em" or "rnm_laplace") with budget ``epsilon2`` on
    the scores at sensitivity Ŝ (monotone problems keep the halved scale).
    Only the selected index is output (L̂ is internal; releasing it too would
    not change the guarantee).

    **Guarantee: (eps1 + eps2, delta)-DP** under ``problem.relation``
    (mathematics §9.2 [DERIVED]; Dwork & Lei 2009 PTR; Redberg, Zhu & Wang 2023).

    Proof.  (i) ln S is beta-Lipschitz along neighbours (S is beta-smooth),
    so L̂ is the Laplace mechanism on a beta-sensitive quantity with scale
    beta/eps1: its density ratio between neighbours is <= e^eps1 pointwise.
    (ii) The bad set B_x = {L̂ < ln S(x)} has probability
    P[Z < -ln(1/(2 delta))] = (1/2) e^{-ln(1/(2 delta))} = delta exactly.
    (iii) For L̂ outside B_x and any neighbour y, every score moves by
    |u(x, r) - u(y, r)| <= LS_u(x) <= S(x) <= e^L̂, and also <= GS, so
    <= Ŝ: the selector at the fixed sensitivity Ŝ satisfies its pairwise
    eps2 bound (for EM the numerator and every normaliser term change by at
    most e^{eps2/2}; PF and Laplace RNM likewise by their proofs at a fixed
    scale), i.e. q_x(r | L̂) <= e^eps2 q_y(r | L̂).  Hence for any event T,
    P_x(T) <= P[B_x] + ∫_{not B_x} f_x(l) q_x(T | l) dl
    <= delta + e^{eps1 + eps2} ∫ f_y(l) q_y(T | l) dl = e^{eps1+eps2} P_y(T) + delta.
    (The bad set is defined from the first dataset of the ordered pair; the
    argument is symmetric.)  The formula is
    :func:`dpselect.accounting.sensitivity_bound_privacy`.  Audited exactly on
    all add/remove neighbours of small universes (tests/test_sensitivity_bound.py,
    after the exact check of mathematics §9.2 (see §8 of the mathematics page)),
    where dropping the shift ln(1/(2 delta)) or plugging S(x) straight into
    EM are caught as violations.

    .. math::

        P_x(T) \le e^{\varepsilon_1 + \varepsilon_2} P_y(T) + \delta
        \quad \text{for all neighbours } x \sim y \text{ and events } T.

    Parameters
    ----------
    epsilon1 : float
        The budget of the sensitivity bound (> 0).
    epsilon2 : float
        The budget of the selection (> 0).
    delta : float, default=1e-6
        The failure probability of the bound, in (0, 1/2) (keyword-only).
    beta : float, default=None
        The smoothness of S (> 0; any value is valid, no 1/m).  ``None``
        uses beta = eps1 / ln(1/(2 delta)), which makes the upward shift of
        L̂ exactly one unit (Ŝ ≈ e^{1 + Z} S(x)); data-independent.
    selector : {"pf", "em", "rnm_laplace"}, default="pf"
        The fixed-scale selector run at Ŝ.

    See Also
    --------
    SmoothSensitivityRelease : Numeric release, not a selection mechanism: f(x) + (S(x)/alpha') Z, S beta'-smooth

    Notes
    -----
    Exact output distribution: the selector's law is a function of Ŝ only, so
    P[r] = ∫ f(l) q_r(min(e^l, GS)) dl with f the Laplace density of L̂.
    Above ln GS the integrand is constant (the exact mass P[L̂ >= ln GS] times
    the law at GS); below the level where every non-maximal candidate has
    probability < e^-750 it is the noiseless argmax; in between, composite
    Gauss–Legendre (12 nodes per panel, panels at most 1 wide in ln Ŝ,
    breakpoints at the Laplace kink and 1/2, 1, 2, ..., 32 Laplace scales
    from it, and geometric panels towards ln GS when the losers are far out
    even at GS), accumulated in log space.  Laplace mass beyond 40 scales
    (2e-18) gets the integrand's edge value.  Measured against mpmath
    quadrature: |error| <= 5e-15 in log-probability (tests check 1e-9).

    References
    ----------
    Dwork & Lei, "Differential privacy and robust statistics", STOC 2009
    (propose-test-release); Redberg, Zhu & Wang, "Generalized PTR:
    user-friendly recipes for data-adaptive algorithms with differential
    privacy", AISTATS 2023.  The guarantee with these constants is derived on
    the mathematics page, mathematics §9.2.

    Examples
    --------
    >>> import dpselect
    >>> p = dpselect.SelectionProblem([10.0, 4.0, 3.0], global_sensitivity=1.0, local_sensitivity=0.05)
    >>> mech = dpselect.PrivateSensitivityBound(0.5, 1.0, delta=1e-6)
    >>> print(mech.privacy(p))
    (1.5, 1e-06)-DP [add_remove]
    >>> bool(mech.probabilities(p)[0] > 0.99)
    True
    """

    epsilon1: float
    epsilon2: float
    _: KW_ONLY
    delta: float = 1e-6
    beta: float | None = None
    selector: str = "pf"
    _parameter_constraints: ClassVar[dict[str, Rule]] = {
        "epsilon1": EPSILON,
        "epsilon2": EPSILON,
        "delta": Rule("a float in (0, 1/2)", check=_check_delta_half),
        "beta": positive(none=True),
        "selector": options(*SELECTORS),
    }

    def __post_init__(self) -> None:
        validate_fields(self, self._parameter_constraints)

    # ------------------------------------------------------------- parameters
    @property
    def epsilon(self) -> float:
        """Total epsilon, eps1 + eps2."""
        return self.epsilon1 + self.epsilon2

    @property
    def smoothness(self) -> float:
        """The beta at which S is computed (``beta`` or its default eps1 / ln(1/(2 delta)))."""
        if self.beta is not None:
            return self.beta
        return self.epsilon1 / -math.log(2.0 * self.delta)

    @fill_doc
    def _bound_parameters(self, problem: SelectionProblem) -> _BoundParameters:
        """(loc, scale, cap) of the released bound: L̂ ~ Laplace(loc, scale), Ŝ = min(e^L̂, e^cap).

        loc = ln S(x) + (beta/eps1) ln(1/(2 delta)) (``-inf`` when S(x) = 0),
        scale = beta/eps1, cap = ln GS.

        %(smooth_problem_sections)s
        _BoundParameters
            The named triple ``(loc, scale, cap)``.

        Examples
        --------
        >>> import dpselect
        >>> p = dpselect.SelectionProblem([1.0, 0.0], local_sensitivity=0.5)
        >>> loc, scale, cap = dpselect.PrivateSensitivityBound(1.0, 1.0, delta=0.05)._bound_parameters(p)
        >>> round(loc, 6), round(scale, 6), cap   # ln 0.5 + 1, 1 / ln 10, ln 1
        (0.306853, 0.434294, 0.0)
        """
        check_problem(problem)
        beta = self.smoothness
        s = problem.smooth_sensitivity(beta)
        scale = beta / self.epsilon1
        shift = accounting.sensitivity_bound_shift(beta, self.epsilon1, self.delta)
        loc = (math.log(s) if s > 0 else -math.inf) + shift
        return _BoundParameters(loc, scale, math.log(problem.global_sensitivity))

    def conditional_log_probabilities(self, problem: SelectionProblem, sensitivity: float) -> np.ndarray:
        """Log q(r | Ŝ = sensitivity): the selector's exact law at that fixed sensitivity.

        Parameters
        ----------
        problem : SelectionProblem
            The scores, global sensitivity and smooth bound S(x).
        sensitivity : float
            The released bound Ŝ (>= 0; 0 gives the noiseless argmax).

        Returns
        -------
        numpy.ndarray of float, shape (m,)
            The selector's log output probabilities at sensitivity Ŝ.

        Examples
        --------
        >>> import dpselect
        >>> p = dpselect.SelectionProblem([10.0, 4.0, 3.0], local_sensitivity=0.05)
        >>> mech = dpselect.PrivateSensitivityBound(0.5, 1.0, delta=1e-6)
        >>> import numpy as np
        >>> np.exp(mech.conditional_log_probabilities(p, 0.0)).tolist()   # S = 0: the noiseless argmax
        [1.0, 0.0, 0.0]
        """
        check_problem(problem)
        s = check_positive(sensitivity, "sensitivity", allow_zero=True, quote=False)
        if s == 0.0:
            return argmax_log_law(problem)
        fixed = SelectionProblem(
            problem.scores, global_sensitivity=max(s, _TINY), monotone=problem.monotone, relation=problem.relation
        )
        return _selector(self.selector, self.epsilon2).log_probabilities(fixed)

    # ------------------------------------------------------------ exact law
    @fill_doc
    def log_probabilities(self, problem: SelectionProblem) -> np.ndarray:
        r"""Exact log output probabilities, integrated over the released bound.

        .. math::

            P[r] = \int f(l)\, q_r\bigl(\min(e^l, GS)\bigr)\, dl,

        f the Laplace density of L̂ (quadrature described in the class Notes).

        %(smooth_problem_sections)s
        numpy.ndarray of float, shape (m,)
            ``log P[r]``.

        Examples
        --------
        >>> import dpselect
        >>> p = dpselect.SelectionProblem([10.0, 4.0, 3.0], local_sensitivity=0.05)
        >>> mech = dpselect.PrivateSensitivityBound(0.5, 1.0, delta=1e-6)
        >>> bool(mech.log_probabilities(p)[0] > -0.01)
        True
        """
        bound = self._bound_parameters(problem)

        def conditional(sensitivity: float) -> np.ndarray:
            return self.conditional_log_probabilities(problem, sensitivity)

        return integrated_log_law(conditional, self.epsilon2, problem, bound.loc, bound.scale, bound.cap)

    # -------------------------------------------------------------- sampling
    def _sample(self, problem: SelectionProblem, n: int, rng: SeedLike) -> np.ndarray:
        """Draw L̂, then the selector at Ŝ (one bound per draw: each draw costs the full budget)."""
        gen = check_random_state(rng)
        loc, scale, cap = self._bound_parameters(problem)
        levels = np.minimum(loc + scale * gen.laplace(size=n), cap)
        out = np.empty(n, dtype=np.int64)
        sel = _selector(self.selector, self.epsilon2)
        for i, level in enumerate(levels):  # one fixed-scale problem per draw (the scale is per draw)
            s = max(math.exp(level), _TINY)  # S(x) = 0: the engine's noiseless limit (uniform over the maxima)
            fixed = SelectionProblem(
                problem.scores, global_sensitivity=s, monotone=problem.monotone, relation=problem.relation
            )
            out[i] = sel.select(fixed, rng=gen)
        return out

    @fill_doc
    def privacy(self, problem: SelectionProblem) -> Privacy:
        """(eps1 + eps2, delta)-DP under ``problem.relation`` (mathematics §9.2).

        The guarantee is :func:`dpselect.accounting.sensitivity_bound_privacy` of the budgets (no
        guarantee for a non-private problem).

        %(privacy_sections)s
        >>> p = dpselect.SelectionProblem([10.0, 4.0, 3.0], local_sensitivity=0.05)
        >>> mech = dpselect.PrivateSensitivityBound(0.5, 1.0, delta=1e-6)
        >>> print(mech.privacy(p))
        (1.5, 1e-06)-DP [add_remove]
        """
        check_problem(problem)
        return no_guarantee(problem) or accounting.sensitivity_bound_privacy(
            self.epsilon1, self.epsilon2, self.delta, relation=problem.relation
        )
