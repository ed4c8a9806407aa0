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
from functools import lru_cache
from typing import Any

import numpy as np
from scipy.special import logsumexp

from .. import accounting
from .._validation import check_delta, check_epsilon, check_positive, check_random_state, check_size
from ..privacy import Privacy
from ..problem import SelectionProblem
from ..typing import SeedLike
from .base import Mechanism, check_problem, no_guarantee
from .classic import ExponentialMechanism, PermuteAndFlip, ReportNoisyMax

__all__ = ["PrivateSensitivityBound", "SELECTORS"]

#: Fixed-scale selectors run at the released sensitivity.
SELECTORS = ("pf", "em", "rnm_laplace")

_TAIL = 40.0  # Laplace mass beyond 40 scales: e^-40 / 2 = 2e-18, far below the 1e-9 target
_NODES = 12
_WIDTH = 1.0  # largest panel in l = ln Ŝ (the selector's law varies on a scale of ~1 in ln Ŝ)
_STEPS = np.array([0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 24.0, 32.0])  # Laplace-scale breakpoints around loc
_TINY = float(np.nextafter(0.0, 1.0))


@lru_cache(maxsize=8)
def _legendre(n: int) -> tuple[np.ndarray, np.ndarray]:
    x, w = np.polynomial.legendre.leggauss(n)
    return x, w


