"""zCDP <-> (epsilon, delta) conversions (mathematics §2.5).

Also the noise admissibility conditions of smooth-sensitivity releases (mathematics §2.2-§2.5).
"""

from __future__ import annotations

import math

import numpy as np

from .._docstrings import fill_doc
from .._params import EPSILON, positive, validate_params
from ._rules import DELTA_POSITIVE, NONNEGATIVE, delta_positive

#: Laplace noise needs delta > 0 (mathematics §2.2).
LAPLACE_DELTA = delta_positive("Laplace noise is not pure-admissible (mathematics §2.2)")


def _require_alpha_below(epsilon: float, alpha: float) -> None:
    """Raise ValueError unless alpha < epsilon (a smooth-sensitivity Laplace calibration)."""
    if not alpha < epsilon:
        raise ValueError(f"alpha must be < epsilon, got alpha={alpha!r}, epsilon={epsilon!r}")


@validate_params({"rho": NONNEGATIVE, "delta": DELTA_POSITIVE})
def zcdp_to_dp(rho: float, delta: float) -> float:
    r"""Return the epsilon of the (epsilon, delta)-DP guarantee implied by rho-zCDP.

    .. math::

        \varepsilon = \rho + 2\sqrt{\rho \ln(1/\delta)}

    Parameters
    ----------
    rho : float
        The zCDP parameter, >= 0.
    delta : float
        The delta of the guarantee, in (0, 1).

    Returns
    -------
    float
        epsilon (the closed form; :func:`~dpselect.accounting.zcdp_epsilon`
        is never larger).

    See Also
    --------
    dp_to_zcdp : Return the largest rho whose conversion :func:`zcdp_to_dp` is at most ``epsilon``
    lln_zcdp_rho : Return rho = (beta/sigma + e^{3 sigma^2/2} alpha)^2 / 2 of smooth-scale LLN noise
    laplace_smooth_beta : Return the largest beta of mathematics §2.2's exact condition for smooth-scale ...

    References
    ----------
    Bun & Steinke, Concentrated Differential Privacy, TCC 2016, Prop. 1.3;
    the mathematics page §2.5.

    Examples
    --------
    >>> round(zcdp_to_dp(0.125, 1e-6), 6)
    2.753261
    """
    return rho + 2.0 * math.sqrt(rho * -math.log(delta))


@validate_params({"epsilon": EPSILON, "delta": DELTA_POSITIVE})
def dp_to_zcdp(epsilon: float, delta: float) -> float:
    r"""Return the largest rho whose conversion :func:`zcdp_to_dp` is at most ``epsilon``.

    .. math::

        \rho = \bigl(\sqrt{L + \varepsilon} - \sqrt{L}\bigr)^2
        = \Bigl(\frac{\varepsilon}{\sqrt{L + \varepsilon} + \sqrt{L}}\Bigr)^2,
        \qquad L = \ln(1/\delta)

    (the inverse of the mathematics page §2.5's conversion).  Both guarantees refer to the
    same neighbour relation (add/remove or replace neighbours, mathematics §1).

    Parameters
    ----------
    epsilon : float
        The target epsilon, > 0.
    delta : float
        The delta of the guarantee, in (0, 1).

    Returns
    -------
    float
        rho, with ``zcdp_to_dp(rho, delta)`` equal to ``epsilon`` up to rounding.

    See Also
    --------
    lln_zcdp_rho : Return rho = (beta/sigma + e^{3 sigma^2/2} alpha)^2 / 2 of smooth-scale LLN noise
    zcdp_to_dp : Return the epsilon of the (epsilon, delta)-DP guarantee implied by rho-zCDP
    laplace_smooth_beta : Return the largest beta of mathematics §2.2's exact condition for smooth-scale ...

    References
    ----------
    Bun & Steinke, Concentrated Differential Privacy, TCC 2016, Prop. 1.3
    (inverted).

    Examples
    --------
    >>> round(zcdp_to_dp(dp_to_zcdp(1.0, 1e-6), 1e-6), 12)
    1.0
    """
    L = -math.log(delta)
    return (epsilon / (math.sqrt(L + epsilon) + math.sqrt(L))) ** 2


