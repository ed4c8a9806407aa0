"""The analysis entry points: one law type, declared parameters, exact error expectations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

import dpselect
from dpselect.analysis import (
    ErrorDistribution,
    accuracy,
    audit,
    error_distribution,
    expected_error,
    hockey_stick,
    output_distribution,
    privacy_loss,
)
from dpselect.noise import Laplace, PolynomialTail, StudentT


def test_output_distribution_is_the_mechanisms_output_law():
    problem = dpselect.SelectionProblem([3.0, 1.0, 2.0, 2.0])
    mech = dpselect.PermuteAndFlip(1.5)
    law = output_distribution(mech, problem)
    assert isinstance(law, dpselect.OutputLaw)
    np.testing.assert_allclose(law, np.asarray(mech.probabilities(problem)), rtol=1e-15)
    assert law.support.tolist() == [0, 1, 2, 3]
    gaps = problem.scores.max() - problem.scores
    assert expected_error(mech, problem) == pytest.approx(float(np.dot(law.probabilities, gaps)), rel=1e-14)
    assert accuracy(mech, problem) == pytest.approx(float(law[0]), rel=1e-14)


class _LogOnly:
    """A mechanism giving only its log-law (enough for every analysis function)."""

    def log_probabilities(self, problem):
        return dpselect.ExponentialMechanism(1.0).log_probabilities(problem)


def test_a_mechanism_with_only_a_log_law_is_analysed():
    problem = dpselect.SelectionProblem([1.0, 0.0])
    ref = np.asarray(dpselect.ExponentialMechanism(1.0).probabilities(problem))
    np.testing.assert_allclose(output_distribution(_LogOnly(), problem), ref, rtol=1e-14)


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (
            lambda: output_distribution(object(), dpselect.SelectionProblem([1.0])),
            TypeError,
            "mech must be a mechanism",
        ),
        (lambda: accuracy(dpselect.PermuteAndFlip(1.0), [1.0, 2.0]), TypeError, "problem"),
        (
            lambda: expected_error(dpselect.PermuteAndFlip(1.0), dpselect.SelectionProblem([1.0]), loss=3),
            TypeError,
            "loss must be callable",
        ),
        (lambda: hockey_stick([0.0], [0.0], -1.0), ValueError, "epsilon must be >= 0"),
        (lambda: privacy_loss([0.0], [0.0], floor=-1.0), ValueError, "floor must be a finite number >= 0"),
        (lambda: audit(dpselect.PermuteAndFlip(1.0), [], tol=math.nan), ValueError, "tol must be a finite number >= 0"),
        (lambda: ErrorDistribution(Laplace(), -1.0), ValueError, "scale must be >= 0"),
        (lambda: ErrorDistribution("laplace", 1.0), TypeError, "noise must be a noise distribution"),
        (lambda: error_distribution("release", 1.0), TypeError, "release must be a SmoothSensitivityRelease"),
    ],
)
def test_bad_arguments_are_named(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_privacy_loss_with_a_zero_floor_keeps_every_output():
    assert privacy_loss(np.log([0.5, 0.5]), np.log([0.25, 0.75]), floor=0.0) == pytest.approx(math.log(2))


@pytest.mark.parametrize("noise", [Laplace(), StudentT(3.0), PolynomialTail(4.0)], ids=repr)
@pytest.mark.parametrize("truth", [0.0, 0.3, -2.5, 40.0])
def test_error_expectations_match_quadrature_of_the_density(noise, truth):
    dist = ErrorDistribution(noise, 1.7)
    absolute, _ = integrate.quad(lambda t: abs(t - truth) * dist.pdf(t), -np.inf, np.inf, limit=400)
    squared, _ = integrate.quad(lambda t: (t - truth) ** 2 * dist.pdf(t), -np.inf, np.inf, limit=400)
    assert dist.expected_error(truth) == pytest.approx(absolute, rel=1e-9)
    assert dist.expected_error(truth, loss="squared") == pytest.approx(squared, rel=1e-9)
    if truth == 0.0:
        assert dist.expected_error() == pytest.approx(dist.expected_abs_error(), rel=1e-15)


def test_error_expectations_without_a_moment_are_infinite():
    cauchy = ErrorDistribution(StudentT(1.0), 1.0)
    assert math.isinf(cauchy.expected_error(2.0))
    assert math.isinf(ErrorDistribution(StudentT(2.0), 1.0).expected_error(loss="squared"))
    with pytest.raises(ValueError, match="loss must be 'absolute' or 'squared'"):
        cauchy.expected_error(loss="zero_one")
