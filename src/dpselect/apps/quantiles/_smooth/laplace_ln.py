"""LaplaceLN median baseline (Bun & Steinke 2019, §3.1.1; mathematics §2.5), replace-one.

Laplace-log-normal noise on the NRS smooth sensitivity of the lower median, through the
release path shared by every baseline (:mod:`.baselines`, which documents the
clipping rule and the exact errors).
"""

from __future__ import annotations

from typing import Literal, overload

import numpy as np
from numpy.typing import ArrayLike

from ...._params import positive, validate_params
from ....accounting import Accountant
from ....mechanisms import SmoothSensitivityRelease
from ....typing import SeedLike
from .._rules import BOOLEAN, BOUNDS, DELTA, EPSILON, GRANULARITY, SAMPLE, options
from .baselines import _RELATION, RELEASE_RULES, OutOfBounds, _expected, _release

_LLN_RULES = {
    "epsilon": EPSILON,
    "delta": DELTA,
    "sigma": positive(none=True),
    "calibration": options("proven", "paper"),
}

__all__ = ["DEFAULT_LLN_DELTA", "expected_abs_error_laplace_ln", "laplace_ln", "laplace_ln_mechanism"]

#: Default delta of LaplaceLN (its conversion from zCDP needs one).
DEFAULT_LLN_DELTA = 1e-6


# ---------------------------------------------------------------------------
# LaplaceLN (Bun-Steinke)
# ---------------------------------------------------------------------------


@validate_params(_LLN_RULES | {"granularity": GRANULARITY})
def laplace_ln_mechanism(
    epsilon: float,
    *,
    delta: float = DEFAULT_LLN_DELTA,
    sigma: float | None = None,
    calibration: Literal["proven", "paper"] = "proven",
    granularity: float | None = None,
) -> SmoothSensitivityRelease:
    """LaplaceLN release (mathematics §2.5), replace-one; privacy() is the zCDP guarantee converted to (eps, delta).

    Parameters
    ----------
    epsilon : float
        The privacy parameter (> 0), for replace neighbours (replace-one, n fixed).
    delta : float, default=1e-6
        The delta of the converted guarantee (zCDP to (eps, delta)), in [0, 1).
    sigma : float or None, default=None
        The log-normal parameter (> 0; None: the optimal one for the calibration).
    calibration : {"proven", "paper"}, default="proven"
        "proven": the converted guarantee equals epsilon; "paper": epsilon is Bun & Steinke's
        CDP parameter (the reported (eps', delta) is then larger).
    granularity : float or None, default=None
        The output grid (a power of two; None: 2^-20; 0: float output).

    Returns
    -------
    SmoothSensitivityRelease
        The calibrated release.
    """
    return SmoothSensitivityRelease(
        epsilon,
        delta,
        noise="lln",
        kappa=0.5,
        sigma=sigma,
        relation=_RELATION,
        calibration=calibration,
        granularity=granularity,
    )


