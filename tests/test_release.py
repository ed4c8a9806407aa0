"""Smooth-sensitivity numeric releases, Duff median baselines, TDT release.

Audits use neighbouring datasets represented abstractly by (f(x), S(x)) and
(f(y), S(y)) = (f(x) + D, e^lam S(x)) with |D| <= LS <= min(S(x), S(y)) and
|lam| <= beta' (S beta'-smooth), worst cases |D| = min(S(x), S(y)),
lam = +-beta'; the output densities are the exact scaled noise laws
pdf_x(o) = alpha'/S(x) h((o - f(x)) alpha'/S(x)).
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, special, stats

from dpselect.accounting import laplace_smooth_delta, nrs_laplace_parameters
from dpselect.analysis import ErrorDistribution, error_distribution
from dpselect.apps.genomics import TransmissionCounts
from dpselect.mechanisms import ExponentialMechanism, SmoothSensitivityRelease
from dpselect.noise import LaplaceLogNormal
from dpselect.privacy import Privacy

PURE_CONFIGS = [
    dict(noise="polynomial", gamma=2),
    dict(noise="polynomial", gamma=4),
    dict(noise="polynomial", gamma=1.5),
    dict(noise="polynomial", gamma=2, admissible_method="nrs"),
    dict(noise="student_t", df=3),
    dict(noise="student_t", df=1),
]
KS = (0.5, 1.0, 1.5)


def _pairs(beta, fracs=(-1.0, -0.5, 0.0, 0.5, 1.0), lams=(-1.0, -0.5, 0.0, 0.5, 1.0)):
    """(S_x, S_y, D) with S_x = 1, S_y = e^{lam beta}, D = frac min(S_x, S_y)."""
    for lf in lams:
        sy = math.exp(lf * beta)
        for fr in fracs:
            yield 1.0, sy, fr * min(1.0, sy)


def _unit_grid():
    """Output grid in noise units of x: dense near 0, log-spaced out to 1e6 scales."""
    inner = np.linspace(-60.0, 60.0, 12001)
    outer = np.geomspace(60.0, 1e6, 3000)
    return np.concatenate([-outer[::-1], inner, outer])


# ---------------------------------------------------------------------------
# pure noise: sup_o |log pdf_x - log pdf_y| <= eps
# ---------------------------------------------------------------------------


def _pure_max_loss(mech):
    h = mech.noise_distribution
    alpha, beta = mech.parameters()
    grid = _unit_grid()
    worst = 0.0
    for sx, sy, d in _pairs(beta, fracs=(-1.0, 0.0, 1.0), lams=(-1.0, 0.0, 1.0)):
        o = np.concatenate([grid * sx / alpha, d + grid * sy / alpha])  # fine near both centres
        lx = math.log(alpha / sx) + np.asarray(h.logpdf(o * alpha / sx))
        ly = math.log(alpha / sy) + np.asarray(h.logpdf((o - d) * alpha / sy))
        assert np.isfinite(lx).all() and np.isfinite(ly).all()
        worst = max(worst, float(np.max(np.abs(lx - ly))))
    return worst


@pytest.mark.parametrize("cfg", PURE_CONFIGS, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("eps", [0.3, 2.0])
def test_pure_release_audit(cfg, k, eps):
    mech = SmoothSensitivityRelease(eps, kappa=k / 2, **cfg)
    assert mech.privacy() == Privacy(eps, 0.0, "add_remove", mech.privacy().source)
    loss = _pure_max_loss(mech)
    assert loss <= eps + 1e-9, (cfg, k, eps, loss)
    # the audit is not vacuous: the worst pairs use a sizeable part of the budget
    assert loss >= 0.2 * eps


def test_pure_parameters_follow_ys_thm1():
    for g in (1.5, 2.0, 4.0):
        ls = (g - 1) ** ((g - 1) / g)
        ld = max(1.0, g - 1)
        for k in KS:
            a, b = SmoothSensitivityRelease(1.0, noise="polynomial", gamma=g, kappa=k / 2).parameters()
            assert a == pytest.approx(k / (2 * ls)) and b == pytest.approx((2 - k) / (2 * ld))
            assert ls * a + ld * b == pytest.approx(1.0)  # SPEC §2.1 Lipschitz form
    a, b = SmoothSensitivityRelease(0.6, noise="polynomial", gamma=2, admissible_method="nrs").parameters()
    assert a == pytest.approx(0.1) and b == pytest.approx(0.1)  # Duff Prop. 3: eps/(2(gamma+1))
    d = 3.0
    a, b = SmoothSensitivityRelease(1.0, noise="student_t", df=d, kappa=0.25).parameters()
    assert (d + 1) / (2 * math.sqrt(d)) * a + (d + 1) * b == pytest.approx(1.0)  # BS19 Thm 31


# ---------------------------------------------------------------------------
# Laplace: exact hockey-stick divergence
# ---------------------------------------------------------------------------


def _exp_integral(a, b, lo, hi):
    """int_lo^hi exp(a + b o) do (lo < hi; infinite ends only where convergent)."""
    if b == 0:
        return math.exp(a) * (hi - lo)
    if math.isinf(lo):
        return math.exp(a + b * hi) / b
    if math.isinf(hi):
        return -math.exp(a + b * lo) / b
    return math.exp(a + b * lo) * math.expm1(b * (hi - lo)) / b


def hockey_laplace(m1, b1, m2, b2, eps):
    """Exact int (p1 - e^eps p2)_+ for p_i = Laplace(m_i, b_i) (piecewise exponentials)."""
    pts = sorted({m1, m2})
    edges = [-math.inf, *pts, math.inf]
    total = 0.0
    for lo, hi in itertools.pairwise(edges):
        mid = hi - 1.0 if math.isinf(lo) else (lo + 1.0 if math.isinf(hi) else 0.5 * (lo + hi))
        s1, s2 = math.copysign(1.0, mid - m1), math.copysign(1.0, mid - m2)
        a1, c1 = -math.log(2 * b1) + s1 * m1 / b1, -s1 / b1
        a2, c2 = eps - math.log(2 * b2) + s2 * m2 / b2, -s2 / b2
        if c1 == c2:
            if a1 > a2:
                total += _exp_integral(a1, c1, lo, hi) - _exp_integral(a2, c2, lo, hi)
            continue
        cross = (a2 - a1) / (c1 - c2)
        l, u = (max(lo, cross), hi) if c1 > c2 else (lo, min(hi, cross))
        if l < u:
            total += _exp_integral(a1, c1, l, u) - _exp_integral(a2, c2, l, u)
    return max(total, 0.0)


def laplace_worst_delta(alpha, beta, eps, fracs=np.linspace(-1, 1, 21)):
    """max over abstract neighbour pairs and both directions of the exact hockey-stick delta."""
    worst = 0.0
    for sx, sy, d in _pairs(beta, fracs=fracs):
        bx, by = sx / alpha, sy / alpha
        worst = max(worst, hockey_laplace(0.0, bx, d, by, eps), hockey_laplace(d, by, 0.0, bx, eps))
    return worst


def test_hockey_laplace_matches_quadrature():
    for m1, b1, m2, b2, eps in [(0.0, 1.0, 0.7, 1.3, 0.5), (0.0, 2.0, -1.0, 1.5, 1.0), (0.0, 0.04, 0.03, 0.05, 20.0)]:
        f = lambda o: max(stats.laplace.pdf(o, m1, b1) - math.exp(eps) * stats.laplace.pdf(o, m2, b2), 0.0)
        L = 80 * max(b1, b2) + abs(m2)
        brk = sorted({m1, m2})
        q = sum(integrate.quad(f, lo, hi, limit=400, epsabs=1e-15)[0] for lo, hi in zip([-L, *brk], [*brk, L]))
        assert hockey_laplace(m1, b1, m2, b2, eps) == pytest.approx(q, rel=1e-6, abs=1e-14)


@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0, 20.0, 50.0])
@pytest.mark.parametrize("delta", [1e-6, 1e-3])
def test_laplace_release_audit(k, eps, delta):
    mech = SmoothSensitivityRelease(eps, delta, noise="laplace", kappa=k / 2, granularity=0)  # continuous law
    alpha, beta = mech.parameters()
    assert alpha == pytest.approx(k * eps / 2)
    assert eps >= alpha + beta
    assert laplace_smooth_delta(eps, alpha, beta) <= delta  # the library's certificate
    assert math.exp(-(eps - alpha + beta) / math.expm1(beta)) <= delta * (1 + 1e-12)  # SPEC §2.2 as written
    observed = laplace_worst_delta(alpha, beta, eps)
    assert observed <= delta, (k, eps, delta, observed)
    # beta' is the largest admissible one: a 1% larger beta breaks the exact condition
    b2 = beta * 1.01
    assert eps < alpha + b2 or math.exp(-(eps - alpha + b2) / math.expm1(b2)) > delta
    p = mech.privacy()
    assert (p.epsilon, p.delta, p.relation) == (eps, delta, "add_remove")


def test_nrs_laplace_formula_fails_at_large_epsilon():
    delta = 1e-6
    found = {}
    for eps in (1.0, 10.0, 20.0, 50.0):
        alpha, beta = eps / 2, eps / (2 * math.log(2 / delta))  # NRS07 / SNM Cor 4.4
        assert nrs_laplace_parameters(eps, delta) == pytest.approx((alpha, beta))
        found[eps] = laplace_worst_delta(alpha, beta, eps, fracs=np.linspace(0, 1, 11))
        lib = SmoothSensitivityRelease(eps, delta, noise="laplace")
        assert laplace_worst_delta(*lib.parameters(), eps) <= delta
        paper = SmoothSensitivityRelease(eps, delta, noise="laplace", calibration="paper")
        assert paper.parameters() == pytest.approx((alpha, beta))
        # privacy() of the paper calibration reports what actually holds
        assert paper.privacy().delta >= found[eps]
    print("NRS Laplace worst delta at delta=1e-6:", {e: f"{d:.2e}" for e, d in found.items()})
    assert found[1.0] <= delta and found[10.0] <= delta
    assert found[20.0] > delta and found[20.0] == pytest.approx(5.2e-6, rel=0.05)  # SPEC §2.2
    assert found[50.0] > 1e3 * delta and found[50.0] == pytest.approx(1.2e-3, rel=0.05)


# ---------------------------------------------------------------------------
# LLN: independent density, hockey-stick at the converted epsilon and Renyi
# ---------------------------------------------------------------------------


def _lln_logpdf(z, sigma):
    """log of E_Y[1/2 e^{-sigma Y} exp(-|z| e^{-sigma Y})] by a fine trapezoid in Y (independent of noise.py)."""
    y = np.linspace(-20.0, 20.0, 401)
    logw = -0.5 * y * y - 0.5 * math.log(2 * math.pi) + math.log(y[1] - y[0])
    logw[[0, -1]] -= math.log(2)
    s = sigma * y
    z = np.abs(np.asarray(z, dtype=np.float64))[:, None]
    return special.logsumexp(logw - math.log(2) - s - z * np.exp(-s), axis=1)


@pytest.mark.parametrize("k,eps", [(0.5, 0.5), (1.0, 0.5), (1.5, 0.5), (1.0, 2.0)])
def test_lln_release_audit(k, eps):
    delta = 1e-6
    mech = SmoothSensitivityRelease(eps, delta, noise="lln", kappa=k / 2)
    alpha, beta = mech.parameters()
    sigma = mech.sigma
    rho = mech.zcdp_rho
    assert rho + 2 * math.sqrt(rho * math.log(1 / delta)) == pytest.approx(eps, rel=1e-12)
    assert sigma == pytest.approx(math.sqrt((2 - k) / (5 * k)))
    # the default sigma is the variance-optimal one for the beta' it produces (SPEC §2.5)
    eps_c = math.sqrt(2 * rho)
    assert LaplaceLogNormal.optimal_sigma(eps_c, beta) == pytest.approx(sigma, rel=1e-9)
    if k == 1.0:  # k = 1 is the noise's own even split
        assert (alpha, beta) == pytest.approx(LaplaceLogNormal(sigma).admissible(eps, delta), rel=1e-12)
    # the library density agrees with the independent one
    zz = np.array([0.0, 0.3, 2.0, 10.0, 40.0])
    np.testing.assert_allclose(np.log(mech.noise_distribution.pdf(zz)), _lln_logpdf(zz, sigma), rtol=1e-6, atol=1e-8)
    u = np.concatenate([-np.geomspace(1e-4, 3e3, 700)[::-1], [0.0], np.geomspace(1e-4, 3e3, 700)])
    worst_delta, worst_renyi = 0.0, -math.inf
    for sx, sy, d in _pairs(beta, fracs=(-1.0, 1.0), lams=(-1.0, 1.0)):
        o = np.unique(np.concatenate([u * sx / alpha, d + u * sy / alpha]))
        lx = math.log(alpha / sx) + _lln_logpdf(o * alpha / sx, sigma)
        ly = math.log(alpha / sy) + _lln_logpdf((o - d) * alpha / sy, sigma)
        for a, b in ((lx, ly), (ly, lx)):
            worst_delta = max(worst_delta, integrate.trapezoid(np.maximum(np.exp(a) - np.exp(eps + b), 0.0), o))
            for order in (1.5, 2.0, 4.0, 8.0):
                r = special.logsumexp(order * a + (1 - order) * b, b=np.gradient(o)) / (order - 1)
                worst_renyi = max(worst_renyi, r / (order * rho))
    print(f"LLN k={k} eps={eps}: hockey-stick delta at eps {worst_delta:.2e}, max D_a/(a rho) {worst_renyi:.3f}")
    assert worst_delta <= delta, worst_delta
    assert worst_renyi <= 1.0 + 1e-6, worst_renyi  # D_a <= a rho (zCDP)


def test_lln_paper_calibration_reports_converted_epsilon():
    mech = SmoothSensitivityRelease(1.0, 1e-6, noise="lln", calibration="paper")
    assert mech.zcdp_rho == pytest.approx(0.5)
    p = mech.privacy()
    assert p.epsilon == pytest.approx(0.5 + 2 * math.sqrt(0.5 * math.log(1e6)))
    assert p.delta == 1e-6


# ---------------------------------------------------------------------------
# sampling vs the exact error law
# ---------------------------------------------------------------------------

SAMPLING_CONFIGS = [
    (dict(noise="laplace", delta=1e-6), True),
    (dict(noise="student_t", df=3), True),
    (dict(noise="polynomial", gamma=4), True),
    (dict(noise="polynomial", gamma=2), False),
    (dict(noise="lln", delta=1e-6), True),
]


@pytest.mark.parametrize("cfg,finite_var", SAMPLING_CONFIGS, ids=lambda c: str(c))
def test_sampling_matches_error_distribution(cfg, finite_var):
    mech = SmoothSensitivityRelease(0.8, **cfg)
    S = lambda beta: 0.3 + math.exp(-beta)  # a closed-form "smooth sensitivity"
    dist = error_distribution(mech, S)
    assert isinstance(dist, ErrorDistribution)
    assert dist.scale == pytest.approx(S(mech.beta) / mech.alpha) == pytest.approx(mech.scale(S))
    out = mech.release(1.5, S, rng=np.random.default_rng(7), size=100_000)
    err = out - 1.5
    assert stats.kstest(err, dist.cdf).pvalue > 1e-3
    abs_err = np.abs(err)
    if finite_var:
        se = abs_err.std() / math.sqrt(err.size)
        assert abs(abs_err.mean() - dist.expected_abs_error()) <= 5 * se
    else:
        assert math.isinf(dist.expected_abs_error())
    # clipped error (always finite): E|clip(E, lo, hi)|
    lo, hi = -2.0 * dist.scale, 5.0 * dist.scale
    c = np.abs(np.clip(err, lo, hi))
    assert abs(c.mean() - dist.expected_abs_error(within=(lo, hi))) <= 5 * c.std() / math.sqrt(c.size)
    # quantiles / intervals of |error|
    for cov in (0.5, 0.9, 0.99):
        lo_i, hi_i = dist.interval(cov)
        assert lo_i == -hi_i == -dist.quantile(cov)
        frac = np.mean(abs_err <= hi_i)
        assert abs(frac - cov) <= 5 * math.sqrt(cov * (1 - cov) / err.size)
        assert dist.cdf(hi_i) - dist.cdf(lo_i) == pytest.approx(cov, abs=1e-7)
    assert dist.ppf(0.5) == pytest.approx(0.0, abs=1e-9 * dist.scale)
    # pdf integrates the cdf
    assert integrate.quad(dist.pdf, -dist.scale, 2 * dist.scale)[0] == pytest.approx(
        dist.cdf(2 * dist.scale) - dist.cdf(-dist.scale), rel=1e-6
    )
    # a single release is a float; clipping is post-processing
    one = mech.release(1.5, S(mech.beta), rng=1)
    assert isinstance(one, float)
    clipped = mech.release(1.5, S, rng=2, size=1000, clip_output=(1.0, 2.0))
    assert clipped.min() >= 1.0 and clipped.max() <= 2.0


def test_expected_abs_error_closed_forms():
    # Laplace: E|Z| = 1, clipped: (1 - e^{-u})/2 per side
    lap = error_distribution(SmoothSensitivityRelease(1.0, 1e-6, noise="laplace"), 2.0)
    s = lap.scale
    assert lap.expected_abs_error() == pytest.approx(s)
    assert lap.expected_abs_error(within=(-s, 3 * s)) == pytest.approx(s * (1 - math.exp(-1) + 1 - math.exp(-3)) / 2)
    # Cauchy: int_0^U sf = U/2 - (U arctan U - ln(1+U^2)/2)/pi
    cau = error_distribution(SmoothSensitivityRelease(1.0, noise="polynomial", gamma=2), 1.0)
    g = lambda U: U / 2 - (U * math.atan(U) - 0.5 * math.log1p(U * U)) / math.pi
    for lo, hi in ((-3.0, 7.0), (-1e4, 1e5)):
        want = cau.scale * (g(-lo / cau.scale) + g(hi / cau.scale))
        assert cau.expected_abs_error(within=(lo, hi)) == pytest.approx(want, rel=1e-8)
    # polynomial gamma = 4: E|Z| = 1/sqrt(2) (YS Lemma 4); Student t3: 2 sqrt(3)/pi; LLN: e^{sigma^2/2}
    poly4 = SmoothSensitivityRelease(1.0, noise="polynomial", gamma=4)
    assert error_distribution(poly4, 1.0).mean_abs_noise == pytest.approx(1 / math.sqrt(2))
    t3 = SmoothSensitivityRelease(1.0, noise="student_t", df=3)
    assert error_distribution(t3, 1.0).mean_abs_noise == pytest.approx(2 * math.sqrt(3) / math.pi)
    assert math.isinf(error_distribution(SmoothSensitivityRelease(1.0, noise="student_t", df=1), 1.0).mean_abs_noise)
    lln = SmoothSensitivityRelease(1.0, 1e-6, noise="lln", sigma=0.7)
    assert error_distribution(lln, 1.0).mean_abs_noise == pytest.approx(math.exp(0.245))


def test_callable_sensitivity_is_evaluated_at_beta():
    mech = SmoothSensitivityRelease(1.0, noise="student_t")
    seen = []
    mech.release(0.0, lambda b: seen.append(b) or 1.0, rng=0)
    assert seen == [mech.beta]
    a = mech.release(0.0, lambda b: 2.0, rng=5, size=10)
    b = mech.release(0.0, 2.0, rng=5, size=10)
    np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------------------
# bad inputs
# ---------------------------------------------------------------------------

_bad_k = st.one_of(
    st.floats(max_value=0.0, allow_nan=False), st.floats(min_value=1.0, allow_nan=False), st.just(float("nan"))
)
_bad_s = st.one_of(
    st.floats(max_value=0.0, allow_nan=False), st.sampled_from([float("nan"), float("inf"), -float("inf")])
)


@settings(max_examples=60, deadline=None)
@given(k=_bad_k, noise=st.sampled_from(["laplace", "student_t", "polynomial", "lln"]))
def test_bad_kappa(k, noise):
    delta = 1e-6 if noise in ("laplace", "lln") else 0.0
    with pytest.raises(ValueError, match=r"\bkappa\b"):
        SmoothSensitivityRelease(1.0, delta, noise=noise, kappa=k)


def test_removed_k_and_exact_spellings_are_refused():
    """The split is ``kappa`` only (YS's k = 2 kappa is gone) and "exact" is no calibration name."""
    with pytest.raises(TypeError, match=r"\bk\b"):
        SmoothSensitivityRelease(1.0, noise="polynomial", gamma=4, k=0.6)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="calibration"):
        SmoothSensitivityRelease(1.0, 1e-6, noise="laplace", calibration="exact")
    assert not hasattr(SmoothSensitivityRelease(1.0, noise="polynomial", gamma=4, kappa=0.3), "k")


