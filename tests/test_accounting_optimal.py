"""Optimal composition of pure charges, mixed sequences, the privacy filter: each reported epsilon against an
independent exact computation (mpmath, 50 digits) of the hockey-stick divergence of the composed worst case.

* k epsilon-DP mechanisms: the product of randomized responses RR(epsilon) is the worst case (Kairouz, Oh &
  Viswanath 2015), so its delta at the reported epsilon must be <= delta (validity) and the reported epsilon
  within 2 % of the exact optimum (tightness);
* exponential mechanisms: the two-candidate instance (and every two-point bounded-range pair) at the
  reported epsilon must have delta <= delta;
* mixed EM + permute-and-flip: the product of both worst cases.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from dpselect import ExponentialMechanism, Privacy, SelectionProblem
from dpselect.accounting import (
    Accountant,
    BudgetExceededError,
    br_adaptive_epsilon,
    br_nonadaptive_epsilon,
    compose_privacy,
    kov_epsilon,
    pure_composition_epsilon,
    zcdp_epsilon,
)

DELTA = 1e-6


@pytest.fixture(autouse=True)
def _precision():
    """This module's mpmath precision, for its tests only (mpmath's precision is global)."""
    with mpmath.workdps(50):
        yield


def _two_point_laws(p_hi, hi, lo, n):
    """The n-fold sum of a two-point loss (hi with P-probability p_hi, else lo): [(loss, P-probability)]."""
    return [
        (mpmath.mpf(n - i) * hi + i * lo, mpmath.binomial(n, i) * p_hi ** (n - i) * (1 - p_hi) ** i)
        for i in range(n + 1)
    ]


def _rr_law(eps, n):
    """Loss law of n randomized responses RR(eps) under P: +eps w.p. e^eps/(1+e^eps), else -eps."""
    e = mpmath.mpf(eps)
    return _two_point_laws(mpmath.exp(e) / (1 + mpmath.exp(e)), e, -e, n)


def _convolve(a, b):
    return [(la + lb, pa * pb) for la, pa in a for lb, pb in b]


def _delta(law, eps):
    """Hockey-stick divergence E_P[(1 - e^(eps - L))_+] of the law (exact, mpmath)."""
    e = mpmath.mpf(eps)
    return mpmath.fsum(p * (1 - mpmath.exp(e - loss)) for loss, p in law if loss > e)


def _optimum(law, delta):
    """Smallest eps >= 0 with delta(eps) <= delta (bisection to 1e-12)."""
    lo, hi = mpmath.mpf(0), max(loss for loss, _ in law)
    if _delta(law, lo) <= delta:
        return 0.0
    while hi - lo > 1e-12:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _delta(law, mid) > delta else (lo, mid)
    return float(hi)


def _acc_epsilon(charges, budget=math.inf, mode="tight"):
    acc = Accountant(budget, DELTA, composition=mode)
    for c in charges:
        acc.spend(c)
    return acc.spent


@pytest.mark.parametrize(
    ("eps", "k", "accept", "known"),
    [(0.05, 100, 2.45, 2.21), (0.01, 1000, 1.50, 1.37), (0.2, 30, 5.3, 5.01), (1.0, 3, 3.0, None), (0.5, 2, 1.0, None)],
)
def test_pure_charges_compose_to_the_exact_kov_optimum(eps, k, accept, known):
    spent = _acc_epsilon([Privacy(eps)] * k)
    exact = _optimum(_rr_law(eps, k), DELTA)
    assert spent.delta <= DELTA and spent.epsilon <= accept
    assert _delta(_rr_law(eps, k), spent.epsilon) <= DELTA  # never below the true value
    assert exact <= spent.epsilon <= exact * (1 + 1e-9) + 1e-12  # exact, not only within 2 %
    if known is not None:
        assert round(spent.epsilon, 2) == known
    assert kov_epsilon(eps, k, DELTA) == pytest.approx(spent.epsilon, rel=1e-12)


@pytest.mark.parametrize("groups", [((0.1, 30), (0.25, 20)), ((0.05, 60), (0.3, 4)), ((0.02, 50), (0.07, 40))])
def test_mixed_epsilons_within_two_percent_of_the_exact_optimum(groups):
    law = _rr_law(*groups[0])
    for g in groups[1:]:
        law = _convolve(law, _rr_law(*g))
    exact = _optimum(law, DELTA)
    epsilons = [e for e, n in groups for _ in range(n)]
    got = pure_composition_epsilon(epsilons, DELTA)
    assert _delta(law, got) <= DELTA and exact <= got <= 1.02 * exact
    assert got < math.fsum(epsilons)
    assert compose_privacy([Privacy(e) for e in epsilons], DELTA).epsilon <= got


def test_many_distinct_epsilons_are_rounded_up_into_groups():
    gen = np.random.default_rng(3)
    epsilons = gen.uniform(0.1, 0.4, 12).tolist()  # 12 distinct values: merged into 6 groups
    got = pure_composition_epsilon(epsilons, DELTA)
    law = [(mpmath.mpf(0), mpmath.mpf(1))]
    for e in epsilons:  # the exact law: 2^12 atoms
        law = _convolve(law, _rr_law(e, 1))
    assert _delta(law, got) <= DELTA and got <= kov_epsilon(max(epsilons), 12, DELTA)
    assert got <= 1.02 * _optimum(law, DELTA)


def _em_two_candidate_law(eps, n):
    """n exponential mechanisms on two candidates, scores (0, 0) vs the neighbour's (1, -1) (sensitivity 1)."""
    px = ExponentialMechanism(eps).probabilities(SelectionProblem([0.0, 0.0]))
    py = ExponentialMechanism(eps).probabilities(SelectionProblem([1.0, -1.0]))
    # loss under P = y's law: two atoms; recomputed in mpmath from the closed form
    e = mpmath.mpf(eps) / 2
    p_hi = mpmath.exp(e) / (mpmath.exp(e) + mpmath.exp(-e))
    assert float(p_hi) == pytest.approx(py[0]) and px[0] == pytest.approx(0.5)
    hi, lo = mpmath.log(2 * p_hi), mpmath.log(2 * (1 - p_hi))
    return _two_point_laws(p_hi, hi, lo, n)


