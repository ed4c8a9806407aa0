"""accounting.py: section 3 (smooth report-noisy-max / SPS), section 4 (sensitivity bound), section 6 (Accountant).

Every figure is recomputed here independently (scipy.stats, numpy roots, plain
arithmetic) or is one of SPEC's worked numbers.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from dpselect import Accountant, BudgetExceededError, Privacy
from dpselect.accounting import (
    charge,
    laplace_selection_beta,
    laplace_selection_eps_d,
    laplace_selection_log_delta,
    laplace_selection_privacy,
    lln_selection_privacy,
    lln_selection_rho,
    sensitivity_bound_privacy,
    sensitivity_bound_shift,
    smooth_rnm_epsilon,
    sps_epsilon,
    sps_split,
    zcdp_to_dp,
)
from dpselect.accounting.composition import zcdp_epsilon
from dpselect.noise import PolynomialTail

# Student's t_3 constants (SPEC §2.4, Bun-Steinke Thm 31): L_s = (d+1)/(2 sqrt d), L_d = d + 1
T3_LS, T3_LD = 4.0 / (2.0 * math.sqrt(3.0)), 4.0


# ---------------------------------------------------------------------------
# section 3: SPS (SPEC §3.2)
# ---------------------------------------------------------------------------


def test_sps_worked_example():
    """SPEC §3.2: eps = 1, gamma = 4, kappa = 1/2: alpha' = 0.1097, beta' = 0.0333 (|R| = 5), 0.00833 (|R| = 20)."""
    h = PolynomialTail(4.0)
    k, l5 = sps_split(0.5, 5)
    assert (k, l5) == (0.5, pytest.approx(0.2))
    alpha = h.admissible(k * 1.0)[0]
    assert round(alpha, 4) == 0.1097 and round(1 / alpha, 3) == 9.118  # noise = 9.118 S(x) Z
    assert round(h.admissible(l5 * 1.0)[1], 4) == 0.0333
    _, l20 = sps_split(0.5, 20)
    assert round(h.admissible(l20)[1], 5) == 0.00833
    assert sps_epsilon(k, l5, 5, 1.0) == pytest.approx(1.0)
    assert sps_epsilon(0.5, 0.1, 10, 2.0) == pytest.approx((0.5 + 10 * 0.1 / 2) * 2.0)


def test_sps_relation_to_srnm():
    """SPEC §3.2: A = alpha', 2 A L_s = k eps, m beta' L_d = m l eps / 2 (polynomial tails, gamma >= 2)."""
    for gamma, kappa, m, eps in ((4.0, 0.5, 5, 1.0), (2.0, 0.3, 12, 0.7), (6.0, 0.8, 3, 4.0)):
        h = PolynomialTail(gamma)
        k, l = sps_split(kappa, m)
        a, beta = h.admissible(k * eps)[0], h.admissible(l * eps)[1]
        ls, ld = (gamma - 1) ** ((gamma - 1) / gamma), max(1.0, gamma - 1)
        assert smooth_rnm_epsilon(a, beta, m, ls, ld) == pytest.approx(sps_epsilon(k, l, m, eps), rel=1e-12)


# ---------------------------------------------------------------------------
# section 3: smooth report-noisy-max, pure noise (SPEC §3.1, §3.3)
# ---------------------------------------------------------------------------


def test_snm_t_proven_worked_example():
    """SNM-t proven at eps = 1, m = 5, kappa = 1/2: A = 0.2165, beta = 0.025, 1-DP."""
    a = 0.5 * 1.0 / (2 * T3_LS)
    beta = 0.5 * 1.0 / (5 * T3_LD)
    assert (round(a, 4), beta) == (0.2165, 0.025)
    assert smooth_rnm_epsilon(a, beta, 5, T3_LS, T3_LD) == pytest.approx(1.0, rel=1e-14)


def test_snm_t_paper_is_three_dp():
    """The paper's t parameters (alpha = eps sqrt d/(d+1), beta = eps/(2(d+1)), noise 2S/alpha) are (m+1)/2-DP."""
    for m in (2, 5, 11):
        a = (math.sqrt(3) / 4) / 2
        beta = 1.0 / 8
        assert smooth_rnm_epsilon(a, beta, m, T3_LS, T3_LD) == pytest.approx((m + 1) / 2)