@validate_params({"epsilon": EPSILON, "alpha": positive(), "beta": NONNEGATIVE})
def laplace_smooth_delta(epsilon: float, alpha: float, beta: float) -> float:
    """Return the smallest delta of mathematics §2.2's exact condition for smooth-scale Laplace noise.

    Laplace noise of scale S(x)/alpha with S beta-smooth (in the neighbour relation,
    add/remove or replace neighbours, in which S is smooth) certifies
    exp(-(epsilon - alpha + beta)/(e^beta - 1)), or 1.0 when epsilon < alpha + beta
    (0.0 when beta = 0: fixed scale, pure).

    Source: mathematics §2.2 [DERIVED; Duff Prop. 2 quoting Bun-Steinke Thm 34]: the privacy
    loss is at most alpha + max(beta, |z|(e^beta - 1) - beta).

    Parameters
    ----------
    epsilon : float
        The target epsilon, > 0.
    alpha : float
        The noise is Laplace of scale S(x)/alpha, alpha > 0.
    beta : float
        The smoothness of the bound S, >= 0.

    Returns
    -------
    float
        1.0 when epsilon < alpha + beta, else 0.0 when beta = 0, else the
        formula's delta in (0, 1).

    See Also
    --------
    laplace_smooth_beta : Return the largest beta of mathematics §2.2's exact condition for smooth-scale ...
    grid_laplace_smooth_delta : Return the smallest delta certified for discrete Laplace of scale (S + M ...
    nrs_laplace_parameters : Return NRS07's Laplace calibration (alpha, beta) = (eps/2, eps/(2 ln(2/delta)))

    Examples
    --------
    >>> laplace_smooth_delta(1.0, 0.5, laplace_smooth_beta(1.0, 1e-6, 0.5)) <= 1e-6
    True
    """
    eps, a, b = epsilon, alpha, beta
    if eps < a + b:
        return 1.0
    if b == 0.0:
        return 0.0
    return math.exp(-(eps - a + b) * math.exp(-b) / -math.expm1(-b))


@validate_params({"epsilon": EPSILON, "delta": LAPLACE_DELTA, "alpha": positive()})
@fill_doc
def laplace_smooth_beta(epsilon: float, delta: float, alpha: float) -> float:
    """Return the largest beta of mathematics §2.2's exact condition for smooth-scale Laplace noise.

    Laplace noise of scale S(x)/alpha, S beta-smooth in the neighbour relation of the
    release (add/remove or replace neighbours), is (epsilon, delta)-DP by mathematics
    §2.2's exact condition

        epsilon >= alpha + beta   and   delta >= exp(-(epsilon - alpha + beta) / (e^beta - 1)).

    (r + beta)/(e^beta - 1) with r = epsilon - alpha is strictly decreasing in beta,
    so the delta condition is solved by brentq and capped at r, then nudged down
    (nextafter) until :func:`laplace_smooth_delta` certifies delta.  delta must be > 0
    and alpha < epsilon.

    %(target_privacy)s
    alpha : float
        The noise is Laplace of scale S(x)/alpha, 0 < alpha < epsilon.

    Returns
    -------
    float
        beta in (0, epsilon - alpha], with
        ``laplace_smooth_delta(epsilon, alpha, beta) <= delta``.

    See Also
    --------
    laplace_smooth_delta : Return the smallest delta of mathematics §2.2's exact condition for smooth-scale ...
    grid_laplace_smooth_beta : Return the largest beta (to float precision, by bisection) satisfying the grid ...
    nrs_laplace_parameters : Return NRS07's Laplace calibration (alpha, beta) = (eps/2, eps/(2 ln(2/delta)))

    Examples
    --------
    >>> round(laplace_smooth_beta(1.0, 1e-6, 0.5), 6)
    0.038218
    """
    _require_alpha_below(epsilon, alpha)
    eps, d = epsilon, delta
    r, log_l = eps - alpha, math.log(-math.log(d))

    def psi(b: float) -> float:  # log[(r + b)/(e^b - 1)] - log ln(1/delta), decreasing
        log_expm1 = b + math.log1p(-math.exp(-b)) if b > 1.0 else math.log(math.expm1(b))
        return math.log(r + b) - log_expm1 - log_l

    lo = math.log1p(r * math.exp(-log_l))  # r/(e^lo - 1) = ln(1/delta), so psi(lo) > 0
    hi = 2.0 * lo + 1.0
    while psi(hi) >= 0.0:
        hi *= 2.0
    from scipy.optimize import brentq  # imported here: scipy.optimize would treble `import dpselect`

    beta = min(brentq(psi, lo, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps), r)
    for _ in range(64):
        if laplace_smooth_delta(eps, alpha, beta) <= d:
            break
        beta = float(np.nextafter(beta, 0.0))
    return beta