@settings(max_examples=60, deadline=None)
@given(s=_bad_s, as_callable=st.booleans())
def test_bad_sensitivity(s, as_callable):
    mech = SmoothSensitivityRelease(1.0, noise="polynomial", gamma=3)
    arg = (lambda beta: s) if as_callable else s
    gen = np.random.default_rng(3)
    state = gen.bit_generator.state
    for call in (
        lambda: mech.release(1.0, arg, rng=gen),
        lambda: mech.scale(arg),
        lambda: error_distribution(mech, arg),
    ):
        with pytest.raises(ValueError, match="sensitivity"):
            call()
    assert gen.bit_generator.state == state  # checks come before any randomness


@settings(max_examples=40, deadline=None)
@given(delta=st.one_of(st.floats(max_value=0.0, exclude_max=True), st.floats(min_value=1.0), st.just(float("nan"))))
def test_bad_delta(delta):
    with pytest.raises(ValueError, match="delta"):
        SmoothSensitivityRelease(1.0, delta, noise="laplace")


def test_delta_rules_and_other_checks():
    for noise in ("polynomial", "student_t"):
        with pytest.raises(ValueError, match="pure"):
            SmoothSensitivityRelease(1.0, 1e-6, noise=noise)
    for noise in ("laplace", "lln"):
        with pytest.raises(ValueError, match="delta"):
            SmoothSensitivityRelease(1.0, 0.0, noise=noise)
    with pytest.raises(ValueError, match="noise"):
        SmoothSensitivityRelease(1.0, noise="gauss")
    with pytest.raises(ValueError, match="gamma"):
        SmoothSensitivityRelease(1.0, noise="polynomial", gamma=1.0)
    with pytest.raises(ValueError, match="df"):
        SmoothSensitivityRelease(1.0, noise="student_t", df=0)
    with pytest.raises(ValueError, match="sigma"):
        SmoothSensitivityRelease(1.0, 1e-6, noise="lln", sigma=-1.0)
    with pytest.raises(ValueError, match="epsilon"):
        SmoothSensitivityRelease(0.0, noise="polynomial")
    with pytest.raises(ValueError, match="relation"):
        SmoothSensitivityRelease(1.0, noise="polynomial", relation="swap")
    mech = SmoothSensitivityRelease(1.0, noise="polynomial")
    with pytest.raises(ValueError, match="value"):
        mech.release(float("nan"), 1.0)
    with pytest.raises(ValueError, match="clip"):
        mech.release(0.0, 1.0, clip_output=(2.0, 1.0))
    with pytest.raises(ValueError, match="size"):
        mech.release(0.0, 1.0, size=0)
    with pytest.raises(ValueError, match="sensitivity"):
        mech.release(0.0, np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match="sensitivity"):
        mech.release(0.0, "1.0")
    with pytest.raises(dataclasses.FrozenInstanceError):
        mech.kappa = 0.5  # frozen


