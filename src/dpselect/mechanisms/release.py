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
from dataclasses import KW_ONLY, dataclass, field
from typing import ClassVar, overload

import numpy as np

from .._exact_numbers import grid_index
from .._params import (
    BOOLEAN,
    DELTA,
    EPSILON,
    GRANULARITY_OR_ZERO,
    RELATION,
    Rule,
    options,
    positive,
    real_in,
    validate_fields,
)
from .._validation import check_finite_float, check_pair, check_random_state, check_size
from ..noise import NoiseDistribution, grid_values, sample_snapped_atan
from ..output_law import OutputLaw
from ..typing import SeedLike
from ._release_calibration import (
    NOISES,
    PURE_NOISES,
    CalibratedRelease,
    ReleaseParameters,
    Sensitivity,
    calibrate,
    make_noise,
)
from ._release_grid import (
    clip_indices,
    clip_to_grid,
    grid_laplace_log_law,
    grid_laplace_scale,
    sample_grid_laplace,
    snapped_log_law,
)

__all__ = ["PURE_NOISES", "ReleaseParameters", "Sensitivity", "SmoothSensitivityRelease"]

_CALIBRATIONS = ("proven", "paper")
#: Default output grid of the smooth-sensitivity release.
DEFAULT_GRANULARITY = 2.0**-20
_ADMISSIBLE_METHODS = ("ys", "nrs")


