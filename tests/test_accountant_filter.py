"""The default Accountant is a privacy filter: valid when the next epsilon depends on earlier outputs.

Issue 41, item 8: with budget (1, 1e-6), after ``Privacy(0.5)`` (randomized response) one branch had
164 x ``Privacy(0.01)`` accepted and the other ``Privacy(0, 1e-6)``: the exact delta(1.0) of that
interaction is 1.311e-6.  Here the interaction is enumerated exactly (worst-case pairs: randomized
responses for pure charges, a reveal-with-probability-delta pair for ``Privacy(0, delta)``) with
whatever the accountant accepts in each branch (mathematics §10.1).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import gammaln

from dpselect import Accountant, BudgetExceededError, Privacy

BUDGET = (1.0, 1e-6)


def _exact_delta(eps: float, e0: float, k: int, e1: float, revealed: float) -> float:
    """delta(eps) of: RR at e0; on one answer k RRs at e1, on the other a (0, revealed) pair.

    The worst over which answer leads where and which dataset the later RRs favour;
    delta(eps) = sum over outputs of (P_x - e^eps P_y)_+.
    """
    p = 1.0 / (1.0 + math.exp(-e0))
    q = 1.0 / (1.0 + math.exp(-e1))
    j = np.arange(k + 1)
    log_c = gammaln(k + 1.0) - gammaln(j + 1.0) - gammaln(k - j + 1.0)
    worst = 0.0
    for a_x, a_y in ((p, 1.0 - p), (1.0 - p, p)):  # P(answer leading to the k RRs) under x and y
        for qx, qy in ((q, 1.0 - q), (1.0 - q, q)):
            px = a_x * np.exp(log_c + j * math.log(qx) + (k - j) * math.log1p(-qx))
            py = a_y * np.exp(log_c + j * math.log(qy) + (k - j) * math.log1p(-qy))
            d = float(np.maximum(px - math.exp(eps) * py, 0.0).sum())
            bx, by = 1.0 - a_x, 1.0 - a_y  # the other branch: x reveals itself with probability `revealed`
            d += bx * revealed + max(bx * (1.0 - revealed) - math.exp(eps) * by, 0.0)
            worst = max(worst, d)
    return worst


def _accepted(acc: Accountant, charge: Privacy, times: int) -> int:
    n = 0
    for _ in range(times):
        try:
            acc.spend(charge)
        except BudgetExceededError:
            break
        n += 1
    return n


def _branches(composition: str, first: float = 0.5, times: int = 164) -> tuple[int, float]:
    """(number of Privacy(0.01) accepted of ``times``, delta accepted on the other branch) after Privacy(first)."""
    a = Accountant(*BUDGET, composition=composition)
    a.spend(Privacy(first))
    k = _accepted(a, Privacy(0.01), times)
    b = Accountant(*BUDGET, composition=composition)
    b.spend(Privacy(first))
    try:
        b.spend(Privacy(0.0, 1e-6))
        revealed = 1e-6
    except BudgetExceededError:
        revealed = b.remaining.delta
        b.spend(Privacy(0.0, revealed))  # the largest delta it still accepts
    return k, revealed


def test_the_issue_interaction_is_exactly_1_311e_6_under_fixed_parameter_rules():
    """Negative control: the rules for parameters fixed in advance accept both branches, delta(1) > 1e-6."""
    k, revealed = _branches("tight")
    assert (k, revealed) == (164, 1e-6)
    assert _exact_delta(1.0, 0.5, k, 0.01, revealed) == pytest.approx(1.311248e-6, rel=1e-5)


@pytest.mark.parametrize("first", [0.5, 0.1, 0.01])
def test_the_default_refuses_every_continuation_that_breaks_the_budget(first):
    assert Accountant(*BUDGET).composition == "filter"
    k, revealed = _branches("filter", first, 164 if first > 0.01 else 1000)
    assert revealed <= 5e-7  # the declared deltas share half the delta budget
    assert _exact_delta(1.0, first, k, 0.01, revealed) <= 1e-6
    if first == 0.5:
        assert k in (49, 50)  # basic composition: 0.5 + 50 x 0.01 (up to the exact sum of the floats)
    if first == 0.01:
        assert k > 300  # the zCDP region: far beyond basic composition's 99


def test_the_default_is_never_worse_than_basic_composition_for_pure_charges():
    acc = Accountant(*BUDGET)
    acc.spend(Privacy(0.5))
    acc.spend(Privacy(0.5))  # basic composition: exactly the budget
    assert acc.spent == Privacy(1.0, 0.0, source="basic composition (privacy filter)")
    with pytest.raises(BudgetExceededError):
        acc.spend(Privacy(0.01))
    after = Accountant(*BUDGET)
    after.spend(Privacy(0.1))
    assert after.spent.epsilon == 0.1 and after.spent.delta == 0.0  # was (0.445, 5e-7) with the old filter
    gen = np.random.default_rng(0)
    for budget in ((1.0, 1e-6), (0.5, 1e-3), (3.0, 1e-8), (2.0, 0.0)):
        for _ in range(20):
            eps = gen.uniform(0.001, 0.4, size=int(gen.integers(1, 40)))
            basic = Accountant(*budget, composition="basic")
            filt = Accountant(*budget)
            for e in eps:
                try:
                    basic.spend(Privacy(float(e)))
                except BudgetExceededError:
                    continue
                filt.spend(Privacy(float(e)))  # whatever basic composition accepts, the filter accepts


def test_the_default_accepts_more_than_basic_and_reports_what_it_spent():
    for budget, eps, expected in (((1.0, 1e-6), 0.01, 458), ((2.0, 1e-6), 0.01, 1668), ((2.0, 1e-6), 0.05, 66)):
        acc = Accountant(*budget)
        assert _accepted(acc, Privacy(eps), 10**4) == expected  # basic: 100, 200, 40
        spent = acc.spent
        assert spent.epsilon <= budget[0] and spent.delta == pytest.approx(budget[1] / 2)
        assert _accepted(Accountant(*budget, composition="tight"), Privacy(eps), 10**4) >= expected
    acc = Accountant(1.0, 1e-6)
    left = acc.remaining
    assert left.epsilon == 1.0 and left.delta == 1e-6  # a first charge may declare all of delta
    acc.spend(Privacy(0.3))
    left = acc.remaining
    assert left.epsilon == pytest.approx(0.7) and left.delta == 5e-7
    acc.spend(Privacy(left.epsilon))  # remaining is what the next check accepts
    with pytest.raises(BudgetExceededError):
        acc.spend(Privacy(1e-9))
    acc.spend(Privacy(0.0, 5e-7))
    with pytest.raises(BudgetExceededError):
        acc.spend(Privacy(0.0, 1e-12))


def test_a_first_charge_may_declare_the_whole_delta_and_fixes_the_filters_share():
    single = Accountant(*BUDGET)
    single.spend(Privacy(1.0, 1e-6))  # one (epsilon, delta) release fits its own budget
    assert single.spent == Privacy(1.0, 1e-6, source="basic composition (privacy filter)")
    with pytest.raises(BudgetExceededError):
        single.spend(Privacy(0.0, 1e-12))
    acc = Accountant(*BUDGET)
    acc.spend(Privacy(0.2, 8e-7))  # delta_F = 1e-6 - 8e-7, fixed by this first charge
    assert acc.remaining.delta < 1e-12  # later declared deltas: none left
    acc.spend(Privacy(0.8))
    with pytest.raises(BudgetExceededError):
        acc.spend(Privacy(0.0, 1e-7))
    later = Accountant(*BUDGET)
    later.spend(Privacy(0.1))  # a pure first charge: delta_F = delta / 2 for the rest of the interaction
    with pytest.raises(BudgetExceededError):
        later.spend(Privacy(0.0, 6e-7))
