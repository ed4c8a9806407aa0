"""zCDP <-> (epsilon, delta) conversions (mathematics §2.5).

Also the noise admissibility conditions of smooth-sensitivity releases (mathematics §2.2-§2.5).
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_delta_positive, check_epsilon, check_positive


def _require_delta_positive(delta: float) -> float:
    return check_delta_positive(delta, "(epsilon, delta)-DP with delta > 0 is needed here")


def zcdp_to_dp(rho: float, delta: float) -> float:
    r"""epsilon of the (epsilon, delta)-DP guarantee implied by rho-zCDP.

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

    References
    ----------
    Bun & Steinke, Concentrated Differential Privacy, TCC 2016, Prop. 1.3;
    the mathematics page §2.5.

    Examples
    --------
    >>> round(zcdp_to_dp(0.125, 1e-6), 6)
    2.753261
    """
    r = check_positive(rho, "rho", allow_zero=True)
    d = _require_delta_positive(delta)
    return r + 2.0 * math.sqrt(r * -math.log(d))


def dp_to_zcdp(epsilon: float, delta: float) -> float:
    r"""Largest rho whose conversion :func:`zcdp_to_dp` is at most ``epsilon``.

    .. math::

        \rho = \bigl(\sqrt{L + \varepsilon} - \sqrt{L}\bigr)^2
        = \Bigl(\frac{\varepsilon}{\sqrt{L + \varepsilon} + \sqrt{L}}\Bigr)^2,
        \qquad L = \ln(1/\delta)

    (the inverse of the mathematics page §2.5's conversion).

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

    References
    ----------
    Bun & Steinke, Concentrated Differential Privacy, TCC 2016, Prop. 1.3
    (inverted).

    Examples
    --------
    >>> round(zcdp_to_dp(dp_to_zcdp(1.0, 1e-6), 1e-6), 12)
    1.0
    """
    eps = check_epsilon(epsilon)
    L = -math.log(_require_delta_positive(delta))
    return (eps / (math.sqrt(L + eps) + math.sqrt(L))) ** 2


def laplace_smooth_delta(epsilon: float, alpha: float, beta: float) -> float:
    """Smallest delta certified by mathematics §2.2's exact condition for Laplace noise of scale
    S(x)/alpha with S beta-smooth: exp(-(epsilon - alpha + beta)/(e^beta - 1)), or 1.0
    when epsilon < alpha + beta (0.0 when beta = 0: fixed scale, pure).

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


def check_smooth_laplace_args(epsilon: float, delta: float, alpha: float) -> tuple[float, float, float]:
    """(epsilon, delta, alpha) of a smooth-sensitivity Laplace calibration: delta > 0, 0 < alpha < epsilon.

    Parameters
    ----------
    epsilon : float
        The target epsilon, > 0.
    delta : float
        The target delta, in (0, 1) (Laplace noise is not pure-admissible).
    alpha : float
        The noise is Laplace of scale S(x)/alpha, 0 < alpha < epsilon.

    Returns
    -------
    tuple of (float, float, float)
        The validated (epsilon, delta, alpha).

    Raises
    ------
    ValueError
        If an argument is out of range (naming it).

    Examples
    --------
    >>> check_smooth_laplace_args(1.0, 1e-6, 0.5)
    (1.0, 1e-06, 0.5)
    """
    eps = check_epsilon(epsilon)
    d = check_delta_positive(delta, "Laplace noise is not pure-admissible (mathematics §2.2)")
    a = check_positive(alpha, "alpha")
    if not a < eps:
        raise ValueError(f"alpha must be < epsilon, got alpha={a!r}, epsilon={eps!r}")
    return eps, d, a


def laplace_smooth_beta(epsilon: float, delta: float, alpha: float) -> float:
    """Largest beta with which Laplace noise of scale S(x)/alpha, S beta-smooth, is
    (epsilon, delta)-DP by mathematics §2.2's exact condition

        epsilon >= alpha + beta   and   delta >= exp(-(epsilon - alpha + beta) / (e^beta - 1)).

    (r + beta)/(e^beta - 1) with r = epsilon - alpha is strictly decreasing in beta,
    so the delta condition is solved by brentq and capped at r, then nudged down
    (nextafter) until :func:`laplace_smooth_delta` certifies delta.  delta must be > 0
    and alpha < epsilon.

    Parameters
    ----------
    epsilon : float
        The target epsilon, > 0.
    delta : float
        The target delta, in (0, 1).
    alpha : float
        The noise is Laplace of scale S(x)/alpha, 0 < alpha < epsilon.

    Returns
    -------
    float
        beta in (0, epsilon - alpha], with
        ``laplace_smooth_delta(epsilon, alpha, beta) <= delta``.

    Examples
    --------
    >>> round(laplace_smooth_beta(1.0, 1e-6, 0.5), 6)
    0.038218
    """
    eps, d, alpha = check_smooth_laplace_args(epsilon, delta, alpha)
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


def nrs_laplace_parameters(epsilon: float, delta: float) -> tuple[float, float]:
    """NRS07's Laplace calibration (alpha, beta) = (eps/2, eps/(2 ln(2/delta))).

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

    References
    ----------
    Nissim, Raskhodnikova & Smith, Smooth Sensitivity and Sampling in Private
    Data Analysis, STOC 2007 (the calibration reproduced).

    Examples
    --------
    >>> [round(v, 6) for v in nrs_laplace_parameters(1.0, 1e-6)]
    [0.5, 0.034462]
    """
    eps = check_epsilon(epsilon)
    d = check_delta_positive(delta, "Laplace noise is not pure-admissible (mathematics §2.2)")
    return eps / 2.0, eps / (2.0 * math.log(2.0 / d))


def lln_zcdp_rho(sigma: float, alpha: float, beta: float) -> float:
    """rho = (beta/sigma + e^{3 sigma^2/2} alpha)^2 / 2: Laplace-log-normal noise LLN(sigma)
    of scale S(x)/alpha with S beta-smooth is rho-zCDP (Bun & Steinke 2019 §3.1.1,
    mathematics §2.5; one coordinate).

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

    Examples
    --------
    >>> round(lln_zcdp_rho(0.5, 0.2, 0.1), 6)
    0.12054
    """
    s = check_positive(sigma, "sigma")
    a = check_positive(alpha, "alpha")
    b = check_positive(beta, "beta", allow_zero=True)
    return 0.5 * (b / s + math.exp(1.5 * s**2) * a) ** 2
