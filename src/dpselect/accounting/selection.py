"""Smooth report-noisy-max and Smooth Private Selection guarantees (mathematics §3.1, §3.2).

The general and Laplace forms of smooth report-noisy-max and Smooth Private Selection; the
LLN form (a zCDP guarantee) is in ``_lln_selection``.
"""

from __future__ import annotations

import math

from scipy import special

from .._docstrings import fill_doc
from .._params import BOOLEAN, EPSILON, RELATION, positive, real_in, validate_params
from ..privacy import Privacy
from ..typing import Relation
from ._rules import DELTA_POSITIVE, N_CANDIDATES, NONNEGATIVE

# ---------------------------------------------------------------------------
# 3. Smooth report-noisy-max / Smooth Private Selection (mathematics §3.1, §3.2)
#    (owned by the mechanisms work)
#
#    Mechanism: argmax_r { u(x, r) + (S(x)/A) Z_r }, Z_r iid h, S a beta-smooth
#    upper bound on max_r LS_u(x, r), m candidates.  Every coordinate's noise is
#    dilated between neighbours (the step the SNM paper's proof omits), so the
#    dilation costs m times the one-dimensional price.
# ---------------------------------------------------------------------------


def _log_expm1(x: float) -> float:
    """log(e^x - 1) for x > 0 without overflow."""
    return x + math.log1p(-math.exp(-x)) if x > 1.0 else math.log(math.expm1(x))


def _sliding_factor(monotone: bool) -> float:
    """2 (candidate and competitors move in opposite directions), 1 for monotone utilities (mathematics §3.1)."""
    return 1.0 if monotone else 2.0


@validate_params(
    {
        "a": positive(),
        "beta": NONNEGATIVE,
        "m": N_CANDIDATES,
        "shift_constant": positive(),
        "dilation_constant": positive(),
        "monotone": BOOLEAN,
    }
)
@fill_doc
def smooth_rnm_epsilon(
    a: float, beta: float, m: int, shift_constant: float, dilation_constant: float, *, monotone: bool = False
) -> float:
    """Return the epsilon of smooth report-noisy-max with a pure noise law (mathematics §3.1).

        eps_total = 2 A L_s + m beta L_d      (A L_s for monotone utilities),

    noise scale S(x)/A, S beta-smooth, L_s / L_d the noise's shift / dilation
    constants (mathematics §2.1, §2.7).  [DERIVED; generalises YS Thm 2/3.]

    %(smooth_noise_parameters)s
    shift_constant : float
        L_s > 0 of the noise law.
    dilation_constant : float
        L_d > 0 of the noise law.
    monotone : bool, default=False
        Whether the utilities are monotone (the sliding part then costs A L_s).

    Returns
    -------
    float
        epsilon, in the neighbour relation in which S is a smooth bound.

    See Also
    --------
    laplace_selection_beta : Return the largest beta with m beta <= eps_d and delta_d(beta) <= delta ...
    laplace_selection_eps_d : Return the smallest eps_d >= m beta with delta_d <= delta for a given beta ...
    laplace_selection_log_delta : Return log delta_d of the m-fold Laplace dilation (mathematics §3.1, [DERIVED])

    Examples
    --------
    >>> import math
    >>> ls, ld = 4 / (2 * math.sqrt(3)), 4.0          # Student's t_3 (Bun-Steinke constants)
    >>> round(smooth_rnm_epsilon(0.2165, 0.025, 5, ls, ld), 3)   # SNM-t proven, eps = 1, m = 5
    1.0
    """
    return _sliding_factor(monotone) * a * shift_constant + m * beta * dilation_constant


@validate_params({"m": N_CANDIDATES, "beta": NONNEGATIVE, "eps_d": positive(allow_zero=True, allow_inf=True)})
@fill_doc
def laplace_selection_log_delta(m: int, beta: float, eps_d: float) -> float:
    """Return log delta_d of the m-fold Laplace dilation (mathematics §3.1, [DERIVED]).

    With noise scale S(x)/A, S beta-smooth, the dilation of all m Laplace
    coordinates costs (eps_d, delta_d) for any eps_d >= m beta, with

        delta_d = P[Gamma(m, 1) > (eps_d + m beta) / (e^beta - 1)].

    Computed with ``scipy.special.gammaincc`` (log space; where it underflows,
    the conservative upper bound x^(m-1) e^-x / (Gamma(m) (1 - (m-1)/x)) on
    the regularised tail).  beta = 0 (fixed scale) gives -inf.

    %(dilation_m)s
    beta : float
        The smoothness of the bound S, >= 0.
    eps_d : float
        The epsilon paid for the dilation, >= 0 (``inf`` allowed).

    Returns
    -------
    float
        log delta_d (-inf when delta_d is 0).

    See Also
    --------
    laplace_selection_beta : Return the largest beta with m beta <= eps_d and delta_d(beta) <= delta ...
    laplace_selection_eps_d : Return the smallest eps_d >= m beta with delta_d <= delta for a given beta ...
    laplace_selection_privacy : Return (2A + eps_d, delta_d) of smooth report-noisy-max with Laplace noise ...

    Examples
    --------
    >>> import math
    >>> round(laplace_selection_log_delta(1, 0.2, 0.3), 6) == round(-0.5 / math.expm1(0.2), 6)   # m = 1: e^-x
    True
    """
    if beta == 0.0 or math.isinf(eps_d):
        return -math.inf
    log_thr = math.log(eps_d + m * beta) - _log_expm1(beta)
    if log_thr > 700.0:
        return -math.inf
    thr = math.exp(log_thr)
    q = float(special.gammaincc(m, thr))
    if q > 0.0:
        return math.log(q)
    return (m - 1) * log_thr - thr - math.lgamma(m) - math.log1p(-(m - 1) / thr)


