"""The calibration table of :class:`~dpselect.mechanisms.snm.SmoothNoisyMax`: (noise, calibration) -> parameters.

Every guarantee is the one mathematics §3.1 proves (never a paper's claim); the privacy
formulas are :mod:`dpselect.accounting`'s.  Public through :mod:`dpselect.mechanisms.snm`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import NamedTuple

from .. import accounting
from ..noise import LaplaceLogNormal, StudentT

__all__ = ["SNMConfig", "SNMParameters", "snm_parameters"]


class SNMParameters(NamedTuple):
    """Calibration of :class:`SmoothNoisyMax` for one candidate-set size.

    Attributes
    ----------
    alpha
        A; the noise scale is S_beta(x) / A (the paper's "2S/alpha" has A
        equal to half the paper's alpha).
    beta
        smoothing parameter at which S is computed.
    sigma
        LLN shape parameter (None for the other noises).
    eps_d, delta_d
        Laplace dilation budget (mathematics §3.1; None otherwise).
    rho
        zCDP parameter of the LLN release (None otherwise).
    epsilon, delta
        the guarantee (mathematics §3.1), never the paper's claim.
    source
        where the guarantee comes from.
    """

    alpha: float
    beta: float
    sigma: float | None
    eps_d: float | None
    delta_d: float | None
    rho: float | None
    epsilon: float
    delta: float
    source: str


# ---------------------------------------------------------------------------
# the calibration table: (noise, calibration) -> parameters
# ---------------------------------------------------------------------------

_T_PAPER = (
    "SNM paper parameters (Chaves et al. Cor. 4.3), guarantee re-derived by mathematics §3.1/§3.3 item 4 "
    "(the paper's eps-DP claim is false, mathematics §7 items 5, 7)"
)
_LAP_PAPER = (
    "SNM paper parameters (Chaves et al. Cor. 4.4, NRS alpha = eps/2, beta = eps/(2 ln(2/delta))), "
    "guarantee re-derived by mathematics §3.1 (the paper's (eps, delta) claim is false, mathematics §7 items 5, 8)"
)
_LLN_PAPER = (
    "SNM paper parameters (Chaves et al. Cor. 4.5, alpha = e^{-3 sigma^2/2}(eps - beta/sigma)), "
    "guarantee re-derived by mathematics §3.1 as zCDP then converted "
    "(the paper's claim is false, mathematics §7 item 9)"
)


class SNMConfig(NamedTuple):
    """The public inputs of the calibration (the mechanism's parameters and the problem's m)."""

    epsilon: float
    delta: float
    df: float
    sigma: float | None
    kappa: float
    m: int
    monotone: bool


def _t_constants(df: float) -> tuple[float, float]:
    """Bun–Steinke Thm 31 constants of t_d: L_s = (d+1)/(2 sqrt d), L_d = d + 1 (mathematics §2.4)."""
    t = StudentT(df)
    return float(t.shift_constant), float(t.dilation_constant)


def _target(c: SNMConfig, eps: float) -> float:
    """The proven calibrations split eps exactly (kappa eps + (1 - kappa) eps): report eps, not its rounding."""
    return c.epsilon if abs(eps - c.epsilon) <= 1e-12 * c.epsilon else eps


def _pure(c: SNMConfig, a: float, beta: float, source: str) -> SNMParameters:
    ls, ld = _t_constants(c.df)
    eps = accounting.smooth_rnm_epsilon(a, beta, c.m, ls, ld, monotone=c.monotone)
    return SNMParameters(a, beta, None, None, None, None, eps, 0.0, source)


def _t_proven(c: SNMConfig) -> SNMParameters:
    ls, ld = _t_constants(c.df)
    a = c.kappa * c.epsilon / ((1.0 if c.monotone else 2.0) * ls)
    beta = (1.0 - c.kappa) * c.epsilon / (c.m * ld)
    p = _pure(c, a, beta, "smooth report-noisy-max, Student's t (mathematics §3.1; Bun-Steinke Thm 31 constants)")
    return p._replace(epsilon=_target(c, p.epsilon))  # slide A L_s + m beta L_d = kappa eps + (1 - kappa) eps


def _t_paper(c: SNMConfig) -> SNMParameters:
    alpha_p, beta = StudentT(c.df).admissible(c.epsilon)  # eps sqrt(d)/(d+1), eps/(2(d+1))
    return _pure(c, alpha_p / (1.0 if c.monotone else 2.0), beta, _T_PAPER)  # paper noise 2S/alpha


def _laplace(c: SNMConfig, a: float, beta: float, eps_d: float, source: str) -> SNMParameters:
    p = accounting.laplace_selection_privacy(a, beta, c.m, eps_d, monotone=c.monotone)
    return SNMParameters(a, beta, None, eps_d, p.delta, None, p.epsilon, max(c.delta, p.delta), source)


def _laplace_proven(c: SNMConfig) -> SNMParameters:
    eps_d = (1.0 - c.kappa) * c.epsilon
    beta = accounting.laplace_selection_beta(c.m, eps_d, c.delta)
    a = c.kappa * c.epsilon / (1.0 if c.monotone else 2.0)
    p = _laplace(
        c,
        a,
        beta,
        eps_d,
        "smooth report-noisy-max, Laplace (mathematics §3.1: (2A + eps_d, "
        "P[Gamma(m,1) > (eps_d + m beta)/(e^beta - 1)]))",
    )
    return p._replace(epsilon=_target(c, p.epsilon))  # 2A + eps_d = kappa eps + (1 - kappa) eps


def _laplace_paper(c: SNMConfig) -> SNMParameters:
    beta = c.epsilon / (2.0 * math.log(2.0 / c.delta))  # NRS07
    a = (c.epsilon / 2.0) / (1.0 if c.monotone else 2.0)
    eps_d = accounting.laplace_selection_eps_d(c.m, beta, c.delta)
    if math.isinf(eps_d):  # the paper's beta is so large that no finite eps_d reaches delta
        return SNMParameters(a, beta, None, math.inf, c.delta, None, math.inf, c.delta, _LAP_PAPER)
    return _laplace(c, a, beta, eps_d, _LAP_PAPER)


def _lln(c: SNMConfig, a: float, beta: float, sigma: float, source: str) -> SNMParameters:
    p = accounting.lln_selection_privacy(c.m, beta, sigma, a, c.delta)
    return SNMParameters(a, beta, sigma, None, None, p.rho, p.epsilon, c.delta, source)


def _lln_proven(c: SNMConfig) -> SNMParameters:
    # eps_c = sqrt(2 rho / m) with rho = dp_to_zcdp(eps, delta) = (eps / (sqrt(L + eps) + sqrt(L)))^2, L = ln 1/delta,
    # written without squaring (no underflow at tiny eps)
    big_l = -math.log(c.delta)
    eps_c = math.sqrt(2.0 / c.m) * c.epsilon / (math.sqrt(big_l + c.epsilon) + math.sqrt(big_l))
    s = c.sigma if c.sigma is not None else math.sqrt((1.0 - c.kappa) / (5.0 * c.kappa))
    beta = s * (1.0 - c.kappa) * eps_c
    a = c.kappa * eps_c * math.exp(-1.5 * s * s)
    if not a > 0.0:
        raise ValueError(f"sigma={s!r} is too large for epsilon={c.epsilon!r}: the noise scale underflows")
    p = _lln(
        c,
        a,
        beta,
        s,
        "smooth report-noisy-max, LLN: rho = m (beta/sigma + e^{3 sigma^2/2} A)^2/2 "
        "zCDP (mathematics §3.1), converted by rho + 2 sqrt(rho ln(1/delta)) (mathematics §2.5)",
    )
    return p._replace(epsilon=_target(c, p.epsilon))  # rho is dp_to_zcdp(eps, delta) by construction


def _lln_paper(c: SNMConfig) -> SNMParameters:
    # the authors' code (iagocc/smooth-noisy-max, LlnRLNM): beta = eps/2, sigma variance-optimal for
    # (eps, beta), alpha = e^{-3 sigma^2/2}(eps - beta/sigma) (Cor. 4.5), noise 2S/alpha
    beta = c.epsilon / 2.0
    s = c.sigma if c.sigma is not None else LaplaceLogNormal.optimal_sigma(c.epsilon, beta)
    alpha_p = math.exp(-1.5 * s * s) * (c.epsilon - beta / s)
    if alpha_p <= 0.0:
        raise ValueError(f"sigma={s!r} is too small for the paper's LLN parameters (needs beta/sigma < epsilon)")
    return _lln(c, alpha_p / 2.0, beta, s, _LLN_PAPER)  # no monotone improvement for the zCDP release


_TABLE: dict[tuple[str, str], Callable[[SNMConfig], SNMParameters]] = {
    ("student_t", "proven"): _t_proven,
    ("student_t", "paper"): _t_paper,
    ("laplace", "proven"): _laplace_proven,
    ("laplace", "paper"): _laplace_paper,
    ("lln", "proven"): _lln_proven,
    ("lln", "paper"): _lln_paper,
}


@lru_cache(maxsize=1024)
def snm_parameters(noise: str, calibration: str, config: SNMConfig) -> SNMParameters:
    return _TABLE[noise, calibration](config)