def _grr_law(eta, t, n):
    """n eta-bounded-range pairs with loss in {t - eta, t} (E_P e^-L = 1): the worst BR pairs."""
    eta, t = mpmath.mpf(eta), mpmath.mpf(t)
    q = (mpmath.exp(eta) - mpmath.exp(t)) / (mpmath.exp(eta) - 1)
    return _two_point_laws(q, t, t - eta, n)


def _em_two_candidate_t(eps, s):
    """The two-point pair of an EM on two candidates, scores (s, 0) vs the neighbour's (s + 1, -1): its t."""
    px = ExponentialMechanism(eps).probabilities(SelectionProblem([s, 0.0]))
    py = ExponentialMechanism(eps).probabilities(SelectionProblem([s + 1.0, -1.0]))
    return float(np.log(py[0] / px[0]))  # loss of the first candidate, the top of the window


def test_100_exponential_mechanisms_never_below_the_worst_instances():
    spent = _acc_epsilon([Privacy(0.05, bounded_range=0.05)] * 100)
    symmetric = _em_two_candidate_law(0.05, 100)
    assert _optimum(symmetric, DELTA) == pytest.approx(1.0439, abs=1e-4)
    assert _delta(symmetric, spent.epsilon) <= DELTA
    # every two-point pair on {t - eta, t} is an EM on two candidates (scores (s, 0) vs (s + 1, -1))
    ts = [_em_two_candidate_t(0.05, s) for s in np.linspace(-300.0, 300.0, 121)]
    assert min(ts) < 0.005 and max(ts) > 0.045
    worst = _optimum(_grr_law(0.05, 0.02829, 100), DELTA)  # t found by a scan of [0.028, 0.029] in steps of 1e-5
    assert worst >= 1.0577  # the worst two-candidate instance
    assert worst <= spent.epsilon <= 1.1429 + 1e-4 and spent.epsilon <= 1.02 * worst  # within 2 % of the bound
    for t in list(np.linspace(0.0, 0.05, 41)[1:-1]) + ts[::10]:
        assert _delta(_grr_law(0.05, t, 100), spent.epsilon) <= DELTA


