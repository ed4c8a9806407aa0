"""``size=`` draws are ``size`` releases: charged (and reported) as their composition, before drawing.

Issue 41, item 1: ``Accountant(0.1)`` used to accept ``private_median(x, 0.1, bounds=(0, 10),
size=20000, accountant=acc)``, whose average tells ``[1, 2, 3, 4, 5]`` from the same plus a
record at 9.  Every release function with ``size=`` charges ``accounting.repeated`` (mathematics
§10.1) through ``accounting.charge`` before any randomness.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpselect import Accountant, BudgetExceededError, Privacy
from dpselect.accounting import charge, repeated
from dpselect.apps.counts import (
    duff_mode,
    private_argmax,
    private_majority,
    propose_test_release,
    ptr_mode,
    stable_histogram,
)
from dpselect.apps.genomics import TransmissionCounts, release_statistic
from dpselect.apps.quantiles import (
    duff_mean,
    duff_median,
    laplace_ln,
    private_bounds,
    private_max,
    private_median,
    private_percentile,
    private_quantile,
    private_quantiles,
    smooth_sens_approx,
    smooth_sens_pure,
    unbounded_quantile,
    unbounded_quantiles,
)

X = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
B = (0.0, 10.0)

#: name -> call(epsilon, size, accountant, rng); each a release function with ``size=``.
CALLS = {
    "private_quantile": lambda e, s, a, g: private_quantile(X, 0.5, e, bounds=B, size=s, accountant=a, rng=g),
    "private_median": lambda e, s, a, g: private_median(X, e, bounds=B, size=s, accountant=a, rng=g),
    "duff_median": lambda e, s, a, g: duff_median(X, e, bounds=B, size=s, accountant=a, rng=g),
    "duff_mean": lambda e, s, a, g: duff_mean(X, e, bounds=B, size=s, accountant=a, rng=g),
    "smooth_sens_pure": lambda e, s, a, g: smooth_sens_pure(X, e, bounds=B, size=s, accountant=a, rng=g),
    "laplace_ln": lambda e, s, a, g: laplace_ln(X, e, bounds=B, size=s, accountant=a, rng=g),
    "smooth_sens_approx": lambda e, s, a, g: smooth_sens_approx(
        X, e, delta=1e-6, bounds=B, size=s, accountant=a, rng=g
    ),
    "duff_mode": lambda e, s, a, g: duff_mode([1, 1, 1, 2], e, candidates=[1, 2, 3], size=s, accountant=a, rng=g),
    "ptr_mode": lambda e, s, a, g: ptr_mode([40, 3, 1], e, delta=1e-6, size=s, accountant=a, rng=g),
    "private_argmax": lambda e, s, a, g: private_argmax([22, 8, 17, 4, 0], e, size=s, accountant=a, rng=g),
    "private_majority": lambda e, s, a, g: private_majority(
        ["a", "b", "a"], e, candidates=["a", "b"], size=s, accountant=a, rng=g
    ),
    "private_percentile": lambda e, s, a, g: private_percentile(
        X, 50, e, np.linspace(0, 10, 11), size=s, accountant=a, rng=g
    ),
    "private_percentile(bounds=)": lambda e, s, a, g: private_percentile(
        X, 50, e, bounds=B, size=s, accountant=a, rng=g
    ),
    "private_quantile(bounds=None)": lambda e, s, a, g: private_quantile(X, 0.5, e, size=s, accountant=a, rng=g),
    "private_quantiles": lambda e, s, a, g: private_quantiles(
        X, [0.25, 0.75], e, bounds=B, size=s, accountant=a, rng=g
    ),
    "private_quantiles(bounds=None)": lambda e, s, a, g: private_quantiles(
        X, [0.25, 0.75], e, size=s, accountant=a, rng=g
    ),
    "private_bounds": lambda e, s, a, g: private_bounds(X, e, size=s, accountant=a, rng=g),
    "private_max": lambda e, s, a, g: private_max(X, e, size=s, accountant=a, rng=g),
    "unbounded_quantile": lambda e, s, a, g: unbounded_quantile(X, 0.5, e, size=s, accountant=a, rng=g),
    "unbounded_quantiles": lambda e, s, a, g: unbounded_quantiles(X, [0.25, 0.75], e, size=s, accountant=a, rng=g),
    "stable_histogram": lambda e, s, a, g: stable_histogram([500, 0, 1], e, delta=1e-6, size=s, accountant=a, rng=g),
    "propose_test_release": lambda e, s, a, g: propose_test_release(
        3.5, 50.0, bound=1.0, epsilon=e, delta=1e-3, size=s, accountant=a, rng=g
    ),
    "release_statistic": lambda e, s, a, g: release_statistic(
        TransmissionCounts([90, 52], [20, 48], 150), e, 0, size=s, accountant=a, rng=g
    ),
}


def _one(name: str) -> Privacy:
    """The guarantee one draw charges (recorded by a track-only basic accountant)."""
    acc = Accountant(math.inf, 0.5, composition="basic")
    CALLS[name](0.5, None, acc, 0)
    (one,) = acc.charges
    return one


@pytest.mark.parametrize("name", sorted(CALLS))
def test_size_draws_are_charged_as_size_releases_before_drawing(name):
    one = _one(name)
    # a budget of exactly one draw (default accountant, and basic): size=2 is refused, the rng untouched
    for acc in (Accountant(one.epsilon, 2 * one.delta), Accountant(one.epsilon, one.delta, composition="basic")):
        gen = np.random.default_rng(5)
        state = gen.bit_generator.state
        with pytest.raises(BudgetExceededError):
            CALLS[name](0.5, 2, acc, gen)
        assert acc.charges == () and gen.bit_generator.state == state
    # a budget of two draws accepts size=2 and records their composition (two atoms)
    acc = Accountant(2 * one.epsilon, 2 * one.delta, composition="basic")
    out = CALLS[name](0.5, 2, acc, 1)
    assert np.shape(out)[0] == 2
    (charged,) = acc.charges
    assert len(charged.atoms) == 2 * len(one.atoms) and charged == repeated(one, 2)
    assert acc.spent.epsilon == pytest.approx(2 * one.epsilon, rel=1e-15)
    assert acc.spent.delta == pytest.approx(2 * one.delta, rel=1e-15)
    with pytest.raises(BudgetExceededError):  # nothing is left
        CALLS[name](0.5, None, acc, 1)


def test_the_issue_averaging_attack_is_refused_and_charged_as_20000_releases():
    acc = Accountant(0.1)
    with pytest.raises(BudgetExceededError):
        private_median(X, 0.1, bounds=(0, 10), size=20000, accountant=acc)
    assert acc.charges == () and acc.spent.epsilon == 0.0
    track = Accountant(math.inf)  # track only: the reported charge is the composed one
    draws = private_median(X, 0.1, bounds=(0, 10), size=20000, accountant=track, rng=0)
    assert draws.shape == (20000,)
    assert track.spent.epsilon == pytest.approx(2000.0, rel=1e-12) and track.spent.delta == 0.0


def test_repeated_composes_by_the_accountants_own_rule():
    em = Privacy(0.05, bounded_range=0.05)
    hundred = repeated(em, 100)
    assert hundred.epsilon == pytest.approx(5.0) and len(hundred.atoms) == 100
    # the accountant composes the 100 atoms as it would composes 100 separate charges, in every mode
    for mode in ("filter", "tight", "nonadaptive", "basic"):
        one_charge, separate = (Accountant(math.inf, 1e-6, composition=mode) for _ in range(2))
        one_charge.spend(hundred)
        for _ in range(100):
            separate.spend(em)
        assert one_charge.spent.epsilon == pytest.approx(separate.spent.epsilon, rel=1e-12)
        assert one_charge.spent.delta == pytest.approx(separate.spent.delta, rel=1e-12)
    assert Accountant.compose([hundred], 1e-6).epsilon < 1.1  # tight, not 5.0
    assert repeated(em) is em and repeated(em, 1) is em
    with pytest.raises(ValueError, match="size"):
        repeated(em, 0)
    with pytest.raises(ValueError, match="delta"):
        repeated(Privacy(0.1, 0.3), 4)
    assert charge(None, em, size=3) is None  # nothing to charge: any number of draws
    with pytest.raises(BudgetExceededError):
        charge(Accountant(math.inf, 0.5), Privacy(0.1, 0.3), size=4)
