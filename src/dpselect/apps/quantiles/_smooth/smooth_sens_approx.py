"""SmoothSens_{eps,delta}: the Laplace median baseline of the Duff paper, replace-one (mathematics §2.2, §4.5).

Laplace noise with the exact condition eps >= alpha + beta, eps >= alpha + (e^beta - 1) ln(1/delta)
- beta (Duff Prop. 2 + mathematics §7 item 26).  ``tuning="fixed"`` (default) is data-independent;
``tuning="paper"`` reproduces the paper's data-dependent choice (no guarantee; a
:class:`~dpselect.PrivacyLeakWarning`).  The release path and the clipping rule are those of
:mod:`.baselines`.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Literal, overload

import numpy as np
from numpy.typing import ArrayLike

from ...._params import validate_params
from ...._validation import check_delta, check_epsilon
from ...._warnings import PrivacyLeakWarning
from ....accounting import Accountant
from ....mechanisms import SmoothSensitivityRelease
from ....typing import SeedLike
from .._order_stats import lower_median_index, smooth_sens_sorted, sorted_padded
from .._rules import ANY, BOOLEAN, BOUNDS, DELTA, EPSILON, GRANULARITY, SAMPLE, check_bounds, options
from .baselines import _RELATION, RELEASE_RULES, OutOfBounds, _expected, _Factory, _release

__all__ = ["expected_abs_error_smooth_sens_approx", "smooth_sens_approx", "smooth_sens_approx_mechanism"]


_TUNINGS = ("fixed", "paper")


TUNING = options(*_TUNINGS)


def _alpha_max(beta: np.ndarray, epsilon: float, L: float) -> np.ndarray:
    """Largest alpha with eps >= alpha + beta and eps >= alpha + (e^beta - 1) L - beta (mathematics §6.1)."""
    return np.minimum(epsilon - beta, epsilon + beta - np.expm1(beta) * L)


def _paper_k(ext: np.ndarray, epsilon: float, delta: float) -> float:
    """Data-dependent k = 2 alpha/eps minimising S*_beta(x)/alpha_max(beta) (Duff §6 baseline).

    Log-spaced grid over beta in (0, beta_hi) (beta_hi: alpha_max(beta_hi) = 0),
    then a golden-section refinement around the best grid point.
    """
    L = -math.log(delta)
    m = lower_median_index(ext.size - 2)
    # beta_hi: the largest beta with alpha_max > 0
    lo, hi = 0.0, epsilon
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if _alpha_max(np.array(mid), epsilon, L) > 0:
            lo = mid
        else:
            hi = mid
    beta_hi = lo

    def objective(beta: float) -> float:
        am = float(_alpha_max(np.array(beta), epsilon, L))
        if am <= 0:
            return math.inf
        return math.log(smooth_sens_sorted(ext, m, beta)) - math.log(am)

    grid = beta_hi * np.geomspace(1e-6, 1.0 - 1e-9, 80)
    vals = np.array([objective(float(g)) for g in grid])
    i = int(np.argmin(vals))
    left = grid[max(i - 1, 0)]
    right = grid[min(i + 1, grid.size - 1)]
    # golden section on [left, right] (the objective is evaluated exactly; no smoothness needed)
    gr = (math.sqrt(5) - 1) / 2
    c, d = right - gr * (right - left), left + gr * (right - left)
    fc, fd = objective(c), objective(d)
    for _ in range(40):
        if fc <= fd:
            right, d, fd = d, c, fc
            c = right - gr * (right - left)
            fc = objective(c)
        else:
            left, c, fc = c, d, fd
            d = left + gr * (right - left)
            fd = objective(d)
    cands = [(vals[i], grid[i]), (fc, c), (fd, d)]
    beta = min(cands)[1]
    alpha = float(_alpha_max(np.array(beta), epsilon, L))
    return 2.0 * alpha / epsilon


def _warn_paper_tuning(stacklevel: int) -> None:
    warnings.warn(
        "tuning='paper' chooses (alpha, beta) from the private data (Duff §6 baseline); "
        "the stated (epsilon, delta) guarantee does not cover this choice",
        PrivacyLeakWarning,
        stacklevel=stacklevel + 1,
    )


def _approx_release(
    ext: np.ndarray, epsilon: Any, delta: Any, tuning: Any, granularity: float | None = None
) -> SmoothSensitivityRelease:
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0:
        raise ValueError("delta must be > 0 for the Laplace baseline")
    if tuning not in _TUNINGS:
        raise ValueError(f"tuning must be one of {_TUNINGS}, got {tuning!r}")
    k = _paper_k(ext, epsilon, delta) if tuning == "paper" else 1.0
    return SmoothSensitivityRelease(
        epsilon,
        delta,
        noise="laplace",
        kappa=k / 2.0,
        relation=_RELATION,
        tuned_on_data=tuning == "paper",
        granularity=granularity,
    )


@validate_params(
    {
        "x": SAMPLE.or_none(),  # not read with tuning="fixed"
        "epsilon": EPSILON,
        "delta": DELTA,
        "bounds": ANY,
        "tuning": TUNING,
        "granularity": GRANULARITY,
    }
)
def smooth_sens_approx_mechanism(
    x: ArrayLike,
    epsilon: float,
    *,
    delta: float,
    bounds: tuple[float, float],
    tuning: Literal["fixed", "paper"] = "fixed",
    granularity: float | None = None,
) -> SmoothSensitivityRelease:
    """The calibrated Laplace release of SmoothSens_{eps,delta} (see module docstring).

    ``tuning="fixed"``: alpha = eps/2, data-independent (x and bounds are not used).
    ``tuning="paper"``: alpha, beta minimise S*_beta(x)/alpha (data-dependent;
    PrivacyLeakWarning, and ``privacy()`` reports no guarantee).  Proof: mathematics §2.2
    and §4.5.

    Parameters
    ----------
    x : array_like
        1-D array of finite floats (n >= 1); records outside ``bounds`` are clamped to them.
    epsilon : float
        The privacy parameter (> 0); the guarantee holds for replace neighbours (replace-one,
        n fixed).
    delta : float
        The privacy parameter delta, in (0, 1).
    bounds : tuple of float
        Public ``(a, b)`` with ``a < b`` (read, and checked, only with ``tuning="paper"``).
    tuning : {"fixed", "paper"}, default="fixed"
        "fixed": data-independent (alpha = eps/2); "paper": the Duff paper's data-dependent
        choice (PrivacyLeakWarning; no guarantee).
    granularity : float or None, default=None
        The output grid (a power of two; None: 2^-20; 0: float output).

    Returns
    -------
    SmoothSensitivityRelease
        The calibrated release.
    """
    ext = np.empty(0)
    if tuning == "paper":
        a, b = check_bounds(bounds)
        ext = sorted_padded(x, a, b)
    mech = _approx_release(ext, epsilon, delta, tuning, granularity)
    if mech.tuned_on_data:
        _warn_paper_tuning(2)
    return mech


def _approx_factory(epsilon: float, delta: float, tuning: str, granularity: float | None = None) -> _Factory:
    def make(ext: np.ndarray, a: float, b: float) -> SmoothSensitivityRelease:
        mech = _approx_release(ext, epsilon, delta, tuning, granularity)
        if mech.tuned_on_data:
            _warn_paper_tuning(4)  # make -> _release/_expected -> public function -> caller
        return mech

    return make


@overload
def smooth_sens_approx(
    x: ArrayLike,
    epsilon: float,
    *,
    delta: float,
    bounds: tuple[float, float],
    tuning: Literal["fixed", "paper"] = ...,
    rng: SeedLike = ...,
    size: None = ...,
    clip: bool = ...,
    accountant: Accountant | None = ...,
    granularity: float | None = ...,
    on_out_of_bounds: OutOfBounds = ...,
) -> float: ...


@overload
def smooth_sens_approx(
    x: ArrayLike,
    epsilon: float,
    *,
    delta: float,
    bounds: tuple[float, float],
    tuning: Literal["fixed", "paper"] = ...,
    rng: SeedLike = ...,
    size: int,
    clip: bool = ...,
    accountant: Accountant | None = ...,
    granularity: float | None = ...,
    on_out_of_bounds: OutOfBounds = ...,
) -> np.ndarray: ...


@validate_params(RELEASE_RULES | {"epsilon": EPSILON, "delta": DELTA, "tuning": TUNING})
def smooth_sens_approx(
    x: ArrayLike,
    epsilon: float,
    *,
    delta: float,
    bounds: tuple[float, float],
    tuning: Literal["fixed", "paper"] = "fixed",
    rng: SeedLike = None,
    size: int | None = None,
    clip: bool = True,
    accountant: Accountant | None = None,
    granularity: float | None = None,
    on_out_of_bounds: OutOfBounds = "clip",
) -> float | np.ndarray:
    """SmoothSens_{eps,delta} median: clip(y_m + (S*_beta(x)/alpha) Laplace, a, b).

    (eps, delta)-DP (replace-one) for ``tuning="fixed"``; no guarantee for ``"paper"``.
    On the grid ``granularity`` (None: 2^-20; 0: float output) with exact
    discrete Laplace noise, clipped to the grid points of [a, b].  Proof: mathematics §2.2
    and §4.5.

    Parameters
    ----------
    x : array_like
        1-D array of finite floats (n >= 1); records outside ``bounds`` are clamped to them.
    epsilon : float
        The privacy parameter (> 0); the guarantee holds for replace neighbours (replace-one,
        n fixed).
    delta : float
        The privacy parameter delta, in (0, 1).
    bounds : tuple of float
        Public ``(a, b)`` with ``a < b``.
    tuning : {"fixed", "paper"}, default="fixed"
        "fixed": data-independent (alpha = eps/2); "paper": the Duff paper's data-dependent
        choice (PrivacyLeakWarning; no guarantee).
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
    make = _approx_factory(epsilon, delta, tuning, granularity)
    return _release(make, x, bounds, clip, rng, size, accountant, on_out_of_bounds)


