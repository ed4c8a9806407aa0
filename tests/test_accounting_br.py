"""Bounded-range and zCDP accounting: certificates, composition formulas, the Accountant.

Every figure is recomputed here independently (mpmath at 50 digits, direct
formulas), never copied from the library:

* KL(eta) of Dong-Durfee-Rogers is the largest mean loss of a two-point
  eta-BR loss law (maximised numerically) and is <= eta^2/8;
* the exponential mechanism's log-ratios span at most epsilon over every
  neighbour (epsilon-BR) while permute-and-flip and Laplace RNM exceed it
  (they stay pure);
* Accountant(2.0, delta=1e-6, composition="tight") takes 100 EM calls at 0.05 (1.1429 <= 2.0 by
  the Renyi conversion of rho = 0.03125; 1.3454 by Bun-Steinke's or the
  bounded-range formula; basic composition would be 5.0); pure-only charges
  compose purely.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from dpselect import ExponentialMechanism, PermuteAndFlip, Privacy, ReportNoisyMax, SelectionProblem
from dpselect.accounting import Accountant, BudgetExceededError, br_adaptive_epsilon, compose_privacy, kov_epsilon
from dpselect.accounting.composition import br_composition_epsilon, br_kl_bound, br_zcdp_rho, zcdp_epsilon
from dpselect.apps import counts as majority
from dpselect.mechanisms.top_k import top_k_privacy


@pytest.fixture(autouse=True)
def _precision():
    """This module's mpmath precision, for its tests only (mpmath's precision is global)."""
    with mpmath.workdps(50):
        yield


def _two_point_max_mean(eta):
    """max over p of E[L] for L in {a, a + eta} w.p. (1 - p, p) with E[e^-L] = 1 (mpmath, numerically)."""
    eta = mpmath.mpf(eta)

    def mean(p):
        a = mpmath.log(1 - p * (1 - mpmath.exp(-eta)))  # from (1 - p) e^-a + p e^-(a + eta) = 1
        return a + p * eta

    # the slope is eta - (1 - e^-eta) > 0 at p = 0 and eta - (e^eta - 1) < 0 at p = 1: bisect
    p_star = mpmath.findroot(
        lambda p: mpmath.diff(mean, p), (mpmath.mpf("1e-30"), 1 - mpmath.mpf("1e-30")), solver="bisect"
    )
    return mean(p_star)


def _zcdp_eps(rho, delta):
    """min over alpha > 1 of alpha rho + ln(1 - 1/alpha) - ln(alpha delta)/(alpha - 1), mpmath root of the slope."""
    rho, delta = mpmath.mpf(rho), mpmath.mpf(delta)

    def f(a):
        return a * rho + mpmath.log(1 - 1 / a) - mpmath.log(a * delta) / (a - 1)

    # the slope is -inf as alpha -> 1+ and tends to rho > 0: bisect on t = ln(alpha - 1)
    lo, hi = mpmath.mpf(-40), mpmath.mpf(40)
    for _ in range(200):
        mid = (lo + hi) / 2
        if mpmath.diff(f, 1 + mpmath.exp(mid)) < 0:
            lo = mid
        else:
            hi = mid
    return float(f(1 + mpmath.exp((lo + hi) / 2)))


@pytest.mark.parametrize(("rho", "delta"), [(0.03125, 1e-6), (1e-4, 1e-6), (0.5, 1e-5), (10.0, 1e-3), (0.05, 0.1)])
def test_zcdp_conversion_is_the_renyi_minimum_and_valid_for_the_gaussian(rho, delta):
    eps = zcdp_epsilon(rho, delta)
    assert eps == pytest.approx(_zcdp_eps(rho, delta), rel=1e-9)
    assert eps <= rho + 2 * math.sqrt(rho * math.log(1 / delta))  # never above Bun-Steinke's closed form
    # the Gaussian mechanism (sensitivity 1, sigma) is exactly rho-zCDP: its exact delta at eps
    # (Balle & Wang 2018, Thm 8) must not exceed the delta the conversion certifies
    sigma = 1 / math.sqrt(2 * rho)
    phi = lambda z: float(mpmath.ncdf(z))
    exact = phi(1 / (2 * sigma) - eps * sigma) - math.exp(eps) * phi(-1 / (2 * sigma) - eps * sigma)
    assert exact <= delta * (1 + 1e-9)
    assert exact > delta / 20  # and it is not loose by orders of magnitude


@pytest.mark.parametrize("eta", [1e-6, 1e-3, 0.05, 0.3, 1.0, 2.5, 8.0])
def test_kl_bound_is_the_two_point_maximum(eta):
    ref = _two_point_max_mean(eta)
    assert br_kl_bound(eta) == pytest.approx(float(ref), rel=1e-10)
    assert br_kl_bound(eta) <= eta * eta / 8
    assert br_zcdp_rho(eta) == eta * eta / 8


def test_kl_bound_dominates_random_bounded_range_laws():
    """Random loss laws on [a, a + eta] with E[e^-L] = 1 never have a larger mean."""
    rng = np.random.default_rng(3)
    for _ in range(300):
        eta = float(rng.uniform(0.01, 5))
        x = rng.uniform(0, eta, size=int(rng.integers(2, 8)))
        w = rng.dirichlet(np.ones(x.size))
        a = math.log(float(w @ np.exp(-x)))  # L = x + a with E[e^-L] = 1
        mean = float(w @ x) + a
        assert mean <= br_kl_bound(eta) + 1e-12


def test_br_composition_matches_the_formula_and_the_worked_example():
    def ddr(etas, delta):
        g = [e / (1 - mpmath.exp(-e)) for e in map(mpmath.mpf, etas)]
        kl = mpmath.fsum(x - 1 - mpmath.log(x) for x in g)
        spread = mpmath.sqrt(mpmath.fsum(mpmath.mpf(e) ** 2 for e in etas) * mpmath.log(1 / mpmath.mpf(delta)) / 2)
        return min(mpmath.fsum(etas), kl + spread)

    for etas, delta in (([0.05] * 100, 1e-6), ([0.1, 0.5, 1.0, 0.01], 1e-5), ([2.0] * 3, 1e-6)):
        assert br_composition_epsilon(etas, delta) == pytest.approx(float(ddr(etas, delta)), rel=1e-12)
    eps = br_composition_epsilon([0.05] * 100, 1e-6)
    rho = 100 * 0.05**2 / 8
    zcdp = rho + 2 * math.sqrt(rho * math.log(1e6))
    assert zcdp == pytest.approx(1.3454, abs=1e-4) and eps == pytest.approx(1.3454, abs=1e-4)
    assert eps <= zcdp  # KL(eta) <= eta^2/8 and the same sqrt term
    with pytest.raises(ValueError, match="delta"):
        br_composition_epsilon([0.1], 0.0)


def _br_range(mech, counts, relation):
    x = SelectionProblem(counts, monotone=relation == "add_remove", relation=relation)
    worst = 0.0
    for y in majority.majority_neighbours(counts, relation):
        py = SelectionProblem(y, monotone=relation == "add_remove", relation=relation)
        worst = max(worst, float(np.ptp(mech.log_probabilities(x) - mech.log_probabilities(py))))
    return worst


def test_exponential_mechanism_is_epsilon_bounded_range_and_pf_rnm_are_not():
    panels = ([3, 0], [1, 0], [2, 1, 0], [5, 5, 0], [4, 1, 0, 0], [0, 0, 0])
    for relation in ("add_remove", "replace"):
        for mech in (ExponentialMechanism(1.0), ReportNoisyMax(1.0, noise="gumbel")):
            assert max(_br_range(mech, c, relation) for c in panels) <= 1.0 + 1e-12
            assert mech.privacy(SelectionProblem([1.0, 0.0], relation=relation)).bounded_range == 1.0
    # the certificate is not free: these pure mechanisms exceed epsilon in log-ratio range
    assert max(_br_range(PermuteAndFlip(1.0), c, "add_remove") for c in panels) > 1.4
    assert max(_br_range(ReportNoisyMax(1.0, noise="laplace"), c, "add_remove") for c in panels) > 1.05
    assert PermuteAndFlip(1.0).privacy(SelectionProblem([1.0, 0.0])).bounded_range is None
    assert ReportNoisyMax(1.0, noise="laplace").privacy(SelectionProblem([1.0, 0.0])).bounded_range is None


def test_accountant_takes_100_em_argmax_calls_by_the_bounded_range_route():
    acc = Accountant(2.0, delta=1e-6, composition="tight")
    counts = [30, 22, 5, 0]
    for i in range(100):
        majority.private_argmax(counts, 0.05, mechanism="em", accountant=acc, rng=i)
    spent = acc.spent
    rho = 100 * 0.05**2 / 8
    bun_steinke = rho + 2 * math.sqrt(rho * math.log(1e6))
    kl = 0.05 / (1 - math.exp(-0.05))
    ddr = 100 * (kl - 1 - math.log(kl)) + math.sqrt(0.5 * 100 * 0.05**2 * math.log(1e6))
    assert bun_steinke == pytest.approx(1.3454, abs=1e-4) and ddr == pytest.approx(1.3454, abs=1e-4)
    # the Renyi conversion of the same rho is tighter still, and the adaptive optimum (dynamic programming) more
    assert _zcdp_eps(rho, 1e-6) == pytest.approx(1.1429, abs=1e-4)
    assert spent.epsilon == pytest.approx(br_adaptive_epsilon(0.05, 100, 1e-6), rel=1e-12)
    assert 1.0577 <= spent.epsilon <= 1.08 and spent.delta == 1e-6
    assert len(acc.charges) == 100
    # the same calls under basic composition run out after 40
    basic = Accountant(2.0, delta=1e-6, composition="basic")
    for i in range(40):
        majority.private_argmax(counts, 0.05, mechanism="em", accountant=basic, rng=i)
    with pytest.raises(BudgetExceededError):
        majority.private_argmax(counts, 0.05, mechanism="em", accountant=basic, rng=0)
    assert basic.spent.epsilon == pytest.approx(2.0)
    # a pure budget (delta = 0) composes purely too
    pure = Accountant(2.0)
    for _ in range(40):
        pure.spend(ExponentialMechanism(0.05).privacy(SelectionProblem(counts)))
    with pytest.raises(BudgetExceededError):
        pure.spend(ExponentialMechanism(0.05).privacy(SelectionProblem(counts)))


def test_pure_charges_compose_optimally_with_a_delta_budget_and_basically_without():
    acc = Accountant(2.0, delta=1e-6, composition="tight")
    for i in range(40):
        majority.private_argmax([30, 22, 5, 0], 0.05, mechanism="pf", accountant=acc, rng=i)
    # Kairouz-Oh-Viswanath at the budget's delta (basic composition would say 2.0)
    assert acc.spent.epsilon == pytest.approx(kov_epsilon(0.05, 40, 1e-6), rel=1e-12) and acc.spent.delta == 1e-6
    n = 40
    while True:
        try:
            majority.private_argmax([30, 22, 5, 0], 0.05, mechanism="pf", accountant=acc, rng=n)
        except BudgetExceededError:
            break
        n += 1
    assert kov_epsilon(0.05, n, 1e-6) <= 2.0 < kov_epsilon(0.05, n + 1, 1e-6) and n > 60
    pure = Accountant(2.0)  # a pure budget: basic composition, 40 calls
    for i in range(40):
        majority.private_argmax([30, 22, 5, 0], 0.05, mechanism="pf", accountant=pure, rng=i)
    assert pure.spent.epsilon == pytest.approx(2.0) and pure.spent.delta == 0.0
    with pytest.raises(BudgetExceededError):
        majority.private_argmax([30, 22, 5, 0], 0.05, mechanism="pf", accountant=pure, rng=0)


def test_mixed_sequences_add_the_pure_part_to_the_certified_part():
    em = Privacy(0.05, 0.0, "add_remove", "em", bounded_range=0.05)
    approx = Privacy(0.3, 2e-7, "add_remove", "some (eps, delta) mechanism")
    charges = [em] * 100 + [Privacy(0.5, 0.0, "add_remove"), approx]
    total = compose_privacy(charges, 1e-6)
    slack = 1e-6 - 2e-7
    rho = 100 * 0.05**2 / 8
    by_zcdp = 0.8 + _zcdp_eps(rho, slack)
    by_ddr = 0.8 + br_composition_epsilon([0.05] * 100, slack)
    by_dp = 0.8 + br_adaptive_epsilon(0.05, 100, slack)  # the adaptive optimum of the EMs (dynamic programming)
    assert by_dp < min(by_zcdp, by_ddr)
    # the best route is at least as good: the pure parts join the EMs' recursion (taken first, the worst order)
    assert total.epsilon <= by_dp * (1 + 1e-12) and "dynamic programming" in total.source
    assert total.delta == pytest.approx(1e-6) and total.relation == "add_remove"
    # zCDP charges (rho, own delta) join the bounded-range ones in rho
    lln = Privacy(1.0, 1e-7, None, "lln", rho=0.02)
    total = compose_privacy([em] * 100 + [lln], 1e-6)
    rho2 = rho + 0.02
    assert total.epsilon == pytest.approx(
        min(_zcdp_eps(rho2, 1e-6), 1.0 + br_composition_epsilon([0.05] * 100, 1e-6 - 1e-7)), rel=1e-9
    )
    # nothing certified, or no delta to spend: basic composition
    assert compose_privacy([em] * 100).epsilon == pytest.approx(5.0)
    with pytest.raises(ValueError, match="relation"):
        compose_privacy([em, Privacy(0.1, 0.0, "replace")], 1e-6)


def test_top_k_peeling_reports_the_tighter_total():
    prob = SelectionProblem(np.arange(50.0), monotone=True)
    em = ExponentialMechanism(0.1)
    peel = top_k_privacy(em, prob, 20, method="gumbel")
    joint = top_k_privacy(em, prob, 20, method="joint")
    assert peel.epsilon == pytest.approx(2.0) and joint.epsilon == pytest.approx(2.0)
    assert len(peel.atoms) == 20 and joint.bounded_range == pytest.approx(2.0)
    acc = Accountant(2.0, delta=1e-6, composition="tight")
    acc.spend(peel)
    rho = 20 * 0.1**2 / 8
    assert acc.spent.epsilon == pytest.approx(br_adaptive_epsilon(0.1, 20, 1e-6), rel=1e-12)
    assert acc.spent.epsilon < min(_zcdp_eps(rho, 1e-6), br_composition_epsilon([0.1] * 20, 1e-6))
    assert acc.spent.epsilon < 1.05  # 20 rounds at 0.1: basic 2.0
    # the joint mechanism is one 2.0-BR mechanism: its conversion does not beat 2.0
    acc_j = Accountant(2.0, delta=1e-6, composition="tight")
    acc_j.spend(joint)
    assert acc_j.spent.epsilon == pytest.approx(2.0) and acc_j.spent.delta == 0.0


def test_privacy_certificate_validation_and_parts():
    with pytest.raises(ValueError, match="bounded_range"):
        Privacy(0.1, bounded_range=-1.0)
    with pytest.raises(TypeError, match="bounded_range"):
        Privacy(0.1, bounded_range="0.1")
    with pytest.raises(TypeError, match="parts"):
        Privacy(0.1, parts=[Privacy(0.1)])
    a, b = Privacy(0.1, bounded_range=0.1), Privacy(0.2)
    s = a + b + a
    assert s.epsilon == pytest.approx(0.4) and s.atoms == (a, b, a) and s.bounded_range is None
    assert a.atoms == (a,)
    with pytest.raises(ValueError, match="composition"):
        Accountant(1.0, composition="advanced")