def _selector(name: str, epsilon: float) -> Mechanism:
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

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon1", check_epsilon(self.epsilon1, "epsilon1"))
        object.__setattr__(self, "epsilon2", check_epsilon(self.epsilon2, "epsilon2"))
        d = check_delta(self.delta)
        if not 0.0 < d < 0.5:
            raise ValueError(f"delta must be in (0, 1/2) (the bound fails with probability delta), got {d!r}")
        object.__setattr__(self, "delta", d)
        if self.beta is not None:
            object.__setattr__(self, "beta", check_positive(self.beta, "beta"))
        if self.selector not in SELECTORS:
            raise ValueError(f"selector must be one of {SELECTORS}, got {self.selector!r}")

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

    def bound_distribution(self, problem: SelectionProblem) -> tuple[float, float, float]:
        """(loc, scale, cap) of the released bound: L̂ ~ Laplace(loc, scale), Ŝ = min(e^L̂, e^cap).

        loc = ln S(x) + (beta/eps1) ln(1/(2 delta)) (``-inf`` when S(x) = 0),
        scale = beta/eps1, cap = ln GS.

        Parameters
        ----------
        problem : SelectionProblem
            The scores, global sensitivity and smooth bound S(x).

        Returns
        -------
        tuple of float
            ``(loc, scale, cap)``.

        Examples
        --------
        >>> import dpselect
        >>> p = dpselect.SelectionProblem([1.0, 0.0], local_sensitivity=0.5)
        >>> loc, scale, cap = dpselect.PrivateSensitivityBound(1.0, 1.0, delta=0.05).bound_distribution(p)
        >>> round(loc, 6), round(scale, 6), cap   # ln 0.5 + 1, 1 / ln 10, ln 1
        (0.306853, 0.434294, 0.0)
        """
        check_problem(problem)
        beta = self.smoothness
        s = problem.smooth_sensitivity(beta)
        scale = beta / self.epsilon1
        shift = accounting.sensitivity_bound_shift(beta, self.epsilon1, self.delta)
        loc = (math.log(s) if s > 0 else -math.inf) + shift
        return loc, scale, math.log(problem.global_sensitivity)

    def conditional_log_probabilities(self, problem: SelectionProblem, sensitivity: float) -> np.ndarray:
        """log q(r | Ŝ = sensitivity): the selector's exact law at that fixed sensitivity.

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
            return self._argmax_log_law(problem)
        fixed = SelectionProblem(
            problem.scores, global_sensitivity=max(s, _TINY), monotone=problem.monotone, relation=problem.relation
        )
        return _selector(self.selector, self.epsilon2).log_probabilities(fixed)

    @staticmethod
    def _argmax_log_law(problem: SelectionProblem) -> np.ndarray:
        top = problem.optimal()
        with np.errstate(divide="ignore"):
            return np.where(top, -math.log(top.sum()), -np.inf)

    # ------------------------------------------------------------ exact law
    def log_probabilities(self, problem: SelectionProblem) -> np.ndarray:
        r"""Exact log output probabilities, integrated over the released bound.

        .. math::

            P[r] = \int f(l)\, q_r\bigl(\min(e^l, GS)\bigr)\, dl,

        f the Laplace density of L̂ (quadrature described in the class Notes).

        Parameters
        ----------
        problem : SelectionProblem
            The scores, global sensitivity and smooth bound S(x).

        Returns
        -------
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
        loc, scale, cap = self.bound_distribution(problem)
        if math.isinf(loc):  # S(x) = 0: the scores can never change; noiseless argmax
            return self._argmax_log_law(problem)
        u = problem.scores
        distinct = np.unique(u)
        if distinct.size == 1:
            return np.full(u.size, -math.log(u.size))
        gap = float(distinct[-1]) - float(distinct[-2])  # Python floats: inf, not an overflow warning
        # below l_q every loser has probability < e^-750 (scale <= 2 Ŝ/eps2, P[loser] <= e^{-gap/scale})
        l_q = math.log(self.epsilon2 / 1500.0) + math.log(gap)
        # a few units below the cap are always integrated: losers whose law is < e^-750 at every Ŝ <= GS
        # still get their exact (log) probability from the last units before the cap
        lo = max(min(l_q, cap - 8.0), loc - _TAIL * scale)
        hi = min(cap, loc + _TAIL * scale)
        if lo >= hi:  # the integrand is constant wherever the Laplace mass is (up to 2e-18)
            if hi < cap:  # all the mass is below l_q: the noiseless argmax
                return self._argmax_log_law(problem)
            # the cap: P[L̂ >= ln GS] at the law at GS, the rest at the argmax (cap <= l_q) or at GS
            at_cap = self.conditional_log_probabilities(problem, problem.global_sensitivity)
            below = self._argmax_log_law(problem) if cap <= l_q else at_cap
            out = np.logaddexp(_laplace_log_cdf(-cap, -loc, scale) + at_cap, _laplace_log_cdf(cap, loc, scale) + below)
            return out - logsumexp(out)
        # breakpoints: the Laplace kink and geometric steps of the Laplace weight away from it
        steps = loc + scale * np.concatenate([-_STEPS[::-1], [0.0], _STEPS])
        # when even at Ŝ = GS the losers are far out (standardised gap z >> 1), their integrand below the cap
        # falls like exp(-z e^{cap - l}): geometric panels cap - 2^-k resolve that last stretch
        z_cap = self.epsilon2 * gap / (2.0 * problem.global_sensitivity)
        if hi == cap and z_cap > 20.0:
            k_max = min(60, math.ceil(math.log2(z_cap)) + 12)
            steps = np.concatenate([steps, cap - 2.0 ** -np.arange(0, k_max + 1)])
        edges = np.unique(np.concatenate([[lo, hi], steps[(steps > lo) & (steps < hi)]]))
        nodes, log_w = [], []
        x, w = _legendre(_NODES)
        for a, b in zip(edges[:-1], edges[1:]):
            n_pan = max(1, math.ceil((b - a) / _WIDTH))
            panel = np.linspace(a, b, n_pan + 1)
            half = 0.5 * np.diff(panel)
            mid = 0.5 * (panel[:-1] + panel[1:])
            nodes.append((mid[:, None] + half[:, None] * x[None, :]).ravel())
            log_w.append((np.log(half)[:, None] + np.log(w)[None, :]).ravel())
        ls, lw = np.concatenate(nodes), np.concatenate(log_w)
        log_f = -math.log(2.0 * scale) - np.abs(ls - loc) / scale  # Laplace density of L̂
        cond = np.stack([self.conditional_log_probabilities(problem, math.exp(v)) for v in ls])
        terms = [(lw + log_f)[:, None] + cond]
        # the two outer masses: P[L̂ < lo] at the lower edge's law, P[L̂ > hi] at the upper edge's
        log_below = _laplace_log_cdf(lo, loc, scale)
        log_above = _laplace_log_cdf(-hi, -loc, scale)
        terms.append(log_below + self._law_at(problem, lo, l_q)[None, :])
        terms.append(log_above + self.conditional_log_probabilities(problem, math.exp(hi))[None, :])
        out = logsumexp(np.concatenate(terms, axis=0), axis=0)
        return out - logsumexp(out)

    def _law_at(self, problem: SelectionProblem, level: float, l_q: float) -> np.ndarray:
        if level <= l_q:
            return self._argmax_log_law(problem)
        return self.conditional_log_probabilities(problem, math.exp(level))

    # -------------------------------------------------------------- sampling
    def select(self, problem: SelectionProblem, *, size: int | None = None, rng: SeedLike = None) -> Any:
        """Draw L̂, then the selector at Ŝ (one bound per draw: each draw costs the full budget).

        Parameters
        ----------
        problem : SelectionProblem
            The scores, global sensitivity and smooth bound S(x).
        size : int, default=None
            ``None`` for one draw, else the number of independent draws.
        rng : SeedLike, default=None
            The randomness (keyword-only).

        Returns
        -------
        int or numpy.ndarray of int
            One index (``size=None``) or an array of ``size`` indices.

        Examples
        --------
        >>> import dpselect
        >>> p = dpselect.SelectionProblem([10.0, 4.0, 3.0], local_sensitivity=0.05)
        >>> mech = dpselect.PrivateSensitivityBound(0.5, 1.0, delta=1e-6)
        >>> mech.select(p, rng=0)
        0
        """
        check_problem(problem)
        size = check_size(size)
        gen = check_random_state(rng)
        loc, scale, cap = self.bound_distribution(problem)
        n = 1 if size is None else size
        levels = np.minimum(loc + scale * gen.laplace(size=n), cap)
        out = np.empty(n, dtype=np.int64)
        sel = _selector(self.selector, self.epsilon2)
        for i, level in enumerate(levels):  # one fixed-scale problem per draw (the scale is per draw)
            s = max(math.exp(level), _TINY)  # S(x) = 0: the engine's noiseless limit (uniform over the maxima)
            fixed = SelectionProblem(
                problem.scores, global_sensitivity=s, monotone=problem.monotone, relation=problem.relation
            )
            out[i] = int(sel.select(fixed, rng=gen))
        return int(out[0]) if size is None else out

    def privacy(self, problem: SelectionProblem) -> Privacy:
        """(eps1 + eps2, delta)-DP under ``problem.relation`` (mathematics §9.2).

        Parameters
        ----------
        problem : SelectionProblem
            The problem (its ``relation`` and ``private`` flag matter).

        Returns
        -------
        Privacy
            :func:`dpselect.accounting.sensitivity_bound_privacy` of the
            budgets (no guarantee for a non-private problem).

        Examples
        --------
        >>> import dpselect
        >>> p = dpselect.SelectionProblem([10.0, 4.0, 3.0], local_sensitivity=0.05)
        >>> mech = dpselect.PrivateSensitivityBound(0.5, 1.0, delta=1e-6)
        >>> print(mech.privacy(p))
        (1.5, 1e-06)-DP [add_remove]
        """
        check_problem(problem)
        return no_guarantee(problem) or accounting.sensitivity_bound_privacy(
            self.epsilon1, self.epsilon2, self.delta, relation=problem.relation
        )


def _laplace_log_cdf(t: float, loc: float, scale: float) -> float:
    """log P[L <= t] for L ~ Laplace(loc, scale)."""
    z = (t - loc) / scale
    if z <= 0:
        return math.log(0.5) + z
    return math.log1p(-0.5 * math.exp(-z))