def test_50_em_and_50_pf_use_every_certificate():
    charges = [Privacy(0.05, bounded_range=0.05)] * 50 + [Privacy(0.05)] * 50
    spent = _acc_epsilon(charges)
    assert spent.epsilon <= 1.95 and spent.delta <= DELTA
    assert spent.epsilon < compose_privacy(charges[:50], DELTA).epsilon + kov_epsilon(0.05, 50, DELTA)
    rr = _rr_law(0.05, 50)
    for em in [_em_two_candidate_law(0.05, 50)] + [_grr_law(0.05, t, 50) for t in (0.01, 0.025, 0.04)]:
        assert _delta(_convolve(em, rr), spent.epsilon) <= DELTA
    with mpmath.workdps(20):  # the worst instance of this family (t near 0.028): within 2 % of it
        worst = max(_optimum(_convolve(_grr_law(0.05, t, 50), rr), DELTA) for t in (0.0275, 0.028, 0.0285))
    assert worst <= spent.epsilon <= 1.02 * worst


def test_a_declared_delta_is_never_dropped():
    charge = Privacy(0.05, 1e-3, bounded_range=0.05)
    total = compose_privacy([charge] * 100, DELTA)
    assert total.delta >= 0.1
    acc = Accountant(10.0, DELTA)
    with pytest.raises(BudgetExceededError):
        acc.spend(charge)
    acc = Accountant(10.0, 0.2)
    for _ in range(100):
        acc.spend(charge)
    assert acc.spent.delta >= 0.1 and acc.spent.delta <= 0.2


def test_parts_cannot_undercut_their_charge():
    sneaky = Privacy(10.0, parts=(Privacy(0.1),))
    assert compose_privacy([sneaky], DELTA).epsilon >= 10.0 - 1e-6
    with pytest.raises(BudgetExceededError):
        Accountant(5.0, DELTA).spend(sneaky)
    honest = Privacy(0.1, bounded_range=0.1) + Privacy(0.1, bounded_range=0.1)
    assert compose_privacy([honest] * 50, DELTA).epsilon < 5.0  # consistent parts keep their certificates


def test_no_slack_above_the_budget():
    with pytest.raises(BudgetExceededError):
        Accountant(1.0).spend(Privacy(1.0000000000005))
    with pytest.raises(BudgetExceededError):
        Accountant(1.0).spend(Privacy(math.nextafter(1.0, 2.0)))
    with pytest.raises(BudgetExceededError):
        Accountant(1.0, 1e-6).spend(Privacy(0.5, math.nextafter(1e-6, 1.0)))
    acc = Accountant(1.0)
    acc.spend(Privacy(1.0))
    assert acc.spent.epsilon == 1.0


@pytest.mark.parametrize("mode", ["tight", "nonadaptive", "filter", "basic"])
def test_remaining_is_what_the_next_check_accepts(mode):
    gen = np.random.default_rng(7)
    acc = Accountant(3.0, 1e-5, composition=mode)
    for _ in range(5):
        kind = gen.integers(3)
        e = float(gen.uniform(0.02, 0.2))
        acc.spend([Privacy(e), Privacy(e, bounded_range=e), Privacy(e, 1e-7)][kind])
        left = acc.remaining
        assert left.epsilon > 0.0 and left.delta > 0.0
        acc.check(Privacy(left.epsilon))
        acc.check(Privacy(0.0, left.delta))
        with pytest.raises(BudgetExceededError):
            acc.check(Privacy(left.epsilon * (1 + 1e-9) + 1e-15))
        with pytest.raises(BudgetExceededError):
            acc.check(Privacy(0.0, left.delta * (1 + 1e-9) + 1e-300))