# ---------------------------------------------------------------------------
# TDT release
# ---------------------------------------------------------------------------


def test_tdt_release_beta_handling():
    from dpselect.apps import genomics as tdt
    from dpselect.apps.genomics import release_mechanism

    bmax = tdt.beta_max(30, "thm5")
    # gamma = 4, eps = 1, k = 2 kappa = 1 gives beta' = 1/6 > beta_max(30) = 0.1457: k is moved up
    m = release_mechanism(30, 1.0, "polynomial", 4, 0.5)
    assert m.beta <= bmax and m.beta == pytest.approx(bmax, rel=1e-9)
    assert 2 * m.kappa == pytest.approx(2 - bmax / (1 / 6), rel=1e-9) and m.kappa > 0.5
    assert m.privacy() == Privacy(1.0, 0.0, "replace", m.privacy().source)
    # small epsilon: beta' = eps/6 < beta_max, k unchanged
    m2 = release_mechanism(30, 0.1, "polynomial", 4, 0.35)
    assert m2.kappa == 0.35 and m2.beta == pytest.approx(1.3 * 0.1 / 6)
    m3 = release_mechanism(30, 1.0, "student_t", kappa=0.5)
    assert m3.beta <= bmax
    with pytest.raises(ValueError, match="noise"):
        release_mechanism(30, 1.0, "laplace")


