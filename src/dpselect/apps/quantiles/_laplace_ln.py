"""LaplaceLN median baseline (Bun & Steinke 2019, §3.1.1; mathematics §2.5), replace-one.

Laplace-log-normal noise on the NRS smooth sensitivity of the lower median, through the
release path shared by every baseline (:mod:`._median_baselines`, which documents the
clipping rule and the exact errors).
"""

from __future__ import annotations

from typing import Any

from ...accounting import Accountant
from ...mechanisms import SmoothSensitivityRelease
from ._median_baselines import _RELATION, _expected, _release

__all__ = ["DEFAULT_LLN_DELTA", "expected_abs_error_laplace_ln", "laplace_ln", "laplace_ln_mechanism"]

#: Default delta of LaplaceLN (its conversion from zCDP needs one).
DEFAULT_LLN_DELTA = 1e-6


# ---------------------------------------------------------------------------
# LaplaceLN (Bun-Steinke)
# ---------------------------------------------------------------------------


def laplace_ln_mechanism(
    epsilon: float,
    *,
    delta: float = DEFAULT_LLN_DELTA,
    sigma: float | None = None,
    calibration: str = "proven",
    granularity: float | None = None,
) -> SmoothSensitivityRelease:
    """LaplaceLN release (mathematics §2.5), replace-one; privacy() is the zCDP guarantee converted to (eps, delta).

    ``granularity``: the output grid (a power of two; None: 2^-20; 0: float output).
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


def laplace_ln(
    x: Any,
    epsilon: float,
    *,
    bounds: Any,
    delta: float = DEFAULT_LLN_DELTA,
    sigma: float | None = None,
    calibration: str = "proven",
    rng: Any = None,
    size: Any = None,
    clip: bool = True,
    accountant: Accountant | None = None,
    granularity: float | None = None,
    on_out_of_bounds: str = "clip",
) -> Any:
    """LaplaceLN median: clip(y_m + (S*_beta(x)/alpha) X e^{sigma Y}, a, b); (eps, delta)-DP via zCDP (replace-one).

    Snapped to the grid ``granularity`` (None: 2^-20; 0: float output).
    Records outside ``bounds`` are clamped to them (``on_out_of_bounds="raise"``: ValueError, not private).
    """
    mech = laplace_ln_mechanism(epsilon, delta=delta, sigma=sigma, calibration=calibration, granularity=granularity)
    return _release(lambda *_: mech, x, bounds, clip, rng, size, accountant, on_out_of_bounds)


def expected_abs_error_laplace_ln(
    x: Any,
    epsilon: float,
    *,
    bounds: Any,
    delta: float = DEFAULT_LLN_DELTA,
    sigma: float | None = None,
    calibration: str = "proven",
    clip: bool = True,
) -> float:
    """Exact E|laplace_ln(x) - y_m| (unclipped: (S*_beta(x)/alpha) e^{sigma^2/2})."""
    mech = laplace_ln_mechanism(epsilon, delta=delta, sigma=sigma, calibration=calibration)
    return _expected(lambda *_: mech, x, bounds, clip)