def test_filter_accepts_adaptively_chosen_epsilons_within_its_zcdp_budget():
    acc = Accountant(2.0, DELTA, composition="filter")
    assert acc.composition == "filter"
    rho_b = acc._filter[0]
    assert zcdp_epsilon(rho_b, DELTA / 2) <= 2.0 < zcdp_epsilon(rho_b * (1 + 1e-9), DELTA / 2)
    gen = np.random.default_rng(0)
    rhos, last = [], 0.5
    while True:  # the next epsilon depends on the previous "output"
        eps = 0.02 + 0.08 * last
        try:
            acc.spend(Privacy(eps))
        except BudgetExceededError:
            break
        rhos.append(eps * eps / 2)
        last = float(gen.uniform())
    assert math.fsum(rhos) <= rho_b < math.fsum(rhos) + (0.1**2) / 2
    assert acc.spent.epsilon <= 2.0 and acc.spent.delta <= DELTA
    # more than basic composition allows, and a declared delta counts against delta / 2
    basic = sum(math.sqrt(2 * r) for r in rhos)
    assert basic > 2.0
    f = Accountant(2.0, DELTA, composition="filter")
    for _ in range(5):
        f.spend(Privacy(0.01, 1e-7))
    with pytest.raises(BudgetExceededError):
        f.spend(Privacy(0.01, 1e-7))
    pure = Accountant(1.0, composition="filter")  # a pure budget: the filter is basic composition
    for _ in range(10):
        pure.spend(Privacy(0.1))
    with pytest.raises(BudgetExceededError):
        pure.spend(Privacy(1e-9))


def _v1(eta, z):
    """The exact delta at epsilon = z of one eta-BR mechanism (sup over t of its two-point law, closed form)."""
    eta, z = mpmath.mpf(eta), mpmath.mpf(z)
    if z < 0:
        return 1 - mpmath.exp(z) + mpmath.exp(z) * _v1(eta, -z)
    if z >= eta:
        return mpmath.mpf(0)
    return (mpmath.exp(eta / 2) - mpmath.exp(z / 2)) ** 2 / (mpmath.exp(eta) - 1)


def _v2(eta, z, grid=4001):
    """The adaptive optimum of two eta-BR mechanisms at epsilon = z: sup over the first t (dense grid)."""
    eta = mpmath.mpf(eta)
    best = mpmath.mpf(0)
    for t in mpmath.linspace(0, eta, grid):
        q = (mpmath.exp(eta) - mpmath.exp(t)) / (mpmath.exp(eta) - 1)
        best = max(best, q * _v1(eta, z - t) + (1 - q) * _v1(eta, z - t + eta))
    return best


@pytest.mark.parametrize("eta", [0.05, 1.0])
def test_bounded_range_recursion_against_the_exact_adaptive_optimum(eta):
    one = br_adaptive_epsilon(eta, 1, DELTA)
    exact_one = float(2 * mpmath.log(mpmath.exp(eta / 2) - mpmath.sqrt(DELTA * (mpmath.exp(eta) - 1))))
    assert _v1(eta, one) <= DELTA and exact_one <= one <= 1.02 * exact_one
    with mpmath.workdps(20):
        two = br_adaptive_epsilon(eta, 2, DELTA)
        assert _v2(eta, two) <= DELTA
        lo, hi = mpmath.mpf(0), mpmath.mpf(two)  # the exact optimum by bisection
        while hi - lo > 1e-6 * two:
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if _v2(eta, mid, 801) > DELTA else (lo, mid)
        assert float(lo) <= two <= 1.02 * float(hi)


