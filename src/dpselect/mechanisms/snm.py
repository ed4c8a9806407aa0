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
:mod:`dpselect._engine`'s.
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, dataclass
from typing import ClassVar

import numpy as np

from .._docstrings import fill_doc
from .._mechanism_support import check_problem
from .._params import DELTA, EPSILON, Rule, options, positive, real_in, validate_fields
from .._validation import check_tail_exponent
from ..noise import Laplace, LaplaceLogNormal, NoiseDistribution, StudentT
from ..privacy import Privacy
from ..problem import SelectionProblem
from ._snm_calibration import SNMConfig, SNMParameters, snm_parameters
from .base import Calibration, NoisyMaxMechanism, no_guarantee

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
    :mod:`dpselect._engine` (the gaps to the maximum become -inf).  A
    quotient that overflows (alpha tiny) is capped at the largest double.

    Parameters
    ----------
    sensitivity : float
        The smooth sensitivity S >= 0.
    alpha : float
        The calibrated A (or alpha') > 0.

    Returns
    -------
    float
        S / alpha in [smallest positive double, largest double].

    Examples
    --------
    >>> noise_scale(1.0, 0.5), noise_scale(0.0, 0.5) > 0
    (2.0, True)
    """
    with np.errstate(over="ignore"):
        s = sensitivity / alpha if alpha > 0 else math.inf
    return min(max(s, _TINY), float(np.finfo(float).max))


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
    epsilon : float
        Target privacy budget (> 0).
    delta : float, default=0.0
        0 for ``noise="student_t"`` (pure); > 0 for ``"laplace"`` and ``"lln"``.
    noise : {"student_t", "laplace", "lln"}, default="student_t"
        "student_t" (pure epsilon-DP), "laplace" or "lln"
        (Laplace-log-normal, Bun & Steinke 2019).
    df : float, default=3.0
        Degrees of freedom d of Student's t (> 0).
    sigma : float, default=None
        LLN shape parameter; ``None`` chooses it (see Notes).
    kappa : float, default=0.5
        Share of the budget for the sliding (shift) term, in (0, 1);
        the rest pays for the m-fold dilation.  Must not depend on the data.
        (The same name and meaning as in :class:`SmoothPrivateSelection` and
        :class:`~dpselect.mechanisms.release.SmoothSensitivityRelease`.)
    calibration : {"proven", "paper"}, default="proven"
        The sound calibration of mathematics §3.1, or the paper's parameters.

    See Also
    --------
    NoisyMaxMechanism : Report noisy max for a calibration (b, h) chosen by the subclass
    ReportNoisyMax : Report noisy max: argmax_r (u_r + (c Delta u / eps) Z_r), c = 2 (1 if monotone)
    SmoothPrivateSelection : Smooth Private Selection (Yamamoto & Shibuya, IPCCC 2024, Def

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
    The guarantee is under ``problem.relation``, the neighbour relation
    (add/remove or replace) in which S is a smooth upper bound.  A smooth sensitivity of 0
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
        """The calibration (A, beta, ...) and guarantee for this problem's m.

        Parameters
        ----------
        problem : SelectionProblem
            The problem (its number of candidates m and ``monotone`` flag matter).

        Returns
        -------
        SNMParameters
            The calibration and the guarantee mathematics §3.1 proves for it.

        Examples
        --------
        >>> import dpselect
        >>> p = dpselect.SelectionProblem([3.0, 1.0, 0.0], local_sensitivity=0.5)
        >>> round(dpselect.SmoothNoisyMax(1.0).parameters(p).alpha, 4)
        0.2165
        """
        check_problem(problem)
        config = SNMConfig(
            self.epsilon,
            self.delta,
            self.df,
            self.sigma,
            self.kappa,
            problem.n_candidates,
            bool(problem.monotone and self.noise != "lln"),
        )
        return snm_parameters(self.noise, self.calibration, config)

    def _noise(self, params: SNMParameters) -> NoiseDistribution:
        """The noise law named by ``noise`` (LLN with the calibrated sigma)."""
        if self.noise == "laplace":
            return Laplace()
        if self.noise == "student_t":
            return StudentT(self.df)
        assert params.sigma is not None  # the LLN rows of the table always set sigma
        return LaplaceLogNormal(params.sigma)

    def calibrate(self, problem: SelectionProblem) -> Calibration:
        """The noise scale S_beta(x)/A and the noise law.

        Parameters
        ----------
        problem : SelectionProblem
            The candidates' utilities and smooth sensitivity.

        Returns
        -------
        Calibration
            The scale (:func:`noise_scale`) and the standard noise law.

        Examples
        --------
        >>> import dpselect
        >>> p = dpselect.SelectionProblem([3.0, 1.0, 0.0], local_sensitivity=0.5)
        >>> type(dpselect.SmoothNoisyMax(1.0).calibrate(p)[1]).__name__
        'StudentT'
        """
        params = self.parameters(problem)
        return Calibration(noise_scale(problem.smooth_sensitivity(params.beta), params.alpha), self._noise(params))

    @fill_doc
    def privacy(self, problem: SelectionProblem) -> Privacy:
        """The guarantee mathematics §3.1 proves for this calibration (never the paper's claim).

        %(privacy_sections_m)s
        >>> p = dpselect.SelectionProblem([3.0, 1.0, 0.0], local_sensitivity=0.5)
        >>> print(dpselect.SmoothNoisyMax(1.0).privacy(p))
        1-DP [add_remove]
        """
        params = self.parameters(problem)
        guarantee = Privacy(params.epsilon, params.delta, problem.relation, params.source, params.rho)
        return no_guarantee(problem) or guarantee
