"""Smooth-sensitivity median baselines of the Duff paper (apps.median_baselines), against Duff."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import integrate

import dpselect
from dpselect._warnings import PrivacyLeakWarning
from dpselect.accounting import BudgetExceededError
from dpselect.apps import quantiles as duff
from dpselect.apps import quantiles as mb
from dpselect.apps.quantiles import smooth_sensitivity_median
from dpselect.mechanisms.release import SmoothSensitivityRelease
from dpselect.privacy import Privacy

BOUNDS = (-10.0, 10.0)


def _normal_data(seed=2024, n=1000):
    return np.clip(np.random.default_rng(seed).standard_normal(n), *BOUNDS)


# (release, exact expected error, mechanism) per baseline, with the library defaults
BASELINES = {
    "pure": (
        lambda x, e, **kw: mb.smooth_sens_pure(x, e, **kw),
        lambda x, e, **kw: mb.expected_abs_error_smooth_sens_pure(x, e, **kw),
        lambda e: mb.smooth_sens_pure_mechanism(e),
    ),
    "approx": (
        lambda x, e, **kw: mb.smooth_sens_approx(x, e, delta=1e-6, **kw),
        lambda x, e, **kw: mb.expected_abs_error_smooth_sens_approx(x, e, delta=1e-6, **kw),
        lambda e: mb.smooth_sens_approx_mechanism(None, e, delta=1e-6, bounds=None),
    ),
    "lln": (
        lambda x, e, **kw: mb.laplace_ln(x, e, **kw),
        lambda x, e, **kw: mb.expected_abs_error_laplace_ln(x, e, **kw),
        lambda e: mb.laplace_ln_mechanism(e),
    ),
}


def _clipped_error_by_quadrature(mech, s, med, a, b):
    """E|clip(med + scale Z, a, b) - med| by integrating |z| against the noise density (not the code's sf route)."""
    scale = s / mech.alpha
    h = mech.noise_distribution
    lo, hi = (a - med) / scale, (b - med) / scale  # clipping points in noise units

    def pdf(z):
        return float(np.exp(h.logpdf(np.array([z])))[0])

    body = integrate.quad(lambda z: abs(z) * pdf(z), lo, 0, limit=400)[0]
    body += integrate.quad(lambda z: z * pdf(z), 0, hi, limit=400)[0]
    p_hi = 1.0 - integrate.quad(pdf, -np.inf, hi, limit=400)[0]
    p_lo = integrate.quad(pdf, -np.inf, lo, limit=400)[0]
    return scale * (body + hi * p_hi - lo * p_lo)


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_every_baseline_is_clipped_by_default_and_exact(name):
    """Same rule for all: outputs in [a, b] by default; the exact clipped error matches quadrature and sampling."""
    release, expected, make = BASELINES[name]
    x = np.random.default_rng(1).uniform(0, 1, 301)
    bounds = (0.0, 1.0)
    med = np.sort(x)[150]
    eps = 0.3  # small enough that clipping matters for every noise
    out = release(x, eps, bounds=bounds, rng=0, size=40_000)
    assert out.min() >= 0.0 and out.max() <= 1.0
    assert np.mean((out == 0.0) | (out == 1.0)) > 0.001  # clipping actually happened
    exact = expected(x, eps, bounds=bounds)
    raw = expected(x, eps, bounds=bounds, clip=False)
    assert exact < raw  # clipping never hurts (the median lies inside the bounds)
    mech = make(eps)
    s = smooth_sensitivity_median(x, mech.beta, bounds=bounds)
    assert exact == pytest.approx(_clipped_error_by_quadrature(mech, s, med, 0.0, 1.0), rel=1e-6)
    err = np.abs(out - med)
    assert abs(err.mean() - exact) <= 5 * err.std() / math.sqrt(err.size)
    raw_draws = release(x, eps, bounds=bounds, rng=0, size=2000, clip=False)
    assert raw_draws.min() < 0.0 or raw_draws.max() > 1.0


def test_unclipped_errors_closed_forms():
    x = np.random.default_rng(1).uniform(0, 1, 301)
    bounds = (0.0, 1.0)
    assert math.isinf(mb.expected_abs_error_smooth_sens_pure(x, 1.0, bounds=bounds, clip=False))  # Cauchy
    beta = SmoothSensitivityRelease(1.0, 1e-6, noise="laplace", relation="replace").beta
    s = smooth_sensitivity_median(x, beta, bounds=bounds)
    exact = mb.expected_abs_error_smooth_sens_approx(x, 1.0, delta=1e-6, bounds=bounds, clip=False)
    assert exact == pytest.approx(s / 0.5)  # (S/alpha) E|Lap(1)|, alpha = eps/2
    lln = mb.laplace_ln_mechanism(1.0)
    s = smooth_sensitivity_median(x, lln.beta, bounds=bounds)
    got = mb.expected_abs_error_laplace_ln(x, 1.0, bounds=bounds, clip=False)
    assert got == pytest.approx(s / lln.alpha * math.exp(lln.sigma**2 / 2), rel=1e-9)


def test_duff_against_consistently_clipped_baselines():
    """Exact errors, N(0,1), n = 1000, bounds [-10, 10]; every baseline clipped to the bounds."""
    x = _normal_data()
    rows = {}
    for eps in (0.1, 0.5, 1.0, 2.0):
        d = duff.expected_absolute_error(x, eps, bounds=BOUNDS)
        pure = mb.expected_abs_error_smooth_sens_pure(x, eps, bounds=BOUNDS)
        approx = mb.expected_abs_error_smooth_sens_approx(x, eps, delta=1e-6, bounds=BOUNDS)
        with pytest.warns(PrivacyLeakWarning):
            approx_p = mb.expected_abs_error_smooth_sens_approx(x, eps, delta=1e-6, bounds=BOUNDS, tuning="paper")
        lln = mb.expected_abs_error_laplace_ln(x, eps, bounds=BOUNDS)
        lln_p = mb.expected_abs_error_laplace_ln(x, eps, bounds=BOUNDS, calibration="paper")
        rows[eps] = (d, pure, approx, approx_p, lln, lln_p)
        assert approx_p <= approx * (1 + 1e-9)  # the data-dependent tuning can only help
        # Duff below every clipped baseline at eps <= 2 (paper: LaplaceLN 4-15x)
        assert d < min(pure, approx, approx_p, lln, lln_p)
    # the paper's 187x at eps = 0.1 against SmoothSens_eps; with every baseline clipped the best one
    # (SmoothSens_eps itself) is still >= 100x worse
    d, pure, approx, approx_p, lln, lln_p = rows[0.1]
    assert min(pure, approx, lln) >= 100 * d


def test_baselines_beat_duff_at_large_epsilon():
    """Not every claim holds everywhere: at eps = 10 the clipped Laplace baseline is more accurate than Duff."""
    x = _normal_data()
    d = duff.expected_absolute_error(x, 10.0, bounds=BOUNDS)
    approx = mb.expected_abs_error_smooth_sens_approx(x, 10.0, delta=1e-6, bounds=BOUNDS)
    assert approx < d


def test_parameters_and_guarantees():
    m = mb.smooth_sens_pure_mechanism(0.6)
    assert m.parameters() == pytest.approx((0.1, 0.1)) and m.privacy().relation == "replace"
    lln = mb.laplace_ln_mechanism(1.0)
    assert lln.privacy() == Privacy(1.0, 1e-6, "replace", lln.privacy().source, lln.zcdp_rho)
    assert lln.zcdp_rho is not None and 0 < lln.zcdp_rho < 1.0  # carried for the accountant's rho composition
    x = np.random.default_rng(0).normal(size=200)
    with pytest.warns(PrivacyLeakWarning):
        tuned = mb.smooth_sens_approx_mechanism(x, 1.0, delta=1e-6, bounds=BOUNDS, tuning="paper")
    assert math.isinf(tuned.privacy().epsilon)  # data-tuned: no guarantee
    fixed = mb.smooth_sens_approx_mechanism(x, 1.0, delta=1e-6, bounds=BOUNDS, tuning="fixed")
    assert fixed.privacy().epsilon == 1.0 and fixed.privacy().delta == 1e-6
    assert isinstance(mb.laplace_ln(x, 1.0, bounds=BOUNDS, rng=4), float)


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_accountant_charged_before_randomness(name):
    release, _, make = BASELINES[name]
    x = np.random.default_rng(3).uniform(0, 1, 51)
    claimed = make(1.0).privacy()
    # delta budget = the claim's: a zCDP claim is converted at the delta the budget leaves, here its own
    acc = dpselect.Accountant(10.0, max(claimed.delta, 1e-9), composition="tight")  # figures for fixed parameters
    release(x, 1.0, bounds=(0.0, 1.0), rng=0, accountant=acc)
    # (a zCDP claim may come out tighter: the accountant's conversion is never above the claim's)
    assert acc.spent.epsilon <= claimed.epsilon * (1 + 1e-12) and acc.spent.delta == pytest.approx(claimed.delta)
    assert acc.spent.epsilon > 0.8 * claimed.epsilon
    small = dpselect.Accountant(0.5, max(claimed.delta, 1e-9))
    gen = np.random.default_rng(5)
    state = gen.bit_generator.state
    with pytest.raises(BudgetExceededError):
        release(x, 1.0, bounds=(0.0, 1.0), rng=gen, accountant=small)
    assert gen.bit_generator.state == state and small.charges == ()


def test_paper_tuning_refused_by_a_finite_budget():
    x = np.random.default_rng(3).uniform(0, 1, 51)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        with pytest.raises(BudgetExceededError):
            mb.smooth_sens_approx(
                x, 1.0, delta=1e-6, bounds=(0.0, 1.0), tuning="paper", rng=0, accountant=dpselect.Accountant(100.0, 0.1)
            )


def test_bad_inputs_and_keyword_only():
    x = np.random.default_rng(1).uniform(0, 1, 31)
    with pytest.raises(ValueError, match="bounds"):
        mb.smooth_sens_pure(x, 1.0, bounds=(1.0, 0.0))
    with pytest.raises(ValueError, match="x"):
        mb.smooth_sens_pure(x + 5, 1.0, bounds=(0.0, 1.0), on_out_of_bounds="raise")
    with pytest.raises(ValueError, match="tuning"):
        mb.smooth_sens_approx(x, 1.0, delta=1e-6, bounds=(0.0, 1.0), tuning="best")
    with pytest.raises(ValueError, match="delta"):
        mb.smooth_sens_approx(x, 1.0, delta=0.0, bounds=(0.0, 1.0))
    with pytest.raises(TypeError, match="clip"):
        mb.laplace_ln(x, 1.0, bounds=(0.0, 1.0), clip=(0, 1))
    with pytest.raises(TypeError):
        mb.smooth_sens_pure(x, 1.0, (0.0, 1.0))  # bounds is keyword-only
    with pytest.raises(TypeError):
        mb.laplace_ln(x, 1.0, (0.0, 1.0))


def test_experiment_best_sound_claim_row():
    """The median experiment's claim row names the most accurate sound method, with the figures."""
    from dpselect.experiments import median as E

    def rows(errors):
        return [
            {"distribution": d, "rep": 0, "n": 10, "epsilon": e, "method": m, "expected_abs_error": v}
            for (d, e), per in errors.items()
            for m, v in per.items()
        ]

    base = {m: 1.0 for m in E.METHODS}
    won = {
        ("normal", 0.1): {**base, "Duff": 0.01, "SmoothSens_eps": 0.5},
        ("normal", 10.0): {**base, "Duff": 0.2, "SmoothSens_eps,delta (paper tuning)": 0.01},  # not sound
        ("uniform", 0.1): {**base, "Duff": 0.1},
        ("uniform", 10.0): {**base, "Duff": 0.2},
    }
    claim = next(c for c in E.claims(rows(won)) if c.text.startswith("Best sound"))
    assert claim.ok is True and "Duff best in 4/4 settings" in claim.ours and "5-50x" in claim.ours
    lost = {**won, ("uniform", 10.0): {**base, "Duff": 0.2, "LaplaceLN (eps,delta)": 0.1}}
    claim = next(c for c in E.claims(rows(lost)) if c.text.startswith("Best sound"))
    assert claim.ok is False and "Duff best in 3/4 settings" in claim.ours
    assert "LaplaceLN (eps,delta) best at uniform eps=10 (0.1 vs Duff 0.2)" in claim.ours
    assert E.summary(rows(lost)).endswith("| uniform | 10 | 0.2 | 1 | 1 | 1 | 1 | 0.1 | LaplaceLN (eps,delta) |")
