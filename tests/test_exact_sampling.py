"""Exact samplers (noise.exact) and sampler="exact" on EM / PF / RNM; rng="secure"."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

import dpselect
from conftest import assert_frequencies_match
from dpselect._validation import SecureGenerator, check_random_state
from dpselect.noise.exact import (
    IntegerSource,
    bernoulli_exp,
    discrete_gaussian,
    discrete_laplace,
    discrete_laplace_logpmf,
)


@pytest.mark.parametrize("x", [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(7, 3), 0.1, 4])
def test_bernoulli_exp_frequency(x):
    n = 60_000
    d = bernoulli_exp(x, size=n, rng=11)
    p = float(mpmath.exp(-mpmath.mpf(Fraction(x).numerator) / Fraction(x).denominator))
    assert abs(d.mean() - p) <= 5 * math.sqrt(max(p * (1 - p), 1 / n) / n)


def test_bernoulli_exp_big_denominators_use_python_integers():
    # den >= 2^50: the element-by-element path; same law
    x = Fraction(2**60 + 1, 2**61)
    d = bernoulli_exp(x, size=4000, rng=3)
    p = math.exp(-float(x))
    assert abs(d.mean() - p) <= 5 * math.sqrt(p * (1 - p) / 4000)


@pytest.mark.parametrize("scale", [Fraction(5, 2), Fraction(1, 3), 0.75])
def test_discrete_laplace_matches_pmf(scale):
    n = 40_000
    y = discrete_laplace(scale, size=n, rng=5)
    # independent pmf: mpmath normalisation of exp(-|k|/b) over Z (closed form of the geometric series)
    b = mpmath.mpf(Fraction(scale).numerator) / Fraction(scale).denominator
    q = mpmath.exp(-1 / b)
    ks = np.arange(-8, 9)
    probs = np.array([float((1 - q) / (1 + q) * q ** abs(int(k))) for k in ks])
    np.testing.assert_allclose(np.exp(discrete_laplace_logpmf(ks, scale)), probs, rtol=1e-12)
    inside = (y >= -8) & (y <= 8)
    draws = np.where(inside, y + 8, 17)
    assert_frequencies_match(draws, np.append(probs, 1 - probs.sum()))


def test_discrete_gaussian_matches_pmf():
    n = 40_000
    s2 = Fraction(9, 4)
    y = discrete_gaussian(s2, size=n, rng=6)
    ks = np.arange(-12, 13)
    w = np.array([mpmath.exp(-mpmath.mpf(int(k) ** 2) / (2 * mpmath.mpf(9) / 4)) for k in ks])
    z = mpmath.fsum(mpmath.exp(-(mpmath.mpf(k) ** 2) / (mpmath.mpf(9) / 2)) for k in range(-60, 61))
    probs = np.array([float(v / z) for v in w])
    draws = np.where(np.abs(y) <= 12, y + 12, 25)
    assert_frequencies_match(draws, np.append(probs, max(0.0, 1 - probs.sum())))


def test_same_seed_same_draws_and_bad_arguments():
    assert np.array_equal(discrete_laplace(3, size=50, rng=9), discrete_laplace(3, size=50, rng=9))
    with pytest.raises(ValueError, match="scale"):
        discrete_laplace(0)
    with pytest.raises(ValueError, match="x"):
        bernoulli_exp(-1)
    with pytest.raises(TypeError, match="sigma2"):
        discrete_gaussian("2")
    with pytest.raises(ValueError, match="scale"):
        discrete_laplace(float("inf"))


def test_secure_integer_source_is_uniform():
    src = IntegerSource("secure")
    assert src.secure
    a = src.below_array(np.full(60_000, 3))
    assert_frequencies_match(a, np.full(3, 1 / 3))
    b = src.below_array(np.full(30_000, 2))  # 2^64 mod 2 = 0: every word is accepted
    assert_frequencies_match(b, np.full(2, 0.5))
    assert 0 <= src.below(2**200) < 2**200


def test_rng_secure_everywhere_and_bad_strings():
    g = check_random_state("secure")
    assert isinstance(g, SecureGenerator) and isinstance(g, np.random.Generator)
    with pytest.raises(TypeError, match="rng"):
        check_random_state("sekure")
    prob = dpselect.SelectionProblem([3.0, 2.0, 0.0], global_sensitivity=1.0)
    for mech in (dpselect.ExponentialMechanism(1.0), dpselect.PermuteAndFlip(1.0, sampler="exact")):
        assert mech.select(prob, rng="secure") in (0, 1, 2)
    assert isinstance(dpselect.SmoothSensitivityRelease(1.0).release(0.0, 1.0, rng="secure"), float)


# ------------------------------------------------------------- sampler="exact"

_PROBLEMS = [
    dpselect.SelectionProblem([3.0, 2.0, 0.0, 1.0, 2.5, 3.0], global_sensitivity=1.0),
    dpselect.SelectionProblem([0.3, 0.1, 0.25, -0.4], global_sensitivity=0.5),
    dpselect.SelectionProblem([10.0, 9.0, 7.0, 9.0], global_sensitivity=1.0, monotone=True),
]


@pytest.mark.parametrize("problem", _PROBLEMS)
@pytest.mark.parametrize(
    "mech",
    [
        dpselect.ExponentialMechanism(1.0, sampler="exact"),
        dpselect.PermuteAndFlip(1.0, sampler="exact"),
        dpselect.ReportNoisyMax(0.7, noise="gumbel", sampler="exact"),
        dpselect.ReportNoisyMax(0.7, noise="exponential", sampler="exact"),
    ],
)
def test_exact_sampler_matches_the_exact_law(mech, problem):
    draws = mech.select(problem, size=40_000, rng=21)
    assert_frequencies_match(draws, mech.probabilities(problem))


def test_exact_em_and_pf_differ():
    # a negative control for the test above: PF's law is not EM's, and the test tells them apart
    prob = _PROBLEMS[0]
    draws = dpselect.PermuteAndFlip(1.0, sampler="exact").select(prob, size=40_000, rng=1)
    with pytest.raises(AssertionError):
        assert_frequencies_match(draws, dpselect.ExponentialMechanism(1.0).probabilities(prob))


def test_exact_sampler_seed_reproduces_and_scalar():
    mech = dpselect.PermuteAndFlip(1.0, sampler="exact")
    prob = _PROBLEMS[1]
    assert np.array_equal(mech.select(prob, size=200, rng=4), mech.select(prob, size=200, rng=4))
    assert isinstance(mech.select(prob, rng=4), int)


def test_exact_sampler_far_candidate_keeps_positive_probability():
    # a candidate 60 noise units behind: the float Gumbel sampler can never pick it (noise <= 36.74
    # above, >= -3.60 below); the exact sampler's law still gives it e^-60 relative weight, so
    # its rate is handled exactly (here: never drawn in 2000 draws, but no error and no truncation)
    prob = dpselect.SelectionProblem([0.0, -120.0], global_sensitivity=1.0)
    d = dpselect.ExponentialMechanism(1.0, sampler="exact").select(prob, size=2000, rng=0)
    assert (d == 0).all()


def test_bad_sampler_names():
    with pytest.raises(ValueError, match="sampler"):
        dpselect.ExponentialMechanism(1.0, sampler="exakt")
    with pytest.raises(ValueError, match="sampler"):
        dpselect.PermuteAndFlip(1.0, sampler=None)
    with pytest.raises(ValueError, match="sampler"):
        dpselect.ReportNoisyMax(1.0, noise="laplace", sampler="exact")


def test_exponential_weights_matches_its_law():
    from dpselect.noise.exact import exponential_weights

    rates = [Fraction(3, 2), 0.25, 2, Fraction(1, 3)]
    counts = [3, 1, 5, 2]
    g, o = exponential_weights(rates, counts=counts, size=40_000, rng=8)
    w = np.array([c * math.exp(-float(Fraction(r))) for r, c in zip(rates, counts)])
    assert_frequencies_match(g, w / w.sum())
    for k, c in enumerate(counts):  # offsets uniform within each group
        assert_frequencies_match(o[g == k], np.full(c, 1 / c))
    with pytest.raises(ValueError, match="counts"):
        exponential_weights([0, 1], counts=[1, 0])


def test_discrete_laplace_clamp_is_the_clamped_law_and_never_raises():
    # issue 30.7: clamp=c gives min(max(Y, -c), c) (law checked by frequencies); a huge scale never raises
    from dpselect.noise._integers import IntegerSource

    y = dpselect.noise.exact.discrete_laplace_batch(IntegerSource(4), 2, 5, 40_000, clamp=2)  # scale 5/2
    k = np.arange(-60, 61)
    p = np.exp(-np.abs(k) / 2.5)
    p /= p.sum()
    law = np.array([p[k <= -2].sum(), p[k == -1][0], p[k == 0][0], p[k == 1][0], p[k >= 2].sum()])
    assert_frequencies_match(y + 2, law)
    big = dpselect.noise.exact.discrete_laplace_batch(IntegerSource(1), 1, 10**400, 200, clamp=2**53)
    assert set(np.abs(big)) == {2**53}
    rel = dpselect.SmoothSensitivityRelease(1.0, 1e-6, noise="laplace", granularity=2.0**-20)
    assert set(np.abs(rel.release(0.3, 1e306, size=50, rng=2))) == {2.0**32}