def test_tdt_release_statistic_end_to_end_audit():
    """Exact output densities of release_statistic for one SNP and all its table neighbours."""
    from dpselect.apps import genomics as tdt
    from dpselect.apps.genomics import release_mechanism, release_statistic

    n, eps = 30, 1.0
    mech = release_mechanism(n, eps)
    h = mech.noise_distribution
    grid = _unit_grid()[::4]
    worst = 0.0
    for b0, c0 in [(20, 3), (9, 1), (30, 30), (0, 0), (2, 12), (40, 15)]:
        f = float(tdt.tdt_statistic(b0, c0))
        s = float(tdt.smooth_upper_bound(b0, c0, n, mech.beta))
        for bb, cc in tdt.tdt_neighbours([b0], [c0], n):
            f2 = float(tdt.tdt_statistic(bb[0], cc[0]))
            s2 = float(tdt.smooth_upper_bound(bb[0], cc[0], n, mech.beta))
            o = np.concatenate([f + grid * s / mech.alpha, f2 + grid * s2 / mech.alpha])
            lx = math.log(mech.alpha / s) + h.logpdf((o - f) * mech.alpha / s)
            ly = math.log(mech.alpha / s2) + h.logpdf((o - f2) * mech.alpha / s2)
            worst = max(worst, float(np.max(np.abs(lx - ly))))
    assert worst <= eps + 1e-9
    b = np.array([20, 9, 30])
    c = np.array([3, 1, 30])
    out = release_statistic(TransmissionCounts(b, c, n), eps, 0, rng=0, size=50_000)
    s0 = float(tdt.smooth_upper_bound(b, c, n, mech.beta)[0])
    assert stats.kstest(out - float(tdt.tdt_statistic(20, 3)), error_distribution(mech, s0).cdf).pvalue > 1e-3
    with pytest.raises(ValueError, match="index"):
        release_statistic(TransmissionCounts(b, c, n), eps, 3)


