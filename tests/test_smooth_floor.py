"""Smooth-sensitivity median baselines release on every dataset: S* floored at a public S_min (mathematics §4.5)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpselect import Accountant
from dpselect._warnings import PrivacyLeakWarning
from dpselect.apps import quantiles as q
from dpselect.apps.quantiles._smooth.baselines import sensitivity_floor

BASE = np.r_[np.full(9206, 0.5), np.linspace(0.6, 1, 293)]


@pytest.mark.parametrize("last", [0.5, 0.95])
def test_issue_neighbours_both_release(last):
    """The issue's pair: S* underflows to 0 with the extra 0.5; both neighbours release after the charge."""
    acc = Accountant(2.0)
    out = q.smooth_sens_pure(np.r_[BASE, last], 1.0, bounds=(0, 1), rng=0, accountant=acc)
    assert 0.0 <= out <= 1.0
    assert acc.spent.epsilon == pytest.approx(1.0)


def test_issue_neighbours_have_the_same_law():
    """Both neighbours' S* lie below the floor (the grid step): the exact grid laws coincide."""
    mech = q.smooth_sens_pure_mechanism(1.0)
    assert q.smooth_sensitivity_median(np.r_[BASE, 0.5], mech.beta, bounds=(0, 1)) == 0.0  # the underflow
    floor = sensitivity_floor(mech, 0.0, 1.0)
    assert floor == mech.granularity
    a = mech.log_law(0.5, max(q.smooth_sensitivity_median(np.r_[BASE, 0.5], mech.beta, bounds=(0, 1)), floor))
    b = mech.log_law(0.5, max(q.smooth_sensitivity_median(np.r_[BASE, 0.95], mech.beta, bounds=(0, 1)), floor))
    np.testing.assert_array_equal(a.log_probabilities, b.log_probabilities)


def test_zeros_and_uniforms_release():
    """12,000 zeros + 2,000 U(0, 1) (the issue's second dataset) and 60,000 ties: every baseline releases."""
    rng = np.random.default_rng(0)
    x = np.r_[np.zeros(12000), rng.uniform(0, 1, 2000)]
    ties = np.r_[np.full(60000, 0.5), rng.uniform(0, 1, 100)]
    for data in (x, ties):
        assert 0.0 <= q.smooth_sens_pure(data, 1.0, bounds=(0, 1), rng=1) <= 1.0
        assert 0.0 <= q.laplace_ln(data, 1.0, bounds=(0, 1), rng=1) <= 1.0
        assert 0.0 <= q.smooth_sens_approx(data, 1.0, delta=1e-6, bounds=(0, 1), rng=1) <= 1.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            assert 0.0 <= q.smooth_sens_approx(data, 1.0, delta=1e-6, bounds=(0, 1), rng=1, tuning="paper") <= 1.0
        for err in (q.expected_abs_error_smooth_sens_pure, q.expected_abs_error_laplace_ln):
            assert np.isfinite(err(data, 1.0, bounds=(0, 1)))


def _replace_neighbours(x, grid):
    for i in range(x.size):
        for v in grid:
            if v != x[i]:
                y = x.copy()
                y[i] = v
                yield y


@pytest.mark.parametrize("granularity", [None, 0.0])
def test_floored_sensitivity_is_still_smooth(granularity):
    """max(S*, S_min) >= LS and max(S*, S_min)(x) <= e^beta max(S*, S_min)(y) on every replace neighbour."""
    mech = q.smooth_sens_pure_mechanism(1.0, granularity=granularity)
    beta, grid = 3.0, np.array([0.0, 2.0**-30, 0.5, 1.0])  # a large beta: S* far below the floor on ties
    floor = sensitivity_floor(mech, 0.0, 1.0)
    rng = np.random.default_rng(3)
    for _ in range(40):
        x = rng.choice(grid, size=int(rng.integers(3, 12)))
        sx = max(q.smooth_sensitivity_median(x, beta, bounds=(0, 1)), floor)
        med = np.sort(x)[(x.size - 1) // 2]
        for y in _replace_neighbours(x, grid):
            sy = max(q.smooth_sensitivity_median(y, beta, bounds=(0, 1)), floor)
            assert sx <= np.exp(beta) * sy * (1 + 1e-12)
            assert sx >= abs(np.sort(y)[(y.size - 1) // 2] - med)  # LS(x) >= every one-step change
