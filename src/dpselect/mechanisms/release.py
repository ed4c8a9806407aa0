"""Numeric releases with smooth sensitivity (NRS07 framework; mathematics §2, §3.2).

**A numeric release, not a selection mechanism**: it adds noise to one real
number; it has no ``select``/``probabilities`` and is not a
:class:`~dpselect.mechanisms.base.Mechanism`.  The law of its error is
:func:`dpselect.analysis.error_distribution`.

Vocabulary shared with the selection mechanisms: ``kappa`` in (0, 1) is the
share of the budget spent on the sliding (shift) term (Yamamoto & Shibuya's
k = 2 kappa), and ``calibration`` is ``"proven"`` (the mathematics page's sound calibration,
default) or ``"paper"`` (a paper's own parameters; ``privacy()`` then says
what they actually guarantee).

``SmoothSensitivityRelease`` releases one real-valued statistic f(x) as

    A(x) = f(x) + (S(x) / alpha') * Z,        Z ~ h (iid of everything else),

where S is a beta'-smooth upper bound on the local sensitivity of f
(S(x) >= LS_f(x) and S(x) <= e^{beta'} S(y) for neighbours x ~ y, mathematics §1)
computed **at the mechanism's beta'** (``mech.beta``), and (alpha', beta')
come from the noise law h and the budget as follows.

Pure noise (``noise="polynomial"`` or ``"student_t"``) -- epsilon-DP
    alpha' = alpha(k eps),  beta' = beta((2 - k) eps),  k = 2 kappa in (0, 2),
    with (alpha(.), beta(.)) the noise's admissibility pair
    (``noise.admissible``): Yamamoto & Shibuya IPCCC'24 Thm 1 (mathematics §3.2).
    kappa = 1/2 (k = 1) is NRS07's even split (half of the budget to the sliding property,
    half to the dilation property).  In the Lipschitz form of mathematics §2.1 the
    privacy loss is at most L_s alpha' + L_d beta' = k eps/2 + (2 - k) eps/2.

    * ``"polynomial"``: h(z) ∝ 1/(1 + |z|^gamma) (mathematics §2.3).
      ``admissible_method="ys"`` (default): YS Thm 6 as corrected in the mathematics page
      §2.3 / mathematics §7 item 1, alpha(eps) = eps / (2 (gamma-1)^((gamma-1)/gamma)),
      beta(eps) = eps / (2 max(1, gamma - 1)).
      ``admissible_method="nrs"``: NRS07 Lemmas 2.6/2.7 as quoted by Duff
      Prop. 3, alpha(eps) = beta(eps) = eps / (2 (gamma + 1)) (valid, more
      conservative; used by the Duff paper's SmoothSens_eps baseline).
    * ``"student_t"``: Student t with ``df`` = d degrees of freedom,
      Bun & Steinke 2019 Thm 31 in NRS form (mathematics §2.4):
      alpha(eps) = eps sqrt(d)/(d + 1), beta(eps) = eps/(2 (d + 1)).

Laplace (``noise="laplace"``, delta > 0 required) -- (eps, delta)-DP
    **Not** the NRS07 formula alpha = eps/2, beta = eps/(2 ln(2/delta)), which
    fails for eps >= 20 (mathematics §2.2, mathematics §7 item 30).  With scale S(x)/alpha' the
    privacy loss is at most alpha' + max(beta, |z| (e^beta - 1) - beta)
    (mathematics §2.2, Duff Prop. 2 / Bun & Steinke Thm 34, mathematics §7 item 26) -- a
    direct bound on the loss, not the chaining of two (eps/2, delta/2)
    admissibility properties (mathematics §7 item 31) -- hence (eps, delta)-DP whenever

        eps >= alpha' + beta'   and   exp(-(eps - alpha' + beta')/(e^beta' - 1)) <= delta.

    We take alpha' = kappa eps and beta' the **largest** beta satisfying both
    (``noise.Laplace().admissible(eps, delta, alpha_fraction=kappa)``).
    ``calibration="paper"`` uses the NRS07 formula instead and ``privacy()``
    then reports what the exact condition actually guarantees for it: epsilon
    and max(delta, exp(-(eps - alpha + beta)/(e^beta - 1))).

Laplace log-normal (``noise="lln"``, delta > 0 required) -- (eps, delta)-DP
    Z = X e^{sigma Y}, X ~ Lap(1), Y ~ N(0, 1).  Bun & Steinke 2019 §3.1.1
    (mathematics §2.5): with a beta'-smooth bound and scale S(x)/alpha' the
    release is rho-zCDP with

        rho = (beta'/sigma + e^{3 sigma^2 / 2} alpha')^2 / 2,

    converted to (rho + 2 sqrt(rho ln(1/delta)), delta)-DP (mathematics §2.5).
    Calibration to a target (eps, delta): rho* = (sqrt(ln(1/delta) + eps) -
    sqrt(ln(1/delta)))^2 solves rho + 2 sqrt(rho ln(1/delta)) = eps; with
    eps_c = sqrt(2 rho*) the budget is split as
    e^{3 sigma^2/2} alpha' = kappa eps_c and beta'/sigma = (1 - kappa) eps_c.
    Default ``sigma = sqrt((1 - kappa) / (5 kappa))``: for the beta' this split
    produces, it is exactly the variance-optimal sigma of mathematics §2.5 (the
    root of 5 (eps_c/beta') sigma^3 - 5 sigma^2 - 1 = 0), and it does not
    depend on the data (kappa = 1/2: sigma = 1/sqrt(5)).
    ``calibration="paper"`` treats ``epsilon`` as Bun & Steinke's CDP
    parameter (rho = eps^2/2, their own statement of the guarantee; we
    assume, unverified, that the Duff paper's LaplaceLN baseline did the
    same); ``privacy()`` then reports the converted (eps', delta).

Output grid (floating-point safety, Mironov 2012) -- ``granularity``
    Releases are exact multiples of a public power of two lambda (default
    2^-20; ``granularity=0`` restores the unsnapped float output, which is not
    floating-point safe: the set of floats reachable from f(x) can identify x).
    Laplace noise is then sampled *exactly* on the grid: the index
    floor(f(x)/lambda + 1/2) plus a discrete Laplace with scale
    (S(x) + 32 lambda)/(alpha' lambda) grid units (Canonne, Kamath & Steinke 2020
    sampler).  S + 32 lambda is a beta'-smooth bound on the rounded statistic's
    local sensitivity, and the privacy loss on the grid gives (eps, delta)-DP whenever
    eps >= alpha' + beta' and
    delta >= 2/(1 + e^{-alpha'/32}) exp(-(eps - alpha' + beta' - eta)/(e^beta' - 1)),
    eta = min(beta', -log(1 - alpha'^2 e^{2 beta'}/12288))
    (:func:`dpselect.accounting.grid_laplace_smooth_delta` with guard 32; beta' is
    the largest such value, less log1p(2^-40) for rounding the scale to 40
    bits: within 0.6% of the continuous beta' for eps <= 5).
    Student t with df = 3 (the default) or df = 1 and polynomial noise with
    gamma = 2 (both Cauchy) are sampled *exactly* from the ideal release rounded
    to the grid, P[k lambda] = F(B(k+1)) - F(B(k)), B(k) = ((k - 1/2) lambda - f(x))/b,
    by inversion of a lazily drawn uniform with rigorous integer brackets of
    the arctan-form cdfs (``exact_law``): the output is post-processing of the
    ideal real-valued mechanism, so the reported guarantee holds exactly.  The
    other noises (other df / gamma, LLN) are sampled in floats and snapped to
    the grid; the reported guarantee is the ideal real-valued mechanism's
    (rounding is post-processing) but the float sampler is not proven exact.
    ``log_law`` gives the ideal mechanism's exact law on the grid.  Accuracy
    cost: rounding <= lambda/2 (Laplace: S + 32 lambda in place of S).

Every hyper-parameter (kappa, gamma, df, sigma, the calibration, the
granularity) must be chosen independently of the private data (mathematics §1).

Neighbour relation: the guarantee holds under the relation in which S is a
smooth upper bound (``relation``, default "add_remove"; the NRS median and
TDT bounds are "replace").
"""

