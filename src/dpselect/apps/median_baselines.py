"""Smooth-sensitivity median baselines of the Duff paper (Gillenwater & Muñoz Medina, §6).

All three release the **lower median** y_m (m = ceil(n/2), the convention of
:func:`dpselect.apps.median.smooth_sensitivity_median` and of the Duff median)
of data x in the public ``bounds`` = [a, b] as

    y_m + (S*_beta(x) / alpha) Z

with the NRS07 beta-smooth sensitivity of the median (SPEC.md §4.5,
:func:`dpselect.apps.median.smooth_sensitivity_median`), through
:class:`dpselect.mechanisms.release.SmoothSensitivityRelease`.

Neighbour relation: **replace-one** ("replace", n fixed) -- the NRS median
smooth sensitivity is only a smooth bound under replace-one (SPEC.md §4.5).
The Duff median (``apps.median``) is epsilon-DP under add/remove, i.e. 2
epsilon-DP under replace-one; comparisons "at the same epsilon" (as in the
Duff paper) therefore compare guarantees under different relations.

Baselines
---------
* :func:`smooth_sens_pure` -- SmoothSens_eps: Cauchy noise (polynomial
  gamma = 2), alpha = beta = eps / (2 (gamma + 1)) = eps / 6 (NRS07 Lemmas
  2.6/2.7, Duff Prop. 3; ``admissible_method="nrs"``).  epsilon-DP.  The
  Cauchy law has no mean: the unclipped expected absolute error is infinite;
  with ``clip=True`` (output clipped to the bounds, post-processing) it is
  finite.
* :func:`smooth_sens_approx` -- SmoothSens_{eps,delta}: Laplace noise with the
  exact condition eps >= alpha + beta, eps >= alpha + (e^beta - 1) ln(1/delta)
  - beta (Duff Prop. 2 + errata 26, SPEC.md §2.2, §6.1).
    - ``tuning="fixed"`` (default, **data-independent**, DP as stated):
      alpha = eps/2 (k = 1), beta the largest admissible beta.
    - ``tuning="paper"``: the Duff paper's baseline, (alpha, beta) chosen to
      minimise S*_beta(x)/alpha over the admissible set by a 1-D search over
      beta (alpha = alpha_max(beta) = min(eps - beta, eps + beta - (e^beta -
      1) ln(1/delta))).  **The choice depends on the private data**, so the
      stated (eps, delta) guarantee is not proven for it; a
      :class:`~dpselect._warnings.PrivacyLeakWarning` is issued.  Use it only
      to reproduce the paper's numbers.
* :func:`laplace_ln` -- LaplaceLN (Bun & Steinke 2019, §3.1.1; SPEC.md §2.5):
  Laplace-log-normal noise, rho-zCDP with rho = (beta/sigma + e^{3 sigma^2/2}
  alpha)^2/2.  ``calibration="exact"`` (default): calibrated so that the
  converted guarantee rho + 2 sqrt(rho ln(1/delta)) equals eps;
  ``calibration="paper"``: epsilon is BS's CDP parameter (rho = eps^2/2; the
  reported (eps', delta) is then larger than eps).  That the Duff paper used
  the CDP reading is our assumption (its text was not available to us).

Which variant the experiments use: a reproduction of the Duff paper's table
should use ``tuning="paper"`` / ``calibration="paper"`` (the paper's
baselines) and report the library defaults (data-independent, calibrated to
the stated (eps, delta)) next to them; ``tests/test_release.py`` asserts the
Duff-vs-baseline ordering and prints both.

Exact errors
------------
Each baseline has an exact ``expected_abs_error_*`` counterpart: the release
error relative to the true (lower) median is exactly (S/alpha) Z, so
E|error| = (S/alpha) E|Z| (inf for Cauchy).  With ``clip=True`` it is
E|clip(y_m + (S/alpha) Z, a, b) - y_m| (a one-dimensional integral of the
noise survival function, see :meth:`ErrorDistribution.expected_abs_error`).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .._validation import check_array_1d, check_delta, check_epsilon, check_finite_float
from .._warnings import PrivacyLeakWarning
from ..mechanisms.release import SmoothSensitivityRelease
from .median import smooth_sensitivity_median

__all__ = [
    "expected_abs_error_laplace_ln",
    "expected_abs_error_smooth_sens_approx",
    "expected_abs_error_smooth_sens_pure",
    "laplace_ln",
    "laplace_ln_mechanism",
    "smooth_sens_approx",
    "smooth_sens_approx_mechanism",
    "smooth_sens_pure",
    "smooth_sens_pure_mechanism",
]

_TUNINGS = ("fixed", "paper")
_RELATION = "replace"
#: Default delta of LaplaceLN (its conversion from zCDP needs one).
DEFAULT_LLN_DELTA = 1e-6


def _check_data(x: Any, bounds: Any) -> tuple[np.ndarray, float, float]:
    if isinstance(bounds, (str, bytes)) or not hasattr(bounds, "__len__") or len(bounds) != 2:
        raise ValueError("bounds must be a pair (a, b)")
    a = check_finite_float(bounds[0], "bounds[0]")
    b = check_finite_float(bounds[1], "bounds[1]")
    if not a < b:
        raise ValueError(f"bounds must satisfy a < b, got ({a!r}, {b!r})")
    arr = check_array_1d(x, "x")
    if arr.min() < a or arr.max() > b:
        raise ValueError(f"x values must lie within bounds [{a!r}, {b!r}]")
    return arr, a, b


def _lower_median(arr: np.ndarray) -> float:
    n = arr.size
    return float(np.partition(arr, (n + 1) // 2 - 1)[(n + 1) // 2 - 1])


def _release(mech: SmoothSensitivityRelease, arr: np.ndarray, a: float, b: float, rng: Any, size: Any, clip: bool) -> Any:
    s = smooth_sensitivity_median(arr, mech.beta, (a, b))
    return mech.release(_lower_median(arr), s, rng=rng, size=size, clip=(a, b) if clip else None)


def _expected(mech: SmoothSensitivityRelease, arr: np.ndarray, a: float, b: float, clip: bool) -> float:
    s = smooth_sensitivity_median(arr, mech.beta, (a, b))
    dist = mech.error_distribution(s)
    if not clip:
        return dist.expected_abs_error()
    med = _lower_median(arr)
    return dist.expected_abs_error(within=(a - med, b - med))


def _check_clip(clip: Any) -> bool:
    if not isinstance(clip, (bool, np.bool_)):
        raise TypeError(f"clip must be a bool, got {type(clip).__name__}")
    return bool(clip)


# ---------------------------------------------------------------------------
# SmoothSens_eps (Cauchy, NRS constants)
# ---------------------------------------------------------------------------


def smooth_sens_pure_mechanism(epsilon: float) -> SmoothSensitivityRelease:
    """SmoothSens_eps: Cauchy, alpha = beta = eps/6 (Duff Prop. 3), replace-one, epsilon-DP."""
    return SmoothSensitivityRelease(
        epsilon, noise="polynomial", gamma=2, k=1.0, admissible_method="nrs", relation=_RELATION
    )


def smooth_sens_pure(x: Any, epsilon: float, bounds: Any, rng: Any = None, *, size: Any = None, clip: bool = False) -> Any:
    """SmoothSens_eps median: y_m + (6 S*_{eps/6}(x)/eps) Cauchy; epsilon-DP (replace-one)."""
    clip = _check_clip(clip)
    arr, a, b = _check_data(x, bounds)
    return _release(smooth_sens_pure_mechanism(epsilon), arr, a, b, rng, size, clip)


def expected_abs_error_smooth_sens_pure(x: Any, epsilon: float, bounds: Any, *, clip: bool = False) -> float:
    """Exact E|smooth_sens_pure(x) - y_m| (inf unless clip=True: the Cauchy law has no mean)."""
    clip = _check_clip(clip)
    arr, a, b = _check_data(x, bounds)
    return _expected(smooth_sens_pure_mechanism(epsilon), arr, a, b, clip)


# ---------------------------------------------------------------------------
# SmoothSens_{eps,delta} (Laplace, exact condition)
# ---------------------------------------------------------------------------


def _alpha_max(beta: np.ndarray, epsilon: float, L: float) -> np.ndarray:
    """Largest alpha with eps >= alpha + beta and eps >= alpha + (e^beta - 1) L - beta (SPEC §6.1)."""
    return np.minimum(epsilon - beta, epsilon + beta - np.expm1(beta) * L)


def _paper_k(arr: np.ndarray, a: float, b: float, epsilon: float, delta: float) -> float:
    """Data-dependent k = 2 alpha/eps minimising S*_beta(x)/alpha_max(beta) (Duff §6 baseline).

    Log-spaced grid over beta in (0, beta_hi) (beta_hi: alpha_max(beta_hi) = 0),
    then a golden-section refinement around the best grid point.
    """
    L = -math.log(delta)
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
        return math.log(smooth_sensitivity_median(arr, beta, (a, b))) - math.log(am)

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


def smooth_sens_approx_mechanism(
    x: Any, epsilon: float, delta: float, bounds: Any, *, tuning: str = "fixed"
) -> SmoothSensitivityRelease:
    """The calibrated Laplace release of SmoothSens_{eps,delta} (see module docstring).

    ``tuning="fixed"``: alpha = eps/2, data-independent (x is not used).
    ``tuning="paper"``: alpha, beta minimise S*_beta(x)/alpha (data-dependent;
    PrivacyLeakWarning, and ``privacy()`` reports no guarantee).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0:
        raise ValueError("delta must be > 0 for the Laplace baseline")
    if tuning not in _TUNINGS:
        raise ValueError(f"tuning must be one of {_TUNINGS}, got {tuning!r}")
    k = 1.0
    if tuning == "paper":
        arr, a, b = _check_data(x, bounds)
        warnings.warn(
            "tuning='paper' chooses (alpha, beta) from the private data (Duff §6 baseline); "
            "the stated (epsilon, delta) guarantee does not cover this choice",
            PrivacyLeakWarning,
            stacklevel=3,
        )
        k = _paper_k(arr, a, b, epsilon, delta)
    return SmoothSensitivityRelease(
        epsilon, delta, noise="laplace", k=k, relation=_RELATION, tuned_on_data=tuning == "paper"
    )