def test_monotone_halves_the_sliding_term():
    assert smooth_rnm_epsilon(0.3, 0.01, 7, 1.5, 2.0, monotone=True) == pytest.approx(0.3 * 1.5 + 7 * 0.01 * 2.0)
    assert smooth_rnm_epsilon(0.3, 0.01, 7, 1.5, 2.0) == pytest.approx(2 * 0.3 * 1.5 + 7 * 0.01 * 2.0)


# ---------------------------------------------------------------------------
# section 3: Laplace (SPEC §3.1)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("m,beta,eps_d", [(1, 0.01, 0.7), (5, 0.02, 0.5), (100, 1e-3, 0.3), (10**4, 2e-4, 0.5)])
def test_laplace_log_delta_is_the_gamma_tail(m, beta, eps_d):
    ref = stats.gamma.logsf((eps_d + m * beta) / math.expm1(beta), m)
    assert laplace_selection_log_delta(m, beta, eps_d) == pytest.approx(ref, rel=1e-10)


def test_laplace_log_delta_far_tail_is_an_upper_bound():
    """Where scipy underflows the formula returns a conservative bound (never smaller than the true tail)."""
    m, beta, eps_d = 3, 1e-4, 0.5
    got = laplace_selection_log_delta(m, beta, eps_d)
    x = (eps_d + m * beta) / math.expm1(beta)
    # log of the leading term of Gamma(m, x)/Gamma(m) = e^-x sum_{j<m} x^j/j!
    exact = -x + math.log(sum(x**j / math.factorial(j) for j in range(m)))
    assert exact <= got <= exact + 1e-3


@pytest.mark.parametrize("m", [1, 5, 1000])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-12])
def test_laplace_beta_is_the_largest_feasible(m, delta):
    eps_d = 0.5
    beta = laplace_selection_beta(m, eps_d, delta)
    assert m * beta <= eps_d * (1 + 1e-15)
    assert stats.gamma.logsf((eps_d + m * beta) / math.expm1(beta), m) <= math.log(delta) + 1e-12
    if m * beta < eps_d * (1 - 1e-9):
        bigger = beta * (1 + 1e-6)
        assert stats.gamma.logsf((eps_d + m * bigger) / math.expm1(bigger), m) > math.log(delta)


def test_laplace_beta_never_exceeds_eps_d_by_rounding():
    """eps_d / m can round up (m = 45, eps_d = 0.11875: 45 * (0.11875 / 45) > 0.11875), which made
    laplace_selection_privacy refuse the calibrated beta; the cap is now the largest float with m beta <= eps_d."""
    m, eps_d = 45, 0.11875
    assert m * (eps_d / m) > eps_d  # the rounding this guards against
    beta = laplace_selection_beta(m, eps_d, 1e-6)
    assert m * beta <= eps_d
    laplace_selection_privacy(eps_d, beta, m, eps_d)  # no "eps_d must be >= m beta"
    for m in range(2, 120):
        for eps_d in np.linspace(0.01, 3.0, 25):
            beta = laplace_selection_beta(m, float(eps_d), 1e-6)
            assert m * beta <= eps_d
            assert laplace_selection_privacy(1.0, beta, m, float(eps_d)).delta <= 1e-6 * (1 + 1e-12)