def _gamma_upper_quantile(m: int, delta: float) -> float:
    """Return the q with P[Gamma(m, 1) > q] = delta."""
    return float(special.gammainccinv(m, delta))


@validate_params({"m": N_CANDIDATES, "eps_d": EPSILON, "delta": DELTA_POSITIVE})
@fill_doc
def laplace_selection_beta(m: int, eps_d: float, delta: float) -> float:
    """Return the largest beta with m beta <= eps_d and delta_d(beta) <= delta (mathematics §3.1).

    delta_d(beta) <= delta  <=>  (eps_d + m beta)/(e^beta - 1) >= q, q the
    Gamma(m, 1) upper delta-quantile  <=>  q (e^beta - 1) - m beta <= eps_d.
    The left side is convex in beta and 0 at beta = 0, so the feasible set is
    an interval [0, beta*]; beta* is found by Brent's method on the
    equivalent log-space condition (no overflow for huge eps_d) and then
    certified (nudged down if rounding requires) on the exact tail.

    %(dilation_m)s
    eps_d : float
        The epsilon paid for the dilation, > 0.
    %(dilation_delta)s
        beta in (0, eps_d / m].

    See Also
    --------
    laplace_selection_eps_d : Return the smallest eps_d >= m beta with delta_d <= delta for a given beta ...
    laplace_selection_log_delta : Return log delta_d of the m-fold Laplace dilation (mathematics §3.1, [DERIVED])
    laplace_selection_privacy : Return (2A + eps_d, delta_d) of smooth report-noisy-max with Laplace noise ...
    """
    d = delta
    cap = eps_d / m
    while m * cap > eps_d:  # eps_d / m can round up so that m beta would exceed eps_d by an ulp
        cap = math.nextafter(cap, 0.0)
    log_q = math.log(_gamma_upper_quantile(m, d))

    def g(b: float) -> float:  # same sign as q expm1(b) - m b - eps_d
        return log_q + _log_expm1(b) - math.log(eps_d + m * b)

    if g(cap) <= 0.0:
        beta = cap
    else:
        lo = cap * 1e-12  # g -> -inf as beta -> 0 (log expm1(beta) ~ log beta)
        while g(lo) > 0.0:
            lo *= 1e-12
        from scipy.optimize import brentq  # imported here: scipy.optimize is slow to import

        beta = brentq(g, lo, cap, xtol=lo * 1e-3, rtol=1e-15, maxiter=500)
    log_delta = math.log(d)
    for _ in range(200):
        if laplace_selection_log_delta(m, beta, eps_d) <= log_delta:
            return beta
        beta *= 1.0 - 1e-9
    raise RuntimeError("could not calibrate the Laplace smoothing parameter")  # pragma: no cover


@validate_params({"m": N_CANDIDATES, "beta": positive(), "delta": DELTA_POSITIVE})
@fill_doc
def laplace_selection_eps_d(m: int, beta: float, delta: float) -> float:
    """Return the smallest eps_d >= m beta with delta_d <= delta for a given beta (mathematics §3.1).

    %(dilation_m)s
    beta : float
        The smoothness of the bound S, > 0.
    %(dilation_delta)s
        eps_d (``inf`` if it overflows).

    See Also
    --------
    laplace_selection_beta : Return the largest beta with m beta <= eps_d and delta_d(beta) <= delta ...
    laplace_selection_log_delta : Return log delta_d of the m-fold Laplace dilation (mathematics §3.1, [DERIVED])
    laplace_selection_privacy : Return (2A + eps_d, delta_d) of smooth report-noisy-max with Laplace noise ...
    """
    d = delta
    log_q = math.log(_gamma_upper_quantile(m, d))
    log_need = log_q + _log_expm1(beta)
    if log_need > 700.0:
        return math.inf
    eps_d = max(m * beta, math.exp(log_need) - m * beta)
    log_delta = math.log(d)
    for _ in range(200):
        if laplace_selection_log_delta(m, beta, eps_d) <= log_delta:
            return eps_d
        eps_d *= 1.0 + 1e-9
    raise RuntimeError("could not find eps_d for the Laplace dilation")  # pragma: no cover