def smooth_sens_approx(
    x: Any,
    epsilon: float,
    delta: float,
    bounds: Any,
    rng: Any = None,
    *,
    tuning: str = "fixed",
    size: Any = None,
    clip: bool = False,
) -> Any:
    """SmoothSens_{eps,delta} median: y_m + (S*_beta(x)/alpha) Laplace; (eps, delta)-DP (replace-one) for tuning='fixed'."""
    clip = _check_clip(clip)
    arr, a, b = _check_data(x, bounds)
    mech = smooth_sens_approx_mechanism(arr, epsilon, delta, (a, b), tuning=tuning)
    return _release(mech, arr, a, b, rng, size, clip)


def expected_abs_error_smooth_sens_approx(
    x: Any, epsilon: float, delta: float, bounds: Any, *, tuning: str = "fixed", clip: bool = False
) -> float:
    """Exact E|smooth_sens_approx(x) - y_m| = (S*_beta(x)/alpha) E|Z| (E|Z| = 1)."""
    clip = _check_clip(clip)
    arr, a, b = _check_data(x, bounds)
    mech = smooth_sens_approx_mechanism(arr, epsilon, delta, (a, b), tuning=tuning)
    return _expected(mech, arr, a, b, clip)


# ---------------------------------------------------------------------------
# LaplaceLN (Bun-Steinke)
# ---------------------------------------------------------------------------