def test_bounded_range_recursion_is_a_valid_bound_for_100_ems_and_beats_zcdp():
    got = br_adaptive_epsilon(0.05, 100, DELTA)
    assert 1.0577 <= got <= 1.10 < zcdp_epsilon(100 * 0.05**2 / 8, DELTA)
    for t in (0.01, 0.025, 0.02829, 0.04):  # non-adaptive instances (the adaptive optimum lies above)
        assert _delta(_grr_law(0.05, t, 100), got) <= DELTA
    assert br_adaptive_epsilon(0.001, 10**6, DELTA) == math.inf  # no useful grid: the accountant uses zCDP
    with pytest.raises(ValueError, match="delta"):
        br_adaptive_epsilon(0.05, 10, 0.0)


def test_one_charge_is_reported_as_declared():
    # one mechanism gains (almost) nothing from the optimal route but would spend the budget's delta
    for charge in (Privacy(1.0), Privacy(0.5, 5e-4)):
        acc = Accountant(10.0, 0.01)
        acc.spend(charge)
        assert (acc.spent.epsilon, acc.spent.delta) == (charge.epsilon, charge.delta)
    assert kov_epsilon(0.5, 1, DELTA) <= 0.5  # the rule itself, a single randomized response
    assert _delta(_rr_law(0.5, 1), kov_epsilon(0.5, 1, DELTA)) <= DELTA


