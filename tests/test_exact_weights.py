"""The exact exponential-weights sampler (noise._exact_em) behind the Duff median and mean on a grid.

Certified bounds vs mpmath; the lazy Bernoulli's refinement; frequencies vs the
exact law (int64 and Python-integer paths, capped groups); equality in law with
the plain rejection sampler; the bounded number of rounds; seeds; rng="secure".
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from _quantile_grid_laws import duff_mean_grid_law, median_grid_law
from conftest import assert_frequencies_match
from dpselect.apps.quantiles import duff_mean, duff_median
from dpselect.apps.quantiles._duff import median_masses as DML
from dpselect.apps.quantiles._exponential.piecewise_em import check_output_grid
from dpselect.apps.quantiles._order_stats import sorted_padded
from dpselect.mechanisms._exact_selection import exact_rates
from dpselect.noise import _exact_em as E
from dpselect.noise import _exp_bounds as B
from dpselect.noise.exact import (
    IntegerSource,
    exponential_weights,
    exponential_weights_batch,
    exponential_weights_uniform_batch,
    rational_rates,
)
from dpselect.problem import SelectionProblem


@pytest.fixture(autouse=True)
def _precision():
    """This module's mpmath precision, for its tests only (mpmath's precision is global)."""
    with mpmath.workprec(400):
        yield


N = 40_000


def _mp(q):
    return mpmath.mpf(q.numerator) / q.denominator


def _law(nums, den, counts):
    """P[group] ∝ counts_g exp(-nums_g / den), in mpmath (independent of the sampler's arithmetic)."""
    w = [c * mpmath.exp(-mpmath.mpf(int(x)) / den) for x, c in zip(nums, counts)]
    z = sum(w)
    return np.array([float(v / z) for v in w])


def test_fixed_point_bounds_bracket_the_truth():
    for w in (8, 40, 94, 200):
        lo, hi = E._ln2_fixed(w)
        assert lo <= mpmath.log(2) * 2**w <= hi and hi - lo <= w + 1
        for f in (0, 1, 5, 2**w // 3, 2**w - 1, 2**w):
            lo, hi = B._exp_neg_unit(f, w)
            assert lo <= mpmath.exp(-mpmath.mpf(f) / 2**w) * 2**w <= hi
    rnd = random.Random(1)
    l2hi = Fraction(E._ln2_fixed(E._J_BITS)[1], 2**E._J_BITS)
    for _ in range(2000):
        den = rnd.choice([1, 2, 3, 7, 10**6 + 3, 2**55])
        num = rnd.randrange(0, 80 * den)
        j = min(math.floor(Fraction(num, den) / l2hi), rnd.choice([0, 3, 20, 10**4]))
        bits = rnd.choice([1, 10, 62, 126])
        lo, hi = E.pow2_exp_bounds(num, den, j, bits)
        p = mpmath.mpf(2) ** (j + bits) * mpmath.exp(-mpmath.mpf(num) / den)
        assert lo <= p <= hi <= 2**bits
        assert hi - lo <= 2  # the refinement of the lazy uniform terminates geometrically


@pytest.mark.parametrize("num,den,j", [(1, 3, 0), (7, 5, 2), (3, 1, 4), (50, 1, 3), (0, 1, 0)])
def test_lazy_bernoulli_refines_exactly(num, den, j):
    # start from 1 or 2 bits so that most draws go through the refinement
    src = IntegerSource(7)
    bits = 2
    p = float(mpmath.mpf(2) ** j * mpmath.exp(-mpmath.mpf(num) / den))
    refined = 0
    hits = 0
    for _ in range(20_000):
        v = src.below(1 << bits)
        lo, hi = E.pow2_exp_bounds(num, den, j, bits)
        refined += lo <= v < hi
        hits += E._bernoulli_pow2_exp(src, num, den, j, v, bits)
    assert abs(hits / 20_000 - p) <= 5 * math.sqrt(max(p * (1 - p), 1 / 20_000) / 20_000)
    if 0 < p < 1:
        assert refined > 0


def test_rational_rates_are_exact():
    for vals, scale in (([0.0, -3.0, -1.0, 2.0], Fraction(1, 2)), ([0.1, -0.25, 1e-300], Fraction(0.3))):
        nums, den = rational_rates(vals, scale)
        top = max(Fraction(v) for v in vals)
        assert [Fraction(int(x), den) for x in nums] == [(top - Fraction(v)) * scale for v in vals]
    prob = SelectionProblem([3.0, 0.5, -2.0], global_sensitivity=2.0)
    nums, den = exact_rates(prob, 0.7)
    assert [Fraction(int(x), den) for x in nums] == [
        (Fraction(3.0) - Fraction(s)) * Fraction(0.7) / 4 for s in (3.0, 0.5, -2.0)
    ]


@pytest.mark.parametrize("rng", [8, "secure"])
def test_groups_and_offsets_match_the_law(rng):
    # counts over four orders of magnitude; a rate of 40 puts its group beyond the cap J
    nums, den = [0, 6, 1, 80, 3], 2
    counts = [1, 1000, 3, 5000, 2**12 + 1]
    g, o = exponential_weights_batch(IntegerSource(rng), nums, den, counts, N)
    assert_frequencies_match(g, _law(nums, den, counts))
    for k, c in enumerate(counts):
        sel = o[g == k]
        assert ((0 <= sel) & (sel < c)).all()
        if c <= 3:
            assert_frequencies_match(sel, np.full(c, 1 / c))
        elif sel.size > 1000:  # uniform offsets: mean (c - 1)/2, sd c/sqrt(12)
            assert abs(sel.mean() - (c - 1) / 2) <= 5 * c / math.sqrt(12 * sel.size)


def test_python_integer_path_for_huge_totals():
    counts = [2**40, 2**41 + 3, 5]
    nums, den = [1, 0, 0], 1
    g, o = exponential_weights_batch(IntegerSource(3), nums, den, counts, 4000)
    assert_frequencies_match(g, _law(nums, den, counts))
    assert (o < np.array(counts, dtype=np.int64)[g]).all()
    assert abs(np.mean(o[g == 1] / counts[1]) - 0.5) < 0.05


def test_public_wrapper_shifts_and_validates():
    rates = [Fraction(3, 2), 0.25, 2, Fraction(1, 3), -1]
    counts = [3, 1, 5, 2, 7]
    g, _ = exponential_weights(rates, counts=counts, size=N, rng=9)
    w = np.array([c * float(mpmath.exp(-_mp(Fraction(r)))) for r, c in zip(rates, counts)])
    assert_frequencies_match(g, w / w.sum())
    assert isinstance(exponential_weights([0, 1], rng=0)[0], int)
    with pytest.raises(ValueError, match="counts"):
        exponential_weights([0, 1], counts=[1, 2**62])
    with pytest.raises(ValueError, match="rates"):
        exponential_weights([])


def test_same_law_as_the_plain_rejection_sampler():
    # the Duff median of 6 records on a grid of 65 points: old (uniform proposal) and new sampler
    eps, lam = 1.5, 2.0**-6
    ext = sorted_padded([0.05, 0.3, 0.31, 0.5, 0.52, 0.9], 0.0, 1.0)
    _starts, counts, _ = median_grid_law(ext, eps, lam)
    keep = counts > 0
    nums, den = rational_rates(-DML._median_costs(6, 0, 6)[keep], Fraction(eps) / 2)
    law = _law(nums, den, counts[keep])
    g_new, o_new = exponential_weights_batch(IntegerSource(1), nums, den, counts[keep], N)
    g_old, o_old = exponential_weights_uniform_batch(IntegerSource(2), nums, den, counts[keep], N)
    assert_frequencies_match(g_new, law)
    assert_frequencies_match(g_old, law)
    pts = np.cumsum(counts[keep]) - counts[keep]
    f_new = np.bincount(pts[g_new] + o_new, minlength=65) / N
    f_old = np.bincount(pts[g_old] + o_old, minlength=65) / N
    p = np.repeat(law / counts[keep], counts[keep])
    assert np.all(np.abs(f_new - f_old) <= 5 * np.sqrt(2 * np.maximum(p * (1 - p), 1 / N) / N))


class _CountingSource(IntegerSource):
    """Counts the proposals (uniform integers below the proposal total) of the vectorised path."""

    def __init__(self, rng, total):
        super().__init__(rng)
        self.total, self.proposals = total, 0

    def below_array(self, high):
        if high.size and int(high[0]) == self.total:
            self.proposals += high.size
        return super().below_array(high)


def test_rounds_are_bounded_whatever_the_grid():
    # the Duff median of n = 10^4 on the default grid of [-5, 5] (10 * 2^17 + 1 points): <= 2.5 rounds expected
    n, eps, a, b = 10_000, 1.0, -5.0, 5.0
    ext = sorted_padded(np.random.default_rng(0).standard_normal(n), a, b)
    lam = check_output_grid(None, a, b)
    assert lam == 2.0**-17
    _starts, counts, probs = median_grid_law(ext, eps, lam)
    keep = counts > 0
    nums, den = rational_rates(-DML._median_costs(n, 0, n)[keep], Fraction(eps) / 2)
    cnt = counts[keep]
    # the exact expected number of rounds: proposal mass / accepted mass
    top = int(cnt.sum()).bit_length() + 2
    ln2 = mpmath.log(2)
    gam = [mpmath.mpf(int(x)) / den for x in nums]
    jj = [min(int(mpmath.floor(gm / ln2)), top) for gm in gam]
    prop = sum(int(c) * mpmath.mpf(2) ** -j for c, j in zip(cnt, jj))
    expected = float(prop / sum(int(c) * mpmath.exp(-gm) for c, gm in zip(cnt, gam)))
    assert 1.0 <= expected <= 2.5
    plain = float(sum(int(c) for c in cnt) / sum(int(c) * mpmath.exp(-gm) for c, gm in zip(cnt, gam)))
    assert plain > 1000 * expected  # what the uniform proposal needed
    weights = [int(c) << (top - j) for c, j in zip(cnt, jj)]
    src = _CountingSource(0, sum(weights))
    draws = 4000
    g, _ = exponential_weights_batch(src, nums, den, cnt, draws)
    assert_frequencies_match(g, probs[keep] * cnt)
    # rounds ~ geometric with mean `expected`: sd of the mean sqrt(expected (expected - 1) / draws)
    assert abs(src.proposals / draws - expected) <= 5 * math.sqrt(expected * (expected - 1) / draws) + 1e-9


def test_duff_grid_secure_frequencies_and_seeds():
    eps, bounds, lam = 1.0, (0.0, 1.0), 0.125
    x = [0.1, 0.35, 0.6, 0.61]
    _starts, counts, probs = median_grid_law(sorted_padded(x, *bounds), eps, lam)
    law = np.repeat(probs, counts)
    y = duff_median(x, eps, bounds=bounds, granularity=lam, size=20_000, rng="secure")
    assert_frequencies_match(np.round(y / lam).astype(np.int64), law)
    ym = duff_mean(x, eps, bounds=bounds, levels=3, granularity=lam, size=20_000, rng="secure")
    _, mc, mp = duff_mean_grid_law(x, eps, bounds=bounds, levels=3, granularity=lam)
    assert_frequencies_match(np.round(ym / lam).astype(np.int64), np.repeat(mp, mc))
    for f in (duff_median, duff_mean):
        one = f(np.linspace(-1, 1, 501), 0.5, bounds=(-4.0, 4.0), size=50, rng=123)
        assert np.array_equal(one, f(np.linspace(-1, 1, 501), 0.5, bounds=(-4.0, 4.0), size=50, rng=123))
        assert not np.array_equal(one, f(np.linspace(-1, 1, 501), 0.5, bounds=(-4.0, 4.0), size=50, rng=124))


def test_rates_beyond_int64_use_python_integers():
    # denominators of 2^80: nums and thresholds are Python integers (object arrays), same law
    rates = [Fraction(3, 2**80), Fraction(5, 2), 0.1, Fraction(2**81 + 1, 2**80)]
    counts = [2, 7, 1, 30]
    g, o = exponential_weights(rates, counts=counts, size=20_000, rng=4)
    w = np.array([c * float(mpmath.exp(-_mp(Fraction(r)))) for r, c in zip(rates, counts)])
    assert_frequencies_match(g, w / w.sum())
    assert (o < np.array(counts)[g]).all()
