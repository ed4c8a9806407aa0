"""Noisy-max selection with smooth-sensitivity noise scales (SPEC.md §3).

Two families, both calibrations handed to :mod:`dpselect.noisy_max` (no
sampling or integral is re-implemented here):

* :class:`SmoothNoisyMax` — Chaves et al., "Smooth Noisy Max" (SNM),
  Algorithm 1: argmax_r { u(x, r) + (S(x)/A) Z_r } with S a beta-smooth upper
  bound on the local sensitivity and Z_r iid Laplace, Student's t or
  Laplace-log-normal.  **The paper's guarantee (Thm 4.2, Cor. 4.3-4.6) is not
  sound as published** (SPEC.md §3.3, errata 5-10): its proof rescales only
  the selected candidate's noise, while all m noises are rescaled.  The default
  ``calibration="proven"`` uses the smooth report-noisy-max theorem of SPEC.md
  §3.1, in which every candidate's noise is dilated (cost m·beta·L_d);
  ``calibration="paper"`` reproduces the paper's noise parameters for
  comparisons and reports what SPEC.md §3.1 actually proves for them.
* :class:`SmoothPrivateSelection` — Yamamoto & Shibuya, IPCCC 2024, Def. 12
  (SPS): polynomial-tail noise P_gamma (one- or two-sided) with
  alpha' = alpha(k eps), beta' = beta(l eps); (k + m l / 2) eps-DP (YS Thm 2;
  one-sided: the supplement's corrected Thm 3; SPEC.md §3.2, errata 1-2).

All guarantees carry the problem's neighbour relation (``problem.relation``):
the smooth sensitivity is computed under that relation, so the guarantee holds
under it.  Hyper-parameters (kappa, k, l, df, sigma, gamma) must be chosen
independently of the private data (SPEC.md §1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np
from scipy import optimize, special

from .._validation import (
    check_delta,
    check_epsilon,
    check_positive,
    check_probability_in,
)
from ..noise import (
    Laplace,
    LaplaceLogNormal,
    PolynomialTail,
    StudentT,
    dp_to_zcdp,
    nrs_laplace_parameters,
    zcdp_to_dp,
)
from ..privacy import Privacy
from ..problem import SelectionProblem
from .base import NoisyMaxMechanism, check_problem

__all__ = [
    "SNMParameters",
    "SPSParameters",
    "SmoothNoisyMax",
    "SmoothPrivateSelection",
    "laplace_selection_log_delta",
]

_NOISES = ("laplace", "student_t", "lln")
_CALIBRATIONS = ("proven", "paper")


# ---------------------------------------------------------------------------
# Accounting formulas of SPEC.md §3.1
# ---------------------------------------------------------------------------


def laplace_selection_log_delta(m: int, beta: float, eps_d: float) -> float:
    """log delta_d of the m-fold Laplace dilation (SPEC.md §3.1, [DERIVED]).

    With noise scale S(x)/A, S beta-smooth, the dilation of all m Laplace
    coordinates costs (eps_d, delta_d) for any eps_d >= m beta, with

        delta_d = P[Gamma(m, 1) > (eps_d + m beta) / (e^beta - 1)].

    Computed as ``scipy.special``'s regularised upper incomplete gamma in log
    space (stable for m up to 10^6 and delta_d down to ~1e-300).
    """
    thr = (eps_d + m * beta) / math.expm1(beta)
    q = float(special.gammaincc(m, thr))
    if q > 0.0:
        return math.log(q)
    # underflow (far tail, x > m - 1): the upper bound
    # Gamma(m, x)/Gamma(m) <= x^(m-1) e^-x / (Gamma(m) (1 - (m-1)/x)), i.e. conservative.
    return (m - 1) * math.log(thr) - thr - math.lgamma(m) - math.log1p(-(m - 1) / thr)


def _gamma_quantile(m: int, delta: float) -> float:
    """q with P[Gamma(m,1) > q] = delta."""
    return float(special.gammainccinv(m, delta))


def _laplace_proven_beta(m: int, eps_d: float, delta: float) -> float:
    """Largest beta with m beta <= eps_d and delta_d(beta) <= delta (SPEC.md §3.1).

    delta_d(beta) <= delta  <=>  (eps_d + m beta)/(e^beta - 1) >= q (q the
    Gamma(m,1) upper delta-quantile)  <=>  q expm1(beta) - m beta <= eps_d.
    The left side is convex in beta and 0 at beta = 0 < eps_d, so the feasible
    set is an interval [0, beta*]; beta* is found by Brent's method and then
    checked (and nudged down if rounding requires) against the exact tail.
    """
    cap = eps_d / m
    q = _gamma_quantile(m, delta)

    def h(b: float) -> float:
        return q * math.expm1(b) - m * b - eps_d

    beta = cap if h(cap) <= 0.0 else optimize.brentq(h, 0.0, cap, xtol=1e-300, rtol=1e-15, maxiter=500)
    log_delta = math.log(delta)
    for _ in range(200):
        if laplace_selection_log_delta(m, beta, eps_d) <= log_delta:
            return beta
        beta *= 1.0 - 1e-9
    raise RuntimeError("could not calibrate the Laplace smoothing parameter")  # pragma: no cover


def _laplace_min_eps_d(m: int, beta: float, delta: float) -> float:
    """Smallest eps_d >= m beta with delta_d <= delta, for a given beta (SPEC.md §3.1)."""
    q = _gamma_quantile(m, delta)
    eps_d = max(m * beta, q * math.expm1(beta) - m * beta)
    log_delta = math.log(delta)
    for _ in range(200):
        if laplace_selection_log_delta(m, beta, eps_d) <= log_delta:
            return eps_d
        eps_d *= 1.0 + 1e-9
    raise RuntimeError("could not find eps_d for the Laplace dilation")  # pragma: no cover


def _lln_rho(m: int, beta: float, sigma: float, a: float) -> float:
    """rho-zCDP of releasing all m noisy scores (SPEC §3.1): m (beta/sigma + e^{3 sigma^2/2} A)^2 / 2."""
    return m * LaplaceLogNormal(sigma).zcdp_rho(a, beta)


def _noise_scale(sensitivity: float, alpha: float) -> float:
    """S/alpha, floored at the smallest positive double.

    S = 0 means no dataset at any distance changes a score (the output law is
    data-independent), and S = e^{-beta t} underflows to 0 once beta t > ~745;
    in both cases the exact mechanism is (within 1e-300) uniform over the
    maximal scores, which is what a subnormal scale gives in
    :mod:`dpselect.noisy_max` (the gaps to the maximum become -inf).
    """
    return max(sensitivity / alpha, _TINY)


_TINY = float(np.nextafter(0.0, 1.0))


# ---------------------------------------------------------------------------
# Smooth Noisy Max
# ---------------------------------------------------------------------------


class SNMParameters(NamedTuple):
    """Calibration of :class:`SmoothNoisyMax` for one candidate-set size.

    alpha : the noise scale is S_beta(x) / alpha (the paper's "2S/alpha" has
        alpha here equal to half the paper's alpha).
    beta : smoothing parameter at which S is computed.
    sigma : LLN shape parameter (None for the other noises).
    eps_d, delta_d : Laplace dilation budget (SPEC.md §3.1; None otherwise).
    rho : zCDP parameter of the LLN release (None otherwise).
    epsilon, delta : the guarantee (SPEC.md §3.1), never the paper's claim.
    source : where the guarantee comes from.
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


def _bs_t_constants(df: float) -> tuple[float, float]:
    """Bun–Steinke Thm 31 constants of Student's t_d: L_s = (d+1)/(2 sqrt d), L_d = d + 1 (SPEC §2.4)."""
    t = StudentT(df)
    return float(t.shift_constant), float(t.dilation_constant)


@lru_cache(maxsize=1024)
def _snm_parameters(
    epsilon: float,
    delta: float,
    noise: str,
    df: float,
    sigma: float | None,
    kappa: float,
    calibration: str,
    m: int,
    monotone: bool,
) -> SNMParameters:
    slide = 1.0 if monotone else 2.0  # sliding term A L_s (monotone) or 2 A L_s (SPEC §3.1)
    if noise == "student_t":
        ls, ld = _bs_t_constants(df)
        if calibration == "proven":
            a = kappa * epsilon / (slide * ls)
            beta = (1.0 - kappa) * epsilon / (m * ld)
            return SNMParameters(
                a, beta, None, None, None, None, epsilon, 0.0,
                "smooth report-noisy-max, Student's t (SPEC §3.1; Bun-Steinke Thm 31 constants)",
            )
        alpha_p, beta = StudentT(df).admissible(epsilon)  # alpha = eps sqrt(d)/(d+1), beta = eps/(2(d+1))
        a = alpha_p / slide  # paper noise 2S/alpha (S/alpha if monotone, Cor. 4.6)
        eps_total = slide * a * ls + m * beta * ld
        return SNMParameters(
            a, beta, None, None, None, None, eps_total, 0.0,
            "SNM paper parameters (Chaves et al. Cor. 4.3), guarantee re-derived by SPEC §3.1/§3.3 item 4 "
            "(the paper's eps-DP claim is false, SPEC errata 5, 7)",
        )
    if noise == "laplace":
        if calibration == "proven":
            a = kappa * epsilon / slide
            eps_d = (1.0 - kappa) * epsilon
            beta = _laplace_proven_beta(m, eps_d, delta)
            delta_d = math.exp(laplace_selection_log_delta(m, beta, eps_d))
            return SNMParameters(
                a, beta, None, eps_d, delta_d, None, epsilon, delta,
                "smooth report-noisy-max, Laplace (SPEC §3.1: (2A + eps_d, P[Gamma(m,1) > (eps_d + m beta)"
                "/(e^beta - 1)]))",
            )
        alpha_p, beta = nrs_laplace_parameters(epsilon, delta)  # NRS: eps/2, eps/(2 ln(2/delta))
        a = alpha_p / slide
        eps_d = _laplace_min_eps_d(m, beta, delta)
        delta_d = math.exp(laplace_selection_log_delta(m, beta, eps_d))
        return SNMParameters(
            a, beta, None, eps_d, delta_d, None, slide * a + eps_d, delta,
            "SNM paper parameters (Chaves et al. Cor. 4.4, NRS alpha = eps/2, beta = eps/(2 ln(2/delta))), "
            "guarantee re-derived by SPEC §3.1 (the paper's (eps, delta) claim is false, SPEC errata 5, 8)",
        )
    # LLN (zCDP, SPEC §2.5 / §3.1)
    if calibration == "proven":
        rho_target = dp_to_zcdp(epsilon, delta)
        eps_c = math.sqrt(2.0 * rho_target / m)
        s = sigma if sigma is not None else math.sqrt((1.0 - kappa) / (5.0 * kappa))
        beta = s * (1.0 - kappa) * eps_c
        a = kappa * eps_c * math.exp(-1.5 * s * s)
        rho = _lln_rho(m, beta, s, a)
        eps_total = zcdp_to_dp(rho, delta)
        return SNMParameters(
            a, beta, s, None, None, rho, eps_total, delta,
            "smooth report-noisy-max, LLN: rho = m (beta/sigma + e^{3 sigma^2/2} A)^2/2 zCDP (SPEC §3.1), "
            "converted by rho + 2 sqrt(rho ln(1/delta)) (SPEC §2.5)",
        )
    # the authors' code (iagocc/smooth-noisy-max, LlnRLNM): beta = eps/2, sigma variance-optimal for
    # (eps, beta), alpha = e^{-3 sigma^2/2}(eps - beta/sigma) (Cor. 4.5), noise 2S/alpha
    beta = epsilon / 2.0
    s = sigma if sigma is not None else LaplaceLogNormal.optimal_sigma(epsilon, beta)
    alpha_p = math.exp(-1.5 * s * s) * (epsilon - beta / s)
    if alpha_p <= 0.0:
        raise ValueError(f"sigma={s!r} is too small for the paper's LLN parameters (needs beta/sigma < epsilon)")
    a = alpha_p / 2.0  # paper noise 2S/alpha; no monotone improvement for the zCDP release
    rho = _lln_rho(m, beta, s, a)
    return SNMParameters(
        a, beta, s, None, None, rho, zcdp_to_dp(rho, delta), delta,
        "SNM paper parameters (Chaves et al. Cor. 4.5, alpha = e^{-3 sigma^2/2}(eps - beta/sigma)), "
        "guarantee re-derived by SPEC §3.1 as zCDP then converted (the paper's claim is false, SPEC errata 9)",
    )


@dataclass(frozen=True)
class SmoothNoisyMax(NoisyMaxMechanism):
    """Smooth Noisy Max (Chaves et al., Algorithm 1) with a sound calibration.

    argmax_r { u(x, r) + (S_beta(x) / A) Z_r },  Z_r iid ``noise``,
    S_beta(x) = ``problem.smooth_sensitivity(beta)`` (a beta-smooth upper bound
    on LS_u(x) = max_r LS_u(x, r)), m = ``problem.n_candidates``.

    Parameters
    ----------
    epsilon : target privacy budget (> 0).
    delta : 0 for ``noise="student_t"`` (pure); > 0 for ``"laplace"`` and ``"lln"``.
    noise : "laplace", "student_t" or "lln" (Laplace-log-normal, Bun & Steinke 2019).
    df : degrees of freedom d of Student's t (> 0).
    sigma : LLN shape parameter; ``None`` chooses it (see below).
    kappa : share of the budget for the sliding (shift) term, in (0, 1);
        the rest pays for the m-fold dilation.  Must not depend on the data.
    calibration : "proven" (default) or "paper".

    ``calibration="proven"`` (SPEC.md §3.1, smooth report-noisy-max theorem;
    every candidate's noise is dilated):

    * student_t — A = kappa eps/(2 L_s), beta = (1-kappa) eps/(m L_d) with
      Bun–Steinke's constants L_s = (d+1)/(2 sqrt d), L_d = d+1
      (eps_total = 2 A L_s + m beta L_d = eps): **eps-DP**.
    * laplace — A = kappa eps/2, eps_d = (1-kappa) eps and beta the largest
      value with m beta <= eps_d and
      delta_d = P[Gamma(m,1) > (eps_d + m beta)/(e^beta - 1)] <= delta
      (Brent's method on the Gamma quantile, verified on the exact tail; fast
      and stable for m up to 10^6): **(eps, delta)-DP** (eps = 2A + eps_d;
      ``privacy()`` reports the requested delta, ``parameters().delta_d`` the
      achieved delta_d <= delta).
    * lln — rho = the zCDP level whose conversion rho + 2 sqrt(rho ln 1/delta)
      equals eps; per coordinate eps_c = sqrt(2 rho / m), split as
      beta/sigma = (1-kappa) eps_c and e^{3 sigma^2/2} A = kappa eps_c.  The
      default sigma = sqrt((1-kappa)/(5 kappa)) is the fixed point of the
      variance-optimal rule (SPEC §2.5: the root of
      5 (eps_c/beta) sigma^3 - 5 sigma^2 - 1 = 0,
      ``LaplaceLogNormal.optimal_sigma``) when beta is itself tied to
      sigma by the split (substituting beta = sigma (1-kappa) eps_c gives
      5 kappa sigma^2 = 1 - kappa); it depends on kappa only, so it is public.
      Guarantee: rho_total = m (beta/sigma + e^{3 sigma^2/2} A)^2 / 2 zCDP,
      reported converted as (rho_total + 2 sqrt(rho_total ln(1/delta)), delta)-DP
      (equal to the target up to rounding).

    For ``problem.monotone`` utilities the sliding term is A L_s instead of
    2 A L_s (SPEC §3.1), so A is doubled for student_t and laplace (the
    dilation term is unchanged; the LLN release has no such improvement).

    ``calibration="paper"`` reproduces the paper's parameters: noise scale
    2 S/alpha (S/alpha for monotone utilities, Cor. 4.6) with S computed at the
    paper's beta: Student's t alpha = eps sqrt(d)/(d+1), beta = eps/(2(d+1))
    (Cor. 4.3); Laplace NRS alpha = eps/2, beta = eps/(2 ln(2/delta))
    (Cor. 4.4); LLN beta = eps/2 (the authors' code), sigma the
    variance-optimal root for (eps, beta) (or ``sigma``),
    alpha = e^{-3 sigma^2/2}(eps - beta/sigma) (Cor. 4.5); kappa is ignored.
    ``privacy()`` then reports what SPEC §3.1 proves for those parameters —
    **never the paper's claim** (SPEC §3.3, errata 5-10): pure t
    eps_total = 2 A L_s + m beta L_d = (m+1) eps / 2; Laplace
    (2A + eps_d, delta) with the smallest eps_d >= m beta giving
    delta_d <= delta; LLN the §3.1 rho converted.

    The guarantee is under ``problem.relation``.  A smooth sensitivity of 0
    (no dataset at any distance changes a score) or one that underflows gives
    the zero-noise limit: uniform over the maximal scores (see
    ``_noise_scale``).
    """

    epsilon: float
    delta: float = 0.0
    noise: str = "laplace"
    df: float = 3.0
    sigma: float | None = None
    kappa: float = 0.5
    calibration: str = "proven"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))
        if self.noise not in _NOISES:
            raise ValueError(f"noise must be one of {_NOISES}, got {self.noise!r}")
        if self.calibration not in _CALIBRATIONS:
            raise ValueError(f"calibration must be one of {_CALIBRATIONS}, got {self.calibration!r}")
        object.__setattr__(self, "df", check_positive(self.df, "df"))
        if self.sigma is not None:
            object.__setattr__(self, "sigma", check_positive(self.sigma, "sigma"))
        object.__setattr__(self, "kappa", check_probability_in(self.kappa, "kappa", 0.0, 1.0))
        if self.noise == "student_t" and self.delta != 0.0:
            raise ValueError(f"delta must be 0 for noise='student_t' (pure eps-DP), got {self.delta!r}")
        if self.noise in ("laplace", "lln") and self.delta == 0.0:
            raise ValueError(
                f"delta must be > 0 for noise={self.noise!r} (approximate DP); use noise='student_t' for pure DP"
            )

    # ------------------------------------------------------------- calibration
    def parameters(self, problem: SelectionProblem) -> SNMParameters:
        """The calibration (alpha, beta, ...) and guarantee for this problem's m."""
        check_problem(problem)
        return _snm_parameters(
            self.epsilon, self.delta, self.noise, self.df, self.sigma, self.kappa, self.calibration,
            problem.n_candidates, bool(problem.monotone and self.noise != "lln"),
        )

    def _noise(self, params: SNMParameters) -> Any:
        if self.noise == "laplace":
            return Laplace()
        if self.noise == "student_t":
            return StudentT(self.df)
        return LaplaceLogNormal(params.sigma)

    def calibrate(self, problem: SelectionProblem) -> tuple[float, Any]:
        """(noise scale S_beta(x)/alpha, noise law)."""
        params = self.parameters(problem)
        return _noise_scale(problem.smooth_sensitivity(params.beta), params.alpha), self._noise(params)

    def privacy(self, problem: SelectionProblem) -> Privacy:
        """The guarantee SPEC.md §3.1 proves for this calibration (never the paper's claim)."""
        params = self.parameters(problem)
        return Privacy(params.epsilon, params.delta, problem.relation, params.source)