@validate_params(
    {
        "a": positive(),
        "beta": NONNEGATIVE,
        "m": N_CANDIDATES,
        "eps_d": positive(allow_inf=True),
        "monotone": BOOLEAN,
        "relation": RELATION.or_none(),
    }
)
@fill_doc
def laplace_selection_privacy(
    a: float, beta: float, m: int, eps_d: float, *, monotone: bool = False, relation: Relation | None = None
) -> Privacy:
    """Return (2A + eps_d, delta_d) of smooth report-noisy-max with Laplace noise (mathematics §3.1).

    A + eps_d for monotone utilities.

    %(smooth_noise_parameters)s
    eps_d : float
        The epsilon paid for the dilation, >= m beta (``inf`` allowed).
    monotone : bool, default=False
        Whether the utilities are monotone.
    relation : {"add_remove", "replace"} or None, default=None
        The neighbour relation in which S is a smooth bound (None: not tied to one).

    Returns
    -------
    Privacy
        (2A + eps_d, delta_d)-DP.

    See Also
    --------
    laplace_selection_beta : Return the largest beta with m beta <= eps_d and delta_d(beta) <= delta ...
    laplace_selection_eps_d : Return the smallest eps_d >= m beta with delta_d <= delta for a given beta ...
    laplace_selection_log_delta : Return log delta_d of the m-fold Laplace dilation (mathematics §3.1, [DERIVED])
    """
    if eps_d < m * beta:
        raise ValueError(f"eps_d must be >= m beta = {m * beta!r}, got {eps_d!r}")
    delta_d = math.exp(laplace_selection_log_delta(m, beta, eps_d))
    return Privacy(
        _sliding_factor(monotone) * a + eps_d,
        delta_d,
        relation,
        "smooth report-noisy-max, Laplace (mathematics §3.1: "
        "(2A + eps_d, P[Gamma(m,1) > (eps_d + m beta)/(e^beta - 1)]))",
    )


@validate_params({"k": positive(), "l": positive(), "m": N_CANDIDATES, "epsilon": EPSILON})
def sps_epsilon(k: float, l: float, m: int, epsilon: float) -> float:
    """Return the guarantee (k + m l / 2) epsilon of Smooth Private Selection (mathematics §3.2).

    YS Thm 2; YS-supp Thm 3.

    Holds for two-sided and one-sided polynomial-tail noise with
    alpha' = alpha(k eps), beta' = beta(l eps), in the neighbour relation (add/remove or
    replace neighbours) in which the smooth bound is computed.

    Parameters
    ----------
    k : float
        The share of epsilon of the sliding part, > 0.
    l : float
        The share of epsilon of each candidate's dilation, > 0.
    m : int
        The number of candidates, >= 1.
    epsilon : float
        The nominal epsilon, > 0.

    Returns
    -------
    float
        (k + m l / 2) epsilon.

    See Also
    --------
    sps_split : Return the default (k, l) = (kappa, 2 (1 - kappa)/m): k + m l / 2 = 1 (mathematics §3.2 ...
    laplace_selection_beta : Return the largest beta with m beta <= eps_d and delta_d(beta) <= delta ...
    laplace_selection_eps_d : Return the smallest eps_d >= m beta with delta_d <= delta for a given beta ...

    Examples
    --------
    >>> k, l = sps_split(0.5, 5)      # mathematics §3.2's worked example: k = 1/2, l = 1/5
    >>> sps_epsilon(k, l, 5, 1.0)
    1.0
    """
    return (k + m * l / 2.0) * epsilon


@validate_params({"kappa": real_in(0.0, 1.0), "m": N_CANDIDATES})
def sps_split(kappa: float, m: int) -> tuple[float, float]:
    """Return the default (k, l) = (kappa, 2 (1 - kappa)/m): k + m l / 2 = 1 (mathematics §3.2 "Choosing k, l").

    Parameters
    ----------
    kappa : float
        The share of epsilon of the sliding part, in (0, 1).
    m : int
        The number of candidates, >= 1.

    Returns
    -------
    tuple of (float, float)
        (k, l).

    See Also
    --------
    sps_epsilon : Return the guarantee (k + m l / 2) epsilon of Smooth Private Selection (mathematics §3.2)
    laplace_selection_beta : Return the largest beta with m beta <= eps_d and delta_d(beta) <= delta ...
    laplace_selection_eps_d : Return the smallest eps_d >= m beta with delta_d <= delta for a given beta ...
    """
    return kappa, 2.0 * (1.0 - kappa) / m
