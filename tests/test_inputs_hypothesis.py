"""Property-based tests: bad inputs always raise; valid problems give distributions."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpselect import (
    ExponentialMechanism,
    LocalDampening,
    PermuteAndFlip,
    Privacy,
    ReportNoisyMax,
    SelectionProblem,
    SmoothNoisyMax,
    SmoothPrivateSelection,
)

MECHS = [
    ExponentialMechanism,
    PermuteAndFlip,
    lambda e: ReportNoisyMax(e, "laplace"),
    lambda e: ReportNoisyMax(e, "gumbel"),
    lambda e: ReportNoisyMax(e, "exponential"),
]

bad_eps = st.one_of(
    st.just(math.nan),
    st.just(math.inf),
    st.just(-math.inf),
    st.floats(max_value=0.0),
    st.text(max_size=3),
    st.booleans(),
    st.none(),
)
bad_delta = st.one_of(st.just(math.nan), st.floats(max_value=-1e-300), st.floats(min_value=1.0), st.just(math.inf))


@given(bad_eps, st.integers(0, len(MECHS) - 1))
def test_bad_epsilon_always_raises(eps, which):
    try:
        MECHS[which](eps)
    except (ValueError, TypeError) as exc:
        assert "epsilon" in str(exc)
    else:
        raise AssertionError("no error")


@given(bad_delta)
def test_bad_delta_always_raises(delta):
    try:
        Privacy(1.0, delta)
    except (ValueError, TypeError) as exc:
        assert "delta" in str(exc)
    else:
        raise AssertionError("no error")


bad_scores = st.one_of(
    st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=0),
    st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=5).map(lambda v: [*v, math.nan]),
    st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=5).map(lambda v: [*v, math.inf]),
    st.lists(st.lists(st.floats(-10, 10), min_size=2, max_size=2), min_size=2, max_size=3),
    st.lists(st.text(min_size=1, max_size=2), min_size=1, max_size=3),
)


@given(bad_scores)
def test_bad_scores_always_raise(scores):
    try:
        SelectionProblem(scores)
    except (ValueError, TypeError) as exc:
        assert "scores" in str(exc)
    else:
        raise AssertionError("no error")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=12),
    st.floats(1e-3, 50.0),
    st.floats(1e-3, 1e3),
    st.booleans(),
    st.integers(0, len(MECHS) - 1),
)
def test_valid_problems_give_distributions(scores, eps, gs, monotone, which):
    pr = SelectionProblem(scores, global_sensitivity=gs, monotone=monotone)
    p = MECHS[which](eps).probabilities(pr)
    assert p.shape == (len(scores),)
    assert np.all(p >= 0) and abs(p.sum() - 1) < 1e-9


# ----------------------------------------------------------------------------- extreme inputs (issue #13 item 2)
huge_scores = st.lists(
    st.one_of(st.floats(-1e308, 1e308, allow_nan=False), st.sampled_from([1e308, -1e308, 0.0, 5e-324, -5e-324])),
    min_size=1,
    max_size=8,
)
huge_eps = st.one_of(st.floats(1e-3, 1e300), st.sampled_from([1e-3, 1.0, 1e300]))


def _check_distribution(scores, p):
    scores = np.asarray(scores, dtype=float)
    assert p.shape == scores.shape and np.all(np.isfinite(p)) and np.all(p >= 0)
    assert abs(p.sum() - 1) < 1e-9
    for v in np.unique(scores):  # ties share their probability exactly
        tied = p[scores == v]
        assert np.ptp(tied) <= 1e-12
    order = np.argsort(scores, kind="stable")  # iid noise: a higher score never wins less often
    assert np.all(np.diff(p[order]) >= -1e-9)


@settings(max_examples=150, deadline=None)
@given(huge_scores, huge_eps, st.floats(1e-3, 1e3), st.booleans(), st.integers(0, len(MECHS) - 1))
def test_extreme_scores_and_epsilons_give_distributions(scores, eps, gs, monotone, which):
    pr = SelectionProblem(scores, global_sensitivity=gs, monotone=monotone)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = MECHS[which](eps).probabilities(pr)
        draw = MECHS[which](eps).select(pr, rng=0)
    _check_distribution(scores, p)
    assert p[draw] > 0


@pytest.mark.parametrize(
    "make",
    [
        lambda e: SmoothNoisyMax(e, noise="student_t"),
        lambda e: SmoothPrivateSelection(e),
        lambda e: SmoothPrivateSelection(e, one_sided=False),
        lambda e: LocalDampening(e),
    ],
    ids=["snm_t", "sps", "sps_two_sided", "ld"],
)
@settings(max_examples=40, deadline=None)
@given(scores=huge_scores, eps=huge_eps)
def test_extreme_inputs_through_the_engine_smooth_mechanisms(make, scores, eps):
    pr = SelectionProblem(scores)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = make(eps).probabilities(pr)
    _check_distribution(scores, p)


def test_em_and_pf_on_the_issue13_scores():
    pr = SelectionProblem([1e308, -1e308, 0.0])
    for mech in (ExponentialMechanism(10), PermuteAndFlip(10), ReportNoisyMax(10, "laplace")):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            p = mech.probabilities(pr)
        np.testing.assert_array_equal(p, [1.0, 0.0, 0.0])


@pytest.mark.parametrize("which", range(len(MECHS)))
@pytest.mark.parametrize("scores", [[0.0, 5e-324], [-5e-324, 5e-324], [0.0, 0.0, 5e-324]])
def test_subnormal_gaps_give_distributions_without_warnings(scores, which):
    # a quadrature panel between two scores 1 subnormal apart has width 0 (log weight -inf);
    # hypothesis once found [0, 5e-324] raising "divide by zero in log"
    pr = SelectionProblem(scores, monotone=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = MECHS[which](1.0).probabilities(pr)
    _check_distribution(scores, p)
    np.testing.assert_allclose(p[1:] if len(scores) == 2 else p, 1.0 / len(scores), rtol=1e-12)