def test_tdt_select_and_release_privacy_adds_up():
    from dpselect.apps.genomics import select_and_release

    n = 30
    b = np.array([25, 10, 12, 31])
    c = np.array([5, 9, 14, 29])
    out = select_and_release(TransmissionCounts(b, c, n), 0.5, 1.0, mechanism=ExponentialMechanism(0.5), rng=0)
    idx, value, priv = int(out.indices[0]), float(out.statistic[0]), out.privacy
    assert 0 <= idx < 4 and isinstance(value, float)
    assert priv.epsilon == pytest.approx(1.5) and priv.delta == 0 and priv.relation == "replace"
    for mech in ("sps", "pf"):
        p2 = select_and_release(TransmissionCounts(b, c, n), 0.5, 1.0, mechanism=mech, rng=1).privacy
        assert p2.epsilon == pytest.approx(1.5) and p2.delta == 0 and p2.relation == "replace"
    with pytest.raises(ValueError, match="epsilon"):
        select_and_release(TransmissionCounts(b, c, n), 0.5, 1.0, mechanism=ExponentialMechanism(0.7))
    with pytest.raises(ValueError, match="mechanism"):
        select_and_release(TransmissionCounts(b, c, n), 0.5, 1.0, mechanism="best")
    # the selection favours the strongest SNP (chi2 = 13.3 vs <= 0.5)
    picks = [
        select_and_release(TransmissionCounts(b, c, n), 5.0, 1.0, mechanism="em", rng=s).indices[0] for s in range(20)
    ]
    assert np.mean(np.array(picks) == 0) > 0.5