# ---------------------------------------------------------------------------
# Smooth Private Selection (Yamamoto & Shibuya)
# ---------------------------------------------------------------------------


class SPSParameters(NamedTuple):
    """Calibration of :class:`SmoothPrivateSelection` for one problem.

    k, l : budget split (guarantee (k + m l / 2) eps).
    alpha : alpha' = alpha(k eps); the noise scale is max_r S(x, r) / alpha'.
    beta : beta' = beta(l eps), the smoothing parameter of S(., r).
    """

    k: float
    l: float
    alpha: float
    beta: float


@dataclass(frozen=True)
class SmoothPrivateSelection(NoisyMaxMechanism):
    """Smooth Private Selection (Yamamoto & Shibuya, IPCCC 2024, Def. 12; SPEC.md §3.2).

    argmax_r { u(x, r) + (max_r S(x, r) / alpha') Z_r },  Z_r iid P_gamma
    (density proportional to 1/(1+|z|^gamma)), restricted to z >= 0 and
    renormalised when ``one_sided`` (YS Def. 12), S(., r) =
    ``problem.candidate_smooth_sensitivity(beta')``.

    Parameters
    ----------
    epsilon : privacy budget unit (> 0).
    gamma : tail exponent of the noise (> 1).
    one_sided : use the one-sided noise (default, YS's recommended variant).
    kappa : default split, in (0, 1): k = kappa, l = 2 (1 - kappa)/m.
    k, l : explicit split (> 0); ``l=None`` defaults to 2 (1 - k)/m
        (requires k < 1).

    alpha' = alpha(k eps), beta' = beta(l eps) with (alpha(e), beta(e)) =
    ``PolynomialTail(gamma).admissible(e)`` = (e / (2 (gamma-1)^{(gamma-1)/gamma}),
    e / (2 max(1, gamma-1))) — YS Thm 6 with the corrected beta (SPEC errata 1).

    **Guarantee: (k + m l / 2) eps-DP for both sidedness settings** (YS Thm 2;
    for one-sided noise the supplement's correction of Thm 3, SPEC errata 2);
    with the defaults this is exactly eps.  ``privacy()`` returns that value.

    If the problem's smooth bound is only valid up to ``problem.beta_max``
    (YS Thm 4/5, SPEC §4.1) and beta' exceeds it: with l defaulted, l is
    reduced so that beta(l eps) = beta_max and, with k defaulted too,
    k = 1 - m l / 2 (SPEC §3.2 "Choosing k, l"; the total stays eps); with l
    fixed by the user a ValueError is raised.  :meth:`parameters` reports the
    (k, l, alpha', beta') actually used.
    """

    epsilon: float
    gamma: float = 4.0
    one_sided: bool = True
    kappa: float = 0.5
    k: float | None = None
    l: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        gamma = check_positive(self.gamma, "gamma")
        if gamma <= 1.0:
            raise ValueError(f"gamma must be > 1 (the noise density must be integrable), got {gamma!r}")
        object.__setattr__(self, "gamma", gamma)
        if not isinstance(self.one_sided, (bool, np.bool_)):
            raise TypeError(f"one_sided must be a bool, got {type(self.one_sided).__name__}")
        object.__setattr__(self, "one_sided", bool(self.one_sided))
        object.__setattr__(self, "kappa", check_probability_in(self.kappa, "kappa", 0.0, 1.0))
        if self.k is not None:
            object.__setattr__(self, "k", check_positive(self.k, "k"))
        if self.l is not None:
            object.__setattr__(self, "l", check_positive(self.l, "l"))
        if self.k is not None and self.l is None and self.k >= 1.0:
            raise ValueError(f"k must be < 1 when l is not given (l defaults to 2 (1 - k)/m), got {self.k!r}")

    def _noise(self) -> Any:
        h = PolynomialTail(self.gamma)
        return h.one_sided() if self.one_sided else h

    def parameters(self, problem: SelectionProblem) -> SPSParameters:
        """(k, l, alpha', beta') used on this problem (after the beta_max adjustment)."""
        check_problem(problem)
        return _sps_parameters(
            self.epsilon, self.gamma, self.kappa, self.k, self.l, problem.n_candidates, float(problem.beta_max)
        )

    def calibrate(self, problem: SelectionProblem) -> tuple[float, Any]:
        """(noise scale max_r S(x, r)/alpha', noise law)."""
        params = self.parameters(problem)
        s = float(problem.candidate_smooth_sensitivity(params.beta).max())
        return _noise_scale(s, params.alpha), self._noise()

    def privacy(self, problem: SelectionProblem) -> Privacy:
        """(k + m l / 2) eps-DP (YS Thm 2 / corrected Thm 3; SPEC §3.2), under problem.relation."""
        params = self.parameters(problem)
        m = problem.n_candidates
        side = "one-sided" if self.one_sided else "two-sided"
        return Privacy(
            (params.k + m * params.l / 2.0) * self.epsilon,
            0.0,
            problem.relation,
            f"smooth private selection, {side} P_{self.gamma:g} (Yamamoto-Shibuya Thm 2 / YS-supp Thm 3; "
            "SPEC §3.2)",
        )


