"""Smooth-sensitivity median baselines of the Duff paper (Gillenwater & Muñoz Medina, §6).

All three release the **lower median** y_m (m = ceil(n/2), the convention of
:func:`dpselect.apps.quantiles.smooth_sensitivity_median` and of the Duff median)
of data x in the public ``bounds`` = [a, b] as

    y_m + (S*_beta(x) / alpha) Z

with the NRS07 beta-smooth sensitivity of the median (mathematics §4.5,
:func:`dpselect.apps.quantiles.smooth_sensitivity_median`), through
:class:`dpselect.mechanisms.release.SmoothSensitivityRelease`.

Neighbour relation: **replace-one** ("replace", n fixed) -- the NRS median
smooth sensitivity is only a smooth bound under replace-one (mathematics §4.5).
The Duff median (``apps.duff``) is epsilon-DP under add/remove, i.e. 2
epsilon-DP under replace-one; comparisons "at the same epsilon" (as in the
Duff paper) therefore compare guarantees under different relations.

Baselines
---------
* :func:`smooth_sens_pure` -- SmoothSens_eps: Cauchy noise (polynomial
  gamma = 2), alpha = beta = eps / (2 (gamma + 1)) = eps / 6 (NRS07 Lemmas
  2.6/2.7, Duff Prop. 3; ``admissible_method="nrs"``).  epsilon-DP.  The
  Cauchy law has no mean: the unclipped (``clip=False``) expected absolute
  error is infinite.
* :func:`smooth_sens_approx` -- SmoothSens_{eps,delta}: Laplace noise with the
  exact condition eps >= alpha + beta, eps >= alpha + (e^beta - 1) ln(1/delta)
  - beta (Duff Prop. 2 + mathematics §7 item 26, mathematics §2.2, §6.1).
    - ``tuning="fixed"`` (default, **data-independent**, DP as stated):
      alpha = eps/2 (k = 1), beta the largest admissible beta.
    - ``tuning="paper"``: the Duff paper's baseline, (alpha, beta) chosen to
      minimise S*_beta(x)/alpha over the admissible set by a 1-D search over
      beta (alpha = alpha_max(beta) = min(eps - beta, eps + beta - (e^beta -
      1) ln(1/delta))).  **The choice depends on the private data**, so the
      stated (eps, delta) guarantee is not proven for it; a
      :class:`~dpselect._warnings.PrivacyLeakWarning` is issued.  Use it only
      to reproduce the paper's numbers.
* :func:`laplace_ln` -- LaplaceLN (Bun & Steinke 2019, §3.1.1; mathematics §2.5):
  Laplace-log-normal noise, rho-zCDP with rho = (beta/sigma + e^{3 sigma^2/2}
  alpha)^2/2.  ``calibration="proven"`` (default): calibrated so that the
  converted guarantee rho + 2 sqrt(rho ln(1/delta)) equals eps;
  ``calibration="paper"``: epsilon is BS's CDP parameter (rho = eps^2/2; the
  reported (eps', delta) is then larger than eps).  That the Duff paper used
  the CDP reading is our assumption (its text was not available to us).

Clipping (the same rule for every baseline)
-------------------------------------------
Every release is clipped to the public bounds ``[a, b]`` by default
(``clip=True``): ``clip(y_m + (S/alpha) Z, a, b)``.  Clipping is
post-processing, so the guarantee is unchanged, and since ``y_m`` lies in
``[a, b]`` it never increases the error (the Duff mechanisms output points of
``[a, b]`` too, so the comparison is like for like).  ``clip=False`` gives the
raw release.

Which variant the experiments use: a reproduction of the Duff paper's table
should use ``tuning="paper"`` / ``calibration="paper"`` (the paper's
baselines) and report the library defaults (data-independent, calibrated to
the stated (eps, delta)) next to them; ``tests/test_median_baselines.py``
asserts the Duff-vs-baseline ordering.

Exact errors
------------
Each baseline has an exact ``expected_abs_error_*`` counterpart, all computed
by one helper: the release error relative to the true (lower) median is
``(S/alpha) Z`` (``E|.| = (S/alpha) E|Z|``, inf for Cauchy) unclipped, and
``clip((S/alpha) Z, a - y_m, b - y_m)`` clipped (a one-dimensional integral of
the noise survival function, see ``ErrorDistribution.expected_abs_error``).

API: data and epsilon positional, everything else keyword-only; the release
functions take ``rng``, ``size`` and ``accountant`` (charged
``mechanism.privacy()`` before any randomness is drawn -- the paper-tuned
variant reports no guarantee, so an accountant with a finite budget refuses it).

Examples
--------
>>> from dpselect.apps.quantiles import expected_abs_error_smooth_sens_pure, smooth_sens_pure
>>> x = [0.1, 0.3, 0.35, 0.4, 0.5, 0.55, 0.9]
>>> 0.0 <= smooth_sens_pure(x, 1.0, bounds=(0.0, 1.0), rng=0) <= 1.0
True
>>> float(expected_abs_error_smooth_sens_pure(x, 1.0, bounds=(0.0, 1.0), clip=False))
inf
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, overload

import numpy as np
from numpy.typing import ArrayLike

from ...._params import validate_params
from ....accounting import Accountant, charge
from ....analysis import error_distribution
from ....mechanisms import SmoothSensitivityRelease
from ....typing import SeedLike
from .._order_stats import lower_median_index, smooth_sens_sorted, sorted_padded
from .._rules import (
    ACCOUNTANT,
    BOOLEAN,
    BOUNDS,
    EPSILON,
    GRANULARITY,
    OUT_OF_BOUNDS_RULE,
    SAMPLE,
    SEED,
    SIZE,
    check_bounds,
)

__all__ = ["expected_abs_error_smooth_sens_pure", "smooth_sens_pure", "smooth_sens_pure_mechanism"]

_RELATION = "replace"

#: What a baseline release accepts besides its calibration (one rule per parameter).
RELEASE_RULES = {
    "x": SAMPLE,
    "bounds": BOUNDS,
    "rng": SEED,
    "size": SIZE,
    "clip": BOOLEAN,
    "accountant": ACCOUNTANT,
    "granularity": GRANULARITY,
    "on_out_of_bounds": OUT_OF_BOUNDS_RULE,
}
OutOfBounds = Literal["clip", "raise"]

#: builds the release from the validated (padded sorted data, a, b)
_Factory = Callable[[np.ndarray, float, float], SmoothSensitivityRelease]


class _Data:
    """Validated data: padded sorted order statistics, bounds and lower median."""

    def __init__(self, x: Any, bounds: Any, clip: Any, on_out_of_bounds: str = "clip") -> None:
        if not isinstance(clip, (bool, np.bool_)):
            raise TypeError(f"clip must be a bool, got {type(clip).__name__}")
        self.clip = bool(clip)
        self.a, self.b = check_bounds(bounds)
        self.ext = sorted_padded(x, self.a, self.b, on_out_of_bounds=on_out_of_bounds)
        self.m = lower_median_index(self.ext.size - 2)
        self.median = float(self.ext[self.m])

    def smooth_sensitivity(self, beta: float) -> float:
        return smooth_sens_sorted(self.ext, self.m, beta)


def _release(
    make: _Factory, x: Any, bounds: Any, clip: Any, rng: Any, size: Any, accountant: Any, on_out_of_bounds: str
) -> Any:
    """The one release path of every baseline: charge, then clip(y_m + (S/alpha) Z, a, b) (or unclipped).

    Records outside ``bounds`` are clamped to them (``on_out_of_bounds="raise"``: ValueError, not private).
    """
    d = _Data(x, bounds, clip, on_out_of_bounds)
    mech = make(d.ext, d.a, d.b)
    s = d.smooth_sensitivity(mech.beta)
    charge(accountant, mech.privacy(), size=size)
    return mech.release(d.median, s, rng=rng, size=size, clip=(d.a, d.b) if d.clip else None)


def _expected(make: _Factory, x: Any, bounds: Any, clip: Any) -> float:
    """The one exact-error path: E|release - y_m| for the (clipped) release of ``make``."""
    d = _Data(x, bounds, clip)
    mech = make(d.ext, d.a, d.b)
    dist = error_distribution(mech, d.smooth_sensitivity(mech.beta))
    if not d.clip:
        return dist.expected_abs_error()
    return dist.expected_abs_error(within=(d.a - d.median, d.b - d.median))


# ---------------------------------------------------------------------------
# SmoothSens_eps (Cauchy, NRS constants)
# ---------------------------------------------------------------------------


@validate_params({"epsilon": EPSILON, "granularity": GRANULARITY})
def smooth_sens_pure_mechanism(epsilon: float, *, granularity: float | None = None) -> SmoothSensitivityRelease:
    """SmoothSens_eps: Cauchy, alpha = beta = eps/6 (Duff Prop. 3), replace-one, epsilon-DP.

    Parameters
    ----------
    epsilon : float
        The privacy parameter (> 0): epsilon-DP for replace neighbours (mathematics §4.5, §2.3).
    granularity : float or None, default=None
        The output grid (a power of two; None: 2^-20; 0: float output).

    Returns
    -------
    SmoothSensitivityRelease
        The calibrated release.

    Examples
    --------
    >>> from dpselect.apps.quantiles import smooth_sens_pure_mechanism
    >>> smooth_sens_pure_mechanism(1.0).privacy().epsilon
    1.0
    """
    return SmoothSensitivityRelease(
        epsilon,
        noise="polynomial",
        gamma=2,
        kappa=0.5,
        admissible_method="nrs",
        relation=_RELATION,
        granularity=granularity,
    )


@overload
def smooth_sens_pure(
    x: ArrayLike,
    epsilon: float,
    *,
    bounds: tuple[float, float],
    rng: SeedLike = ...,
    size: None = ...,
    clip: bool = ...,
    accountant: Accountant | None = ...,
    granularity: float | None = ...,
    on_out_of_bounds: OutOfBounds = ...,
) -> float: ...
@overload
def smooth_sens_pure(
    x: ArrayLike,
    epsilon: float,
    *,
    bounds: tuple[float, float],
    rng: SeedLike = ...,
    size: int,
    clip: bool = ...,
    accountant: Accountant | None = ...,
    granularity: float | None = ...,
    on_out_of_bounds: OutOfBounds = ...,
) -> np.ndarray: ...
@validate_params(RELEASE_RULES | {"epsilon": EPSILON})
def smooth_sens_pure(
    x: ArrayLike,
    epsilon: float,
    *,
    bounds: tuple[float, float],
    rng: SeedLike = None,
    size: int | None = None,
    clip: bool = True,
    accountant: Accountant | None = None,
    granularity: float | None = None,
    on_out_of_bounds: OutOfBounds = "clip",
) -> float | np.ndarray:
    """SmoothSens_eps median: clip(y_m + (6 S*_{eps/6}(x)/eps) Cauchy, a, b); epsilon-DP (replace-one).

    Snapped to the grid ``granularity`` (None: 2^-20; 0: float output).  Proof:
    mathematics §4.5 (the smooth sensitivity) and §2.3 (Cauchy admissibility).

    Parameters
    ----------
    x : array_like
        1-D array of finite floats (n >= 1); records outside ``bounds`` are clamped to them.
    epsilon : float
        The privacy parameter (> 0); the guarantee holds for replace neighbours (replace-one,
        n fixed).
    bounds : tuple of float
        Public ``(a, b)`` with ``a < b``.
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
    mech = smooth_sens_pure_mechanism(epsilon, granularity=granularity)
    return _release(lambda *_: mech, x, bounds, clip, rng, size, accountant, on_out_of_bounds)


@validate_params({"x": SAMPLE, "epsilon": EPSILON, "bounds": BOUNDS, "clip": BOOLEAN})
def expected_abs_error_smooth_sens_pure(
    x: ArrayLike, epsilon: float, *, bounds: tuple[float, float], clip: bool = True
) -> float:
    """Exact E|smooth_sens_pure(x) - y_m| (inf for clip=False: the Cauchy law has no mean).

    The release is epsilon-DP for replace neighbours (mathematics §4.5).

    Parameters
    ----------
    x : array_like
        1-D array of finite floats (n >= 1); records outside ``bounds`` are clamped to them.
    epsilon : float
        The privacy parameter (> 0); the guarantee holds for replace neighbours (replace-one,
        n fixed).
    bounds : tuple of float
        Public ``(a, b)`` with ``a < b``.
    clip : bool, default=True
        Whether the release is clipped to ``bounds``.

    Returns
    -------
    float
        The exact expected absolute error from the lower median.
    """
    mech = smooth_sens_pure_mechanism(epsilon)
    return _expected(lambda *_: mech, x, bounds, clip)
