"""Quantiles without bounds: private bounds by AboveThreshold, exact audit of the composition, accuracy, API."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest

import _audit_neighbours
from dpselect.accounting import Accountant
from dpselect.analysis import privacy_loss
from dpselect.apps import quantiles as Q
from dpselect.apps.quantiles._unbounded import bounds as U
from dpselect.mechanisms.sparse_vector import AboveThreshold


def _pieces(law):
    """(lo, hi, p) of a law over pieces."""
    return law.lo, law.hi, law.probabilities


UNIVERSE = np.arange(-3, 4)
EPS, SHARE = 2.0, 0.25


def _datasets(max_n):
    for n in range(1, max_n + 1):
        yield from (np.array(c, dtype=np.int64) for c in itertools.combinations_with_replacement(UNIVERSE, n))


def _neighbours(x, relation):
    return _audit_neighbours.neighbours(x, UNIVERSE, relation)


GRID = U.geometric_grid(1.0, 1)[:48]  # 1, 2, ..., 2^47: the scale=1, steps=1 grid; beyond it every
# query is 0 for every dataset here, so the last output lumps outputs of identical ratio
JOINT = 4  # outputs (M, value) enumerated jointly for M in {1, 2, 4, 8}; beyond, M alone


@functools.cache
def _law(xt, q, relation, naive=False):
    """Exact log law of unbounded_quantile(x, q, EPS, scale=1, steps=1) on integer data.

    Outputs: (M_k, v) for k < JOINT and every integer v in [-8, 8] (probability P[M = M_k] P[v | M_k]),
    then M_k alone for k >= JOINT.  ``naive``: the negative control, bounds read from the data.
    """
    x = np.array(xt, dtype=np.int64)
    at = AboveThreshold(SHARE * EPS, monotone=relation == "add_remove")
    above = (np.abs(x)[None, :] > GRID[:, None]).sum(axis=1)
    lp_m = at.log_probabilities(-above, -U.MARGIN * math.ceil(at.scales[1]))
    out = []
    for k in range(JOINT):
        m = int(GRID[k])
        bounds = (int(x.min()), int(x.max()) + 1) if naive else (-m, m)
        lo, hi, p = _pieces(Q.quantile_law(np.clip(x, *bounds), q, (1 - SHARE) * EPS, bounds=bounds, relation=relation))
        pmf = np.zeros(17)
        for a, b, pr in zip(lo, hi, p):
            if b >= a:
                pmf[int(a) + 8 : int(b) + 9] += pr / (b - a + 1)
        with np.errstate(divide="ignore"):
            out.append(lp_m[k] + np.log(pmf))
    out.append(lp_m[JOINT:])
    return np.concatenate(out)


@pytest.mark.parametrize("relation", ["add_remove", "replace"])
@pytest.mark.parametrize("q", [0.25, 0.5, 0.9])
def test_exact_audit_of_the_composition(q, relation):
    worst = 0.0
    for x in _datasets(3):
        lx = _law(tuple(x), q, relation)
        for y in _neighbours(x, relation):
            worst = max(worst, privacy_loss(lx, _law(tuple(y), q, relation)))
    assert 0.3 * EPS < worst <= EPS * (1 + 1e-9)


def test_law_of_the_bound_matches_sampling():
    x = np.array([-3, 0, 2, 3, 3], dtype=np.int64)
    at = AboveThreshold(SHARE * EPS, monotone=True)
    above = (np.abs(x)[None, :] > GRID[:, None]).sum(axis=1)
    p = at.probabilities(-above, -U.MARGIN * math.ceil(at.scales[1]))
    gen = np.random.default_rng(4)
    draws = np.array(
        [U._magnitude_bounds(np.sort(x.astype(float)), SHARE * EPS, "add_remove", GRID, gen).upper for _ in range(1500)]
    )
    k = np.log2(draws).astype(int)
    freq = np.bincount(k, minlength=8)[:8] / k.size
    se = np.sqrt(np.maximum(p[:8] * (1 - p[:8]), 1 / k.size) / k.size)
    assert np.all(np.abs(freq - p[:8]) <= 5 * se)


def test_negative_control_bounds_from_the_data():
    worst = 0.0
    for x in _datasets(2):
        lx = _law(tuple(x), 0.5, "add_remove", naive=True)
        for y in _neighbours(x, "add_remove"):
            worst = max(worst, privacy_loss(lx, _law(tuple(y), 0.5, "add_remove", naive=True)))
    assert worst > 2 * EPS  # caught (infinite: the support moves with the data)


def test_dispatch_bounds_none_is_unbounded():
    x = np.random.default_rng(1).normal(3.0, 2.0, size=500)
    assert Q.private_quantile(x, 0.3, 1.0, rng=5) == Q.unbounded_quantile(x, 0.3, 1.0, rng=5)
    np.testing.assert_array_equal(
        Q.private_quantiles(x, [0.2, 0.7], 1.0, rng=5), Q.unbounded_quantiles(x, [0.2, 0.7], 1.0, rng=5)
    )


@pytest.mark.parametrize("q", [0.1, 0.5, 0.75, 0.99])
@pytest.mark.parametrize("loc", [-1e6, -40.0, 0.0, 3e-4, 250.0, 7e8])
def test_accuracy_within_two_of_tight_bounds(loc, q):
    """n = 1e4, eps = 1: E|error| of the bound-free path within 2x of the tight-bounds one.

    Exact given the released bounds (quantile_expected_error on the clamped records), averaged
    over 20 draws of the bounds of the mechanism itself.
    """
    g = np.random.default_rng(11)
    x = np.sort(g.normal(loc, max(abs(loc) / 10, 1e-5), size=10_000))
    tight = Q.quantile_expected_error(x, q, 1.0, bounds=(x[0], x[-1]))
    t = np.quantile(x, q, method="inverted_cdf")
    grid = U.geometric_grid(U.DEFAULT_SCALE, U.DEFAULT_STEPS)
    free = []
    for _ in range(20):
        b = U._magnitude_bounds(x, U.DEFAULT_BOUNDS_SHARE, "add_remove", grid, g)
        xc, bnd, lam = U._clamped(x, b, False, None)
        free.append(Q.quantile_expected_error(xc, q, 1 - U.DEFAULT_BOUNDS_SHARE, bounds=bnd, target=t, granularity=lam))
    assert np.mean(free) <= 2.0 * tight


def test_both_signs_and_grid():
    x = np.random.default_rng(0).normal(-500.0, 50.0, size=5000)
    b = Q.private_bounds(x, 1.0, rng=2)
    assert b.lower < np.quantile(x, 0.01) and -1.0 < b.upper <= 2.0**-29  # negative data: upper ~ scale
    for v in b:
        m, _e = math.frexp(abs(v))
        assert (m * 32).is_integer()  # s 2^e (1 + i/16): dyadic, 5 significant bits
    m = Q.private_max(np.abs(x), 1.0, rng=3)
    assert np.quantile(np.abs(x), 0.99) < m < 4 * np.abs(x).max()
    est = Q.private_quantiles(x, [0.1, 0.5, 0.9], 1.0, rng=4)
    np.testing.assert_allclose(est, np.quantile(x, [0.1, 0.5, 0.9]), atol=5.0)


def test_integer_outputs_and_ties():
    x = np.array([0] * 700 + [3] * 200 + [40] * 100, dtype=np.int64)
    y = Q.private_quantile(x, 0.5, 1.0, rng=0)
    assert isinstance(y, int) and y == 0
    out = Q.private_quantiles(x, [0.5, 0.8, 0.95], 2.0, rng=0)
    assert out.dtype == np.int64 and out.tolist() == [0, 3, 40]


def test_accountant_and_seed():
    acc = Accountant(10.0)
    x = np.arange(100.0)
    a = Q.private_quantile(x, 0.5, 1.0, rng=9, accountant=acc)
    Q.private_quantiles(x, [0.2, 0.8], 1.0, rng=9, accountant=acc)
    Q.private_bounds(x, 0.5, rng=9, accountant=acc)
    Q.private_max(x, 0.5, rng=9, accountant=acc)
    assert acc.spent.epsilon == pytest.approx(3.0)
    assert a == Q.private_quantile(x, 0.5, 1.0, rng=9)


def _bad_calls():
    g = [1.0, 2.0]
    return [
        (ValueError, "NaN|finite", lambda r: Q.private_quantile([1.0, np.nan], 0.5, 1.0, rng=r)),
        (ValueError, "finite", lambda r: Q.private_bounds([1.0, np.inf], 1.0, rng=r)),
        (ValueError, "epsilon", lambda r: Q.private_max(g, 0.0, rng=r)),
        (ValueError, "empty", lambda r: Q.private_quantiles([], [0.5], 1.0, rng=r)),
        (ValueError, r"\bq\b", lambda r: Q.private_quantile(g, 1.5, 1.0, rng=r)),
        (ValueError, "qs", lambda r: Q.private_quantiles(g, [2.0], 1.0, rng=r)),
        (ValueError, "scale", lambda r: Q.private_bounds(g, 1.0, scale=0.3, rng=r)),
        (ValueError, "steps", lambda r: Q.private_max(g, 1.0, steps=3, rng=r)),
        (ValueError, "bounds_share", lambda r: Q.unbounded_quantile(g, 0.5, 1.0, bounds_share=1.0, rng=r)),
        (ValueError, "size", lambda r: Q.private_quantile(g, 0.5, 1.0, size=0, rng=r)),  # size= draws new bounds
        (ValueError, "integers", lambda r: Q.private_quantile([1.5], 0.5, 1.0, integer=True, rng=r)),
        (ValueError, "granularity", lambda r: Q.private_quantile(g, 0.5, 1.0, granularity=0.3, rng=r)),
        (ValueError, "relation", lambda r: Q.private_quantile(g, 0.5, 1.0, relation="x", rng=r)),
        (ValueError, "method", lambda r: Q.private_quantiles(g, [0.5], 1.0, method="x", rng=r)),
    ]


@pytest.mark.parametrize("case", range(14))
def test_bad_inputs_named_before_randomness(case):
    exc, match, call = _bad_calls()[case]
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    with pytest.raises(exc, match=match):
        call(gen)
    assert gen.bit_generator.state == state
