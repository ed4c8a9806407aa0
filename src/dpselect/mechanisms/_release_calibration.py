"""Calibration and guarantee of the smooth-sensitivity release (mathematics §2.2-§2.5, §3.2).

Public through :class:`dpselect.mechanisms.release.SmoothSensitivityRelease`, whose
module docstring states each calibration and its source.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any, NamedTuple, TypeAlias

import numpy as np

from .._docstrings import fill_doc
from .._validation import check_positive, check_tail_exponent
from ..accounting import (
    dp_to_zcdp,
    grid_laplace_smooth_beta,
    grid_laplace_smooth_delta,
    laplace_smooth_delta,
    nrs_laplace_parameters,
    zcdp_to_dp,
)
from ..noise import Laplace, LaplaceLogNormal, NoiseDistribution, PolynomialTail, StudentT
from ..privacy import Privacy
from ._release_grid import GUARD, ROUND_SLACK

__all__ = [
    "NOISES",
    "PURE_NOISES",
    "CalibratedRelease",
    "ReleaseParameters",
    "Sensitivity",
    "calibrate",
    "make_noise",
    "release_privacy",
]

#: Noise families accepted by ``SmoothSensitivityRelease``.
NOISES = ("laplace", "student_t", "polynomial", "lln")
#: Families giving pure epsilon-DP.
PURE_NOISES = ("student_t", "polynomial")

#: A smooth sensitivity: the value S_beta'(x) already computed, or a callable beta -> S_beta(x).
Sensitivity: TypeAlias = float | Callable[[float], float]


class ReleaseParameters(NamedTuple):
    """The calibrated (alpha', beta') of a release: noise scale S(x)/alpha', S beta'-smooth.

    Attributes
    ----------
    alpha : float
        alpha'; the noise scale is S(x) / alpha'.
    beta : float
        beta', the smoothness at which S must be computed.
    """

    alpha: float
    beta: float


def make_noise(noise: str, gamma: float, df: float, sigma: float | None) -> NoiseDistribution:
    """The standard noise law named ``noise``."""
    if noise == "laplace":
        return Laplace()
    if noise == "polynomial":
        return PolynomialTail(gamma)
    if noise == "student_t":
        return StudentT(df)
    assert sigma is not None  # set in __post_init__ for noise="lln"
    return LaplaceLogNormal(sigma)


def calibrate(mech: CalibratedRelease, noise_obj: NoiseDistribution) -> tuple[float, float]:
    """(alpha', beta') of ``mech`` (its fields already checked) for its noise law ``noise_obj``."""
    eps, kappa = mech.epsilon, mech.kappa
    if mech.noise in PURE_NOISES:  # YS Thm 1 with k = 2 kappa
        kw: dict[str, Any] = {"method": mech.admissible_method} if mech.noise == "polynomial" else {}
        alpha = noise_obj.admissible(2.0 * kappa * eps, **kw)[0]
        beta = noise_obj.admissible(2.0 * (1.0 - kappa) * eps, **kw)[1]
        return alpha, beta
    if mech.noise == "laplace":
        if mech.calibration == "paper":
            # NRS07 (SNM Cor 4.4, dp_multiq): valid only for moderate eps (mathematics §2.2)
            return nrs_laplace_parameters(eps, mech.delta)
        if mech.on_grid:  # the grid condition, less the slack of the 40-bit scale
            alpha = kappa * eps
            return alpha, grid_laplace_smooth_beta(eps, mech.delta, alpha, GUARD) - ROUND_SLACK
        # exact mathematics §2.2 condition, alpha = kappa eps, largest admissible beta
        assert isinstance(noise_obj, Laplace)
        return noise_obj.admissible(eps, mech.delta, alpha_fraction=kappa)
    # lln: split eps_c = beta/sigma + e^{3 sigma^2/2} alpha as (1 - kappa) : kappa
    sigma = mech.sigma
    assert sigma is not None
    eps_c = eps if mech.calibration == "paper" else math.sqrt(2.0 * dp_to_zcdp(eps, mech.delta))
    alpha = kappa * eps_c * math.exp(-1.5 * sigma * sigma)
    beta = (1.0 - kappa) * eps_c * sigma
    return alpha, beta


def release_privacy(mech: CalibratedRelease) -> Privacy:
    """The guarantee of one release of ``mech`` (see :meth:`SmoothSensitivityRelease.privacy`)."""
    eps, delta, rel = mech.epsilon, mech.delta, mech.relation
    if mech.tuned_on_data:
        return Privacy(math.inf, 0.0, rel, "no guarantee: parameters tuned on the private data (mathematics §1)")
    if mech.noise in PURE_NOISES:
        what = (
            f"polynomial gamma={mech.gamma:g}, "
            + ("YS Thm 6 (corrected, mathematics §2.3)" if mech.admissible_method == "ys" else "NRS07 / Duff Prop. 3")
            if mech.noise == "polynomial"
            else f"Student t df={mech.df:g}, BS19 Thm 31"
        )
        return Privacy(eps, 0.0, rel, f"smooth-sensitivity release, YS Thm 1 (kappa={mech.kappa:g}; {what})")
    if mech.noise == "laplace":
        grid = f", exact discrete Laplace on the grid {mech.granularity!r} Z" if mech.on_grid else ", float output"
        if mech.calibration == "proven":
            return Privacy(eps, delta, rel, f"smooth-sensitivity Laplace release, exact condition{grid}")
        if mech.on_grid:
            b_eff = mech.beta + ROUND_SLACK
            e2 = max(eps, mech.alpha + b_eff)
            d2 = max(delta, grid_laplace_smooth_delta(e2, mech.alpha, b_eff, GUARD))
        else:
            e2 = max(eps, mech.alpha + mech.beta)
            d2 = max(delta, laplace_smooth_delta(e2, mech.alpha, mech.beta))
        return Privacy(e2, d2, rel, f"smooth-sensitivity Laplace release, NRS07 parameters{grid}")
    rho = mech.zcdp_rho
    assert rho is not None
    e2 = eps if mech.calibration == "proven" else zcdp_to_dp(rho, delta)
    return Privacy(
        e2, delta, rel, f"smooth-sensitivity LLN release, rho={rho:.6g}-zCDP (BS19 §3.1.1; mathematics §2.5)", rho
    )


class CalibratedRelease:
    """The calibration side of :class:`~dpselect.mechanisms.release.SmoothSensitivityRelease`.

    Its checks, calibrated parameters, guarantee and noise scale; the dataclass
    holds the fields and the sampling.
    """

    epsilon: float
    delta: float
    noise: str
    gamma: float
    df: float
    kappa: float
    sigma: float | None
    relation: str
    admissible_method: str
    calibration: str
    tuned_on_data: bool
    granularity: float | None
    _alpha: float
    _beta: float
    _noise: NoiseDistribution

    def _check_combination(self) -> None:
        """The checks that tie the noise to delta, the calibration and the noise's own parameters."""
        if self.admissible_method != "ys" and self.noise != "polynomial":
            raise ValueError("admissible_method applies to noise='polynomial' only")
        if self.noise in PURE_NOISES:
            if self.delta > 0:
                raise ValueError(
                    f"noise={self.noise!r} gives pure epsilon-DP: delta must be 0, got {self.delta!r}; "
                    "pass noise='laplace' or 'lln' for an (eps, delta) release"
                )
            if self.calibration != "proven":
                raise ValueError("calibration='paper' applies to noise='laplace' or 'lln' only")
        elif self.delta == 0:
            raise ValueError(
                f"noise={self.noise!r} needs delta > 0 (it is not pure DP); "
                "use noise='student_t' or 'polynomial' for delta = 0"
            )
        if self.noise == "polynomial":
            if not self.gamma > 1:
                raise ValueError(f"gamma must be > 1, got {self.gamma!r}")
            check_tail_exponent(self.gamma - 1.0, "gamma", self.gamma)
        if self.noise == "student_t":
            check_tail_exponent(self.df, "df", self.df)
        if self.noise != "lln" and self.sigma is not None:
            raise ValueError("sigma applies to noise='lln' only")

    def parameters(self) -> ReleaseParameters:
        """The calibrated (alpha', beta'): noise scale S(x)/alpha', S beta'-smooth.

        Returns
        -------
        ReleaseParameters
            The named pair ``(alpha, beta)``.

        Examples
        --------
        >>> from dpselect import SmoothSensitivityRelease
        >>> [round(v, 4) for v in SmoothSensitivityRelease(1.0).parameters()]
        [0.433, 0.125]
        """
        return ReleaseParameters(self._alpha, self._beta)

    @property
    def on_grid(self) -> bool:
        """Whether outputs lie on the grid (``granularity`` > 0)."""
        return bool(self.granularity)

    @property
    def exact_law(self) -> str | None:
        """The exact sampler: "t3" or "cauchy" when grid outputs are sampled exactly from the snapped law, else None.

        Student t with df = 3, Student t with df = 1 and polynomial gamma = 2 (both
        Cauchy) have closed-form cdfs in arctan; other df / gamma and LLN are snapped floats.
        """
        if self.noise == "student_t" and self.df in (1.0, 3.0):
            return "t3" if self.df == 3.0 else "cauchy"
        return "cauchy" if self.noise == "polynomial" and self.gamma == 2.0 else None

    @property
    def alpha(self) -> float:
        """The calibrated alpha' (the noise scale is S(x)/alpha')."""
        return self._alpha

    @property
    def beta(self) -> float:
        """beta': the smoothness at which S must be computed."""
        return self._beta

    @property
    def noise_distribution(self) -> NoiseDistribution:
        """The standard noise law h (a ``dpselect.noise`` object)."""
        return self._noise

    @property
    def zcdp_rho(self) -> float | None:
        """The rho of the zCDP guarantee (LLN only; None otherwise), BS19 §3.1.1."""
        if self.noise != "lln":
            return None
        return float(self._noise.zcdp_rho(self._alpha, self._beta))  # type: ignore[attr-defined]

    def privacy(self) -> Privacy:
        """The guarantee of one release (mathematics §2.2-§2.5, §3.2).

        ``tuned_on_data=True`` marks a configuration whose parameters were
        chosen from the private data (a paper's baseline): no guarantee
        (epsilon = inf, mathematics §1).

        Returns
        -------
        Privacy
            The (epsilon, delta) guarantee under ``relation``, with ``rho`` for LLN.

        Examples
        --------
        >>> from dpselect import SmoothSensitivityRelease
        >>> print(SmoothSensitivityRelease(1.0, 1e-6, noise="laplace").privacy())
        (1, 1e-06)-DP [add_remove]
        """
        return release_privacy(self)

    def _sensitivity(self, sensitivity: Sensitivity) -> float:
        """S at beta' from a value or a callable (data-derived: the message never echoes it)."""
        value: object = sensitivity(self._beta) if callable(sensitivity) else sensitivity
        if isinstance(value, np.ndarray):
            if value.ndim != 0 and value.size != 1:
                raise ValueError(f"sensitivity must be a scalar, got shape {value.shape}")
            value = value.reshape(()).item()
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise TypeError(
                f"sensitivity must be a real number or a callable beta -> S_beta(x), got {type(value).__name__}"
            )
        return check_positive(value, "sensitivity", quote=False)  # S(x): data-derived, never echoed

    @fill_doc
    def scale(self, sensitivity: Sensitivity) -> float:
        """Noise scale S(x)/alpha'.

        %(release_sensitivity)s
            S(x) / alpha'.

        Examples
        --------
        >>> from dpselect import SmoothSensitivityRelease
        >>> round(SmoothSensitivityRelease(1.0).scale(0.5), 4)
        1.1547
        """
        return self._sensitivity(sensitivity) / self._alpha

    @fill_doc
    def expected_abs_error(self, sensitivity: Sensitivity) -> float:
        """E|release - f(x)| = (S(x)/alpha') E|Z| (inf when the noise has no mean).

        %(release_sensitivity)s
            The expected absolute error of the unsnapped release.

        Examples
        --------
        >>> from dpselect import SmoothSensitivityRelease
        >>> SmoothSensitivityRelease(1.0, noise="polynomial").expected_abs_error(0.5)   # Cauchy: no mean
        inf
        """
        return self.scale(sensitivity) * float(self._noise.mean_abs())
