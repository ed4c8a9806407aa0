"""Tests for dpselect.noise (SPEC.md §2)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst
from scipy import integrate, stats

from dpselect.accounting import dp_to_zcdp, laplace_smooth_delta, nrs_laplace_parameters, zcdp_to_dp
from dpselect.noise import (
    Exponential,
    Gumbel,
    Laplace,
    LaplaceLogNormal,
    NoiseDistribution,
    OneSided,
    PolynomialTail,
    StudentT,
)

SYMMETRIC = [Laplace(), StudentT(1), StudentT(3), StudentT(30), LaplaceLogNormal(0.3), LaplaceLogNormal(1.0)]
SYMMETRIC += [PolynomialTail(g) for g in (1.5, 2, 4, 6, 10)]
ALL = [Gumbel(), Exponential()] + SYMMETRIC + [law.one_sided() for law in SYMMETRIC]
IDS = [repr(law) for law in ALL]


def _pdf_integral(law: NoiseDistribution) -> float:
    f = lambda z: float(law.pdf(z))
    pieces = [(0, 1), (1, np.inf)] if law.support[0] == 0 else [(-np.inf, -1), (-1, 0), (0, 1), (1, np.inf)]
    return sum(integrate.quad(f, a, b, epsabs=1e-13, epsrel=1e-12, limit=500)[0] for a, b in pieces)


@pytest.mark.parametrize("law", ALL, ids=IDS)
def test_pdf_integrates_to_one(law: NoiseDistribution) -> None:
    assert _pdf_integral(law) == pytest.approx(1.0, abs=1e-8)


@pytest.mark.parametrize("law", ALL, ids=IDS)
def test_cdf_is_integral_of_pdf(law: NoiseDistribution) -> None:
    lo = law.support[0]
    for z in (0.3, 2.0, 7.0):
        left = -np.inf if lo < 0 else 0.0
        ref = integrate.quad(lambda v: float(law.pdf(v)), left, z, epsabs=1e-14, epsrel=1e-12, limit=500)[0]
        assert law.cdf(z) == pytest.approx(ref, rel=1e-9)
        assert law.cdf(z) + law.sf(z) == pytest.approx(1.0, rel=1e-14)


# ----------------------------------------------------------------------------- against scipy.stats
LIGHT = np.concatenate([-np.geomspace(1e-8, 700, 40), [0.0], np.geomspace(1e-8, 700, 40)])
HEAVY = np.concatenate([-np.geomspace(1e-8, 1e3, 40), [0.0], np.geomspace(1e-8, 1e3, 40)])
QS = np.array([1e-300, 1e-100, 1e-10, 0.01, 0.2, 0.5, 0.7, 0.99, 1 - 1e-10])
QT = QS[1:-1]  # scipy's t.ppf(1e-300) is inf and halfcauchy.ppf(1 - 1e-10) loses 6e-7 (tan near pi/2)


SCIPY_CASES = [
    (Laplace(), stats.laplace, LIGHT, QS),
    (Gumbel(), stats.gumbel_r, LIGHT[LIGHT > -6], QS),
    (Exponential(), stats.expon, LIGHT, QS),
    (Laplace().one_sided(), stats.expon, LIGHT, QS),
    (StudentT(1), stats.cauchy, HEAVY, QS),  # scipy.stats.t(1) loses 1e-9 near 0; cauchy is exact
    (StudentT(3), stats.t(3), HEAVY, QT),
    (StudentT(30), stats.t(30), HEAVY[np.abs(HEAVY) < 200], QT),
    (StudentT(1).one_sided(), stats.halfcauchy, HEAVY, QT),
    (PolynomialTail(2), stats.cauchy, HEAVY, QS),
]


@pytest.mark.parametrize("law,ref,grid,qs", SCIPY_CASES, ids=[repr(c[0]) for c in SCIPY_CASES])
def test_agrees_with_scipy(law: NoiseDistribution, ref: stats.rv_continuous, grid: np.ndarray, qs: np.ndarray) -> None:
    with np.errstate(all="ignore"):
        for name in ("logpdf", "pdf", "logcdf", "cdf", "logsf", "sf"):
            mine, theirs = getattr(law, name)(grid), getattr(ref, name)(grid)
            np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=0, err_msg=name)
    np.testing.assert_allclose(law.ppf(qs), ref.ppf(qs), rtol=1e-10)
    np.testing.assert_allclose(law.isf(qs), ref.isf(qs), rtol=1e-10)


def test_student_t_one_sided_is_twice_the_tail() -> None:
    law, ref = StudentT(3).one_sided(), stats.t(3)
    z = np.geomspace(1e-6, 1e6, 50)
    np.testing.assert_allclose(law.sf(z), 2 * ref.sf(z), rtol=1e-10)
    np.testing.assert_allclose(law.cdf(z), 2 * ref.cdf(z) - 1, rtol=1e-9)
    np.testing.assert_allclose(law.pdf(z), 2 * ref.pdf(z), rtol=1e-10)
    assert law.pdf(-1.0) == 0.0 and law.logsf(-1.0) == 0.0 and law.logcdf(-1.0) == -np.inf


def test_laplace_one_sided_equals_exponential() -> None:
    a, b = Laplace().one_sided(), Exponential()
    z = np.concatenate([[-3.0, -0.0, 0.0], np.geomspace(1e-10, 1e6, 60)])
    for name in ("logpdf", "logcdf", "logsf", "pdf", "cdf", "sf"):
        np.testing.assert_array_equal(getattr(a, name)(z), getattr(b, name)(z), err_msg=name)
    w = np.array([-1e4, -700, -1, -1e-9, 0.0])
    np.testing.assert_array_equal(a.ilogsf(w), b.ilogsf(w))
    np.testing.assert_array_equal(a.ilogcdf(w), b.ilogcdf(w))
    assert a.sample(5, rng=3).tolist() == b.sample(5, rng=3).tolist()
    assert (a.mean_abs(), a.var(), a.width) == (1.0, 1.0, pytest.approx(math.log(3)))


# ----------------------------------------------------------------------------- polynomial tail
@pytest.mark.parametrize(
    "gamma,c",
    [
        (2, 1 / math.pi),
        (4, math.sqrt(2) / math.pi),
        (6, 3 / (2 * math.pi)),
        (10, (5 * math.sqrt(5) - 5) / (4 * math.pi)),
    ],
)
def test_polynomial_constant(gamma: float, c: float) -> None:
    law = PolynomialTail(gamma)
    assert law.c_gamma == pytest.approx(c, rel=1e-14)
    assert law.pdf(0.0) == pytest.approx(c, rel=1e-14)


@pytest.mark.parametrize("gamma", [1.5, 2, 4, 6, 10])
def test_polynomial_cdf_matches_integrated_density(gamma: float) -> None:
    law = PolynomialTail(gamma)
    c = gamma * math.sin(math.pi / gamma) / (2 * math.pi)
    h = lambda v: c / (1 + abs(v) ** gamma)
    for z in (0.01, 0.5, 1.0, 3.0, 40.0, 1e4):
        sf = integrate.quad(h, z, np.inf, epsabs=0, epsrel=1e-12, limit=500)[0]
        assert law.sf(z) == pytest.approx(sf, rel=1e-9)
        assert law.cdf(-z) == pytest.approx(sf, rel=1e-9)
        assert law.cdf(z) == pytest.approx(1.0 - sf, rel=1e-9)  # int_0^inf h = 1/2
        if z <= 3:
            head = integrate.quad(h, 0, z, epsabs=0, epsrel=1e-12)[0]
            assert law.cdf(z) - 0.5 == pytest.approx(head, rel=1e-9)


def test_polynomial_gamma2_is_cauchy_and_far_tail() -> None:
    law = PolynomialTail(2)
    z = np.linspace(-50, 50, 101)
    np.testing.assert_allclose(law.cdf(z), 0.5 + np.arctan(z) / np.pi, rtol=1e-13)
    for g in (1.5, 4, 10):  # sf ~ c/((g-1) z^{g-1}) far out, also past overflow of z^g
        law = PolynomialTail(g)
        for z in (1e40, 1e200):
            asym = math.log(law.c_gamma / (g - 1)) - (g - 1) * math.log(z)
            assert law.logsf(z) == pytest.approx(asym, rel=1e-12)
            assert law.logpdf(z) == pytest.approx(math.log(law.c_gamma) - g * math.log(z), rel=1e-12)


@pytest.mark.parametrize("gamma", [1.5, 2.5, 4, 10])
def test_polynomial_moments(gamma: float) -> None:
    law = PolynomialTail(gamma)
    if gamma <= 2:
        assert law.mean_abs() == np.inf and law.var() == np.inf and law.one_sided().var() == np.inf
        return
    m1 = 2 * integrate.quad(lambda v: v * float(law.pdf(v)), 0, np.inf, limit=500)[0]
    assert law.mean_abs() == pytest.approx(m1, rel=1e-7) and law.one_sided().mean_abs() == law.mean_abs()
    if gamma > 3:
        m2 = 2 * integrate.quad(lambda v: v * v * float(law.pdf(v)), 0, np.inf, limit=500)[0]
        assert law.var() == pytest.approx(m2, rel=1e-7)
        assert law.one_sided().var() == pytest.approx(m2 - m1**2, rel=1e-7)
    else:
        assert law.var() == np.inf and law.one_sided().var() == np.inf


# ----------------------------------------------------------------------------- Laplace log-normal
def _lln_reference(sigma: float, z: float, kind: str) -> float:
    """log of E_Y[...] (sf: exp(-z e^{-sY}); pdf: e^{-sY} exp(-z e^{-sY})), direct quad over y."""
    lz = math.log(z)
    g = (
        (lambda y: -y * y / 2 - math.exp(min(lz - sigma * y, 700.0)))
        if kind == "sf"
        else (lambda y: -y * y / 2 - sigma * y - math.exp(min(lz - sigma * y, 700.0)))
    )
    ys = np.linspace(-40, 80, 120001)
    with np.errstate(over="ignore"):
        gv = -ys * ys / 2 - np.exp(lz - sigma * ys) - (sigma * ys if kind == "pdf" else 0)
    c, m = ys[np.argmax(gv)], gv.max()
    parts = [(-np.inf, c - 3), (c - 3, c), (c, c + 3), (c + 3, np.inf)]
    with np.errstate(over="ignore"):
        v = sum(
            integrate.quad(
                lambda y: math.exp(g(y) - m) if g(y) > -745 + m else 0.0, a, b, epsabs=0, epsrel=1e-13, limit=500
            )[0]
            for a, b in parts
        )
    return m + math.log(v) - 0.5 * math.log(2 * math.pi)


@pytest.mark.parametrize("sigma", [0.3, 1.0])
@pytest.mark.parametrize("z", [1e-3, 0.5, 2.0, 50.0, 500.0, 1e3])
def test_lln_against_direct_quadrature(sigma: float, z: float) -> None:
    law = LaplaceLogNormal(sigma)
    ls, lp = _lln_reference(sigma, z, "sf"), _lln_reference(sigma, z, "pdf")
    assert law.sf(z) == pytest.approx(0.5 * math.exp(ls), rel=1e-10)
    assert law.cdf(-z) == pytest.approx(0.5 * math.exp(ls), rel=1e-10)
    assert law.pdf(z) == pytest.approx(0.5 * math.exp(lp), rel=1e-10)
    assert law.cdf(z) == pytest.approx(1 - 0.5 * math.exp(ls), rel=1e-12)
    one = law.one_sided()
    assert one.cdf(z) == pytest.approx(-math.expm1(ls), rel=1e-9)


def test_lln_far_tail_finite_and_monotone() -> None:
    for sigma in (0.3, 1.0, 2.0):
        law = LaplaceLogNormal(sigma)
        z = np.geomspace(1e-3, 1e300, 400)
        ls, lp = law.logsf(z), law.logpdf(z)
        assert np.all(np.isfinite(ls)) and np.all(np.isfinite(lp))
        assert np.all(np.diff(ls) < 0) and np.all(np.diff(lp) < 0)
        assert np.all(np.diff(law.one_sided().logcdf(z)) >= 0)
        assert law.logsf(1e8) < law.logsf(1e7)
    law = LaplaceLogNormal(1.0)
    assert law.logsf(1e4) == pytest.approx(_lln_reference(1.0, 1e4, "sf") - math.log(2), rel=1e-12)
    assert law.logsf(1e8) == pytest.approx(_lln_reference(1.0, 1e8, "sf") - math.log(2), rel=1e-12)
    assert law.mean_abs() == pytest.approx(math.exp(0.5)) and law.var() == pytest.approx(2 * math.e**2)


def test_lln_optimal_sigma_and_zcdp() -> None:
    law = LaplaceLogNormal(0.5)
    assert law.zcdp_rho(0.2, 0.1) == pytest.approx((0.1 / 0.5 + math.exp(1.5 * 0.25) * 0.2) ** 2 / 2)
    for eps, t in [(1.0, 0.1), (1.0, 0.5), (0.1, 1.0), (50.0, 1e-3)]:
        s = LaplaceLogNormal.optimal_sigma(eps, t)
        assert t / eps < s <= max(2 * t / eps, 0.5)
        cubic = 5 * (eps / t) * s**3
        assert cubic - 5 * s**2 - 1 == pytest.approx(0.0, abs=1e-9 * max(1, cubic))
    with pytest.raises(ValueError, match="beta"):
        LaplaceLogNormal.optimal_sigma(1.0, 0.0)


# ----------------------------------------------------------------------------- inverses
W_GRID = np.array([-700.0, -200.0, -30.0, -3.0, -1.0, math.log(0.5), -0.3, -1e-3, -1e-9])


@pytest.mark.parametrize("law", ALL, ids=IDS)
def test_inverse_round_trips(law: NoiseDistribution) -> None:
    z = law.ilogsf(W_GRID)
    finite = np.isfinite(z)  # only PolynomialTail(1.5) at w = -700 overflows (z ~ e^1400)
    assert finite[1:].all()
    np.testing.assert_allclose(law.logsf(z[finite]), W_GRID[finite], rtol=1e-10, atol=1e-15)
    z = law.ilogcdf(W_GRID)
    finite = np.isfinite(z) & (np.abs(z) > 1e-300)
    np.testing.assert_allclose(law.logcdf(z[finite]), W_GRID[finite], rtol=1e-10, atol=1e-15)
    q = np.array([1e-12, 0.01, 0.25, 0.5, 0.75, 0.99, 1 - 1e-12])
    np.testing.assert_allclose(law.cdf(law.ppf(q)), q, rtol=1e-10)
    np.testing.assert_allclose(law.sf(law.isf(q)), q, rtol=1e-10)
    zs = law.ppf(np.array([0.001, 0.2, 0.6, 0.999]))
    np.testing.assert_allclose(law.ilogsf(law.logsf(zs)), zs, rtol=1e-9)
    np.testing.assert_allclose(law.ilogcdf(law.logcdf(zs)), zs, rtol=1e-9)
    lo, hi = law.support
    assert law.ppf(0.0) == lo and law.ppf(1.0) == hi and law.ilogsf(0.0) == lo and law.ilogsf(-np.inf) == hi
    assert law.ilogcdf(-np.inf) == lo and law.ilogcdf(0.0) == hi
    assert np.isnan(law.ppf(1.5)) and np.isnan(law.ppf(-0.1)) and np.isnan(law.ilogsf(0.5))
    assert law.width == pytest.approx(law.ppf(0.75) - law.ppf(0.25))


def test_closed_form_inverses() -> None:
    w = np.array([-700.0, -50.0, -1.0, math.log(0.5)])
    np.testing.assert_allclose(Laplace().ilogsf(w), -w - math.log(2), rtol=1e-15)
    np.testing.assert_allclose(Exponential().ilogsf(w), -w, rtol=1e-15)
    assert Laplace().ilogsf(-1e5) == pytest.approx(1e5 - math.log(2), rel=1e-15)
    assert Gumbel().ilogsf(-1e5) == 1e5 and Gumbel().ilogcdf(-1e5) == pytest.approx(-math.log(1e5))
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 30  # independent check of the far-tail inverse (scipy's t(3).isf(e^-700) is -inf)
    for d, w in ((3, -700.0), (1, -700.0), (30, -2000.0), (1000, -800.0)):
        z = mp.mpf(StudentT(d).ilogsf(w))
        ref = mp.log(mp.betainc(mp.mpf(d) / 2, 0.5, 0, d / (d + z * z), regularized=True) / 2)
        assert float(ref) == pytest.approx(w, rel=1e-12)


# ----------------------------------------------------------------------------- stability
def test_extreme_tails() -> None:
    assert Laplace().logsf(1e6) == -1e6 - math.log(2)
    assert Laplace().logcdf(-1e6) == -1e6 - math.log(2)
    assert Laplace().logcdf(1e6) == 0.0 and Laplace().logsf(-1e6) == 0.0
    assert Exponential().logsf(1e6) == -1e6
    assert Gumbel().logsf(1e6) == -1e6
    assert Gumbel().logsf(30.0) == pytest.approx(-30 - math.exp(-30) / 2, rel=1e-15)
    assert Gumbel().logpdf(-1e6) == -np.inf and Gumbel().logcdf(-1e6) == -np.inf
    for d in (1.0, 3.0, 30.0):
        law, z = StudentT(d), 1e8
        asym = math.log(stats.t(d).pdf(0)) + (d + 1) / 2 * math.log(d) - d * math.log(z) - math.log(d)
        assert law.logsf(z) == pytest.approx(asym, rel=1e-12)
    assert np.isfinite(StudentT(1000).logsf(1e20)) and np.isfinite(StudentT(3).logcdf(-1e300))
    assert Exponential().logpdf(-1.0) == -np.inf and Exponential().logcdf(0.0) == -np.inf


def test_no_warnings_on_extreme_inputs() -> None:
    grid = np.array(
        [-np.inf, -1e300, -1e8, -745.0, -1.0, -1e-300, -0.0, 0.0, 1e-300, 1.0, 745.0, 1e8, 1e300, np.inf, np.nan]
    )
    ws = np.array([-np.inf, -1e5, -745.0, -700.0, -1e-300, 0.0, 1.0, np.nan])
    qs = np.array([-1.0, 0.0, 1e-320, 0.5, 1 - 1e-16, 1.0, 2.0, np.nan])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for law in ALL:
            for name in ("logpdf", "pdf", "logcdf", "cdf", "logsf", "sf"):
                out = getattr(law, name)(grid)
                assert np.isnan(out[-1]) and not np.isnan(out[:-1]).any(), (law, name)
            for name in ("ilogsf", "ilogcdf"):
                out = getattr(law, name)(ws)
                assert np.isnan(out[[-2, -1]]).all() and not np.isnan(out[:-2]).any(), (law, name)
            for name in ("ppf", "isf"):
                out = getattr(law, name)(qs)
                assert np.isnan(out[[0, -2, -1]]).all() and not np.isnan(out[1:-2]).any(), (law, name)
            law.sample(1000, rng=0)
            law.mean_abs(), law.var(), law.width


def test_scalar_and_shape_handling() -> None:
    law = StudentT(3)
    assert isinstance(law.logsf(1.0), np.floating)
    assert law.cdf([[0.0, 1.0], [2.0, 3.0]]).shape == (2, 2)
    assert law.ppf(np.array([])).shape == (0,)


# ----------------------------------------------------------------------------- sampling
@pytest.mark.parametrize("law", ALL, ids=IDS)
def test_sampler_ks_and_tail(law: NoiseDistribution) -> None:
    x = law.sample(20_000, rng=12345)
    assert x.shape == (20_000,) and x.dtype == np.float64
    assert stats.kstest(x, law.cdf).pvalue > 1e-3
    n = 100_000
    y = law.sample(n, rng=777)
    p = 2e-3
    if law.symmetric:
        t = law.isf(p / 2)
        hits = np.count_nonzero(np.abs(y) > t)
    else:
        t = law.isf(p)
        hits = np.count_nonzero(y > t)
    assert abs(hits - n * p) <= 5 * math.sqrt(n * p * (1 - p))
    lo = law.support[0]
    assert np.all(y >= lo) and np.all(np.isfinite(y))


def test_sampling_reproducible_and_shapes() -> None:
    for law in ALL:
        a, b = law.sample(50, rng=42), law.sample(50, rng=np.random.default_rng(42))
        np.testing.assert_array_equal(a, b)
        assert isinstance(law.sample(rng=1), float)
        assert law.sample((3, 4), rng=1).shape == (3, 4)
    with pytest.raises(ValueError, match="size"):
        Laplace().sample(0)
    with pytest.raises(TypeError, match="size"):
        Laplace().sample(2.5)
    with pytest.raises(TypeError, match="rng"):
        Laplace().sample(3, rng="seed")


def test_polynomial_sampler_heavy_tail_near_one() -> None:
    x = PolynomialTail(1.2).sample(50_000, rng=5)
    assert not np.isnan(x).any()
    assert stats.kstest(x, PolynomialTail(1.2).cdf).pvalue > 1e-3


# ----------------------------------------------------------------------------- admissibility
def test_pure_constants_and_admissible() -> None:
    for g in (1.5, 2, 4, 10):
        law = PolynomialTail(g)
        ls, ld = (g - 1) ** ((g - 1) / g), max(1, g - 1)
        assert (law.shift_constant, law.dilation_constant) == pytest.approx((ls, ld))
        assert law.admissible(1.0) == pytest.approx((1 / (2 * ls), 1 / (2 * max(1, g - 1))))
        assert law.admissible(2.0, method="nrs") == pytest.approx((1 / (g + 1), 1 / (g + 1)))
        assert law.one_sided().admissible(1.0) == law.admissible(1.0)
        assert law.one_sided().admissible(1.0, method="nrs") == law.admissible(1.0, method="nrs")
        assert law.one_sided().shift_constant == law.shift_constant
    assert PolynomialTail(4).admissible(1.0)[0] == pytest.approx(0.5 / 3**0.75)  # SPEC §3.2 example /k
    for d in (1, 3, 30):
        law = StudentT(d)
        assert law.admissible(1.0) == pytest.approx((math.sqrt(d) / (d + 1), 1 / (2 * (d + 1))))
        assert law.shift_constant == pytest.approx((d + 1) / (2 * math.sqrt(d)))
        assert law.dilation_constant == d + 1
    assert Laplace().shift_constant == 1 and Laplace().dilation_constant is None
    for law in (Gumbel(), Exponential(), LaplaceLogNormal(1.0)):
        assert law.shift_constant is None and law.dilation_constant is None
    with pytest.raises(ValueError, match="delta"):
        PolynomialTail(4).admissible(1.0, 1e-6)
    with pytest.raises(ValueError, match="delta"):
        StudentT(3).admissible(1.0, 1e-6)
    with pytest.raises(ValueError, match="method"):
        PolynomialTail(4).admissible(1.0, method="paper")


@pytest.mark.parametrize("law", [Gumbel(), Exponential()])
def test_not_admissible(law: NoiseDistribution) -> None:
    with pytest.raises(NotImplementedError, match=r"mathematics §2\.6"):
        law.admissible(1.0, 1e-6)
    with pytest.raises(TypeError, match="symmetric"):
        law.one_sided()


@pytest.mark.parametrize(
    "eps,delta", [(0.1, 1e-6), (1.0, 1e-6), (10.0, 1e-9), (20.0, 1e-6), (50.0, 1e-6), (1.0, 0.5), (1e-8, 1e-300)]
)
def test_laplace_admissible_exact_condition(eps: float, delta: float) -> None:
    alpha, beta = Laplace().admissible(eps, delta)
    assert alpha == eps / 2 and 0 < beta <= eps - alpha
    assert laplace_smooth_delta(eps, alpha, beta) <= delta
    if beta < eps - alpha:  # delta condition active: equality and maximality
        assert laplace_smooth_delta(eps, alpha, beta) == pytest.approx(delta, rel=1e-9)
        assert laplace_smooth_delta(eps, alpha, beta * (1 + 1e-9)) > delta
    assert math.exp(-(eps - alpha + beta) / math.expm1(beta)) <= delta * (1 + 1e-12)
    assert Laplace().one_sided().admissible(eps, delta) == (alpha, beta)
    a2, b2 = Laplace().admissible(eps, delta, alpha_fraction=0.8)
    assert a2 == pytest.approx(0.8 * eps) and laplace_smooth_delta(eps, a2, b2) <= delta


def test_laplace_admissible_beats_nrs_where_nrs_fails() -> None:
    _, beta = Laplace().admissible(50.0, 1e-6)
    a_nrs, b_nrs = nrs_laplace_parameters(50.0, 1e-6)
    assert a_nrs == 25.0 and b_nrs == pytest.approx(50 / (2 * math.log(2e6)))
    assert beta < b_nrs
    assert laplace_smooth_delta(50.0, a_nrs, b_nrs) > 1e-6  # the NRS pair is not certified (errata 30)
    assert laplace_smooth_delta(1.0, 2.0, 0.1) == 1.0 and laplace_smooth_delta(1.0, 0.5, 0.0) == 0.0
    with pytest.raises(ValueError, match="delta"):
        Laplace().admissible(1.0)
    with pytest.raises(ValueError, match="alpha_fraction"):
        Laplace().admissible(1.0, 1e-6, alpha_fraction=1.0)


def test_lln_admissible_and_zcdp_conversion() -> None:
    law = LaplaceLogNormal(0.7)
    eps, delta = 2.0, 1e-6
    alpha, beta = law.admissible(eps, delta)
    rho = dp_to_zcdp(eps, delta)
    eps_c = math.sqrt(2 * rho)
    assert beta == pytest.approx(0.7 * eps_c / 2)
    assert alpha == pytest.approx(math.exp(-1.5 * 0.49) * eps_c / 2)
    assert law.zcdp_rho(alpha, beta) == pytest.approx(rho, rel=1e-12)
    assert zcdp_to_dp(law.zcdp_rho(alpha, beta), delta) == pytest.approx(eps, rel=1e-12)
    for e, d in [(1e-6, 1e-12), (0.5, 1e-6), (10.0, 0.1), (1e4, 1e-300)]:
        r = dp_to_zcdp(e, d)
        assert zcdp_to_dp(r, d) == pytest.approx(e, rel=1e-12)
        assert r == pytest.approx((math.sqrt(-math.log(d) + e) - math.sqrt(-math.log(d))) ** 2, rel=1e-6)
    with pytest.raises(ValueError, match="delta"):
        law.admissible(1.0)
    with pytest.raises(ValueError, match="delta"):
        zcdp_to_dp(0.1, 0.0)


ADMISSIBLE = [
    (Laplace(), 1e-6),
    (StudentT(3), 0.0),
    (PolynomialTail(4), 0.0),
    (LaplaceLogNormal(1.0), 1e-6),
    (PolynomialTail(4).one_sided(), 0.0),
]


@settings(max_examples=40, deadline=None)
@given(
    eps=hst.sampled_from([float("nan"), -1.0, 0.0, float("inf"), -float("inf"), -1e-300]),
    case=hst.sampled_from(ADMISSIBLE),
)
def test_bad_epsilon_rejected(eps: float, case: tuple[NoiseDistribution, float]) -> None:
    law, delta = case
    with pytest.raises(ValueError, match="epsilon"):
        law.admissible(eps, delta)


@settings(max_examples=30, deadline=None)
@given(
    delta=hst.one_of(hst.floats(max_value=-1e-300), hst.floats(min_value=1.0), hst.just(float("nan"))),
    case=hst.sampled_from(ADMISSIBLE),
)
def test_bad_delta_rejected(delta: float, case: tuple[NoiseDistribution, float]) -> None:
    with pytest.raises(ValueError, match="delta"):
        case[0].admissible(1.0, delta)


def test_bad_argument_types() -> None:
    with pytest.raises(TypeError, match="epsilon"):
        Laplace().admissible("1", 1e-6)
    with pytest.raises(TypeError, match="delta"):
        StudentT(3).admissible(1.0, None)


# ----------------------------------------------------------------------------- construction
@settings(max_examples=60, deadline=None)
@given(g=hst.floats(allow_nan=True, allow_infinity=True))
def test_polynomial_validation(g: float) -> None:
    if math.isfinite(g) and g > 1:
        assert PolynomialTail(g).gamma == g
    else:
        with pytest.raises(ValueError, match="gamma"):
            PolynomialTail(g)


@settings(max_examples=60, deadline=None)
@given(v=hst.floats(allow_nan=True, allow_infinity=True))
def test_positive_parameter_validation(v: float) -> None:
    for cls, name in ((StudentT, "df"), (LaplaceLogNormal, "sigma")):
        if math.isfinite(v) and v > 0:
            assert getattr(cls(v), name) == v
        else:
            with pytest.raises(ValueError, match=name):
                cls(v)


def test_constructor_types_and_value_semantics() -> None:
    for cls, name in ((PolynomialTail, "gamma"), (StudentT, "df"), (LaplaceLogNormal, "sigma")):
        for bad in ("4", True, None, [4.0]):
            with pytest.raises(TypeError, match=name):
                cls(bad)
    with pytest.raises(TypeError, match="parent"):
        OneSided(Gumbel())
    assert PolynomialTail(4) == PolynomialTail(4.0) and hash(PolynomialTail(4)) == hash(PolynomialTail(4.0))
    assert StudentT(3) != StudentT(4) and Laplace() == Laplace() and Exponential() == Exponential()
    assert StudentT(3).one_sided() == StudentT(3).one_sided()
    assert len({Laplace(), Laplace(), Gumbel(), StudentT(3).one_sided(), StudentT(3).one_sided()}) == 3
    assert repr(PolynomialTail(4)) == "PolynomialTail(gamma=4.0)" and repr(Exponential()) == "Exponential()"
    assert repr(StudentT(3).one_sided()) == "OneSided(parent=StudentT(df=3.0))"
    with pytest.raises(AttributeError):
        PolynomialTail(4).gamma = 5.0  # type: ignore[misc]
    assert Laplace().symmetric and not Gumbel().symmetric and not Exponential().symmetric
    assert Exponential().support == (0.0, np.inf) and Laplace().support == (-np.inf, np.inf)


def test_moments() -> None:
    assert Gumbel().mean_abs() == pytest.approx(
        integrate.quad(lambda v: abs(v) * float(Gumbel().pdf(v)), -np.inf, np.inf)[0], rel=1e-9
    )
    assert Gumbel().var() == pytest.approx(math.pi**2 / 6)
    assert StudentT(3).mean_abs() == pytest.approx(2 * math.sqrt(3) / math.pi, rel=1e-12)
    assert StudentT(1).mean_abs() == np.inf and StudentT(2).var() == np.inf and StudentT(30).var() == 30 / 28
    x = LaplaceLogNormal(0.3).sample(200_000, rng=9)
    assert np.mean(np.abs(x)) == pytest.approx(LaplaceLogNormal(0.3).mean_abs(), rel=0.01)
    assert LaplaceLogNormal(0.3).one_sided().var() == pytest.approx(np.var(np.abs(x)), rel=0.03)