@overload
def laplace_ln(
    x: ArrayLike,
    epsilon: float,
    *,
    bounds: tuple[float, float],
    delta: float = ...,
    sigma: float | None = ...,
    calibration: Literal["proven", "paper"] = ...,
    rng: SeedLike = ...,
    size: None = ...,
    clip: bool = ...,
    accountant: Accountant | None = ...,
    granularity: float | None = ...,
    on_out_of_bounds: OutOfBounds = ...,
) -> float: ...
@overload
def laplace_ln(
    x: ArrayLike,
    epsilon: float,
    *,
    bounds: tuple[float, float],
    delta: float = ...,
    sigma: float | None = ...,
    calibration: Literal["proven", "paper"] = ...,
    rng: SeedLike = ...,
    size: int,
    clip: bool = ...,
    accountant: Accountant | None = ...,
    granularity: float | None = ...,
    on_out_of_bounds: OutOfBounds = ...,
) -> np.ndarray: ...
@validate_params(RELEASE_RULES | _LLN_RULES)
def laplace_ln(
    x: ArrayLike,
    epsilon: float,
    *,
    bounds: tuple[float, float],
    delta: float = DEFAULT_LLN_DELTA,
    sigma: float | None = None,
    calibration: Literal["proven", "paper"] = "proven",
    rng: SeedLike = None,
    size: int | None = None,
    clip: bool = True,
    accountant: Accountant | None = None,
    granularity: float | None = None,
    on_out_of_bounds: OutOfBounds = "clip",
) -> float | np.ndarray:
    """LaplaceLN median: clip(y_m + (S*_beta(x)/alpha) X e^{sigma Y}, a, b); (eps, delta)-DP via zCDP (replace-one).

    Snapped to the grid ``granularity`` (None: 2^-20; 0: float output).  Proof: mathematics
    §2.5 and §4.5.

    Parameters
    ----------
    x : array_like
        1-D array of finite floats (n >= 1); records outside ``bounds`` are clamped to them.
    epsilon : float
        The privacy parameter (> 0); the guarantee holds for replace neighbours (replace-one,
        n fixed).
    bounds : tuple of float
        Public ``(a, b)`` with ``a < b``.
    delta : float, default=1e-6
        The delta of the converted guarantee (zCDP to (eps, delta)), in [0, 1).
    sigma : float or None, default=None
        The log-normal parameter (> 0; None: the optimal one for the calibration).
    calibration : {"proven", "paper"}, default="proven"
        "proven": the converted guarantee equals epsilon; "paper": epsilon is Bun & Steinke's
        CDP parameter (the reported (eps', delta) is then larger).
    rng : None, int, Generator or "secure", default=None
        The randomness (keyword-only); a seed reproduces.
    size : int or None, default=None
        None (one float) or the number of iid draws (an array).
    clip : bool, default=True
        Clip the release to ``bounds`` (post-processing: the guarantee is unchanged).
    accountant : Accountant or None, default=None
        Charged ``mechanism.privacy()`` before any randomness is drawn.
    granularity : float or None, default=None
        The output grid (a power of two; None: 2^-20; 0: float output).
    on_out_of_bounds : {"clip", "raise"}, default="clip"
        "clip": records outside ``bounds`` are clamped to them (private); "raise": a
        ValueError instead, **not private**.

    Returns
    -------
    float or ndarray
        The private (lower) median.
    """
    mech = laplace_ln_mechanism(epsilon, delta=delta, sigma=sigma, calibration=calibration, granularity=granularity)
    return _release(lambda *_: mech, x, bounds, clip, rng, size, accountant, on_out_of_bounds)


@validate_params({"x": SAMPLE, "bounds": BOUNDS, "clip": BOOLEAN} | _LLN_RULES)
def expected_abs_error_laplace_ln(
    x: ArrayLike,
    epsilon: float,
    *,
    bounds: tuple[float, float],
    delta: float = DEFAULT_LLN_DELTA,
    sigma: float | None = None,
    calibration: Literal["proven", "paper"] = "proven",
    clip: bool = True,
) -> float:
    """Exact E|laplace_ln(x) - y_m| (unclipped: (S*_beta(x)/alpha) e^{sigma^2/2}).

    The release is (epsilon, delta)-DP for replace neighbours (mathematics §2.5).

    Parameters
    ----------
    x : array_like
        1-D array of finite floats (n >= 1); records outside ``bounds`` are clamped to them.
    epsilon : float
        The privacy parameter (> 0); the guarantee holds for replace neighbours (replace-one,
        n fixed).
    bounds : tuple of float
        Public ``(a, b)`` with ``a < b``.
    delta : float, default=1e-6
        The delta of the converted guarantee (zCDP to (eps, delta)), in [0, 1).
    sigma : float or None, default=None
        The log-normal parameter (> 0; None: the optimal one for the calibration).
    calibration : {"proven", "paper"}, default="proven"
        "proven": the converted guarantee equals epsilon; "paper": epsilon is Bun & Steinke's
        CDP parameter (the reported (eps', delta) is then larger).
    clip : bool, default=True
        Whether the release is clipped to ``bounds``.

    Returns
    -------
    float
        The exact expected absolute error from the lower median.
    """
    mech = laplace_ln_mechanism(epsilon, delta=delta, sigma=sigma, calibration=calibration)
    return _expected(lambda *_: mech, x, bounds, clip)