def test_laplace_paper_worked_example():
    """Paper-Laplace at eps = 1, m = 5, delta = 1e-6 (NRS beta = eps/(2 ln(2/delta)), A = eps/4): (1.149, 1e-6)."""
    m, delta = 5, 1e-6
    beta = 1.0 / (2 * math.log(2 / delta))
    eps_d = laplace_selection_eps_d(m, beta, delta)
    # independent: smallest eps_d with P[Gamma(m) > (eps_d + m beta)/(e^beta - 1)] <= delta
    q = stats.gamma.isf(delta, m)
    ref = optimize.brentq(lambda e: (e + m * beta) / math.expm1(beta) - q, 0.0, 10.0, xtol=1e-14)
    assert eps_d == pytest.approx(max(ref, m * beta), rel=1e-8)
    p = laplace_selection_privacy(0.25, beta, m, eps_d)
    assert (round(p.epsilon, 3), p.delta <= delta) == (1.149, True)


def test_laplace_extreme_epsilons_do_not_overflow():
    """Issue #17 item 5: SNM-Laplace used to raise OverflowError for eps >= 1e4."""
    for eps_d in (5e3, 1e100, 1e300):
        beta = laplace_selection_beta(3, eps_d, 1e-6)
        assert 0 < beta <= eps_d / 3 and math.isfinite(beta)
        assert laplace_selection_log_delta(3, beta, eps_d) <= math.log(1e-6)
    assert laplace_selection_eps_d(3, 800.0, 1e-6) == math.inf  # the paper's beta at eps ~ 2e4: no finite eps_d
    tiny = laplace_selection_beta(3, 5e-301, 1e-6)
    assert 0 < tiny < 5e-301 / 3


# ---------------------------------------------------------------------------
# section 3: LLN (SPEC §3.1, §2.5)
# ---------------------------------------------------------------------------


def _optimal_sigma(eps, t):
    """Root of 5 (eps/t) s^3 - 5 s^2 - 1 = 0 in (t/eps, max(2t/eps, 1/2)] (SPEC §2.5), by numpy.roots."""
    roots = np.roots([5 * eps / t, -5.0, 0.0, -1.0])
    real = [r.real for r in roots if abs(r.imag) < 1e-12 and r.real > t / eps]
    return min(real)


def test_lln_paper_worked_example():
    """Paper-LLN at eps = 1, m = 5, delta = 1e-6: beta = eps/2, sigma variance-optimal, A = alpha/2: (11.89, 1e-6)."""
    m, delta, eps = 5, 1e-6, 1.0
    beta = eps / 2
    sigma = _optimal_sigma(eps, beta)
    a = math.exp(-1.5 * sigma**2) * (eps - beta / sigma) / 2
    rho = m * (beta / sigma + math.exp(1.5 * sigma**2) * a) ** 2 / 2
    assert lln_selection_rho(m, beta, sigma, a) == pytest.approx(rho, rel=1e-13)
    p = lln_selection_privacy(m, beta, sigma, a, delta)
    assert p.epsilon == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1 / delta)), rel=1e-12)
    assert (round(p.epsilon, 2), p.delta, p.rho) == (11.89, delta, pytest.approx(rho))


def test_lln_conversion_is_stable_at_extremes():
    tiny = lln_selection_privacy(3, 1e-200, 1.0, 1e-200, 1e-6)
    assert 0 < tiny.epsilon < 1e-190 and tiny.rho is None  # rho underflows: not reported, eps still exact
    assert tiny.epsilon == pytest.approx(2e-200 * math.sqrt(2 * 3 * math.log(1e6)), rel=1e-12)
    huge = lln_selection_privacy(3, 1e300, 1.0, 1.0, 1e-6)
    assert huge.epsilon == math.inf and huge.rho is None  # no guarantee, never an OverflowError


# ---------------------------------------------------------------------------
# section 4: private sensitivity bound (SPEC §9.2)
# ---------------------------------------------------------------------------