@dataclass(frozen=True)
class SmoothSensitivityRelease(CalibratedRelease):
    """Numeric release, not a selection mechanism: f(x) + (S(x)/alpha') Z, S beta'-smooth.

    See the module docstring for the calibrations and their sources
    (YS Thm 1; mathematics §2.2-§2.5, §3.2).

    The guarantee holds under ``relation``, the neighbour relation (add/remove
    or replace) in which S is a beta'-smooth upper bound.

    Parameters
    ----------
    epsilon : float
        Target epsilon > 0.
    delta : float, default=0.0
        Target delta; 0 for the pure noises ("student_t", "polynomial"),
        in (0, 1) for "laplace" and "lln".
    noise : {"student_t", "polynomial", "laplace", "lln"}, default="student_t"
        "student_t" (pure epsilon-DP), "polynomial", "laplace" or "lln".
    gamma : float, default=2.0
        Tail exponent of the polynomial noise, > 1 (2 = Cauchy).
    df : float, default=3.0
        Degrees of freedom of the Student t noise, > 0.
    kappa : float, default=0.5
        Budget split in (0, 1): the sliding part gets kappa eps, the
        dilation (smoothness) part (1 - kappa) eps (YS Thm 1 with
        k = 2 kappa; kappa = 1/2 is NRS's even split).  Must be
        data-independent.  Same name and meaning as in the selection
        mechanisms.
    sigma : float, default=None
        LLN shape, > 0 (None: sqrt((1 - kappa)/(5 kappa)), see module docstring).
    relation : {"add_remove", "replace"}, default="add_remove"
        Neighbour relation in which S is beta'-smooth.
    admissible_method : {"ys", "nrs"}, default="ys"
        Polynomial only: "ys" (YS Thm 6, corrected) or "nrs"
        (alpha = beta = eps/(2 (gamma + 1)), NRS07 / Duff Prop. 3).
    calibration : {"proven", "paper"}, default="proven"
        "proven" or "paper" (laplace: NRS07 formula; lln: epsilon is the CDP
        parameter); ``privacy()`` always reports what is actually guaranteed.
    tuned_on_data : bool, default=False
        Mark parameters chosen from the private data (a paper's
        baseline): ``privacy()`` then reports no guarantee.
    granularity : float, default=None
        The output grid lambda, a power of two (None: 2^-20); 0 for
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
    _noise: NoiseDistribution = field(init=False, repr=False, compare=False)
    _parameter_constraints: ClassVar[dict[str, Rule]] = {
        "epsilon": EPSILON,
        "delta": DELTA,
        "noise": options(*NOISES),
        "gamma": positive(),
        "df": positive(),
        "kappa": real_in(0.0, 1.0),
        "sigma": positive(none=True),
        "relation": RELATION,
        "admissible_method": options(*_ADMISSIBLE_METHODS),
        "calibration": options(*_CALIBRATIONS),
        "tuned_on_data": BOOLEAN,
        "granularity": GRANULARITY_OR_ZERO,
    }

    def __post_init__(self) -> None:
        validate_fields(self, self._parameter_constraints)
        self._check_combination()
        if self.noise == "lln" and self.sigma is None:
            object.__setattr__(self, "sigma", math.sqrt((1.0 - self.kappa) / (5.0 * self.kappa)))
        if self.granularity is None:
            object.__setattr__(self, "granularity", DEFAULT_GRANULARITY)
        noise_obj = make_noise(self.noise, self.gamma, self.df, self.sigma)
        alpha, beta = calibrate(self, noise_obj)
        if not (alpha > 0 and beta > 0 and math.isfinite(alpha) and math.isfinite(beta)):
            raise ValueError(
                f"epsilon={self.epsilon!r} is outside the range this calibration can represent "
                f"(alpha={alpha!r}, beta={beta!r})"
            )
        object.__setattr__(self, "_alpha", float(alpha))
        object.__setattr__(self, "_beta", float(beta))
        object.__setattr__(self, "_noise", noise_obj)

    # ---------------------------------------------------------------- release
    @overload
    def release(
        self,
        value: float,
        sensitivity: Sensitivity,
        *,
        rng: SeedLike = None,
        size: None = None,
        clip_output: tuple[float, float] | None = None,
    ) -> float: ...

    @overload
    def release(
        self,
        value: float,
        sensitivity: Sensitivity,
        *,
        rng: SeedLike = None,
        size: int,
        clip_output: tuple[float, float] | None = None,
    ) -> np.ndarray: ...

    def release(
        self,
        value: float,
        sensitivity: Sensitivity,
        *,
        rng: SeedLike = None,
        size: int | None = None,
        clip_output: tuple[float, float] | None = None,
    ) -> float | np.ndarray:
        """Release value + (S/alpha') Z (on the grid unless ``granularity=0``).

        The guarantee is :meth:`privacy` under ``relation``, the neighbour
        relation (add/remove or replace) in which S is beta'-smooth
        (mathematics §2.2-§2.5, §3.2).

        Parameters
        ----------
        value : float
            f(x), finite.
        sensitivity : float or callable
            A callable beta -> S_beta(x) (called with ``self.beta``,
            e.g. ``problem.smooth_sensitivity``), or the float S_{beta'}(x)
            already computed at ``self.beta``.  Must be finite and > 0.
        rng : SeedLike, default=None
            None, int seed, numpy Generator or RandomState (keyword-only).
        size : int, default=None
            None (one float) or the number of independent releases
            (ndarray; each costs the full privacy budget).
        clip_output : tuple of (float, float), default=None
            Optional (lo, hi): clip the output to [lo, hi] (post-processing;
            on a grid, to the grid points inside [lo, hi]).

        Returns
        -------
        float or numpy.ndarray of float
            One release (``size=None``) or ``size`` independent releases.

        Examples
        --------
        >>> SmoothSensitivityRelease(1.0).release(3.2, 0.5, rng=0, size=2).shape
        (2,)
        """
        v = check_finite_float(value, "value", quote=False)
        s = self._sensitivity(sensitivity)
        size = check_size(size)
        bounds = None if clip_output is None else check_pair(clip_output, "clip_output")
        gen = check_random_state(rng)
        n = 1 if size is None else size
        lam = float(self.granularity or 0.0)
        if self.on_grid and self.noise == "laplace":
            out = sample_grid_laplace(v, grid_laplace_scale(s, self._alpha, lam), lam, n, gen)
        elif self.on_grid and self.exact_law is not None:
            out = sample_snapped_atan(
                self.exact_law, v, s / self._alpha, lam, n, rng=gen, index_range=clip_indices(bounds, lam)
            )
        else:
            z = np.asarray(self._noise.sample(n, gen), dtype=np.float64).reshape(-1)
            out = v + (s / self._alpha) * z
            if self.on_grid:  # snap the float release to the grid (post-processing)
                out = grid_values(grid_index(out, lam), lam)
        if bounds is not None:
            out = clip_to_grid(out, bounds, lam) if self.on_grid else np.clip(out, *bounds)
        return float(out[0]) if size is None else out

    def log_law(self, value: float, sensitivity: Sensitivity, window: int = 64) -> OutputLaw:
        """The exact law of one release at 2 window + 1 grid points around f(x).

        Laplace: the exact law of the discrete sampler.  Other noises: the exact
        law of the ideal real-valued release snapped to the grid (sampled exactly
        for Student t df = 3 or 1 and polynomial gamma = 2, see ``exact_law``; the
        float sampler approximates it otherwise).  Requires a grid (``granularity`` > 0).

        Parameters
        ----------
        value : float
            f(x), finite.
        sensitivity : float or callable
            S_beta'(x) computed at ``self.beta``, or a callable beta -> S_beta(x).
        window : int, default=64
            The number of grid points on each side of the one nearest f(x).

        Returns
        -------
        OutputLaw
            Over the window's grid points (``support``), with exact ``log_probabilities``.

        Examples
        --------
        >>> law = SmoothSensitivityRelease(1.0, granularity=0.5).log_law(0.0, 1.0, window=1)
        >>> law.support.tolist(), bool(law.log_probabilities[1] > law.log_probabilities[0])
        ([-0.5, 0.0, 0.5], True)
        """
        if not self.on_grid:
            raise ValueError("log_law needs an output grid (granularity > 0)")
        v = check_finite_float(value, "value", quote=False)
        s = self._sensitivity(sensitivity)
        lam = float(self.granularity or 0.0)
        if self.noise == "laplace":
            points, logp = grid_laplace_log_law(v, grid_laplace_scale(s, self._alpha, lam), lam, window)
        else:
            points, logp = snapped_log_law(self._noise, v, s / self._alpha, lam, window)
        return OutputLaw.from_log_probabilities(logp, support=points)
