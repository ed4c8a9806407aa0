"""Composition of many guarantees: basic, bounded-range (Dong, Durfee & Rogers 2020) and zCDP.

Every rule returns an (epsilon, delta) statement valid for the adaptive
composition of the mechanisms (each chosen after seeing the earlier outputs)
whose privacy parameters are fixed in advance; the documentation's
mathematics page (§10.1) derives each one.

* basic (Dwork & Roth 2014, Thm 3.16): epsilons add, deltas add;
* an eta-bounded-range mechanism is (eta^2/8)-zCDP (Cesar & Rogers 2021);
  zCDP parameters add (Bun & Steinke 2016, Lemma 2.3) and rho-zCDP is
  (eps, delta)-DP with eps = min over alpha > 1 of
  alpha rho + ln(1 - 1/alpha) - ln(alpha delta)/(alpha - 1) (Canonne, Kamath
  & Steinke 2020, Prop. 12, applied to the Renyi divergence alpha rho), never
  above Bun & Steinke's rho + 2 sqrt(rho ln(1/delta)) (ibid., Prop. 1.3);
* bounded-range composition (Dong, Durfee & Rogers 2020, Prop. 4): the
  adaptive composition of eta_i-BR mechanisms is (eps', delta)-DP with
  eps' = sum_i KL(eta_i) + sqrt(sum_i eta_i^2 ln(1/delta) / 2),
  KL(eta) = eta/(1 - e^-eta) - 1 - ln(eta/(1 - e^-eta)) <= eta^2/8.

:func:`~dpselect.accounting.compose_privacy` (module ``ledger``) takes the best
of these and of the optimal composition of pure charges (module ``optimal``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .._docstrings import fill_doc
from .._params import validate_params
from ._rules import NONNEGATIVE, delta_nonzero, reals

__all__ = ["br_composition_epsilon", "br_kl_bound", "br_zcdp_rho", "zcdp_epsilon"]

_SERIES_TERMS = 40


def _x_minus_log1p(x: float) -> float:
    """Return x - ln(1 + x) without cancellation (x >= 0)."""
    if x > 0.1:
        return x - math.log1p(x)
    # sum_{n >= 2} (-1)^n x^n / n; |x| <= 0.1: 40 terms leave < 0.1^40
    return math.fsum((-1) ** n * x**n / n for n in range(2, _SERIES_TERMS))


@validate_params({"eta": NONNEGATIVE})
@fill_doc
def br_kl_bound(eta: float) -> float:
    r"""Return the largest KL divergence (mean privacy loss) of an eta-bounded-range mechanism.

    .. math::

        \mathrm{KL}(\eta) = g - 1 - \ln g, \qquad g = \frac{\eta}{1 - e^{-\eta}},

    the mean of the two-point loss law on {a, a + eta} with E[e^-L] = 1
    (Dong, Durfee & Rogers 2020, used in their Prop. 4); KL(eta) <= eta^2/8.

    %(eta_to_float)s
        KL(eta), computed without cancellation (0 at eta = 0).

    See Also
    --------
    br_composition_epsilon : Return the epsilon of the adaptive composition of eta_i-bounded-range mechanisms ...
    br_zcdp_rho : Return rho = eta^2 / 8: an eta-bounded-range mechanism is rho-zCDP (Cesar & Rogers 2021)
    zcdp_epsilon : Return the smallest epsilon certified for rho-zCDP at ``delta`` > 0

    Examples
    --------
    >>> round(br_kl_bound(1.0), 6), 1.0 / 8
    (0.123302, 0.125)
    """
    if eta == 0.0:
        return 0.0
    q = -math.expm1(-eta)  # 1 - e^-eta
    if eta < 1.0:  # g - 1 = (eta + expm1(-eta)) / q, the numerator by its series (no cancellation)
        num = math.fsum((-1) ** n * eta**n / math.factorial(n) for n in range(2, _SERIES_TERMS))
    else:
        num = eta - q
    return _x_minus_log1p(num / q)


@validate_params({"eta": NONNEGATIVE})
@fill_doc
def br_zcdp_rho(eta: float) -> float:
    """Return rho = eta^2 / 8: an eta-bounded-range mechanism is rho-zCDP (Cesar & Rogers 2021).

    %(eta_to_float)s
        eta^2 / 8.

    See Also
    --------
    zcdp_epsilon : Return the smallest epsilon certified for rho-zCDP at ``delta`` > 0
    br_composition_epsilon : Return the epsilon of the adaptive composition of eta_i-bounded-range mechanisms ...
    br_kl_bound : Return the largest KL divergence (mean privacy loss) of an eta-bounded-range mechanism

    Examples
    --------
    >>> br_zcdp_rho(1.0)
    0.125
    """
    return eta * eta / 8.0


def _rdp_epsilon(alpha: float, rho: float, log_delta: float) -> float:
    """Return the eps of (alpha, alpha rho)-RDP at delta = e^log_delta (Canonne, Kamath & Steinke 2020, Prop. 12)."""
    return alpha * rho + math.log1p(-1.0 / alpha) - (log_delta + math.log(alpha)) / (alpha - 1.0)


@validate_params({"rho": NONNEGATIVE, "delta": delta_nonzero(" to convert zCDP")})
def zcdp_epsilon(rho: float, delta: float) -> float:
    r"""Return the smallest epsilon certified for rho-zCDP at ``delta`` > 0.

    .. math::

        \varepsilon = \min_{\alpha > 1}\; \alpha\rho + \ln(1 - 1/\alpha)
        - \frac{\ln(\alpha\delta)}{\alpha - 1}
        \;\le\; \rho + 2\sqrt{\rho \ln(1/\delta)}

    rho-zCDP is (alpha, alpha rho)-Renyi-DP for every alpha > 1 (Bun &
    Steinke 2016, Def. 1.1) and (alpha, tau)-RDP implies (tau + ln(1 - 1/alpha)
    - ln(alpha delta)/(alpha - 1), delta)-DP (Canonne, Kamath & Steinke 2020,
    Prop. 12).  Every alpha gives a valid bound, so the numerical minimisation
    can only lose tightness, never validity; the result is also capped by Bun &
    Steinke's closed form (Prop. 1.3).

    Parameters
    ----------
    rho : float
        The zCDP parameter, >= 0.
    delta : float
        The delta of the (epsilon, delta) statement, in (0, 1).

    Returns
    -------
    float
        The epsilon, >= 0 (0 when rho = 0).

    See Also
    --------
    br_zcdp_rho : Return rho = eta^2 / 8: an eta-bounded-range mechanism is rho-zCDP (Cesar & Rogers 2021)
    br_composition_epsilon : Return the epsilon of the adaptive composition of eta_i-bounded-range mechanisms ...
    br_kl_bound : Return the largest KL divergence (mean privacy loss) of an eta-bounded-range mechanism

    Examples
    --------
    >>> round(zcdp_epsilon(0.03125, 1e-6), 4)
    1.1429
    """
    r, d = rho, delta
    log_d = math.log(d)
    classic = r + 2.0 * math.sqrt(r * -log_d)
    if r == 0.0:
        return 0.0
    # alpha - 1 on a log grid, then a bounded refinement around the best grid point
    grid = 1.0 + np.logspace(-6, 8, 400)
    vals = grid * r + np.log1p(-1.0 / grid) - (log_d + np.log(grid)) / (grid - 1.0)  # _rdp_epsilon, vectorised
    i = int(np.argmin(vals))
    lo, hi = float(grid[max(i - 1, 0)]), float(grid[min(i + 1, grid.size - 1)])
    from scipy.optimize import minimize_scalar  # lazy: keeps `import dpselect` cheap

    res = minimize_scalar(
        lambda a: _rdp_epsilon(a, r, log_d), bounds=(lo, hi), method="bounded", options={"xatol": 1e-12 * hi}
    )
    best = min(float(vals[i]), float(res.fun)) if res.success else float(vals[i])
    return max(0.0, min(classic, best))


@validate_params({"etas": reals("eta", allow_zero=True), "delta": delta_nonzero(" for bounded-range composition")})
def br_composition_epsilon(etas: Sequence[float], delta: float) -> float:
    r"""Return the epsilon of the adaptive composition of eta_i-bounded-range mechanisms at ``delta`` > 0.

    .. math::

        \varepsilon' = \min\Bigl(\sum_i \eta_i,\;
        \sum_i \mathrm{KL}(\eta_i) + \sqrt{\tfrac12 \textstyle\sum_i \eta_i^2 \ln(1/\delta)}\Bigr)

    (Dong, Durfee & Rogers, ICML 2020, Prop. 4; the eta_i fixed in advance).

    Parameters
    ----------
    etas : sequence of float
        The bounded-range parameters eta_i >= 0 of the composed mechanisms.
    delta : float
        The delta of the (epsilon, delta) statement, in (0, 1).

    Returns
    -------
    float
        epsilon', never above basic composition (sum of the eta_i).

    See Also
    --------
    br_kl_bound : Return the largest KL divergence (mean privacy loss) of an eta-bounded-range mechanism
    br_zcdp_rho : Return rho = eta^2 / 8: an eta-bounded-range mechanism is rho-zCDP (Cesar & Rogers 2021)
    zcdp_epsilon : Return the smallest epsilon certified for rho-zCDP at ``delta`` > 0

    Examples
    --------
    >>> round(br_composition_epsilon([0.05] * 100, 1e-6), 4)
    1.3454
    """
    d = delta
    return _br_epsilon(math.fsum(etas), math.fsum(br_kl_bound(e) for e in etas), math.fsum(e * e for e in etas), d)


def _br_epsilon(eta_sum: float, kl_sum: float, eta_sq_sum: float, delta: float) -> float:
    """Dong–Durfee–Rogers Prop. 4 from the sums over the eta_i (capped by basic composition)."""
    return min(eta_sum, kl_sum + math.sqrt(0.5 * eta_sq_sum * -math.log(delta)))