@lru_cache(maxsize=1024)
def _sps_parameters(
    epsilon: float, gamma: float, kappa: float, k: float | None, l: float | None, m: int, beta_max: float
) -> SPSParameters:
    h = PolynomialTail(gamma)
    k_used = kappa if k is None else k
    l_used = 2.0 * (1.0 - k_used) / m if l is None else l
    beta = float(h.admissible(l_used * epsilon)[1])
    if beta > beta_max:
        if l is not None:
            raise ValueError(
                f"l={l!r} gives beta' = {beta:.6g} > beta_max = {beta_max:.6g} of this problem's smooth bound "
                "(YS Thm 4/5); choose l <= beta_max / (beta(1) epsilon) or leave l unset"
            )
        beta_unit = float(h.admissible(1.0)[1])  # beta(e) = e * beta(1) (linear in e)
        l_used = beta_max / (beta_unit * epsilon)
        beta = float(h.admissible(l_used * epsilon)[1])
        while beta > beta_max:  # rounding
            l_used *= 1.0 - 1e-12
            beta = float(h.admissible(l_used * epsilon)[1])
        if k is None:
            k_used = 1.0 - m * l_used / 2.0
            if k_used <= 0.0:  # pragma: no cover - l only decreases, so k > kappa > 0
                raise ValueError("no positive k remains after reducing l to meet beta_max")
    alpha = float(h.admissible(k_used * epsilon)[0])
    return SPSParameters(k_used, l_used, alpha, beta)
