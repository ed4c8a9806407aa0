"""AboveThreshold with discrete Laplace noise: exact law vs brute force, sampling, exact audits, controls."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from conftest import assert_frequencies_match
from dpselect.analysis import hockey_stick, privacy_loss
from dpselect.mechanisms.sparse_vector import AboveThreshold

UNIVERSE = np.arange(0, 5)
CUTS = np.arange(-1, 6)  # query i counts the records <= CUTS[i]


def brute_law(f, t, b1, b2, span=600):
    """Independent law: direct sums of the discrete Laplace pmf over a wide window (no tails, no cumsum)."""

    def pmf(y, b):
        r = math.exp(-1.0 / b)
        return (1 - r) / (1 + r) * r ** abs(y)

    ys = np.arange(-span, span + 1)
    p2 = np.array([pmf(y, b2) for y in ys])
    out = np.zeros(len(f) + 1)
    for rho in range(-span // 2, span // 2 + 1):
        pr, alive = pmf(rho, b1), 1.0
        for k, fk in enumerate(f):
            below = p2[ys < t + rho - fk].sum()
            out[k] += pr * alive * p2[ys >= t + rho - fk].sum()
            alive *= below
        out[-1] += pr * alive
    return out


@pytest.mark.parametrize("monotone", [True, False])
def test_law_matches_brute_force(monotone):
    rng = np.random.default_rng(3)
    at = AboveThreshold(1.5, monotone=monotone)
    b1, b2 = (float(b) for b in at.scales)
    for _ in range(4):
        f = rng.integers(-4, 8, size=int(rng.integers(1, 6)))
        t = int(rng.integers(-2, 6))
        p = at.probabilities(f, t)
        assert p.sum() == pytest.approx(1.0, abs=1e-13)
        np.testing.assert_allclose(p, brute_law(f, t, b1, b2), rtol=1e-9, atol=1e-300)


def test_law_tails_relative_accuracy():
    # far-out outputs (probabilities ~1e-30) keep their relative accuracy: the audits read log ratios
    at = AboveThreshold(4.0, monotone=True)
    f = np.array([0, 0, 0, 30, 60])
    lp = at.log_probabilities(f, 30)
    b1, b2 = (float(b) for b in at.scales)
    ref = np.log(brute_law(f, 30, b1, b2, span=400))
    np.testing.assert_allclose(lp, ref, rtol=1e-9)
    assert lp.min() < math.log(1e-20)


def test_sampling_matches_law():
    at = AboveThreshold(1.0, monotone=True)
    f = np.array([0, 2, 5, 9, 14, 20])
    draws = np.array([at.select(f, 10, rng=g) for g in np.random.SeedSequence(1).spawn(4000)])
    assert_frequencies_match(draws, at.probabilities(f, 10))


def test_long_scan_and_none():
    at = AboveThreshold(2.0, monotone=True)
    f = np.zeros(500, dtype=np.int64)
    assert at.select(f, 10**6, rng=0) == 500  # never above: "none"
    assert at.probabilities(np.zeros(3, dtype=np.int64), 10**4)[-1] == pytest.approx(1.0)
    f[300:] = 10**6
    assert at.select(f, 10**5, rng=1) == 300


def _counts(x):
    return (np.asarray(x)[None, :] <= CUTS[:, None]).sum(axis=1)


def _datasets(max_n):
    for n in range(0, max_n + 1):
        yield from (np.array(c, dtype=np.int64) for c in itertools.combinations_with_replacement(UNIVERSE, n))


def _audit(at, queries, neighbours, threshold=2):
    worst, delta = 0.0, 0.0
    for x in _datasets(3):
        lx = at.log_probabilities(queries(x), threshold)
        for y in neighbours(x):
            ly = at.log_probabilities(queries(y), threshold)
            worst = max(worst, privacy_loss(lx, ly))
            delta = max(delta, hockey_stick(lx, ly, at.epsilon))
    return worst, delta


def _add_remove(x):
    for i in range(x.size):
        yield np.delete(x, i)
    for v in UNIVERSE:
        yield np.append(x, v)


def _replace(x):
    for i, v in itertools.product(range(x.size), UNIVERSE):
        y = x.copy()
        y[i] = v
        yield y


def _minus_above(x):
    return -(np.asarray(x)[None, :] > CUTS[:, None]).sum(axis=1)


def test_audit_monotone_counts_add_remove():
    at = AboveThreshold(1.0, monotone=True)
    # minus the count above each cut (the scans of private_bounds): the bound is attained up to ~15 %
    worst, delta = _audit(at, _minus_above, _add_remove, threshold=-1)
    assert 0.85 * at.epsilon < worst <= at.epsilon * (1 + 1e-9) and delta <= 1e-12
    # counts below each cut with a fixed threshold change on a suffix: the loss is only
    # max(1/b1, 1/b2) = eps/2 (mathematics §15.1, remark) -- still within the claim
    worst, delta = _audit(at, _counts, _add_remove)
    assert 0.45 * at.epsilon < worst <= 0.5 * at.epsilon * (1 + 1e-9) and delta <= 1e-12


def test_audit_general_queries_replace():
    # counts under replace move in both directions: the general calibration (c = 2)
    at = AboveThreshold(1.0, monotone=False)
    worst, delta = _audit(at, _counts, _replace)
    assert 0.5 * at.epsilon < worst <= at.epsilon * (1 + 1e-9) and delta <= 1e-12


def test_audit_sensitivity_two():
    at = AboveThreshold(1.0, sensitivity=2, monotone=True)
    worst, _ = _audit(at, lambda x: 2 * _minus_above(x), _add_remove, threshold=-2)
    assert 0.85 < worst <= 1.0 + 1e-9


def _mixed(x):
    """Minus the count above the first three cuts, then counts below: not monotone under add/remove."""
    return np.concatenate((_minus_above(x)[:3], _counts(x)[3:]))


def test_audit_general_calibration_non_monotone():
    at = AboveThreshold(1.0, monotone=False)
    worst, delta = _audit(at, _mixed, _add_remove, threshold=-1)
    assert 0.7 < worst <= 1.0 + 1e-9 and delta <= 1e-12


def test_negative_control_monotone_calibration_on_non_monotone_queries():
    at = AboveThreshold(1.0, monotone=True)  # query noise halved: wrong for these queries
    worst, _ = _audit(at, _mixed, _add_remove, threshold=-1)
    assert worst > 1.15 * at.epsilon  # caught


def test_negative_control_scales_halved():
    class Halved(AboveThreshold):  # both noise scales halved: claims eps, is about 2 eps
        @property
        def scales(self):
            b1, b2 = AboveThreshold.scales.fget(self)
            return b1 / 2, b2 / 2

    worst, _ = _audit(Halved(1.0, monotone=True), _minus_above, _add_remove, threshold=-1)
    assert worst > 1.5  # caught


def test_scales_exact_and_privacy():
    at = AboveThreshold(0.5, monotone=False, threshold_share=0.25)
    b1, b2 = at.scales
    loss = 1 / b1 + 2 / b2  # exact rationals: the scales are rounded up (never a larger loss), by < 2^-22
    assert 0.5 * (1 - 2.0**-22) <= loss <= 0.5
    assert at.privacy().epsilon == 0.5 and at.privacy().delta == 0.0


@pytest.mark.parametrize(
    "call",
    [
        lambda r: AboveThreshold(0.0),
        lambda r: AboveThreshold(1.0, sensitivity=0),
        lambda r: AboveThreshold(1.0, threshold_share=1.0),
        lambda r: AboveThreshold(1.0, monotone="yes"),
        lambda r: AboveThreshold(1.0).select([], 0, rng=r),
        lambda r: AboveThreshold(1.0).select([1.5], 0, rng=r),
        lambda r: AboveThreshold(1.0).select([np.nan], 0, rng=r),
        lambda r: AboveThreshold(1.0).select([[1]], 0, rng=r),
        lambda r: AboveThreshold(1.0).select(["a"], 0, rng=r),
        lambda r: AboveThreshold(1.0).select([1], 0.5, rng=r),
    ],
)
def test_bad_inputs_before_randomness(call):
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    with pytest.raises((ValueError, TypeError)):
        call(gen)
    assert gen.bit_generator.state == state


def test_seed_reproduces():
    at = AboveThreshold(0.3)
    f = np.arange(40)
    assert at.select(f, 20, rng=5) == at.select(f, 20, rng=5)


def test_probabilities_is_an_output_law_with_the_none_outcome():
    from dpselect import OutputLaw

    at = AboveThreshold(1.0, monotone=True)
    p = at.probabilities([0, 4, 9], 5)
    assert isinstance(p, OutputLaw) and p.support.tolist() == [0, 1, 2, 3]
    np.testing.assert_allclose(p, np.exp(at.log_probabilities([0, 4, 9], 5)), rtol=1e-12)
    assert at.privacy("replace").relation == "replace"
    with pytest.raises(ValueError, match="relation"):
        at.privacy("swap")
