"""SelectionProblem is immutable (issue #13 item 3) and validates its inputs."""

from __future__ import annotations

import numpy as np
import pytest

from dpselect import ExponentialMechanism, SelectionProblem, StepProfile


def test_attributes_cannot_be_rebound_or_deleted():
    p = SelectionProblem([3.0, 1.0], global_sensitivity=1.0)
    em = ExponentialMechanism(1.0)
    before = em.probabilities(p)
    for name, value in (
        ("global_sensitivity", -5),
        ("scores", np.array([0.0, 9.0])),
        ("monotone", True),
        ("relation", "replace"),
        ("labels", ["x", "y"]),
        ("beta_max", 0.1),
        ("_ls", None),
    ):
        with pytest.raises(AttributeError, match="immutable"):
            setattr(p, name, value)
    with pytest.raises(AttributeError, match="immutable"):
        del p.global_sensitivity
    # the law the mechanism reads is unchanged (the attack: EM preferring the worse candidate)
    np.testing.assert_array_equal(em.probabilities(p), before)
    assert before[0] > before[1]


def test_arrays_are_read_only_and_copied():
    raw = np.array([3.0, 1.0, 2.0])
    p = SelectionProblem(raw)
    raw[0] = -100.0  # the caller's array is copied
    assert p.scores[0] == 3.0
    with pytest.raises(ValueError, match="read-only"):
        p.scores[0] = 0.0
    prof = StepProfile(np.array([0, 2]), np.array([0.5, 1.0]))
    with pytest.raises(ValueError, match="read-only"):
        prof.values[0] = 5.0


def test_labels_are_an_immutable_sequence():
    p = SelectionProblem([1.0, 2.0], labels=["a", "b"])
    assert p.labels == ("a", "b") and type(p.labels) is tuple
    with pytest.raises(TypeError):
        p.labels[0] = "z"  # type: ignore[index]
    with pytest.raises(TypeError, match="labels"):
        SelectionProblem([1.0, 2.0], labels="ab")
    with pytest.raises(ValueError, match="labels"):
        SelectionProblem([1.0, 2.0], labels=["a"])


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        (dict(scores=[]), ValueError, "scores"),
        (dict(scores=[1.0, np.nan]), ValueError, "scores"),
        (dict(scores=[[1.0, 2.0]]), ValueError, "scores"),
        (dict(scores=["a", "b"]), TypeError, "scores"),
        (dict(scores=[1.0], global_sensitivity=0.0), ValueError, "global_sensitivity"),
        (dict(scores=[1.0], relation="swap"), ValueError, "relation"),
        (dict(scores=[1.0], monotone=1), TypeError, "monotone"),
        (dict(scores=[1.0], local_sensitivity=2.0), ValueError, "global_sensitivity"),
        (dict(scores=[1.0], local_sensitivity=lambda t: 1.0), ValueError, "max_distance"),
    ],
)
def test_bad_inputs_name_the_argument(kwargs, exc, match):
    scores = kwargs.pop("scores")
    with pytest.raises(exc, match=match):
        SelectionProblem(scores, **kwargs)
