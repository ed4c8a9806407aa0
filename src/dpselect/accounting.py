"""Privacy accounting: every conversion and composition rule in one place.

Each rule is a pure function returning a number or a :class:`~dpselect.privacy.Privacy`
and cites the SPEC.md section (shipped in the documentation's *Mathematics*
page) that proves it.  :class:`Accountant` tracks a budget across calls.

Sections (one per family of rules; keep them apart so they stay findable):

1. zCDP <-> (epsilon, delta) conversions (SPEC §2.5).
2. Noise admissibility conditions for smooth-sensitivity releases (SPEC §2).
3. Smooth report-noisy-max and Smooth Private Selection (SPEC §3.1, §3.2).
4. Propose-test-release and the private sensitivity bound (SPEC §6.2, §9.2).
5. Decision trees and forests (SPEC §5).
6. The budget accountant.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import optimize

from ._validation import check_delta, check_epsilon, check_positive
from .privacy import Privacy

__all__ = [
    "Accountant",
    "BudgetExceededError",
    "charge",
    "dp_to_zcdp",
    "laplace_smooth_beta",
    "laplace_smooth_delta",
    "lln_zcdp_rho",
    "nrs_laplace_parameters",
    "zcdp_to_dp",
]


# ---------------------------------------------------------------------------
# 1. zCDP <-> (epsilon, delta) conversions (SPEC §2.5)
# ---------------------------------------------------------------------------


def _require_delta_positive(delta: Any) -> float:
    d = check_delta(delta)
    if d <= 0.0:
        raise ValueError(f"delta must be > 0 to convert zCDP to (epsilon, delta)-DP, got {delta!r}")
    return d


def zcdp_to_dp(rho: Any, delta: Any) -> float:
    """epsilon of the (epsilon, delta)-DP guarantee implied by rho-zCDP.

    epsilon = rho + 2 sqrt(rho ln(1/delta))  (Bun & Steinke 2016, Prop. 1.3;
    SPEC §2.5).  ``delta`` must be > 0.
    """
    r = check_positive(rho, "rho", allow_zero=True)
    d = _require_delta_positive(delta)
    return r + 2.0 * math.sqrt(r * -math.log(d))


def dp_to_zcdp(epsilon: Any, delta: Any) -> float:
    """Largest rho whose conversion :func:`zcdp_to_dp` is at most ``epsilon``.

    rho = (sqrt(L + eps) - sqrt(L))^2 = (eps / (sqrt(L + eps) + sqrt(L)))^2 with
    L = ln(1/delta) (the inverse of SPEC §2.5's conversion).
    """
    eps = check_epsilon(epsilon)
    L = -math.log(_require_delta_positive(delta))
    return (eps / (math.sqrt(L + eps) + math.sqrt(L))) ** 2


# ---------------------------------------------------------------------------
# 2. Noise admissibility conditions (SPEC §2.2-§2.5)
#    (owned by the noise/engine work: NRS and exact Laplace conditions)
# ---------------------------------------------------------------------------


def _require_delta_approx(delta: Any, why: str) -> float:
    d = check_delta(delta)
    if d == 0.0:
        raise ValueError(f"delta must be > 0: {why}, got delta={delta!r}")
    return d


def laplace_smooth_delta(epsilon: Any, alpha: Any, beta: Any) -> float:
    """Smallest delta certified by SPEC §2.2's exact condition for Laplace noise of scale
    S(x)/alpha with S beta-smooth: exp(-(epsilon - alpha + beta)/(e^beta - 1)), or 1.0
    when epsilon < alpha + beta (0.0 when beta = 0: fixed scale, pure).

    Source: SPEC §2.2 [DERIVED; Duff Prop. 2 quoting Bun-Steinke Thm 34]: the privacy
    loss is at most alpha + max(beta, |z|(e^beta - 1) - beta).

    Examples
    --------
    >>> laplace_smooth_delta(1.0, 0.5, laplace_smooth_beta(1.0, 1e-6, 0.5)) <= 1e-6
    True
    """
    eps, a = check_epsilon(epsilon), check_positive(alpha, "alpha")
    b = check_positive(beta, "beta", allow_zero=True)
    if eps < a + b:
        return 1.0
    if b == 0.0:
        return 0.0
    return math.exp(-(eps - a + b) * math.exp(-b) / -math.expm1(-b))


def laplace_smooth_beta(epsilon: Any, delta: Any, alpha: Any) -> float:
    """Largest beta with which Laplace noise of scale S(x)/alpha, S beta-smooth, is
    (epsilon, delta)-DP by SPEC §2.2's exact condition

        epsilon >= alpha + beta   and   delta >= exp(-(epsilon - alpha + beta) / (e^beta - 1)).

    (r + beta)/(e^beta - 1) with r = epsilon - alpha is strictly decreasing in beta,
    so the delta condition is solved by brentq and capped at r, then nudged down
    (nextafter) until :func:`laplace_smooth_delta` certifies delta.  delta must be > 0
    and alpha < epsilon.

    Examples
    --------
    >>> round(laplace_smooth_beta(1.0, 1e-6, 0.5), 6)
    0.038218
    """
    eps = check_epsilon(epsilon)
    d = _require_delta_approx(delta, "Laplace noise is not pure-admissible (SPEC §2.2)")
    alpha = check_positive(alpha, "alpha")
    if not alpha < eps:
        raise ValueError(f"alpha must be < epsilon, got alpha={alpha!r}, epsilon={eps!r}")
    r, log_l = eps - alpha, math.log(-math.log(d))

    def psi(b: float) -> float:  # log[(r + b)/(e^b - 1)] - log ln(1/delta), decreasing
        log_expm1 = b + math.log1p(-math.exp(-b)) if b > 1.0 else math.log(math.expm1(b))
        return math.log(r + b) - log_expm1 - log_l

    lo = math.log1p(r * math.exp(-log_l))  # r/(e^lo - 1) = ln(1/delta), so psi(lo) > 0
    hi = 2.0 * lo + 1.0
    while psi(hi) >= 0.0:
        hi *= 2.0
    beta = min(optimize.brentq(psi, lo, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps), r)
    for _ in range(64):
        if laplace_smooth_delta(eps, alpha, beta) <= d:
            break
        beta = float(np.nextafter(beta, 0.0))
    return beta


def nrs_laplace_parameters(epsilon: Any, delta: Any) -> tuple[float, float]:
    """NRS07's Laplace calibration (alpha, beta) = (eps/2, eps/(2 ln(2/delta))).

    WARNING: for reproductions only.  It is NOT a valid (epsilon, delta)
    guarantee in general: with delta = 1e-6 it fails for epsilon >= 20 (SPEC
    §2.2 [NUM nrs_lap.py], errata 30).  Use :func:`laplace_smooth_beta`.

    Examples
    --------
    >>> [round(v, 6) for v in nrs_laplace_parameters(1.0, 1e-6)]
    [0.5, 0.034462]
    """
    eps = check_epsilon(epsilon)
    d = _require_delta_approx(delta, "Laplace noise is not pure-admissible (SPEC §2.2)")
    return eps / 2.0, eps / (2.0 * math.log(2.0 / d))


def lln_zcdp_rho(sigma: Any, alpha: Any, beta: Any) -> float:
    """rho = (beta/sigma + e^{3 sigma^2/2} alpha)^2 / 2: Laplace-log-normal noise LLN(sigma)
    of scale S(x)/alpha with S beta-smooth is rho-zCDP (Bun & Steinke 2019 §3.1.1,
    SPEC §2.5; one coordinate).

    Examples
    --------
    >>> round(lln_zcdp_rho(0.5, 0.2, 0.1), 6)
    0.12054
    """
    s = check_positive(sigma, "sigma")
    a = check_positive(alpha, "alpha")
    b = check_positive(beta, "beta", allow_zero=True)
    return 0.5 * (b / s + math.exp(1.5 * s**2) * a) ** 2


# ---------------------------------------------------------------------------
# 3. Smooth report-noisy-max / Smooth Private Selection (SPEC §3.1, §3.2)
#    (owned by the mechanisms work)
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# 4. Propose-test-release and the private sensitivity bound (SPEC §6.2, §9.2)
#    (owned by the PTR / distance-utility work)
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# 5. Decision trees and forests (SPEC §5)
#    (owned by the trees work)
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# 6. The budget accountant
# ---------------------------------------------------------------------------


class BudgetExceededError(ValueError):
    """Raised by :meth:`Accountant.spend` when a charge would exceed the budget.

    It is raised before the charge is recorded, and the library charges the
    accountant before drawing any randomness, so a refused call releases
    nothing.
    """


class Accountant:
    """A privacy budget tracked across calls (sequential composition).

    Parameters
    ----------
    epsilon : float > 0, the total epsilon budget (``inf`` for "track only").
    delta : float in [0, 1), the total delta budget.

    Notes
    -----
    Pure and approximate guarantees compose by basic sequential composition
    (Dwork & Roth 2014, Thm 3.16): epsilons add, deltas add.  Guarantees that
    carry a zCDP parameter (``Privacy.rho``, e.g. Laplace-log-normal noise,
    SPEC §2.5) compose in rho (Bun & Steinke 2016, Lemma 2.3) and are converted
    once, with the sum of their deltas:

        spent = (sum eps_i + min(sum eps_z, rho + 2 sqrt(rho ln(1/delta_z))),
                 sum delta_i + delta_z),

    rho = sum rho_z, delta_z = sum delta_z (indices i: guarantees without rho;
    z: with rho).  This is never larger than adding every epsilon.  Guarantees
    under different neighbour relations cannot be mixed.

    Examples
    --------
    >>> import dpselect
    >>> acc = dpselect.Accountant(1.0)
    >>> acc.spend(dpselect.Privacy(0.4))
    >>> print(acc.spent)
    0.4-DP
    >>> round(acc.remaining.epsilon, 12)
    0.6
    >>> acc.spend(dpselect.Privacy(0.7))
    Traceback (most recent call last):
    ...
    dpselect.accounting.BudgetExceededError: spending 0.7-DP would exceed the budget 1-DP (already spent 0.4-DP)
    """

    def __init__(self, epsilon: float, delta: float = 0.0) -> None:
        self._budget = Privacy(check_epsilon(epsilon, allow_inf=True), check_delta(delta))
        self._charges: list[Privacy] = []

    @property
    def budget(self) -> Privacy:
        """The total budget."""
        return self._budget

    @property
    def charges(self) -> tuple[Privacy, ...]:
        """Every guarantee spent so far, in order."""
        return tuple(self._charges)

    @staticmethod
    def compose(charges: Any) -> Privacy:
        """The guarantee of running every mechanism in ``charges`` (see Notes)."""
        charges = list(charges)
        relations = {c.relation for c in charges if c.relation is not None}
        if len(relations) > 1:
            raise ValueError(f"cannot compose guarantees under different neighbour relations {sorted(relations)}")
        relation = relations.pop() if relations else None
        plain = [c for c in charges if c.rho is None]
        zcdp = [c for c in charges if c.rho is not None]
        eps = math.fsum(c.epsilon for c in plain)
        delta = math.fsum(c.delta for c in plain)
        if zcdp:
            rho = math.fsum(c.rho or 0.0 for c in zcdp)
            delta_z = math.fsum(c.delta for c in zcdp)
            eps_z = math.fsum(c.epsilon for c in zcdp)
            if delta_z > 0.0:
                eps_z = min(eps_z, rho + 2.0 * math.sqrt(rho * -math.log(min(delta_z, 1.0))))
            eps += eps_z
            delta += delta_z
        if delta >= 1.0:
            raise BudgetExceededError(f"composed delta {delta!r} is >= 1 (no guarantee)")
        return Privacy(eps, delta, relation, "sequential composition (zCDP parts composed in rho)")

    @property
    def spent(self) -> Privacy:
        """The guarantee of everything charged so far (``Privacy(0.0)`` before any charge)."""
        return self.compose(self._charges)

    @property
    def remaining(self) -> Privacy:
        """The budget left: (budget epsilon - spent epsilon, budget delta - spent delta), floored at 0."""
        spent = self.spent
        return Privacy(
            max(self._budget.epsilon - spent.epsilon, 0.0),
            max(self._budget.delta - spent.delta, 0.0),
        )

    def check(self, privacy: Privacy) -> None:
        """Raise :class:`BudgetExceededError` if spending ``privacy`` would exceed the budget."""
        if not isinstance(privacy, Privacy):
            raise TypeError(f"privacy must be a Privacy, got {type(privacy).__name__}")
        total = self.compose([*self._charges, privacy])
        # A relative slack of 1e-12 absorbs floating-point sums of shares that add up to the budget.
        slack = 1.0 + 1e-12
        if total.epsilon > self._budget.epsilon * slack or total.delta > self._budget.delta * slack:
            raise BudgetExceededError(
                f"spending {privacy} would exceed the budget {self._budget} (already spent {self.spent})"
            )

    def spend(self, privacy: Privacy) -> None:
        """Charge ``privacy``; raise :class:`BudgetExceededError` (recording nothing) if it does not fit."""
        self.check(privacy)
        self._charges.append(privacy)

    def __repr__(self) -> str:
        return f"Accountant(budget={self._budget}, charges={len(self._charges)})"


def charge(accountant: Accountant | None, privacy: Privacy) -> None:
    """Charge ``accountant`` (if given) with ``privacy``: the one call apps make before drawing randomness."""
    if accountant is None:
        return
    if not isinstance(accountant, Accountant):
        raise TypeError(f"accountant must be a dpselect.Accountant or None, got {type(accountant).__name__}")
    accountant.spend(privacy)