def laplace_ln_mechanism(
    epsilon: float, delta: float = DEFAULT_LLN_DELTA, *, sigma: float | None = None, calibration: str = "exact"
) -> SmoothSensitivityRelease:
    """LaplaceLN release (SPEC §2.5), replace-one; privacy() is the zCDP guarantee converted to (eps, delta)."""
    return SmoothSensitivityRelease(
        epsilon, delta, noise="lln", k=1.0, sigma=sigma, relation=_RELATION, calibration=calibration
    )


def laplace_ln(
    x: Any,
    epsilon: float,
    bounds: Any,
    rng: Any = None,
    delta: float = DEFAULT_LLN_DELTA,
    *,
    sigma: float | None = None,
    calibration: str = "exact",
    size: Any = None,
    clip: bool = False,
) -> Any:
    """LaplaceLN median: y_m + (S*_beta(x)/alpha) X e^{sigma Y}; (eps, delta)-DP via zCDP (replace-one)."""
    clip = _check_clip(clip)
    arr, a, b = _check_data(x, bounds)
    mech = laplace_ln_mechanism(epsilon, delta, sigma=sigma, calibration=calibration)
    return _release(mech, arr, a, b, rng, size, clip)


def expected_abs_error_laplace_ln(
    x: Any,
    epsilon: float,
    bounds: Any,
    delta: float = DEFAULT_LLN_DELTA,
    *,
    sigma: float | None = None,
    calibration: str = "exact",
    clip: bool = False,
) -> float:
    """Exact E|laplace_ln(x) - y_m| = (S*_beta(x)/alpha) e^{sigma^2/2}."""
    clip = _check_clip(clip)
    arr, a, b = _check_data(x, bounds)
    mech = laplace_ln_mechanism(epsilon, delta, sigma=sigma, calibration=calibration)
    return _expected(mech, arr, a, b, clip)