def test_tdt_select_and_release_uses_the_granularity_asked():
    """The released value lies on the grid the caller names (it used to be the default grid always)."""
    from dpselect.apps.genomics import select_and_release

    b, c = np.array([25, 10, 12, 31]), np.array([5, 9, 14, 29])
    for s in range(10):
        value = select_and_release(
            TransmissionCounts(b, c, 30), 0.5, 1.0, mechanism="em", granularity=0.25, rng=s
        ).statistic[0]
        assert value / 0.25 == round(value / 0.25)
    fine = [
        select_and_release(
            TransmissionCounts(b, c, 30), 0.5, 1.0, mechanism="em", granularity=2.0**-20, rng=s
        ).statistic[0]
        for s in range(10)
    ]
    assert any(v / 0.25 != round(v / 0.25) for v in fine)  # negative control: the fine grid is not the coarse one


def test_named_results_of_the_release():
    from dpselect import OutputLaw
    from dpselect.mechanisms.release import ReleaseParameters

    rel = SmoothSensitivityRelease(1.0, granularity=0.25)
    params = rel.parameters()
    assert isinstance(params, ReleaseParameters) and (params.alpha, params.beta) == (rel.alpha, rel.beta)
    law = rel.log_law(0.3, 0.5, 40)
    assert isinstance(law, OutputLaw) and law.support.shape == law.log_probabilities.shape == (81,)
    np.testing.assert_array_equal(law.probabilities, np.exp(law.log_probabilities))
    assert 0.99 < float(law.sum()) <= 1.0 + 1e-12  # a window: the t_3 tails outside it are left out
    with pytest.raises(ValueError, match="granularity must be a power of two"):
        SmoothSensitivityRelease(1.0, granularity=0.3)
    with pytest.raises(TypeError, match="tuned_on_data must be a bool"):
        SmoothSensitivityRelease(1.0, tuned_on_data="yes")
