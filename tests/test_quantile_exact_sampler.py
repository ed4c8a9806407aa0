"""The exact sampler of the single-quantile grid releases (sampler="exact", the default).

private_quantile / private_median / private_percentile(bounds=) on the power-of-two grid draw
the piece and the grid point with exponential_weights_batch on exact rational scores.  Checked
here: the rational scores equal the rank distance computed independently with Fractions; 40k-draw
frequencies match quantile_law on every grid point (seeded and rng="secure"), and a sampler run
with a wrong rate (epsilon doubled, or the score denominator dropped) is caught by the same test;
seeds reproduce; integer outputs and granularity=0 are unchanged; bad sampler names are refused
before any randomness.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from conftest import assert_frequencies_match, on_grid
from dpselect.accounting import Accountant
from dpselect.apps import quantiles as Q
from dpselect.apps.quantiles._exponential import quantile_pieces as QL
from dpselect.apps.quantiles._exponential.piecewise_em import sample_grid_exact
from test_fp_quantiles import BOUNDS, LAM, N, lib_law

X = np.array([0.3, 1.0, 1.0, 1.1, 1.8])  # a tie on the grid (an atom), values off it


def fraction_psi(L: int, C: int, n: int, q: float, relation: str, kind: str) -> Fraction:
    """The score of the law module (mathematics §12.1), evaluated in Fractions (independent of the int scaling)."""
    qn = Fraction(q) * n
    w = max(Fraction(q), 1 - Fraction(q)) if relation == "add_remove" else Fraction(1)
    ind = max(L - qn, qn - C) / w
    if relation == "add_remove" and q == 0.5:
        E, D = C - L, (n - C) - L
        e = max(E, 1)
        return max(Fraction(max(0, 1 - E) + max(0, 1 - e - D, D - e)), ind)
    k = QL.target_rank(q, n)
    up = L + 1 if kind == "integer" else min(C, L + 1)
    return max(Fraction(max(0, up - k, k - C)), ind)


@pytest.mark.parametrize("relation", ["add_remove", "replace"])
@pytest.mark.parametrize("q", [0.0, 1e-300, 0.1, 0.3, 0.5, 0.9, 1 / 3, 1 - 2**-53, 1.0])
@pytest.mark.parametrize("n", [1, 2, 7, 40, 1000])  # 1000: Python-int path for non-dyadic q
def test_rational_scores_are_the_rank_distance(n, q, relation):
    j = np.arange(n + 1)
    # gaps (L = C = j) and atoms of every size (L = j, C = j + e)
    L = np.concatenate((j, j[:-1], j[:-1]))
    C = np.concatenate((j, j[:-1] + 1, np.minimum(j[:-1] + 3, n)))
    for kind in ("grid", "integer"):
        num, Z = QL.distance_exact(L, C, n, q, relation, kind)
        exact = [fraction_psi(int(a), int(c), n, q, relation, kind) for a, c in zip(L, C)]
        assert [Fraction(int(a), Z) for a in num] == exact
        flt = QL.rank_distance(L, C, n, q, relation, kind)  # the float law's scores
        np.testing.assert_allclose([float(v) for v in exact], flt, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize(
    "q,relation", [(0.3, "add_remove"), (0.5, "add_remove"), (0.3, "replace"), (0.9, "add_remove")]
)
def test_exact_sampler_frequencies_match_the_law(q, relation):
    law = lib_law(X, q, 1.5, relation)
    y = Q.private_quantile(X, q, 1.5, bounds=BOUNDS, granularity=LAM, relation=relation, rng=3, size=N)
    assert y.dtype == np.float64 and y.shape == (N,) and on_grid(y, LAM)
    assert_frequencies_match(np.round(y / LAM).astype(np.int64), law)


def test_median_and_percentile_use_the_exact_sampler():
    med = Q.private_median(X, 1.5, bounds=BOUNDS, granularity=LAM, rng=4, size=N)
    assert_frequencies_match(np.round(med / LAM).astype(np.int64), lib_law(X, 0.5, 1.5))
    one = Q.private_percentile(X, 30, 1.5, bounds=BOUNDS, granularity=LAM, rng=5)
    same = Q.private_quantile(X, 0.3, 1.5, bounds=BOUNDS, granularity=LAM, rng=5)
    assert one == same and isinstance(one, float) and on_grid(one, LAM)
    flt = Q.private_percentile(X, 30, 1.5, bounds=BOUNDS, granularity=LAM, rng=5, sampler="float")
    assert flt == Q.private_quantile(X, 0.3, 1.5, bounds=BOUNDS, granularity=LAM, rng=5, sampler="float")


def test_secure_rng_frequencies():
    y = Q.private_quantile(X, 0.3, 1.5, bounds=BOUNDS, granularity=LAM, rng="secure", size=N)
    assert on_grid(y, LAM) and y.min() >= BOUNDS[0] and y.max() <= BOUNDS[1]
    assert_frequencies_match(np.round(y / LAM).astype(np.int64), lib_law(X, 0.3, 1.5))
    one = Q.private_median(X, 1.5, bounds=BOUNDS, rng="secure")
    assert isinstance(one, float) and on_grid(one, 2.0**-40)


def _direct(q, eps, relation, scale_factor, drop_den=False, rng=6):
    """sample_grid_exact on the pieces of X, with the rate multiplied by scale_factor (or W dropped)."""
    s = QL.check_sample(X, BOUNDS)
    pc = QL.pieces(s, LAM, atoms=True)
    num, W = QL.distance_exact(pc.L, pc.C, s.n, q, relation, "grid")
    scale = Fraction(eps) * scale_factor / (2 * (1 if drop_den else W))
    first = np.rint(pc.lo / LAM).astype(np.int64)
    y = sample_grid_exact(first, pc.count(), -num, scale, LAM, N, np.random.default_rng(rng))
    return np.round(y / LAM).astype(np.int64)


def test_negative_controls_wrong_rates_are_caught():
    law = lib_law(X, 0.3, 1.5)
    assert_frequencies_match(_direct(0.3, 1.5, "add_remove", 1), law)  # the harness itself passes
    with pytest.raises(AssertionError):  # epsilon doubled
        assert_frequencies_match(_direct(0.3, 1.5, "add_remove", 2), law)
    with pytest.raises(AssertionError):  # the denominator W of the rational score forgotten
        assert_frequencies_match(_direct(0.3, 1.5, "add_remove", 1, drop_den=True), law)


def test_seed_reproduces_and_samplers_differ_only_in_the_draws():
    kw = dict(bounds=(-5, 5), size=500)
    x = np.random.default_rng(0).normal(size=300)
    a = Q.private_quantile(x, 0.3, 1.0, rng=11, **kw)
    assert np.array_equal(a, Q.private_quantile(x, 0.3, 1.0, rng=11, **kw))
    assert np.array_equal(a, Q.private_quantile(x, 0.3, 1.0, rng=np.random.default_rng(11), **kw))
    assert not np.array_equal(a, Q.private_quantile(x, 0.3, 1.0, rng=12, **kw))
    assert on_grid(a, 2.0**-38)
    one = Q.private_quantile(x, 0.3, 1.0, bounds=(-5, 5), rng=11)
    assert isinstance(one, float) and one == Q.private_quantile(x, 0.3, 1.0, bounds=(-5, 5), rng=11)


def test_integer_outputs_and_continuous_law_do_not_depend_on_sampler():
    xi = np.array([3, 5, 5, 5, 9])
    for kw in (dict(x=xi, bounds=(0, 10)), dict(x=X, bounds=BOUNDS, granularity=0)):
        a = Q.private_quantile(q=0.3, epsilon=1.0, rng=8, size=200, sampler="exact", **kw)
        b = Q.private_quantile(q=0.3, epsilon=1.0, rng=8, size=200, sampler="float", **kw)
        assert np.array_equal(a, b)


def test_bad_sampler_is_refused_before_randomness():
    acc = Accountant(10.0)
    for f in (
        lambda: Q.private_quantile(X, 0.3, 1.0, bounds=BOUNDS, sampler="exakt", accountant=acc),
        lambda: Q.private_median(X, 1.0, bounds=BOUNDS, sampler=None, accountant=acc),
        lambda: Q.private_percentile(X, 30, 1.0, bounds=BOUNDS, sampler="fast", accountant=acc),
    ):
        with pytest.raises(ValueError, match="sampler"):
            f()
    assert acc.charges == ()
    with pytest.raises(ValueError, match="sampler"):
        Q.private_percentile(X, 30, 1.0, np.linspace(0, 2, 9), sampler="exact")