@validate_params({"x": SAMPLE, "epsilon": EPSILON, "delta": DELTA, "bounds": BOUNDS, "tuning": TUNING, "clip": BOOLEAN})
def expected_abs_error_smooth_sens_approx(
    x: ArrayLike,
    epsilon: float,
    *,
    delta: float,
    bounds: tuple[float, float],
    tuning: Literal["fixed", "paper"] = "fixed",
    clip: bool = True,
) -> float:
    """Exact E|smooth_sens_approx(x) - y_m| (unclipped: (S*_beta(x)/alpha) E|Z|, E|Z| = 1).

    The release is (epsilon, delta)-DP for replace neighbours with ``tuning="fixed"``
    (mathematics §2.2).

    Parameters
    ----------
    x : array_like
        1-D array of finite floats (n >= 1); records outside ``bounds`` are clamped to them.
    epsilon : float
        The privacy parameter (> 0); the guarantee holds for replace neighbours (replace-one,
        n fixed).
    delta : float
        The privacy parameter delta, in (0, 1).
    bounds : tuple of float
        Public ``(a, b)`` with ``a < b``.
    tuning : {"fixed", "paper"}, default="fixed"
        "fixed": data-independent (alpha = eps/2); "paper": the Duff paper's data-dependent
        choice (PrivacyLeakWarning; no guarantee).
    clip : bool, default=True
        Whether the release is clipped to ``bounds``.

    Returns
    -------
    float
        The exact expected absolute error from the lower median.
    """
    return _expected(_approx_factory(epsilon, delta, tuning), x, bounds, clip)