def test_the_accounting_docs_table_is_fresh():
    """docs/_generated/accounting.md equals what docs/scripts/accounting_table.py computes now."""
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "docs" / "scripts" / "accounting_table.py"
    spec = importlib.util.spec_from_file_location("accounting_table", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    committed = module.OUT.read_text(encoding="utf-8")
    assert committed == module.render(module.rows()), "stale: run python docs/scripts/accounting_table.py"
    page = (path.parents[1] / "api" / "accounting.md").read_text(encoding="utf-8")
    assert '--8<-- "_generated/accounting.md"' in page


@pytest.mark.parametrize(("eps", "k"), [(0.05, 100), (0.2, 30)])
def test_kov_between_dp_accountings_optimistic_and_pessimistic_plds(eps, k):
    """A peer: Google's dp_accounting (extra ``accounting``) brackets the exact optimum from both sides."""
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    p = 2.0 / (1.0 + math.exp(eps))  # RR with two buckets: keeps the value w.p. 1 - p/2

    def peer(pessimistic):
        return pld.from_randomized_response(
            p, 2, value_discretization_interval=1e-4, pessimistic_estimate=pessimistic
        ).self_compose(k)

    ours = kov_epsilon(eps, k, DELTA)
    assert peer(False).get_epsilon_for_delta(DELTA) <= ours <= peer(True).get_epsilon_for_delta(DELTA)


def test_nonadaptive_100_ems_reach_the_exact_non_adaptive_optimum():
    """Dong, Durfee & Rogers 2020, Thm 3: k EMs fixed in advance cost sup_t of the k-fold product of the two-point
    pair on {t - eta, t}; checked here directly on that product (mpmath), over a dense grid of t."""
    spent = _acc_epsilon([Privacy(0.05, bounded_range=0.05)] * 100, mode="nonadaptive")
    assert spent.delta <= DELTA and spent.epsilon <= 1.10
    assert spent.epsilon == pytest.approx(br_nonadaptive_epsilon(0.05, 100, DELTA), rel=1e-12)
    assert spent.epsilon < _acc_epsilon([Privacy(0.05, bounded_range=0.05)] * 100).epsilon  # below "tight"
    with mpmath.workdps(30):
        ts = mpmath.linspace(0, 0.05, 501)[1:]
        deltas = [_delta(_grr_law(0.05, t, 100), spent.epsilon) for t in ts]
        assert max(deltas) <= DELTA  # no t exceeds the reported delta (never below the true optimum)
        t_max = ts[int(np.argmax([float(d) for d in deltas]))]
        near = mpmath.linspace(t_max - 1e-4, t_max + 1e-4, 41)  # refine: steps of 5e-6
        t_max = near[int(np.argmax([float(_delta(_grr_law(0.05, t, 100), spent.epsilon)) for t in near]))]
        worst = _optimum(_grr_law(0.05, t_max, 100), DELTA)  # a real instance: a lower bound on the optimum
    assert abs(float(t_max) - 0.0283) < 2e-4
    assert 1.0577 <= worst <= spent.epsilon <= 1.02 * worst
    assert spent.epsilon <= worst * (1 + 1e-6)  # in fact exact up to the t grid's step


@pytest.mark.parametrize(("eta", "k", "delta"), [(1.0, 2, 1e-2), (1.0, 3, 1e-3), (0.5, 4, 1e-4), (0.3, 1, DELTA)])
def test_nonadaptive_unequal_ts_never_exceed_the_reported_delta(eta, k, delta):
    """DDR20's homogeneous theorem takes the worst t's equal: random unequal t's (exact product laws) stay below."""
    got = br_nonadaptive_epsilon(eta, k, delta)
    gen = np.random.default_rng(11)
    with mpmath.workdps(30):
        singles = [[_grr_law(eta, t, 1) for t in row] for row in gen.uniform(0.0, eta, (150, k))]
        for row in singles:
            law = row[0]
            for one in row[1:]:
                law = _convolve(law, one)
            assert _delta(law, got) <= delta
        equal = max(_optimum(_grr_law(eta, t, k), delta) for t in mpmath.linspace(0, eta, 201)[1:])
    assert equal <= got <= equal * 1.02
    if k == 1:  # one mechanism: the closed form (e^(eta/2) - sqrt(delta (e^eta - 1)))^2 = e^eps
        exact = float(2 * mpmath.log(mpmath.exp(eta / 2) - mpmath.sqrt(delta * (mpmath.exp(eta) - 1))))
        assert exact <= got <= exact * (1 + 1e-9)


def test_nonadaptive_mode_falls_back_to_the_tight_rules():
    mixed = [Privacy(0.05, bounded_range=0.05)] * 50 + [Privacy(0.05)] * 50
    assert _acc_epsilon(mixed, mode="nonadaptive").epsilon <= _acc_epsilon(mixed).epsilon
    pure = [Privacy(0.05)] * 100  # KOV is already the exact (adaptive = non-adaptive) optimum
    assert _acc_epsilon(pure, mode="nonadaptive") == _acc_epsilon(pure)
    two_etas = [Privacy(0.05, bounded_range=0.05)] * 30 + [Privacy(0.1, bounded_range=0.1)] * 10
    assert _acc_epsilon(two_etas, mode="nonadaptive") == _acc_epsilon(two_etas)  # heterogeneous: no Thm 3
    with_pure = [Privacy(0.1, bounded_range=0.1)] * 20 + [Privacy(0.3)]  # plain atom basic + Thm 3
    got = _acc_epsilon(with_pure, mode="nonadaptive")
    assert got.epsilon <= 0.3 + br_nonadaptive_epsilon(0.1, 20, DELTA) and got.delta <= DELTA
    acc = Accountant(1.06, DELTA, composition="nonadaptive")
    assert acc.composition == "nonadaptive"
    for _ in range(100):
        acc.spend(Privacy(0.05, bounded_range=0.05))  # 1.0577 fits; "tight" (1.0744) would refuse
    with pytest.raises(BudgetExceededError):
        acc.spend(Privacy(0.05, bounded_range=0.05))
    with pytest.raises(ValueError, match="composition"):
        Accountant(1.0, composition="batch")
    with pytest.raises(ValueError, match="delta"):
        br_nonadaptive_epsilon(0.05, 10, 0.0)
    assert br_nonadaptive_epsilon(0.05, 501, DELTA) == math.inf  # too costly: the accountant uses the tight rules