@validate_params({"epsilon": EPSILON, "delta": LAPLACE_DELTA})
def nrs_laplace_parameters(epsilon: float, delta: float) -> tuple[float, float]:
    """Return NRS07's Laplace calibration (alpha, beta) = (eps/2, eps/(2 ln(2/delta))).

    NRS07 state it for replace neighbours (Hamming distance on datasets of size n);
    the smooth bound S decides the relation (mathematics §1).

    WARNING: for reproductions only.  It is NOT a valid (epsilon, delta)
    guarantee in general: with delta = 1e-6 it fails for epsilon >= 20 (the mathematics page
    §2.2 [NUM nrs_lap.py], mathematics §7 item 30).  Use :func:`laplace_smooth_beta`.

    Parameters
    ----------
    epsilon : float
        The nominal epsilon, > 0.
    delta : float
        The nominal delta, in (0, 1).

    Returns
    -------
    tuple of (float, float)
        (alpha, beta) as NRS07 calibrate them.

    See Also
    --------
    laplace_smooth_beta : Return the largest beta of mathematics §2.2's exact condition for smooth-scale ...
    laplace_smooth_delta : Return the smallest delta of mathematics §2.2's exact condition for smooth-scale ...
    dp_to_zcdp : Return the largest rho whose conversion :func:`zcdp_to_dp` is at most ``epsilon``

    References
    ----------
    Nissim, Raskhodnikova & Smith, Smooth Sensitivity and Sampling in Private
    Data Analysis, STOC 2007 (the calibration reproduced).

    Examples
    --------
    >>> [round(v, 6) for v in nrs_laplace_parameters(1.0, 1e-6)]
    [0.5, 0.034462]
    """
    return epsilon / 2.0, epsilon / (2.0 * math.log(2.0 / delta))


@validate_params({"sigma": positive(), "alpha": positive(), "beta": NONNEGATIVE})
def lln_zcdp_rho(sigma: float, alpha: float, beta: float) -> float:
    """Return rho = (beta/sigma + e^{3 sigma^2/2} alpha)^2 / 2 of smooth-scale LLN noise.

    Laplace-log-normal noise LLN(sigma) of scale S(x)/alpha with S beta-smooth is
    rho-zCDP (Bun & Steinke 2019 §3.1.1, mathematics §2.5; one coordinate).

    Parameters
    ----------
    sigma : float
        The shape of the Laplace-log-normal noise, > 0.
    alpha : float
        The noise is LLN(sigma) of scale S(x)/alpha, alpha > 0.
    beta : float
        The smoothness of the bound S, >= 0.

    Returns
    -------
    float
        rho.

    See Also
    --------
    dp_to_zcdp : Return the largest rho whose conversion :func:`zcdp_to_dp` is at most ``epsilon``
    zcdp_to_dp : Return the epsilon of the (epsilon, delta)-DP guarantee implied by rho-zCDP
    br_zcdp_rho : Return rho = eta^2 / 8: an eta-bounded-range mechanism is rho-zCDP (Cesar & Rogers 2021)

    Examples
    --------
    >>> round(lln_zcdp_rho(0.5, 0.2, 0.1), 6)
    0.12054
    """
    return 0.5 * (beta / sigma + math.exp(1.5 * sigma**2) * alpha) ** 2
