"""Property-based tests: bad inputs always raise; valid problems give distributions."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dpselect import ExponentialMechanism, PermuteAndFlip, Privacy, ReportNoisyMax, SelectionProblem

MECHS = [ExponentialMechanism, PermuteAndFlip, lambda e: ReportNoisyMax(e, "laplace"),
         lambda e: ReportNoisyMax(e, "gumbel"), lambda e: ReportNoisyMax(e, "exponential")]

bad_eps = st.one_of(st.just(math.nan), st.just(math.inf), st.just(-math.inf), st.floats(max_value=0.0),
                    st.text(max_size=3), st.booleans(), st.none())
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
    st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=5).map(
        lambda v: v + [math.nan]),
    st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=5).map(
        lambda v: v + [math.inf]),
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
