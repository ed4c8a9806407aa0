"""Numeric releases with smooth sensitivity (NRS07 framework; SPEC.md §2, §3.2).

``SmoothSensitivityRelease`` releases one real-valued statistic f(x) as

    A(x) = f(x) + (S(x) / alpha') * Z,        Z ~ h (iid of everything else),

where S is a beta'-smooth upper bound on the local sensitivity of f
(S(x) >= LS_f(x) and S(x) <= e^{beta'} S(y) for neighbours x ~ y, SPEC.md §1)
computed **at the mechanism's beta'** (``mech.beta``), and (alpha', beta')
come from the noise law h and the budget as follows.

Pure noise (``noise="polynomial"`` or ``"student_t"``) -- epsilon-DP
    alpha' = alpha(k eps),  beta' = beta((2 - k) eps),  k in (0, 2),
    with (alpha(.), beta(.)) the noise's admissibility pair
    (``noise.admissible``): Yamamoto & Shibuya IPCCC'24 Thm 1 (SPEC.md §3.2).
    k = 1 is NRS07's even split (half of the budget to the sliding property,
    half to the dilation property).  In the Lipschitz form of SPEC.md §2.1 the
    privacy loss is at most L_s alpha' + L_d beta' = k eps/2 + (2 - k) eps/2.

    * ``"polynomial"``: h(z) ∝ 1/(1 + |z|^gamma) (SPEC.md §2.3).
      ``admissible_method="ys"`` (default): YS Thm 6 as corrected in SPEC.md
      §2.3 / errata 1, alpha(eps) = eps / (2 (gamma-1)^((gamma-1)/gamma)),
      beta(eps) = eps / (2 max(1, gamma - 1)).
      ``admissible_method="nrs"``: NRS07 Lemmas 2.6/2.7 as quoted by Duff
      Prop. 3, alpha(eps) = beta(eps) = eps / (2 (gamma + 1)) (valid, more
      conservative; used by the Duff paper's SmoothSens_eps baseline).
    * ``"student_t"``: Student t with ``df`` = d degrees of freedom,
      Bun & Steinke 2019 Thm 31 in NRS form (SPEC.md §2.4):
      alpha(eps) = eps sqrt(d)/(d + 1), beta(eps) = eps/(2 (d + 1)).

Laplace (``noise="laplace"``, delta > 0 required) -- (eps, delta)-DP
    **Not** the NRS07 formula alpha = eps/2, beta = eps/(2 ln(2/delta)), which
    fails for eps >= 20 (SPEC.md §2.2, errata 30).  With scale S(x)/alpha' the
    privacy loss is at most alpha' + max(beta, |z| (e^beta - 1) - beta)
    (SPEC.md §2.2, Duff Prop. 2 / Bun & Steinke Thm 34, errata 26) -- a
    direct bound on the loss, not the chaining of two (eps/2, delta/2)
    admissibility properties (errata 31) -- hence (eps, delta)-DP whenever

        eps >= alpha' + beta'   and   exp(-(eps - alpha' + beta')/(e^beta' - 1)) <= delta.

    We take alpha' = k eps / 2 and beta' the **largest** beta satisfying both
    (``noise.Laplace().admissible(eps, delta, alpha_fraction=k/2)``).
    ``calibration="paper"`` uses the NRS07 formula instead and ``privacy()``
    then reports what the exact condition actually guarantees for it: epsilon
    and max(delta, exp(-(eps - alpha + beta)/(e^beta - 1))).

Laplace log-normal (``noise="lln"``, delta > 0 required) -- (eps, delta)-DP
    Z = X e^{sigma Y}, X ~ Lap(1), Y ~ N(0, 1).  Bun & Steinke 2019 §3.1.1
    (SPEC.md §2.5): with a beta'-smooth bound and scale S(x)/alpha' the
    release is rho-zCDP with

        rho = (beta'/sigma + e^{3 sigma^2 / 2} alpha')^2 / 2,

    converted to (rho + 2 sqrt(rho ln(1/delta)), delta)-DP (SPEC.md §2.5).
    Calibration to a target (eps, delta): rho* = (sqrt(ln(1/delta) + eps) -
    sqrt(ln(1/delta)))^2 solves rho + 2 sqrt(rho ln(1/delta)) = eps; with
    eps_c = sqrt(2 rho*) the budget is split as
    e^{3 sigma^2/2} alpha' = k eps_c / 2 and beta'/sigma = (2 - k) eps_c / 2.
    Default ``sigma = sqrt((2 - k) / (5 k))``: for the beta' this split
    produces, it is exactly the variance-optimal sigma of SPEC.md §2.5 (the
    root of 5 (eps_c/beta') sigma^3 - 5 sigma^2 - 1 = 0), and it does not
    depend on the data (k = 1: sigma = 1/sqrt(5)).
    ``calibration="paper"`` treats ``epsilon`` as Bun & Steinke's CDP
    parameter (rho = eps^2/2, their own statement of the guarantee; we
    assume, unverified, that the Duff paper's LaplaceLN baseline did the
    same); ``privacy()`` then reports the converted (eps', delta).

Every hyper-parameter (k, gamma, df, sigma, the calibration) must be chosen
independently of the private data (SPEC.md §1).

Neighbour relation: the guarantee holds under the relation in which S is a
smooth upper bound (``relation``, default "add_remove"; the NRS median and
TDT bounds are "replace").
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import integrate

from .._validation import (
    check_delta,
    check_epsilon,
    check_finite_float,
    check_positive,
    check_probability_in,
    check_random_state,
    check_relation,
    check_size,
)
from ..noise import (
    Laplace,
    LaplaceLogNormal,
    PolynomialTail,
    StudentT,
    dp_to_zcdp,
    laplace_smooth_delta,
    nrs_laplace_parameters,
    zcdp_to_dp,
)
from ..privacy import Privacy

__all__ = ["ErrorDistribution", "SmoothSensitivityRelease"]

#: Noise families accepted by ``SmoothSensitivityRelease``.
NOISES = ("laplace", "student_t", "polynomial", "lln")
#: Families giving pure epsilon-DP.
PURE_NOISES = ("student_t", "polynomial")
_CALIBRATIONS = ("exact", "paper")
_ADMISSIBLE_METHODS = ("ys", "nrs")


def _make_noise(noise: str, gamma: float, df: float, sigma: float | None) -> Any:
    if noise == "laplace":
        return Laplace()
    if noise == "polynomial":
        return PolynomialTail(gamma)
    if noise == "student_t":
        return StudentT(df)
    return LaplaceLogNormal(sigma)


def _as_float_array(t: Any, name: str) -> np.ndarray:
    arr = np.asarray(t)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_):
        raise TypeError(f"{name} must be numeric")
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real")
    return arr.astype(np.float64, copy=False)


def _real_or_raise(value: Any, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    return float(value)


def _out(arr: np.ndarray) -> Any:
    arr = np.asarray(arr, dtype=np.float64)
    return float(arr) if arr.ndim == 0 else arr


# ---------------------------------------------------------------------------
# the error law
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ErrorDistribution:
    """Law of the release error E = A(x) - f(x) = scale * Z (scaled, symmetric noise).

    Computable before any privacy budget is spent (it depends on the data
    only through S(x), so *publishing* it is not private -- it is for the
    analyst's own planning on data they may look at, or on public proxies).

    Attributes
    ----------
    noise : the standard noise law h (a ``dpselect.noise`` object).
    scale : S(x) / alpha'.
    """

    noise: Any
    scale: float

    @property
    def mean_abs_noise(self) -> float:
        """E|Z| of the standard law (inf when infinite, e.g. polynomial gamma <= 2)."""
        return float(self.noise.mean_abs())

    def pdf(self, t: Any) -> Any:
        """Density of the error at t: h(t/scale)/scale."""
        t = _as_float_array(t, "t")
        return _out(np.asarray(self.noise.pdf(t / self.scale)) / self.scale)

    def logpdf(self, t: Any) -> Any:
        """log density of the error at t."""
        t = _as_float_array(t, "t")
        return _out(np.asarray(self.noise.logpdf(t / self.scale)) - math.log(self.scale))

    def cdf(self, t: Any) -> Any:
        """P(E <= t)."""
        t = _as_float_array(t, "t")
        return _out(self.noise.cdf(t / self.scale))

    def sf(self, t: Any) -> Any:
        """P(E > t)."""
        t = _as_float_array(t, "t")
        return _out(self.noise.sf(t / self.scale))

    def ppf(self, q: Any) -> Any:
        """Quantile function of the (signed) error."""
        q = _as_float_array(q, "q")
        if np.isnan(q).any() or (q < 0).any() or (q > 1).any():
            raise ValueError("q must be in [0, 1]")
        return _out(self.scale * np.asarray(self.noise.ppf(q)))

    def quantile(self, q: Any) -> Any:
        """q-quantile of the absolute error |E| (the noise is symmetric): scale * isf((1 - q)/2)."""
        q = _as_float_array(q, "q")
        if np.isnan(q).any() or (q < 0).any() or (q > 1).any():
            raise ValueError("q must be in [0, 1]")
        return _out(self.scale * np.asarray(self.noise.isf((1.0 - q) / 2.0)))

    def interval(self, coverage: float) -> tuple[float, float]:
        """Central interval (-h, h) with P(|E| <= h) = coverage."""
        coverage = check_probability_in(coverage, "coverage", 0.0, 1.0)
        h = float(self.quantile(coverage))
        return (-h, h)

    def _integrated_sf(self, u: float) -> float:
        """G(u) = int_0^u P(Z > v) dv = E[min(Z^+, u)], for the standard noise."""
        if u <= 0:
            return 0.0
        sf = self.noise.sf
        first = min(u, 1.0)
        total, _ = integrate.quad(lambda v: float(sf(v)), 0.0, first, limit=200, epsabs=0, epsrel=1e-11)
        if u > 1.0:
            # log substitution v = e^w: smooth integrand for heavy and light tails alike
            tail, _ = integrate.quad(
                lambda w: float(sf(math.exp(w))) * math.exp(w), 0.0, math.log(u), limit=400, epsabs=0, epsrel=1e-11
            )
            total += tail
        return total

    def expected_abs_error(self, within: tuple[float, float] | None = None) -> float:
        """E|E| = scale * E|Z| (inf when the noise has no mean).

        ``within=(lo, hi)`` with lo <= 0 <= hi gives E|clip(E, lo, hi)|, the
        expected absolute error after clipping the release to
        [f(x) + lo, f(x) + hi] (post-processing, e.g. to the data bounds):
        scale * (G(hi/scale) + G(-lo/scale)), G(u) = int_0^u P(Z > v) dv.
        """
        if within is None:
            return self.scale * self.mean_abs_noise
        if isinstance(within, (str, bytes)) or not hasattr(within, "__len__") or len(within) != 2:
            raise ValueError("within must be a pair (lo, hi) with lo <= 0 <= hi")
        lo_raw, hi_raw = (_real_or_raise(v, f"within[{i}]") for i, v in enumerate(within))
        if not (lo_raw <= 0.0 <= hi_raw):  # also rejects NaN
            raise ValueError(f"within must satisfy lo <= 0 <= hi, got ({lo_raw!r}, {hi_raw!r})")
        lo, hi = -lo_raw, hi_raw  # distances to the two clipping points
        if math.isinf(lo) or math.isinf(hi):
            if math.isinf(self.mean_abs_noise):
                return math.inf
            # one side unbounded: E[Z^+] = E|Z|/2 on that side
            left = self.scale * self.mean_abs_noise / 2 if math.isinf(lo) else self.scale * self._integrated_sf(lo / self.scale)
            right = self.scale * self.mean_abs_noise / 2 if math.isinf(hi) else self.scale * self._integrated_sf(hi / self.scale)
            return left + right
        return self.scale * (self._integrated_sf(hi / self.scale) + self._integrated_sf(lo / self.scale))

    def sample(self, size: Any = None, rng: Any = None) -> Any:
        """Draws of the error (float for size=None)."""
        size = check_size(size)
        gen = check_random_state(rng)
        z = np.asarray(self.noise.sample(1 if size is None else size, gen), dtype=np.float64)
        return float(self.scale * z.reshape(-1)[0]) if size is None else self.scale * z


# ---------------------------------------------------------------------------
# the mechanism
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SmoothSensitivityRelease:
    """Release f(x) + (S(x)/alpha') Z with a beta'-smooth bound S (see module docstring).

    Parameters
    ----------
    epsilon : target epsilon > 0.
    delta : target delta; 0 for the pure noises ("polynomial", "student_t"),
        in (0, 1) for "laplace" and "lln".
    noise : "laplace" | "student_t" | "polynomial" | "lln".
    gamma : tail exponent of the polynomial noise, > 1 (2 = Cauchy).
    df : degrees of freedom of the Student t noise, > 0.
    k : budget split in (0, 2): the sliding part gets k eps / 2, the
        dilation (smoothness) part (2 - k) eps / 2 (YS Thm 1; k = 1 is NRS's
        even split).  Must be data-independent.
    sigma : LLN shape, > 0 (default sqrt((2 - k)/(5 k)), see module docstring).
    relation : neighbour relation in which S is beta'-smooth ("add_remove" or "replace").
    admissible_method : polynomial only: "ys" (YS Thm 6, corrected; default)
        or "nrs" (alpha = beta = eps/(2 (gamma + 1)), NRS07 / Duff Prop. 3).
    calibration : "exact" (default) or "paper" (laplace: NRS07 formula; lln:
        epsilon is the CDP parameter); ``privacy()`` always reports what is
        actually guaranteed.

    Example
    -------
    >>> mech = SmoothSensitivityRelease(1.0, noise="polynomial", gamma=4)
    >>> mech.release(3.2, lambda beta: 0.5 * math.exp(-beta))   # doctest: +SKIP
    """

    epsilon: float
    delta: float = 0.0
    noise: str = "laplace"
    gamma: float = 2.0
    df: float = 3.0
    k: float = 1.0
    sigma: float | None = None
    relation: str = "add_remove"
    admissible_method: str = "ys"
    calibration: str = "exact"
    tuned_on_data: bool = False
    _alpha: float = field(init=False, repr=False, compare=False)
    _beta: float = field(init=False, repr=False, compare=False)
    _noise: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        set_ = lambda name, v: object.__setattr__(self, name, v)  # noqa: E731
        set_("epsilon", check_epsilon(self.epsilon))
        set_("delta", check_delta(self.delta))
        if self.noise not in NOISES:
            raise ValueError(f"noise must be one of {NOISES}, got {self.noise!r}")
        set_("k", check_probability_in(self.k, "k", 0.0, 2.0))
        set_("relation", check_relation(self.relation))
        if self.calibration not in _CALIBRATIONS:
            raise ValueError(f"calibration must be one of {_CALIBRATIONS}, got {self.calibration!r}")
        if self.admissible_method not in _ADMISSIBLE_METHODS:
            raise ValueError(f"admissible_method must be one of {_ADMISSIBLE_METHODS}, got {self.admissible_method!r}")
        if self.admissible_method != "ys" and self.noise != "polynomial":
            raise ValueError("admissible_method applies to noise='polynomial' only")
        if self.noise in PURE_NOISES:
            if self.delta > 0:
                raise ValueError(
                    f"noise={self.noise!r} gives pure epsilon-DP: delta must be 0, got {self.delta!r}"
                )
            if self.calibration != "exact":
                raise ValueError("calibration='paper' applies to noise='laplace' or 'lln' only")
        elif self.delta == 0:
            raise ValueError(
                f"noise={self.noise!r} needs delta > 0 (it is not pure DP); "
                "use noise='polynomial' or 'student_t' for delta = 0"
            )
        if self.noise == "polynomial":
            g = check_positive(self.gamma, "gamma")
            if not g > 1:
                raise ValueError(f"gamma must be > 1, got {g!r}")
            set_("gamma", g)
        if self.noise == "student_t":
            set_("df", check_positive(self.df, "df"))
        if self.noise == "lln":
            if self.sigma is None:
                set_("sigma", math.sqrt((2.0 - self.k) / (5.0 * self.k)))
            else:
                set_("sigma", check_positive(self.sigma, "sigma"))
        elif self.sigma is not None:
            raise ValueError("sigma applies to noise='lln' only")
        noise_obj = _make_noise(self.noise, self.gamma, self.df, self.sigma)
        alpha, beta = self._calibrate(noise_obj)
        if not (alpha > 0 and beta > 0 and math.isfinite(alpha) and math.isfinite(beta)):
            raise ValueError(f"calibration failed: alpha={alpha!r}, beta={beta!r}")  # pragma: no cover
        set_("_alpha", float(alpha))
        set_("_beta", float(beta))
        set_("_noise", noise_obj)

    # ------------------------------------------------------------ calibration
    def _calibrate(self, noise_obj: Any) -> tuple[float, float]:
        eps, k = self.epsilon, self.k
        if self.noise in PURE_NOISES:
            if self.noise == "polynomial":
                alpha = noise_obj.admissible(k * eps, method=self.admissible_method)[0]
                beta = noise_obj.admissible((2.0 - k) * eps, method=self.admissible_method)[1]
            else:
                alpha = noise_obj.admissible(k * eps)[0]
                beta = noise_obj.admissible((2.0 - k) * eps)[1]
            return alpha, beta
        if self.noise == "laplace":
            if self.calibration == "paper":
                # NRS07 (SNM Cor 4.4, dp_multiq): valid only for moderate eps (SPEC §2.2)
                return nrs_laplace_parameters(eps, self.delta)
            # exact SPEC §2.2 condition, alpha = k eps/2, largest admissible beta
            return noise_obj.admissible(eps, self.delta, alpha_fraction=k / 2.0)
        # lln: split eps_c = beta/sigma + e^{3 sigma^2/2} alpha as (2 - k)/2 : k/2
        sigma = self.sigma
        assert sigma is not None
        eps_c = eps if self.calibration == "paper" else math.sqrt(2.0 * dp_to_zcdp(eps, self.delta))
        alpha = (k / 2.0) * eps_c * math.exp(-1.5 * sigma * sigma)
        beta = ((2.0 - k) / 2.0) * eps_c * sigma
        return alpha, beta

    def parameters(self) -> tuple[float, float]:
        """The calibrated (alpha', beta'): noise scale S(x)/alpha', S beta'-smooth."""
        return self._alpha, self._beta

    @property
    def alpha(self) -> float:
        """alpha' (the noise scale is S(x)/alpha')."""
        return self._alpha

    @property
    def beta(self) -> float:
        """beta': the smoothness at which S must be computed."""
        return self._beta

    @property
    def noise_distribution(self) -> Any:
        """The standard noise law h (a ``dpselect.noise`` object)."""
        return self._noise

    @property
    def zcdp_rho(self) -> float | None:
        """rho of the zCDP guarantee (LLN only; None otherwise), BS19 §3.1.1."""
        if self.noise != "lln":
            return None
        return float(self._noise.zcdp_rho(self._alpha, self._beta))

    def privacy(self) -> Privacy:
        """The guarantee of one release (SPEC.md §2.2-§2.5, §3.2).

        ``tuned_on_data=True`` marks a configuration whose parameters were
        chosen from the private data (a paper's baseline): no guarantee
        (epsilon = inf, SPEC.md §1).
        """
        eps, delta, rel = self.epsilon, self.delta, self.relation
        if self.tuned_on_data:
            return Privacy(math.inf, 0.0, rel, "no guarantee: parameters tuned on the private data (SPEC §1)")
        if self.noise in PURE_NOISES:
            what = (
                f"polynomial gamma={self.gamma:g}, "
                + ("YS Thm 6 (corrected, SPEC §2.3)" if self.admissible_method == "ys" else "NRS07 / Duff Prop. 3")
                if self.noise == "polynomial"
                else f"Student t df={self.df:g}, BS19 Thm 31"
            )
            return Privacy(eps, 0.0, rel, f"smooth-sensitivity release, YS Thm 1 (k={self.k:g}; {what})")
        if self.noise == "laplace":
            if self.calibration == "exact":
                return Privacy(eps, delta, rel, "smooth-sensitivity Laplace release, exact condition (SPEC §2.2)")
            e2 = max(eps, self._alpha + self._beta)
            d2 = max(delta, laplace_smooth_delta(e2, self._alpha, self._beta))
            return Privacy(e2, d2, rel, "smooth-sensitivity Laplace release, NRS07 parameters; guarantee from SPEC §2.2")
        rho = self.zcdp_rho
        assert rho is not None
        e2 = eps if self.calibration == "exact" else zcdp_to_dp(rho, delta)
        return Privacy(
            e2, delta, rel, f"smooth-sensitivity LLN release, rho={rho:.6g}-zCDP (BS19 §3.1.1) -> (eps, delta) (SPEC §2.5)"
        )

    # ---------------------------------------------------------------- release
    def _sensitivity(self, sensitivity: Any) -> float:
        if callable(sensitivity):
            sensitivity = sensitivity(self._beta)
        if isinstance(sensitivity, np.ndarray):
            if sensitivity.ndim != 0 and sensitivity.size != 1:
                raise ValueError(f"sensitivity must be a scalar, got shape {sensitivity.shape}")
            sensitivity = sensitivity.reshape(()).item()
        if isinstance(sensitivity, (bool, np.bool_)) or not isinstance(sensitivity, numbers.Real):
            raise TypeError(
                f"sensitivity must be a real number or a callable beta -> S_beta(x), got {type(sensitivity).__name__}"
            )
        return check_positive(sensitivity, "sensitivity")

    def scale(self, sensitivity: Any) -> float:
        """Noise scale S(x)/alpha' (``sensitivity``: callable beta -> S or S at ``self.beta``)."""
        return self._sensitivity(sensitivity) / self._alpha

    def error_distribution(self, sensitivity: Any) -> ErrorDistribution:
        """The law of release - f(x) for this S(x) (see :class:`ErrorDistribution`)."""
        return ErrorDistribution(self._noise, self.scale(sensitivity))

    def expected_abs_error(self, sensitivity: Any) -> float:
        """E|release - f(x)| = (S(x)/alpha') E|Z|."""
        return self.error_distribution(sensitivity).expected_abs_error()

    def release(
        self,
        value: Any,
        sensitivity: Any,
        rng: Any = None,
        size: Any = None,
        clip: tuple[float, float] | None = None,
    ) -> Any:
        """value + (S/alpha') Z.

        Parameters
        ----------
        value : f(x), finite.
        sensitivity : a callable beta -> S_beta(x) (called with ``self.beta``,
            e.g. ``problem.smooth_sensitivity``), or the float S_{beta'}(x)
            already computed at ``self.beta``.  Must be finite and > 0.
        rng : None, int seed or numpy Generator.
        size : None (one float) or the number of independent releases
            (ndarray; each costs the full privacy budget).
        clip : optional (lo, hi): clip the output to [lo, hi] (post-processing).
        """
        v = check_finite_float(value, "value")
        s = self._sensitivity(sensitivity)
        size = check_size(size)
        if clip is not None:
            if isinstance(clip, (str, bytes)) or not hasattr(clip, "__len__") or len(clip) != 2:
                raise ValueError("clip must be a pair (lo, hi)")
            lo = check_finite_float(clip[0], "clip[0]")
            hi = check_finite_float(clip[1], "clip[1]")
            if not lo <= hi:
                raise ValueError(f"clip must satisfy lo <= hi, got ({lo!r}, {hi!r})")
        gen = check_random_state(rng)
        z = np.asarray(self._noise.sample(1 if size is None else size, gen), dtype=np.float64).reshape(-1)
        out = v + (s / self._alpha) * z
        if clip is not None:
            out = np.clip(out, lo, hi)
        return float(out[0]) if size is None else out
