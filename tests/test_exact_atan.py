"""Exact grid sampler for Student t_3 and Cauchy noise (noise._exact_atan) and its wiring in
SmoothSensitivityRelease: rigorous cdf brackets vs mpmath, frequencies vs the snapped law, guess
independence, seeds, rng="secure", neighbours, and a negative control (a wrong cdf is caught)."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from conftest import assert_frequencies_match, assert_neighbour_frequencies, on_grid
from dpselect import SmoothSensitivityRelease
from dpselect.mechanisms._release_grid import snapped_log_law
from dpselect.noise import PolynomialTail, StudentT
from dpselect.noise._exact_atan import atan_bounds, cauchy_cdf_bounds, pi_bounds, sample_snapped_atan, t3_cdf_bounds


def _mp(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def _t3_cdf(x):
    u = x / mpmath.sqrt(3)
    return mpmath.mpf(1) / 2 + (mpmath.atan(u) + u / (1 + u * u)) / mpmath.pi


def _cauchy_cdf(x):
    return mpmath.mpf(1) / 2 + mpmath.atan(x) / mpmath.pi


def _random_rationals(n, seed):
    rnd = random.Random(seed)
    out = []
    for _ in range(n):  # magnitudes from 1e-12 to 1e12, both signs, float-like and generic rationals
        mag = 10.0 ** rnd.uniform(-12, 12) * rnd.choice((-1, 1))
        generic = Fraction(rnd.randint(-(10**15), 10**15), rnd.randint(1, 10**12))
        out.append(Fraction(mag) if rnd.random() < 0.5 else generic)
    return out


@pytest.mark.parametrize("prec", [64, 128, 300])
def test_cdf_brackets_contain_mpmath_and_are_tight(prec):
    mpmath.mp.dps = 130  # ~430 bits, above every bracket's resolution
    for x in _random_rationals(200, prec):
        for bounds, ref in ((t3_cdf_bounds, _t3_cdf), (cauchy_cdf_bounds, _cauchy_cdf)):
            lo, hi = bounds(x.numerator, x.denominator, prec)
            exact = ref(_mp(x)) * mpmath.mpf(2) ** prec
            assert lo <= exact <= hi, (x, prec)
            assert hi - lo <= 4  # a few units of 2^-prec
    for bounds in (t3_cdf_bounds, cauchy_cdf_bounds):  # F(0) = 1/2
        lo, hi = bounds(0, 7, 64)
        assert lo <= 2**63 <= hi and hi - lo <= 2


def test_atan_and_pi_brackets():
    mpmath.mp.dps = 130
    w = 256
    plo, phi = pi_bounds(w)
    assert plo <= mpmath.pi * mpmath.mpf(2) ** w <= phi
    assert phi - plo <= 4 * (w + 2) ** 2  # no guard bits here: the series error bound itself
    edges = [Fraction(j, 16) for j in range(-17, 18)] + [Fraction(1, 10**40), Fraction(10**40), Fraction(8, 3)]
    for x in _random_rationals(200, 7) + edges:  # edges: the reduction points j/8 and midpoints
        lo, hi = atan_bounds(x, w)
        exact = mpmath.atan(_mp(x)) * mpmath.mpf(2) ** w
        assert lo <= exact <= hi and hi - lo <= 4 * (w + 2) ** 2


def test_polynomial_gamma2_is_the_standard_cauchy():
    # the exact sampler's F is 1/2 + atan(x)/pi: check the library's PolynomialTail(2) and StudentT(1, 3)
    x = np.array([-30.0, -2.0, -0.3, 0.0, 0.7, 5.0, 1e3])
    for noise in (PolynomialTail(2.0), StudentT(1.0)):
        np.testing.assert_allclose(np.exp(noise.logcdf(x)), 0.5 + np.arctan(x) / np.pi, rtol=1e-12)
    u = x / math.sqrt(3)
    t3 = 0.5 + (np.arctan(u) + u / (1 + u * u)) / np.pi
    np.testing.assert_allclose(np.exp(StudentT(3.0).logcdf(x)), t3, rtol=1e-12)


def _law_bins(y, pts, lp, min_expected=20.0):
    """Grid points expected to get at least ``min_expected`` draws, and one last bin for everything else.

    Pooling the sparse tail points keeps the binomial standard errors of
    ``assert_frequencies_match`` meaningful: with hundreds of Cauchy tail points
    of expected count ~2, a Poisson excess beyond 5 SE occurs in ~1 run in 40.
    """
    probs = np.exp(lp)
    keep = probs * y.size >= min_expected
    kept = pts[keep]
    draws = np.where(np.isin(y, kept), np.searchsorted(kept, y), kept.size)
    return draws, np.append(probs[keep], max(0.0, 1 - probs[keep].sum()))


@pytest.mark.parametrize("law,noise", [("t3", StudentT(3.0)), ("cauchy", PolynomialTail(2.0))])
@pytest.mark.parametrize("value,scale", [(0.3, 0.8), (-7.1, 2.5)])
def test_exact_sampler_matches_the_snapped_law(law, noise, value, scale):
    lam = 0.5
    y = sample_snapped_atan(law, value, scale, lam, 40_000, rng=5)
    assert on_grid(y, lam)
    pts, lp = snapped_log_law(noise, value, scale, lam, 60)
    assert_frequencies_match(*_law_bins(y, pts, lp))


def test_negative_control_wrong_cdf_is_caught():
    # u = x instead of x / sqrt(3): a rigorous bracket of the *wrong* law; the frequency test must fail
    def wrong(num: int, den: int, p: int) -> tuple[int, int]:
        w, x = p + 40, Fraction(num, den)
        plo, phi = pi_bounds(w)
        sign, x = (1, x) if x >= 0 else (-1, -x)
        r = x * 2**w / (1 + x * x)
        g_lo, g_hi = atan_bounds(x, w)[0] + math.floor(r), atan_bounds(x, w)[1] + math.ceil(r)
        lo, hi = (1 << (p - 1)) + (g_lo << p) // phi, (1 << (p - 1)) + (g_hi << p) // plo + 1
        return (lo, hi) if sign > 0 else ((1 << p) - hi, (1 << p) - lo)

    y = sample_snapped_atan(wrong, 0.3, 0.8, 0.5, 40_000, rng=5)
    pts, lp = snapped_log_law(StudentT(3.0), 0.3, 0.8, 0.5, 60)
    with pytest.raises(AssertionError):
        assert_frequencies_match(*_law_bins(y, pts, lp))


def test_output_does_not_depend_on_the_float_guess():
    # the float quantile only starts the search: a useless guess gives the same draws from the same bits
    good = sample_snapped_atan("t3", 1.3, 0.7, 0.25, 2000, rng=11)
    bounds = t3_cdf_bounds
    for bad in (lambda u: np.zeros_like(u), lambda u: np.full_like(u, 1e6), lambda u: np.full_like(u, np.nan)):
        assert np.array_equal(good, sample_snapped_atan(bounds, 1.3, 0.7, 0.25, 2000, rng=11, quantile=bad))


def test_huge_draws_are_clamped_to_the_grid_range():
    y = sample_snapped_atan("cauchy", 0.0, 2.0**60, 1.0, 300, rng=2)
    assert on_grid(y, 1.0) and np.abs(y).max() <= 2.0**51 and (np.abs(y) == 2.0**51).mean() > 0.9


# ------------------------------------------------------------ SmoothSensitivityRelease wiring


def test_release_uses_the_exact_sampler_for_t3_and_cauchy_only():
    assert SmoothSensitivityRelease(1.0).exact_law == "t3"
    assert SmoothSensitivityRelease(1.0, df=1.0).exact_law == "cauchy"
    assert SmoothSensitivityRelease(1.0, noise="polynomial").exact_law == "cauchy"
    for rel in (
        SmoothSensitivityRelease(1.0, df=4.0),
        SmoothSensitivityRelease(1.0, noise="polynomial", gamma=3.0),
        SmoothSensitivityRelease(1.0, 1e-6, noise="lln"),
        SmoothSensitivityRelease(1.0, 1e-6, noise="laplace"),
    ):
        assert rel.exact_law is None
    # on the grid, the release *is* the exact sampler's output for the same bits
    rel = SmoothSensitivityRelease(1.0, granularity=2.0**-10)
    y = rel.release(0.3, 0.4, size=500, rng=9)
    same = sample_snapped_atan("t3", 0.3, 0.4 / rel.alpha, 2.0**-10, 500, rng=np.random.default_rng(9))
    assert np.array_equal(y, same)
    # granularity=0 keeps the float path (NumPy's standard_t)
    flt = SmoothSensitivityRelease(1.0, granularity=0).release(0.3, 0.4, size=5, rng=9)
    z = np.random.default_rng(9).standard_t(3.0, 5)
    np.testing.assert_allclose(flt, 0.3 + 0.4 / rel.alpha * z)


@pytest.mark.parametrize("kw", [{}, {"df": 1.0}, {"noise": "polynomial"}])
def test_release_secure_and_seeds(kw):
    lam = 0.5
    rel = SmoothSensitivityRelease(1.0, granularity=lam, **kw)
    y = rel.release(0.3, 0.4, size=20_000, rng="secure")
    assert on_grid(y, lam)
    law = rel.log_law(0.3, 0.4, 200)
    assert_frequencies_match(*_law_bins(y, law.support, law.log_probabilities))
    a = rel.release(0.3, 0.4, size=200, rng=123)
    assert np.array_equal(a, rel.release(0.3, 0.4, size=200, rng=123))
    assert not np.array_equal(a, rel.release(0.3, 0.4, size=200, rng=124))
    with pytest.raises(TypeError, match="rng"):
        rel.release(0.3, 0.4, rng="sekure")
    with pytest.raises(TypeError, match="rng"):
        rel.release(0.3, 0.4, rng=True)


def test_exact_cauchy_neighbour_frequencies_and_clip():
    n, eps = 40_000, 1.0
    t = SmoothSensitivityRelease(eps, noise="polynomial", granularity=0.5)
    yx = t.release(0.0, 0.5, size=n, rng=3)
    yy = t.release(0.5, 0.5 * math.exp(t.beta), size=n, rng=4)
    assert_neighbour_frequencies(yx, yy, eps, n)
    c = t.release(0.0, 0.5, size=2000, rng=3, clip_output=(-1.3, 2.0))
    assert on_grid(c, 0.5) and c.min() >= -1.0 and c.max() <= 2.0


def test_bad_arguments_raise_before_drawing():
    for kw, name in (
        ({"law": "t4"}, "law"),
        ({"scale": 0.0}, "scale"),
        ({"lam": -1.0}, "lam"),
        ({"n": 0}, "n"),
        ({"value": math.nan}, "value"),
    ):
        args = {"law": "t3", "value": 0.0, "scale": 1.0, "lam": 0.5, "n": 3} | kw
        with pytest.raises((ValueError, TypeError), match=name):
            sample_snapped_atan(args.pop("law"), *args.values(), rng=0)


def test_refinement_path_keeps_the_law(monkeypatch):
    # start at P = 6: brackets of a few 2^-6 often overlap U's interval, forcing more U bits and a higher
    # precision; the law must be unchanged
    import dpselect.noise._exact_atan as E

    monkeypatch.setattr(E, "_P0", 6)
    seen: dict[int, int] = {}

    def counted(num, den, p):
        seen[p] = seen.get(p, 0) + 1
        return t3_cdf_bounds(num, den, p)

    y = sample_snapped_atan(counted, 0.3, 0.8, 2.0**-6, 20_000, rng=8, quantile=E.ATAN_LAWS["t3"][1])
    assert seen[6] > 100 and sum(v for p, v in seen.items() if p > 6) > 100  # refined often
    pts, lp = snapped_log_law(StudentT(3.0), 0.3, 0.8, 2.0**-6, 3000)
    coarse = np.floor(pts / 0.25)  # pool the fine grid into bins of width 1/4 for the frequency test
    bins = np.unique(coarse)
    draws = np.searchsorted(bins, np.floor(y / 0.25))
    draws[~np.isin(np.floor(y / 0.25), bins)] = bins.size
    probs = np.array([np.exp(lp[coarse == c]).sum() for c in bins])
    assert_frequencies_match(draws, np.append(probs, max(0.0, 1 - probs.sum())))


# ------------------------------------------------------------ bounded cost (issue 30.7)


def _counting(law):
    calls = []

    def bounds(num, den, p):
        calls.append(p)
        return law(num, den, p)

    return bounds, calls


@pytest.mark.parametrize("scale", [1.0, 1e60, 1e100, 1e306])
def test_search_cost_is_bounded_whatever_the_scale(scale):
    # the number of cdf brackets per draw is bounded by the index range (public), not by the scale
    bounds, calls = _counting(t3_cdf_bounds)
    y = sample_snapped_atan(bounds, 0.3, scale, 2.0**-20, 50, rng=4, quantile=lambda u: np.zeros_like(u))
    assert len(calls) <= 50 * (2 * 52 + 3)
    assert on_grid(y, 2.0**-20) and np.abs(y).max() <= 2.0**51 * 2.0**-20
    if scale >= 1e60:  # P[|K| < 2^51] <= 2^52 lambda / (pi scale) ~ 0: every draw is at the clamp
        assert set(np.abs(y)) == {2.0**31}


def test_clamped_search_has_the_clamped_law():
    # the search restricted to [kmin, kmax] gives min(max(K, kmin), kmax) for the same bits
    # (refinements, which could shift the bit stream, have probability ~2^-60 per comparison) ...
    full = sample_snapped_atan("t3", 0.3, 2.0, 0.5, 3000, rng=21)
    for kmin, kmax in ((-3, 4), (0, 0), (2, 9), (-(2**51), -(2**51) + 1)):
        part = sample_snapped_atan("t3", 0.3, 2.0, 0.5, 3000, rng=21, index_range=(kmin, kmax))
        assert np.array_equal(part, np.clip(full, kmin * 0.5, kmax * 0.5))
    # ... and its frequencies match the exact clamped law: P[kmin] = F(B(kmin + 1)), P[kmax] = 1 - F(B(kmax))
    y = sample_snapped_atan("t3", 0.3, 2.0, 0.5, 40_000, rng=22, index_range=(-3, 4))
    pts, lp = snapped_log_law(StudentT(3.0), 0.3, 2.0, 0.5, 4000)
    p = np.exp(lp)
    law = np.array([p[pts <= -1.5].sum(), *p[(pts > -1.5) & (pts < 2.0)], p[pts >= 2.0].sum()])
    assert_frequencies_match(np.round(y / 0.5).astype(np.int64) + 3, law / law.sum())


def test_huge_scale_law_is_the_clamped_law():
    # scale 1e306: P[K >= kmax] = 1 - F(B(kmax)) ~ 1/2 each side, nothing in between
    y = sample_snapped_atan("cauchy", 0.0, 1e306, 1.0, 4000, rng=3, index_range=(-5, 5))
    assert set(y) <= {-5.0, 5.0}
    assert abs((y > 0).mean() - 0.5) < 5 * 0.5 / math.sqrt(4000)


def test_bad_index_range():
    for bad in ((3, 2), (-(2**52), 0), (0, 2**52)):
        with pytest.raises(ValueError, match="index_range"):
            sample_snapped_atan("t3", 0.0, 1.0, 0.5, 3, rng=0, index_range=bad)
    with pytest.raises(TypeError, match="index_range"):
        sample_snapped_atan("t3", 0.0, 1.0, 0.5, 3, rng=0, index_range=(0.5, 2))


def test_release_clip_bounds_the_search_and_keeps_the_law():
    # with clip_output, the sampler searches only the clip range's grid indices: same output as clipping after
    rel = SmoothSensitivityRelease(1.0, granularity=0.5)
    y = rel.release(0.3, 0.4, size=2000, rng=5, clip_output=(-1.3, 2.0))
    full = sample_snapped_atan("t3", 0.3, 0.4 / rel.alpha, 0.5, 2000, rng=np.random.default_rng(5))
    assert np.array_equal(y, np.clip(full, -1.0, 2.0))
    bounds, calls = _counting(t3_cdf_bounds)
    sample_snapped_atan(bounds, 0.3, 1e306, 0.5, 20, rng=0, index_range=(-2, 4))
    assert len(calls) <= 20 * (2 * 3 + 3)
    # a huge (private) scale releases the clip ends without a long search
    z = rel.release(0.3, 1e300, size=200, rng=1, clip_output=(-1.3, 2.0))
    assert set(z) <= {-1.0, 2.0}