from __future__ import annotations

import math
import numbers
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

import numpy as np

from .._validation import (
    check_delta,
    check_epsilon,
    check_finite_float,
    check_pair,
    check_positive,
    check_probability_in,
    check_random_state,
    check_relation,
    check_size,
)
from ..accounting import (
    dp_to_zcdp,
    grid_laplace_smooth_beta,
    grid_laplace_smooth_delta,
    laplace_smooth_delta,
    nrs_laplace_parameters,
    zcdp_to_dp,
)
from ..noise import (
    Laplace,
    LaplaceLogNormal,
    PolynomialTail,
    StudentT,
    check_granularity,
    check_tail_exponent,
    grid_index,
    grid_values,
    sample_snapped_atan,
)
from ..privacy import Privacy
from ._release_grid import (
    GUARD,
    ROUND_SLACK,
    clip_indices,
    clip_to_grid,
    grid_laplace_log_law,
    grid_laplace_scale,
    sample_grid_laplace,
    snapped_log_law,
)

__all__ = ["SmoothSensitivityRelease"]

#: Noise families accepted by ``SmoothSensitivityRelease``.
NOISES = ("laplace", "student_t", "polynomial", "lln")
#: Families giving pure epsilon-DP.
PURE_NOISES = ("student_t", "polynomial")
_CALIBRATIONS = ("proven", "paper")
#: Default output grid of the smooth-sensitivity release.
DEFAULT_GRANULARITY = 2.0**-20
_ADMISSIBLE_METHODS = ("ys", "nrs")


