"""Smooth Noisy Max (Chaves et al., Algorithm 1) with a sound calibration (mathematics §3.1, §3.3).

argmax_r { u(x, r) + (S_beta(x)/A) Z_r } with S a beta-smooth upper bound on
the local sensitivity and Z_r iid Laplace, Student's t or Laplace-log-normal.
**The paper's guarantee (Thm 4.2, Cor. 4.3-4.6) is not sound as published**
(mathematics §3.3, mathematics §7 items 5-10): its proof rescales only the selected candidate's
noise, while all m noises are rescaled.  ``calibration="proven"`` (default)
uses the smooth report-noisy-max theorem of mathematics §3.1, in which every
candidate's noise is dilated (cost m·beta·L_d); ``calibration="paper"``
reproduces the paper's noise parameters and reports what mathematics §3.1
actually proves for them.  The calibration is one table keyed by
(noise, calibration) below; every privacy formula is in
:mod:`dpselect.accounting` (section 3).  Sampling and the exact law are
:mod:`dpselect.noisy_max`'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from functools import lru_cache
from typing import ClassVar, NamedTuple

import numpy as np

from .. import accounting
from .._params import DELTA, EPSILON, Rule, options, positive, real_in, validate_fields
from ..noise import Laplace, LaplaceLogNormal, NoiseDistribution, StudentT, check_tail_exponent
from ..privacy import Privacy
from ..problem import SelectionProblem
from .base import NoisyMaxMechanism, check_problem, no_guarantee

__all__ = ["SNMParameters", "SmoothNoisyMax", "noise_scale"]

NOISES = ("student_t", "laplace", "lln")
CALIBRATIONS = ("proven", "paper")

_TINY = float(np.nextafter(0.0, 1.0))


def noise_scale(sensitivity: float, alpha: float) -> float:
    """S/alpha, floored at the smallest positive double (shared by SNM and SPS).

    S = 0 means no dataset at any distance changes a score (the output law is
    data-independent), and S = e^{-beta t} underflows to 0 once beta t > ~745;
    in both cases the exact mechanism is (within 1e-300) uniform over the
    maximal scores, which is what a subnormal scale gives in
    :mod:`dpselect.noisy_max` (the gaps to the maximum become -inf).  A
    quotient that overflows (alpha tiny) is capped at the largest double.
    """
    with np.errstate(over="ignore"):
        s = sensitivity / alpha if alpha > 0 else math.inf
    return min(max(s, _TINY), float(np.finfo(float).max))


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


class _Config(NamedTuple):
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


def _target(c: _Config, eps: float) -> float:
    """The proven calibrations split eps exactly (kappa eps + (1 - kappa) eps): report eps, not its rounding."""
    return c.epsilon if abs(eps - c.epsilon) <= 1e-12 * c.epsilon else eps


def _pure(c: _Config, a: float, beta: float, source: str) -> SNMParameters:
    ls, ld = _t_constants(c.df)
    eps = accounting.smooth_rnm_epsilon(a, beta, c.m, ls, ld, monotone=c.monotone)
    return SNMParameters(a, beta, None, None, None, None, eps, 0.0, source)


def _t_proven(c: _Config) -> SNMParameters:
    ls, ld = _t_constants(c.df)
    a = c.kappa * c.epsilon / ((1.0 if c.monotone else 2.0) * ls)
    beta = (1.0 - c.kappa) * c.epsilon / (c.m * ld)
    p = _pure(c, a, beta, "smooth report-noisy-max, Student's t (mathematics §3.1; Bun-Steinke Thm 31 constants)")
    return p._replace(epsilon=_target(c, p.epsilon))  # slide A L_s + m beta L_d = kappa eps + (1 - kappa) eps


def _t_paper(c: _Config) -> SNMParameters:
    alpha_p, beta = StudentT(c.df).admissible(c.epsilon)  # eps sqrt(d)/(d+1), eps/(2(d+1))
    return _pure(c, alpha_p / (1.0 if c.monotone else 2.0), beta, _T_PAPER)  # paper noise 2S/alpha


def _laplace(c: _Config, a: float, beta: float, eps_d: float, source: str) -> SNMParameters:
    p = accounting.laplace_selection_privacy(a, beta, c.m, eps_d, monotone=c.monotone)
    return SNMParameters(a, beta, None, eps_d, p.delta, None, p.epsilon, max(c.delta, p.delta), source)


def _laplace_proven(c: _Config) -> SNMParameters:
    eps_d = (1.0 - c.kappa) * c.epsilon
    beta = accounting.laplace_selection_beta(c.m, eps_d, c.delta)
    a = c.kappa * c.epsilon / (1.0 if c.monotone else 2.0)
    p = _laplace(c, a, beta, eps_d, "smooth report-noisy-max, Laplace (mathematics §3.1: (2A + eps_d, "
                 "P[Gamma(m,1) > (eps_d + m beta)/(e^beta - 1)]))")
    return p._replace(epsilon=_target(c, p.epsilon))  # 2A + eps_d = kappa eps + (1 - kappa) eps


def _laplace_paper(c: _Config) -> SNMParameters:
    beta = c.epsilon / (2.0 * math.log(2.0 / c.delta))  # NRS07
    a = (c.epsilon / 2.0) / (1.0 if c.monotone else 2.0)
    eps_d = accounting.laplace_selection_eps_d(c.m, beta, c.delta)
    if math.isinf(eps_d):  # the paper's beta is so large that no finite eps_d reaches delta
        return SNMParameters(a, beta, None, math.inf, c.delta, None, math.inf, c.delta, _LAP_PAPER)
    return _laplace(c, a, beta, eps_d, _LAP_PAPER)


def _lln(c: _Config, a: float, beta: float, sigma: float, source: str) -> SNMParameters:
    p = accounting.lln_selection_privacy(c.m, beta, sigma, a, c.delta)
    return SNMParameters(a, beta, sigma, None, None, p.rho, p.epsilon, c.delta, source)


def _lln_proven(c: _Config) -> SNMParameters:
    # eps_c = sqrt(2 rho / m) with rho = dp_to_zcdp(eps, delta) = (eps / (sqrt(L + eps) + sqrt(L)))^2, L = ln 1/delta,
    # written without squaring (no underflow at tiny eps)
    big_l = -math.log(c.delta)
    eps_c = math.sqrt(2.0 / c.m) * c.epsilon / (math.sqrt(big_l + c.epsilon) + math.sqrt(big_l))
    s = c.sigma if c.sigma is not None else math.sqrt((1.0 - c.kappa) / (5.0 * c.kappa))
    beta = s * (1.0 - c.kappa) * eps_c
    a = c.kappa * eps_c * math.exp(-1.5 * s * s)
    if not a > 0.0:
        raise ValueError(f"sigma={s!r} is too large for epsilon={c.epsilon!r}: the noise scale underflows")
    p = _lln(c, a, beta, s, "smooth report-noisy-max, LLN: rho = m (beta/sigma + e^{3 sigma^2/2} A)^2/2 "
             "zCDP (mathematics §3.1), converted by rho + 2 sqrt(rho ln(1/delta)) (mathematics §2.5)")
    return p._replace(epsilon=_target(c, p.epsilon))  # rho is dp_to_zcdp(eps, delta) by construction


def _lln_paper(c: _Config) -> SNMParameters:
    # the authors' code (iagocc/smooth-noisy-max, LlnRLNM): beta = eps/2, sigma variance-optimal for
    # (eps, beta), alpha = e^{-3 sigma^2/2}(eps - beta/sigma) (Cor. 4.5), noise 2S/alpha
    beta = c.epsilon / 2.0
    s = c.sigma if c.sigma is not None else LaplaceLogNormal.optimal_sigma(c.epsilon, beta)
    alpha_p = math.exp(-1.5 * s * s) * (c.epsilon - beta / s)
    if alpha_p <= 0.0:
        raise ValueError(f"sigma={s!r} is too small for the paper's LLN parameters (needs beta/sigma < epsilon)")
    return _lln(c, alpha_p / 2.0, beta, s, _LLN_PAPER)  # no monotone improvement for the zCDP release


_TABLE: dict[tuple[str, str], Callable[[_Config], SNMParameters]] = {
    ("student_t", "proven"): _t_proven,
    ("student_t", "paper"): _t_paper,
    ("laplace", "proven"): _laplace_proven,
    ("laplace", "paper"): _laplace_paper,
    ("lln", "proven"): _lln_proven,
    ("lln", "paper"): _lln_paper,
}


@lru_cache(maxsize=1024)
def _snm_parameters(noise: str, calibration: str, config: _Config) -> SNMParameters:
    return _TABLE[noise, calibration](config)


@dataclass(frozen=True)
class SmoothNoisyMax(NoisyMaxMechanism):
    """Smooth Noisy Max (Chaves et al., Algorithm 1) with a sound calibration.

    argmax_r { u(x, r) + (S_beta(x) / A) Z_r },  Z_r iid ``noise``,
    S_beta(x) = ``problem.smooth_sensitivity(beta)`` (a beta-smooth upper bound
    on LS_u(x) = max_r LS_u(x, r)), m = ``problem.n_candidates``.

    **Not the default for selection.**  Every candidate's noise is rescaled
    by S(x), so a sound calibration pays the m-fold dilation m·beta·L_d
    (mathematics §3.1) and the mechanism is near-uniform on most tasks.  Prefer
    PF/EM on a count or dataset-distance utility (mathematics §9.1).  Majority vote,
    counts [22, 8, 17, 4, 0] at eps = 1, exact P[best] (``analysis.accuracy``):
    PF on the counts (monotone) 0.997, SNM-t on the argmax indicator 0.246
    (SNM-Laplace, delta = 1e-6: 0.257; EM on the indicator 0.292).  For
    percentiles use the rank utility of ``apps.percentile``.  Use SNM to
    reproduce Chaves et al.

    Parameters
    ----------
    epsilon
        target privacy budget (> 0).
    delta
        0 for ``noise="student_t"`` (pure); > 0 for ``"laplace"`` and ``"lln"``.
    noise
        "student_t" (default: pure epsilon-DP), "laplace" or "lln"
        (Laplace-log-normal, Bun & Steinke 2019).
    df
        degrees of freedom d of Student's t (> 0).
    sigma
        LLN shape parameter; ``None`` chooses it (see Notes).
    kappa
        share of the budget for the sliding (shift) term, in (0, 1);
        the rest pays for the m-fold dilation.  Must not depend on the data.
        (The same name and meaning as in :class:`SmoothPrivateSelection` and
        :class:`~dpselect.mechanisms.release.SmoothSensitivityRelease`.)
    calibration
        "proven" (default) or "paper".

    Notes
    -----
    ``calibration="proven"`` (mathematics §3.1, smooth report-noisy-max theorem;
    every candidate's noise is dilated):

    * student_t — A = kappa eps/(2 L_s), beta = (1-kappa) eps/(m L_d) with
      Bun–Steinke's constants L_s = (d+1)/(2 sqrt d), L_d = d+1
      (eps_total = 2 A L_s + m beta L_d = eps): **eps-DP**.  E.g. eps = 1,
      m = 5, d = 3: A = 0.2165, beta = 0.025.
    * laplace — A = kappa eps/2, eps_d = (1-kappa) eps and beta the largest
      value with m beta <= eps_d and
      delta_d = P[Gamma(m,1) > (eps_d + m beta)/(e^beta - 1)] <= delta:
      **(eps, delta)-DP** (``parameters().delta_d`` is the achieved delta_d).
    * lln — rho = the zCDP level whose conversion rho + 2 sqrt(rho ln 1/delta)
      equals eps; per coordinate eps_c = sqrt(2 rho / m), split as
      beta/sigma = (1-kappa) eps_c and e^{3 sigma^2/2} A = kappa eps_c; default
      sigma = sqrt((1-kappa)/(5 kappa)) (the fixed point of mathematics §2.5's
      variance-optimal rule under this split; public).  Guarantee:
      rho_total = m (beta/sigma + e^{3 sigma^2/2} A)^2 / 2 zCDP, reported as
      (rho_total + 2 sqrt(rho_total ln(1/delta)), delta)-DP with ``rho`` set.

    For ``problem.monotone`` utilities the sliding term is A L_s instead of
    2 A L_s (mathematics §3.1), so A is doubled for student_t and laplace.

    ``calibration="paper"`` reproduces the paper's parameters (noise 2S/alpha,
    S/alpha if monotone, Cor. 4.6): Student's t alpha = eps sqrt(d)/(d+1),
    beta = eps/(2(d+1)) (Cor. 4.3); Laplace NRS alpha = eps/2,
    beta = eps/(2 ln(2/delta)) (Cor. 4.4); LLN beta = eps/2 (authors' code),
    sigma variance-optimal, alpha = e^{-3 sigma^2/2}(eps - beta/sigma)
    (Cor. 4.5); kappa is ignored.  ``privacy()`` then reports what mathematics §3.1
    proves for those parameters — **never the paper's claim**: t is
    (m+1) eps / 2-DP (3-DP at eps = 1, m = 5); Laplace (2A + eps_d, delta)
    with the smallest eps_d >= m beta giving delta_d <= delta ((1.149, 1e-6)
    at eps = 1, m = 5); LLN the §3.1 rho converted ((11.89, 1e-6)).

    Source: Chaves et al., Smooth Noisy Max, Algorithm 1; mathematics §3.1, §3.3.
    The guarantee is under ``problem.relation``.  A smooth sensitivity of 0
    or one that underflows gives the zero-noise limit (:func:`noise_scale`).

    Examples
    --------
    >>> import dpselect
    >>> p = dpselect.SelectionProblem([3.0, 1.0, 0.0], local_sensitivity=0.5)
    >>> mech = dpselect.SmoothNoisyMax(1.0)
    >>> print(mech.privacy(p))
    1-DP [add_remove]
    >>> round(mech.parameters(p).beta, 6)
    0.041667
    """

    epsilon: float
    delta: float = 0.0
    _: KW_ONLY
    noise: str = "student_t"
    df: float = 3.0
    sigma: float | None = None
    kappa: float = 0.5
    calibration: str = "proven"
    _parameter_constraints: ClassVar[dict[str, Rule]] = {
        "epsilon": EPSILON,
        "delta": DELTA,
        "noise": options(*NOISES),
        "df": positive(),
        "sigma": positive(none=True),
        "kappa": real_in(0.0, 1.0),
        "calibration": options(*CALIBRATIONS),
    }

    def __post_init__(self) -> None:
        validate_fields(self, self._parameter_constraints)
        if self.noise == "student_t":
            check_tail_exponent(self.df, "df", self.df)
        if self.noise == "student_t" and self.delta != 0.0:
            raise ValueError(
                f"delta must be 0 for noise='student_t' (pure eps-DP), got {self.delta!r}; "
                "pass noise='laplace' or 'lln' for an (eps, delta) guarantee"
            )
        if self.noise in ("laplace", "lln") and self.delta == 0.0:
            raise ValueError(
                f"delta must be > 0 for noise={self.noise!r} (approximate DP); use noise='student_t' for pure DP"
            )
        if self.noise != "lln" and self.sigma is not None:
            raise ValueError("sigma applies to noise='lln' only")

    # ------------------------------------------------------------- calibration
    def parameters(self, problem: SelectionProblem) -> SNMParameters:
        """The calibration (A, beta, ...) and guarantee for this problem's m."""
        check_problem(problem)
        config = _Config(
            self.epsilon, self.delta, self.df, self.sigma, self.kappa, problem.n_candidates,
            bool(problem.monotone and self.noise != "lln"),
        )
        return _snm_parameters(self.noise, self.calibration, config)

    def _noise(self, params: SNMParameters) -> NoiseDistribution:
        """The noise law named by ``noise`` (LLN with the calibrated sigma)."""
        if self.noise == "laplace":
            return Laplace()
        if self.noise == "student_t":
            return StudentT(self.df)
        assert params.sigma is not None  # the LLN rows of the table always set sigma
        return LaplaceLogNormal(params.sigma)

    def calibrate(self, problem: SelectionProblem) -> tuple[float, NoiseDistribution]:
        """(noise scale S_beta(x)/A, noise law)."""
        params = self.parameters(problem)
        return noise_scale(problem.smooth_sensitivity(params.beta), params.alpha), self._noise(params)

    def privacy(self, problem: SelectionProblem) -> Privacy:
        """The guarantee mathematics §3.1 proves for this calibration (never the paper's claim)."""
        params = self.parameters(problem)
        guarantee = Privacy(params.epsilon, params.delta, problem.relation, params.source, params.rho)
        return no_guarantee(problem) or guarantee