def test_sensitivity_bound_formulas():
    assert sensitivity_bound_shift(0.2, 0.5, 1e-4) == pytest.approx(0.4 * math.log(5000))
    # P[Lap(0, b) < -shift] = delta: the bad set has probability exactly delta
    b, shift = 0.4, sensitivity_bound_shift(0.2, 0.5, 1e-4)
    assert 0.5 * math.exp(-shift / b) == pytest.approx(1e-4)
    p = sensitivity_bound_privacy(0.5, 1.0, 1e-6, relation="add_remove")
    assert (p.epsilon, p.delta, p.relation) == (1.5, 1e-6, "add_remove")
    with pytest.raises(ValueError, match="delta"):
        sensitivity_bound_privacy(0.5, 1.0, 0.0)
    with pytest.raises(ValueError, match="delta"):
        sensitivity_bound_shift(0.2, 0.5, 0.5)


# ---------------------------------------------------------------------------
# section 6: the Accountant
# ---------------------------------------------------------------------------


def test_accountant_exact_sequential_composition():
    acc = Accountant(1.0, 1e-5, composition="tight")
    for e, d in ((0.1, 0.0), (0.2, 1e-6), (0.3, 2e-6)):
        acc.spend(Privacy(e, d, "add_remove"))
    assert acc.spent.epsilon == pytest.approx(0.6, abs=1e-15) and acc.spent.delta == pytest.approx(3e-6)
    assert acc.remaining.epsilon == pytest.approx(0.4) and acc.remaining.delta == pytest.approx(7e-6)
    # ten shares of 0.1 fit a budget of 1 exactly (fsum + relative slack)
    acc2 = Accountant(1.0)
    for _ in range(10):
        acc2.spend(Privacy(0.1))
    assert len(acc2.charges) == 10


def test_accountant_composes_zcdp_in_rho():
    rho, delta = 0.01, 1e-6
    one = Privacy(zcdp_to_dp(rho, delta), delta, None, "lln", rho)
    # composed alone (no budget delta to spend): converted once at the charges' own deltas
    own = Accountant.compose([one, one])
    expected = 2 * rho + 2 * math.sqrt(2 * rho * math.log(1 / (2 * delta)))  # Bun-Steinke's conversion
    assert own.epsilon == pytest.approx(zcdp_epsilon(2 * rho, 2 * delta), rel=1e-12) and own.epsilon <= expected
    assert own.delta == pytest.approx(2 * delta)
    assert own.epsilon < 2 * one.epsilon  # never worse than adding the epsilons
    # an accountant converts at the delta its budget has left (here all of it: 1e-3)
    acc = Accountant(math.inf, 1e-3, composition="tight")
    acc.spend(one)
    acc.spend(one)
    at_budget = zcdp_epsilon(2 * rho, 1e-3)
    assert acc.spent.epsilon == pytest.approx(at_budget, rel=1e-12) and acc.spent.delta == pytest.approx(1e-3)
    # mixed with a pure charge: the pure epsilon adds on top
    acc.spend(Privacy(0.25))
    assert acc.spent.epsilon == pytest.approx(at_budget + 0.25, rel=1e-12)


def test_accountant_overspend_records_nothing():
    acc = Accountant(1.0, 1e-6)
    acc.spend(Privacy(0.7))
    before = (acc.charges, acc.spent)
    with pytest.raises(BudgetExceededError):
        acc.spend(Privacy(0.4))
    with pytest.raises(BudgetExceededError):
        acc.spend(Privacy(0.1, 2e-6))  # delta over budget
    with pytest.raises(BudgetExceededError):
        charge(acc, Privacy(0.5))
    assert (acc.charges, acc.spent) == before
    charge(None, Privacy(100.0))  # no accountant: nothing to check
    with pytest.raises(TypeError, match="accountant"):
        charge("budget", Privacy(0.1))


def test_accountant_refuses_mixed_relations():
    acc = Accountant(10.0)
    acc.spend(Privacy(1.0, 0.0, "replace"))
    with pytest.raises(ValueError, match="relation"):
        acc.spend(Privacy(1.0, 0.0, "add_remove"))
    assert len(acc.charges) == 1
