"""Floating-point-safe releases: the output grid, exact discrete Laplace, audits and the red-team attack."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from conftest import assert_frequencies_match, on_grid, possible_laplace
from conftest import assert_neighbour_frequencies as _assert_neighbour_frequencies
from dpselect import OutputLaw, SmoothSensitivityRelease
from dpselect._exact_numbers import check_granularity, dyadic_ceil, grid_index
from dpselect.accounting import grid_laplace_smooth_delta
from dpselect.analysis.audit import hockey_stick, privacy_loss
from dpselect.mechanisms._release_grid import grid_laplace_log_law
from dpselect.noise.exact import discrete_laplace_logpmf
from dpselect.noise.grid import GridLaplace, default_granularity, grid_values


def _aligned(law_x, law_y):
    """Two (points, logp) laws restricted to their common points (windows wide enough that the rest is
    below 1e-30, checked here)."""
    law_x, law_y = (
        (law.support, law.log_probabilities) if isinstance(law, OutputLaw) else law for law in (law_x, law_y)
    )
    pts = np.intersect1d(law_x[0], law_y[0])
    out = []
    for p, lp in (law_x, law_y):
        keep = np.isin(p, pts)
        assert np.exp(lp[~keep]).sum() < 1e-30  # negligible against every delta tested
        out.append(lp[keep])
    return pts, out[0], out[1]


# ------------------------------------------------------------------ the grid


def test_granularity_checks_and_default():
    assert check_granularity(0.25) == 0.25
    for bad in (0.3, 3.0, 0.0, -0.5, math.inf):
        with pytest.raises(ValueError, match="granularity"):
            check_granularity(bad)
    assert default_granularity(1.0) == 2.0**-20
    assert default_granularity(0.7) == 2.0**-21  # floor(log2 0.7) = -1
    assert dyadic_ceil(Fraction(1, 3)) >= Fraction(1, 3)
    assert dyadic_ceil(Fraction(1, 3)) / Fraction(1, 3) - 1 < Fraction(1, 2**40)


def test_grid_index_rounds_half_up_and_is_exact():
    np.testing.assert_array_equal(grid_index([0.49, 0.5, -0.5, 1.24, 1.25], 0.5), [1, 1, -1, 2, 3])
    assert grid_index(2.0**60, 1.0) == 2**51  # clamped, stays exact


# ------------------------------------------------------ fixed scale (GridLaplace)


def _grid_log_law(rel, value, window):
    """(grid points, log-probabilities) of ``rel.release(value)`` at the 2 window + 1 points around c(value)."""
    c = int(grid_index(value, rel.lam)[()])
    j = np.arange(-window, window + 1)
    return grid_values(c + j, rel.lam), discrete_laplace_logpmf(j, rel.scale_units)


@pytest.mark.parametrize("sens,eps,lam", [(1.0, 1.0, 0.25), (1.5, 0.5, 1.0), (1.0, 2.0, 2.0**-3)])
def test_grid_laplace_exact_audit(sens, eps, lam):
    rel = GridLaplace(sens, eps, granularity=lam)
    assert rel.privacy().epsilon == eps
    worst = 0.0
    for v in np.linspace(-1.3, 1.3, 27):
        for d in (sens, -sens, 0.5 * sens, 0.999 * sens):
            _, lx, ly = _aligned(_grid_log_law(rel, v, 2000), _grid_log_law(rel, v + d, 2000))
            worst = max(worst, privacy_loss(lx, ly, floor=1e-200))
    assert worst <= eps + 1e-9


def test_grid_laplace_negative_control_without_the_ceiling():
    # scale Delta/(lambda eps) instead of ceil(Delta/lambda)/eps: 0.49 and 1.99 round two steps apart
    eps, lam = 0.5, 1.0  # sensitivity 1.5
    naive = Fraction(3, 2) / Fraction(1, 2)
    j = np.arange(-300, 301)
    lx = discrete_laplace_logpmf(j - 0, naive)
    ly = discrete_laplace_logpmf(j - 2, naive)
    assert grid_index(0.49, lam) == 0 and grid_index(1.99, lam) == 2
    assert privacy_loss(lx, ly) > 1.3 * eps


def test_grid_laplace_frequencies_and_outputon_grid():
    rel = GridLaplace(1.0, 1.0, granularity=0.5)
    y = rel.release(0.3, size=40_000, rng=5)
    assert on_grid(y, 0.5)
    pts, lp = _grid_log_law(rel, 0.3, 30)
    idx = np.clip(np.searchsorted(pts, y), 0, pts.size)
    inside = np.isin(y, pts)
    draws = np.where(inside, idx, pts.size)
    probs = np.exp(lp)
    assert_frequencies_match(draws, np.append(probs, 1 - probs.sum()))
    arr = rel.release(np.array([0.0, 10.0, 3.3]), rng=1)
    assert arr.shape == (3,) and on_grid(arr, 0.5)


# ---------------------------------------------------- smooth-sensitivity Laplace on the grid


def _smooth_pairs(beta, s=1.0):
    for fs in (math.exp(beta), math.exp(-beta), 1.0):
        sy = s * fs
        for frac in (1.0, -1.0, 0.5, 0.0):
            yield s, sy, frac * min(s, sy)


@pytest.mark.parametrize("eps,delta,kappa", [(1.0, 1e-6, 0.5), (1.0, 1e-3, 0.3), (4.0, 1e-6, 0.5), (0.5, 1e-2, 0.7)])
@pytest.mark.parametrize(
    "lam,s",
    [(0.25, 1.0), (1.0, 0.25), (2.0**-6, 1.0), pytest.param(2.0**-10, 1.0, marks=pytest.mark.slow)],  # 2^-10: ~20 s
)
def test_smooth_grid_laplace_exact_audit(eps, delta, kappa, lam, s):
    rel = SmoothSensitivityRelease(eps, delta, noise="laplace", kappa=kappa, granularity=lam)
    claim = rel.privacy()
    assert (claim.epsilon, claim.delta) == (eps, delta)
    assert grid_laplace_smooth_delta(eps, rel.alpha, rel.beta + math.log1p(2.0**-40), 32) <= delta
    worst = 0.0
    for v in (0.0, 0.37 * lam, 0.5 * lam):
        for sx, sy, d in _smooth_pairs(rel.beta, s):
            w = int(80 * (max(sx, sy) + 32 * lam) / (rel.alpha * lam)) + 10
            _, lx, ly = _aligned(rel.log_law(v, sx, w), rel.log_law(v + d, sy, w))
            worst = max(worst, hockey_stick(lx, ly, eps))
    assert worst <= delta


def test_smooth_grid_laplace_negative_control_without_the_extra_lambda():
    # scale S/(alpha lambda) with S below the grid step: a rounding jump of one step costs far more than alpha
    rel = SmoothSensitivityRelease(1.0, 1e-6, noise="laplace", granularity=1.0)
    t = dyadic_ceil(Fraction(0.25) / Fraction(rel.alpha))
    lx = grid_laplace_log_law(0.49, t, 1.0, 300)
    ly = grid_laplace_log_law(0.51, t, 1.0, 300)
    _, a, b = _aligned(lx, ly)
    assert hockey_stick(a, b, 1.0) > 1e-3


def test_grid_laplace_and_snapped_t_neighbour_frequencies():
    n = 40_000
    rel = GridLaplace(1.0, 1.0, granularity=0.5)
    ya, yb = rel.release(0.2, size=n, rng=1), rel.release(1.2, size=n, rng=2)
    _assert_neighbour_frequencies(ya, yb, 1.0, n)
    with pytest.raises(AssertionError):  # negative control: the check catches an over-claimed epsilon
        _assert_neighbour_frequencies(ya, yb, 0.5, n)
    t = SmoothSensitivityRelease(1.0, granularity=0.5)
    yx = t.release(0.0, 0.5, size=n, rng=3)
    yy = t.release(0.5, 0.5 * math.exp(t.beta), size=n, rng=4)
    _assert_neighbour_frequencies(yx, yy, 1.0, n)


def test_smooth_grid_laplace_neighbour_frequencies():
    # coarse grid: on every grid point, freq_x <= e^eps freq_y (+ 5 standard errors), both ways
    eps, delta, lam = 1.0, 1e-6, 0.25
    rel = SmoothSensitivityRelease(eps, delta, noise="laplace", granularity=lam)
    sx, sy = 1.0, math.exp(-rel.beta)
    n = 40_000
    yx = rel.release(0.0, sx, size=n, rng=11)
    yy = rel.release(sy, sy, size=n, rng=12)
    assert on_grid(yx, lam) and on_grid(yy, lam)
    _assert_neighbour_frequencies(yx, yy, eps, n)
    for y, v, s in ((yx, 0.0, sx), (yy, sy, sy)):
        law = rel.log_law(v, s, 200)
        law_pts, lp = law.support, law.log_probabilities
        draws = np.where(np.isin(y, law_pts), np.searchsorted(law_pts, y), law_pts.size)
        probs = np.exp(lp)
        assert_frequencies_match(draws, np.append(probs, max(0.0, 1 - probs.sum())))


@pytest.mark.parametrize("noise,delta", [("student_t", 0.0), ("polynomial", 0.0), ("lln", 1e-6)])
def test_snapped_releases_are_on_the_grid_and_match_the_snapped_law(noise, delta):
    lam = 0.5
    rel = SmoothSensitivityRelease(1.0, delta, noise=noise, granularity=lam)
    y = rel.release(0.3, 0.4, size=40_000, rng=3)
    assert on_grid(y, lam)
    law = rel.log_law(0.3, 0.4, 400)
    pts, lp = law.support, law.log_probabilities
    draws = np.where(np.isin(y, pts), np.searchsorted(pts, y), pts.size)
    probs = np.exp(lp)
    assert_frequencies_match(draws, np.append(probs, max(0.0, 1 - probs.sum())))
    if delta == 0.0:  # pure: the snapped ideal law keeps the loss below epsilon on neighbours
        _, a, b = _aligned(rel.log_law(0.3, 0.4, 400), rel.log_law(0.7, 0.4 * math.exp(rel.beta), 400))
        assert privacy_loss(a, b) <= 1.0 + 1e-9


def test_default_grid_and_float_opt_out():
    rel = SmoothSensitivityRelease(1.0, 1e-6, noise="laplace")
    assert rel.granularity == 2.0**-20 and rel.on_grid
    assert on_grid(rel.release(1.0, 0.5, size=100, rng=0), 2.0**-20)
    old = SmoothSensitivityRelease(1.0, 1e-6, noise="laplace", granularity=0)
    assert not old.on_grid
    with pytest.raises(ValueError, match="granularity"):
        SmoothSensitivityRelease(1.0, granularity=0.1)
    with pytest.raises(ValueError, match="grid"):
        old.log_law(0.0, 1.0)
    clipped = SmoothSensitivityRelease(1.0, granularity=0.25).release(
        0.0, 10.0, size=200, clip_output=(-0.3, 0.6), rng=2
    )
    assert clipped.min() >= -0.25 and clipped.max() <= 0.5 and on_grid(clipped, 0.25)


# ---------------------------------------------------- the red team's reconstruction attack


def test_reconstruction_attack_flags_the_float_path():
    # negative control: the old unsnapped float release; most outputs from 0 are impossible from 1
    rel = SmoothSensitivityRelease(1.0, 1e-6, noise="laplace", granularity=0)
    scale = rel.scale(1.0)
    gen = np.random.default_rng(0)
    y = rel.release(0.0, 1.0, size=400, rng=gen)
    assert all(possible_laplace(v, 0.0, scale) for v in y[:50])  # the reconstruction is faithful
    impossible = sum(not possible_laplace(v, 1.0, scale) for v in y)
    assert impossible > 0.5 * y.size


def test_reconstruction_attack_finds_nothing_on_the_grid():
    rel = SmoothSensitivityRelease(1.0, 1e-6, noise="laplace")
    lam = rel.granularity
    y = rel.release(0.0, 1.0, size=2000, rng=0)
    assert on_grid(y, lam)
    # every grid point has positive probability under the neighbour (value 1.0): exact law, finite log-pmf
    t_pts = rel.log_law(1.0, 1.0, 1).support
    c1 = round(t_pts[1] / lam)
    from dpselect.mechanisms._release_grid import grid_laplace_scale

    t = grid_laplace_scale(1.0, rel.alpha, lam)
    logp = discrete_laplace_logpmf(np.round(y / lam) - c1, t)
    assert np.isfinite(logp).all()


def test_grid_laplace_log_tail_matches_summation():
    rel = GridLaplace(1.0, 0.7, granularity=0.5)
    j = np.arange(-4000, 4001)
    p = np.exp(discrete_laplace_logpmf(j, rel.scale_units))
    for x in (-3.2, -0.5, -0.1, 0.0, 0.2, 0.5, 1.0, 7.3):
        brute = p[j * 0.5 >= x].sum()
        assert math.exp(rel.log_tail(x)) == pytest.approx(brute, rel=1e-10)