def _make_noise(noise: str, gamma: float, df: float, sigma: float | None) -> Any:
    if noise == "laplace":
        return Laplace()
    if noise == "polynomial":
        return PolynomialTail(gamma)
    if noise == "student_t":
        return StudentT(df)
    assert sigma is not None  # set in __post_init__ for noise="lln"
    return LaplaceLogNormal(sigma)


@dataclass(frozen=True)
class SmoothSensitivityRelease:
    """Numeric release, not a selection mechanism: f(x) + (S(x)/alpha') Z, S beta'-smooth.

    See the module docstring for the calibrations and their sources
    (YS Thm 1; mathematics §2.2-§2.5, §3.2).

    Parameters
    ----------
    epsilon
        target epsilon > 0.
    delta
        target delta; 0 for the pure noises ("student_t", "polynomial"),
        in (0, 1) for "laplace" and "lln".
    noise
        "student_t" (default; pure epsilon-DP), "polynomial", "laplace"
        or "lln".
    gamma
        tail exponent of the polynomial noise, > 1 (2 = Cauchy).
    df
        degrees of freedom of the Student t noise, > 0.
    kappa
        budget split in (0, 1): the sliding part gets kappa eps, the
        dilation (smoothness) part (1 - kappa) eps (YS Thm 1 with
        k = 2 kappa; kappa = 1/2 is NRS's even split).  Must be
        data-independent.  Same name and meaning as in the selection
        mechanisms.
    sigma
        LLN shape, > 0 (default sqrt((1 - kappa)/(5 kappa)), see module docstring).
    relation
        neighbour relation in which S is beta'-smooth ("add_remove" or "replace").
    admissible_method
        polynomial only: "ys" (YS Thm 6, corrected; default)
        or "nrs" (alpha = beta = eps/(2 (gamma + 1)), NRS07 / Duff Prop. 3).
    calibration
        "proven" (default) or "paper" (laplace: NRS07 formula; lln:
        epsilon is the CDP parameter); ``privacy()`` always reports what is
        actually guaranteed.
    tuned_on_data
        mark parameters chosen from the private data (a paper's
        baseline): ``privacy()`` then reports no guarantee.
    granularity
        the output grid lambda, a power of two (default None: 2^-20); 0 for
        the unsnapped float output (not floating-point safe; reproductions).
        On the grid, Student t df = 3 or 1 and polynomial gamma = 2 are sampled
        exactly from the rounded ideal law (see ``exact_law``; about 20-35 us per
        draw at the default grid); other df / gamma and LLN are snapped floats.
        Choose it well below the smooth sensitivities you expect (Laplace's
        noise scale uses S + 32 lambda) and so that |f(x)| < 2^51 lambda.

    Examples
    --------
    >>> import dpselect
    >>> rel = dpselect.SmoothSensitivityRelease(1.0)
    >>> print(rel.privacy())
    1-DP [add_remove]
    >>> round(rel.alpha, 4), round(rel.beta, 4)   # t_3: eps sqrt(3)/4 * 1, eps/(2*4) * 1
    (0.433, 0.125)
    >>> out = rel.release(3.2, 0.5, rng=0)
    """

    epsilon: float
    delta: float = 0.0
    _: KW_ONLY
    noise: str = "student_t"
    gamma: float = 2.0
    df: float = 3.0
    kappa: float = 0.5
    sigma: float | None = None
    relation: str = "add_remove"
    admissible_method: str = "ys"
    calibration: str = "proven"
    tuned_on_data: bool = False
    granularity: float | None = None
    _alpha: float = field(init=False, repr=False, compare=False)
    _beta: float = field(init=False, repr=False, compare=False)
    _noise: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        set_ = lambda name, v: object.__setattr__(self, name, v)  # noqa: E731
        set_("epsilon", check_epsilon(self.epsilon))
        set_("delta", check_delta(self.delta))
        if self.noise not in NOISES:
            raise ValueError(f"noise must be one of {NOISES}, got {self.noise!r}")
        set_("kappa", check_probability_in(self.kappa, "kappa", 0.0, 1.0))
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
            g = check_positive(self.gamma, "gamma")
            if not g > 1:
                raise ValueError(f"gamma must be > 1, got {g!r}")
            check_tail_exponent(g - 1.0, "gamma", g)
            set_("gamma", g)
        if self.noise == "student_t":
            set_("df", check_positive(self.df, "df"))
            check_tail_exponent(self.df, "df", self.df)
        if self.noise == "lln":
            if self.sigma is None:
                set_("sigma", math.sqrt((1.0 - self.kappa) / (5.0 * self.kappa)))
            else:
                set_("sigma", check_positive(self.sigma, "sigma"))
        elif self.sigma is not None:
            raise ValueError("sigma applies to noise='lln' only")
        if self.granularity is None:
            set_("granularity", DEFAULT_GRANULARITY)
        elif self.granularity != 0:
            set_("granularity", check_granularity(self.granularity))
        else:
            set_("granularity", 0.0)
        noise_obj = _make_noise(self.noise, self.gamma, self.df, self.sigma)
        alpha, beta = self._calibrate(noise_obj)
        if not (alpha > 0 and beta > 0 and math.isfinite(alpha) and math.isfinite(beta)):
            raise ValueError(
                f"epsilon={self.epsilon!r} is outside the range this calibration can represent "
                f"(alpha={alpha!r}, beta={beta!r})"
            )
        set_("_alpha", float(alpha))
        set_("_beta", float(beta))
        set_("_noise", noise_obj)

    # ------------------------------------------------------------ calibration
    def _calibrate(self, noise_obj: Any) -> tuple[float, float]:
        eps, kappa = self.epsilon, self.kappa
        if self.noise in PURE_NOISES:  # YS Thm 1 with k = 2 kappa
            kw = {"method": self.admissible_method} if self.noise == "polynomial" else {}
            alpha = noise_obj.admissible(2.0 * kappa * eps, **kw)[0]
            beta = noise_obj.admissible(2.0 * (1.0 - kappa) * eps, **kw)[1]
            return alpha, beta
        if self.noise == "laplace":
            if self.calibration == "paper":
                # NRS07 (SNM Cor 4.4, dp_multiq): valid only for moderate eps (mathematics §2.2)
                return nrs_laplace_parameters(eps, self.delta)
            if self.on_grid:  # the grid condition, less the slack of the 40-bit scale
                alpha = kappa * eps
                return alpha, grid_laplace_smooth_beta(eps, self.delta, alpha, GUARD) - ROUND_SLACK
            # exact mathematics §2.2 condition, alpha = kappa eps, largest admissible beta
            return noise_obj.admissible(eps, self.delta, alpha_fraction=kappa)
        # lln: split eps_c = beta/sigma + e^{3 sigma^2/2} alpha as (1 - kappa) : kappa
        sigma = self.sigma
        assert sigma is not None
        eps_c = eps if self.calibration == "paper" else math.sqrt(2.0 * dp_to_zcdp(eps, self.delta))
        alpha = kappa * eps_c * math.exp(-1.5 * sigma * sigma)
        beta = (1.0 - kappa) * eps_c * sigma
        return alpha, beta

    def parameters(self) -> tuple[float, float]:
        """The calibrated (alpha', beta'): noise scale S(x)/alpha', S beta'-smooth."""
        return self._alpha, self._beta

    @property
    def on_grid(self) -> bool:
        """Whether outputs lie on the grid (``granularity`` > 0)."""
        return bool(self.granularity)

    @property
    def exact_law(self) -> str | None:
        """"t3" or "cauchy" when grid outputs are sampled exactly from the snapped law, else None.

        Student t with df = 3, Student t with df = 1 and polynomial gamma = 2 (both
        Cauchy) have closed-form cdfs in arctan; other df / gamma and LLN are snapped floats.
        """
        if self.noise == "student_t" and self.df in (1.0, 3.0):
            return "t3" if self.df == 3.0 else "cauchy"
        return "cauchy" if self.noise == "polynomial" and self.gamma == 2.0 else None

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
        """The guarantee of one release (mathematics §2.2-§2.5, §3.2).

        ``tuned_on_data=True`` marks a configuration whose parameters were
        chosen from the private data (a paper's baseline): no guarantee
        (epsilon = inf, mathematics §1).
        """
        eps, delta, rel = self.epsilon, self.delta, self.relation
        if self.tuned_on_data:
            return Privacy(math.inf, 0.0, rel, "no guarantee: parameters tuned on the private data (mathematics §1)")
        if self.noise in PURE_NOISES:
            what = (
                f"polynomial gamma={self.gamma:g}, "
                + ("YS Thm 6 (corrected, mathematics §2.3)" if self.admissible_method == "ys"
                   else "NRS07 / Duff Prop. 3")
                if self.noise == "polynomial"
                else f"Student t df={self.df:g}, BS19 Thm 31"
            )
            return Privacy(eps, 0.0, rel, f"smooth-sensitivity release, YS Thm 1 (kappa={self.kappa:g}; {what})")
        if self.noise == "laplace":
            grid = f", exact discrete Laplace on the grid {self.granularity!r} Z" if self.on_grid else ", float output"
            if self.calibration == "proven":
                return Privacy(eps, delta, rel, f"smooth-sensitivity Laplace release, exact condition{grid}")
            if self.on_grid:
                b_eff = self._beta + ROUND_SLACK
                e2 = max(eps, self._alpha + b_eff)
                d2 = max(delta, grid_laplace_smooth_delta(e2, self._alpha, b_eff, GUARD))
            else:
                e2 = max(eps, self._alpha + self._beta)
                d2 = max(delta, laplace_smooth_delta(e2, self._alpha, self._beta))
            return Privacy(e2, d2, rel, f"smooth-sensitivity Laplace release, NRS07 parameters{grid}")
        rho = self.zcdp_rho
        assert rho is not None
        e2 = eps if self.calibration == "proven" else zcdp_to_dp(rho, delta)
        return Privacy(
            e2, delta, rel, f"smooth-sensitivity LLN release, rho={rho:.6g}-zCDP (BS19 §3.1.1; mathematics §2.5)", rho
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
        return check_positive(sensitivity, "sensitivity", quote=False)  # S(x): data-derived, never echoed

    def scale(self, sensitivity: Any) -> float:
        """Noise scale S(x)/alpha' (``sensitivity``: callable beta -> S or S at ``self.beta``)."""
        return self._sensitivity(sensitivity) / self._alpha

    def expected_abs_error(self, sensitivity: Any) -> float:
        """E|release - f(x)| = (S(x)/alpha') E|Z| (inf when the noise has no mean)."""
        return self.scale(sensitivity) * float(self._noise.mean_abs())

    def release(
        self,
        value: Any,
        sensitivity: Any,
        *,
        rng: Any = None,
        size: Any = None,
        clip: tuple[float, float] | None = None,
    ) -> Any:
        """value + (S/alpha') Z.

        Parameters
        ----------
        value
            f(x), finite.
        sensitivity
            a callable beta -> S_beta(x) (called with ``self.beta``,
            e.g. ``problem.smooth_sensitivity``), or the float S_{beta'}(x)
            already computed at ``self.beta``.  Must be finite and > 0.
        rng
            None, int seed, numpy Generator or RandomState (keyword-only).
        size
            None (one float) or the number of independent releases
            (ndarray; each costs the full privacy budget).
        clip
            optional (lo, hi): clip the output to [lo, hi] (post-processing;
            on a grid, to the grid points inside [lo, hi]).
        """
        v = check_finite_float(value, "value", quote=False)
        s = self._sensitivity(sensitivity)
        size = check_size(size)
        bounds = None if clip is None else check_pair(clip, "clip")
        gen = check_random_state(rng)
        n = 1 if size is None else size
        lam = float(self.granularity or 0.0)
        if self.on_grid and self.noise == "laplace":
            out = sample_grid_laplace(v, grid_laplace_scale(s, self._alpha, lam), lam, n, gen)
        elif self.on_grid and self.exact_law is not None:
            out = sample_snapped_atan(self.exact_law, v, s / self._alpha, lam, n, rng=gen,
                                      index_range=clip_indices(bounds, lam))
        else:
            z = np.asarray(self._noise.sample(n, gen), dtype=np.float64).reshape(-1)
            out = v + (s / self._alpha) * z
            if self.on_grid:  # snap the float release to the grid (post-processing)
                out = grid_values(grid_index(out, lam), lam)
        if bounds is not None:
            out = clip_to_grid(out, bounds, lam) if self.on_grid else np.clip(out, *bounds)
        return float(out[0]) if size is None else out

    def log_law(self, value: Any, sensitivity: Any, window: int = 64) -> tuple[np.ndarray, np.ndarray]:
        """(grid points, log-probabilities) of one release at 2 window + 1 grid points around f(x).

        Laplace: the exact law of the discrete sampler.  Other noises: the exact
        law of the ideal real-valued release snapped to the grid (sampled exactly
        for Student t df = 3 or 1 and polynomial gamma = 2, see ``exact_law``; the
        float sampler approximates it otherwise).  Requires a grid (``granularity`` > 0).
        """
        if not self.on_grid:
            raise ValueError("log_law needs an output grid (granularity > 0)")
        v = check_finite_float(value, "value", quote=False)
        s = self._sensitivity(sensitivity)
        lam = float(self.granularity or 0.0)
        if self.noise == "laplace":
            return grid_laplace_log_law(v, grid_laplace_scale(s, self._alpha, lam), lam, window)
        return snapped_log_law(self._noise, v, s / self._alpha, lam, window)
