"""Privacy, validation, SelectionProblem and step profiles."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from dpselect import Privacy, SelectionProblem, StepProfile
from dpselect._validation import check_counts, check_random_state, check_scores


def test_privacy_composes_and_validates():
    p = Privacy(0.5, 1e-6, "add_remove") + Privacy(0.25)
    assert p.epsilon == 0.75 and p.delta == 1e-6 and p.relation == "add_remove"
    assert sum([Privacy(1.0), Privacy(2.0)]).epsilon == 3.0
    with pytest.raises(ValueError, match="relations"):
        Privacy(1.0, relation="add_remove") + Privacy(1.0, relation="replace")
    assert Privacy(0.0).epsilon == 0.0  # the guarantee of releasing nothing (an empty accountant)
    for bad in (-1.0, math.nan):
        with pytest.raises(ValueError, match="epsilon"):
            Privacy(bad)
    for bad in (-0.1, 1.0, math.nan):
        with pytest.raises(ValueError, match="delta"):
            Privacy(1.0, bad)
    with pytest.raises(TypeError, match="epsilon"):
        Privacy("1")
    with pytest.raises(ValueError, match="relation"):
        Privacy(1.0, relation="swap")
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.epsilon = 3  # frozen


def test_validation_messages_name_the_argument():
    with pytest.raises(ValueError, match="scores"):
        check_scores([1.0, np.nan])
    with pytest.raises(ValueError, match="scores"):
        check_scores([])
    with pytest.raises(ValueError, match="scores"):
        check_scores([[1.0, 2.0]])
    with pytest.raises(TypeError, match="scores"):
        check_scores(["a", "b"])
    with pytest.raises(ValueError, match="counts"):
        check_counts([1, -1])
    with pytest.raises(ValueError, match="counts"):
        check_counts([1.5, 2])
    with pytest.raises(TypeError, match="rng"):
        check_random_state("seed")
    g1, g2 = check_random_state(7), check_random_state(7)
    assert g1.random() == g2.random()


def test_problem_fields_and_validation():
    pr = SelectionProblem([3.0, 1.0, 3.0], labels=["a", "b", "c"], global_sensitivity=2.0)
    assert pr.n_candidates == 3 and pr.optimal().tolist() == [True, False, True]
    assert pr.local_sensitivity(5) == 2.0 and pr.smooth_sensitivity(0.1) == 2.0
    assert pr.candidate_local_sensitivity(0).tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(ValueError):
        pr.scores[0] = 1.0  # read-only
    with pytest.raises(ValueError, match="labels"):
        SelectionProblem([1.0, 2.0], labels=["a"])
    with pytest.raises(ValueError, match="global_sensitivity"):
        SelectionProblem([1.0], global_sensitivity=0.0)
    with pytest.raises(ValueError, match="max_distance"):
        SelectionProblem([1.0], local_sensitivity=lambda t: 1.0)
    with pytest.raises(ValueError, match="relation"):
        SelectionProblem([1.0], relation="other")
    with pytest.raises(ValueError, match="exceeds"):
        SelectionProblem([1.0], global_sensitivity=1.0, local_sensitivity=StepProfile([0, 2], [0.5, 3.0]))
    with pytest.raises(ValueError, match="beta"):
        pr.smooth_sensitivity(-1.0)
    bounded = SelectionProblem([1.0, 0.0], smooth_bound=lambda b: math.exp(-b), beta_max=0.1)
    assert bounded.smooth_sensitivity(0.05) == pytest.approx(math.exp(-0.05))
    with pytest.raises(ValueError, match="beta_max"):
        bounded.smooth_sensitivity(0.2)


def _brute_smooth(bp, vals, beta, horizon):
    ts = np.arange(horizon + 1)
    idx = np.searchsorted(bp, ts, side="right") - 1
    return max(math.exp(-beta * t) * vals[i] for t, i in zip(ts, idx))


def test_step_profile_smooth_equals_brute_force():
    rng = np.random.default_rng(1)
    for _ in range(300):
        k = int(rng.integers(1, 6))
        bp = np.concatenate([[0], np.sort(rng.choice(np.arange(1, 40), size=k - 1, replace=False))])
        vals = np.sort(rng.uniform(0, 5, size=k))
        beta = float(rng.uniform(0.01, 2))
        prof = StepProfile(bp, vals)
        brute = _brute_smooth(bp, vals, beta, int(bp[-1]) + 5)
        assert prof.smooth(beta) == pytest.approx(brute, rel=1e-12)
        # the same profile as a callable is scanned and agrees
        pr = SelectionProblem(
            [0.0, 1.0], global_sensitivity=5.0, local_sensitivity=lambda t, p=prof: p(t), max_distance=int(bp[-1])
        )
        assert pr.smooth_sensitivity(beta) == pytest.approx(brute, rel=1e-12)


def test_step_profile_per_candidate_and_validation():
    prof = StepProfile([0, 3], [[0.0, 1.0], [1.0, 1.0]])
    assert prof(0).tolist() == [0.0, 1.0] and prof(4).tolist() == [1.0, 1.0]
    np.testing.assert_allclose(prof.smooth(0.5), [math.exp(-1.5), 1.0])
    pr = SelectionProblem([1.0, 0.0], candidate_local_sensitivity=prof)
    np.testing.assert_allclose(pr.candidate_smooth_sensitivity(0.5), [math.exp(-1.5), 1.0])
    with pytest.raises(ValueError, match="non-decreasing"):
        StepProfile([0, 1], [2.0, 1.0])
    with pytest.raises(ValueError, match="breakpoints"):
        StepProfile([1, 2], [1.0, 2.0])
