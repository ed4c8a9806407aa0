"""Duff mean (SPEC.md §6.1): level sets vs brute force, sampling law, density audit."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.special import logsumexp

from _quantile_grid_laws import duff_mean_grid_law
from conftest import assert_frequencies_match
from dpselect.analysis import privacy_loss
from dpselect.apps import quantiles as M
from dpselect.apps.quantiles._duff import mean as MEAN
from dpselect.noise.grid import default_granularity


def _pieces(law):
    """(lo, hi, p) of a law over pieces."""
    return law.lo, law.hi, law.probabilities


# ---------------------------------------------------------------------------
# Duff mean
# ---------------------------------------------------------------------------


def brute_mean_distance(data, v, bounds, max_ops, with_pure_removals=True):
    """Exact min #ops (i removals of original records, j additions in [a, b]) to make mean = v.

    Enumerates every removal subset and j; exact rational arithmetic.  With
    ``with_pure_removals=False`` the j = 0 options (other than the unchanged
    dataset) are ignored: the null set the closed form disregards.
    """
    a, b = (Fraction(bounds[0]), Fraction(bounds[1]))
    data = [Fraction(d) for d in data]
    n = len(data)
    S = sum(data)
    v = Fraction(v)
    if S == v * n:
        return 0
    best = None
    for i in range(0, n + 1):
        sums = {sum(c) for c in itertools.combinations(data, i)}
        for j in range(0, max_ops + 1 - i):
            if n - i + j == 0 or (j == 0 and (i == 0 or not with_pure_removals)):
                continue
            ok = False
            for R in sums:
                need = v * (n - i + j) - (S - R)
                if (j == 0 and need == 0) or (j > 0 and j * a <= need <= j * b):
                    ok = True
                    break
            if ok and (best is None or i + j < best):
                best = i + j
    return best


def test_duff_mean_levels_vs_brute_force():
    rng = np.random.default_rng(12)
    bounds = (0.0, 4.0)
    targets = [Fraction(p, 211) for p in range(0, 4 * 211 + 1, 5)]
    n_diff = 0
    datasets = [[0.0], [4.0], [2.0, 2.0], [0.0, 4.0], [1.0, 1.0, 3.0], [0.0, 0.0, 0.0, 4.0]]
    datasets += [list(rng.integers(0, 5, size=int(rng.integers(1, 5))).astype(float)) for _ in range(12)]
    for data in datasets:
        n = len(data)
        K = 3
        u = M.duff_mean_utility([float(t) for t in targets], data, bounds=bounds, levels=K)
        u_full = M.duff_mean_utility([float(t) for t in targets], data, bounds=bounds, levels=n + 1)
        for t, ut, uf in zip(targets, u, u_full):
            d1 = brute_mean_distance(data, t, bounds, n + 1, with_pure_removals=False)
            assert d1 is not None
            assert -uf == d1, (data, t)  # all levels: exact up to the pure-removal null set
            assert -ut == min(d1, K + 1), (data, t)  # truncated at K = 3
            d = brute_mean_distance(data, t, bounds, n + 1)
            if d != d1:
                n_diff += 1
                assert d < d1  # only pure-removal means differ (finite set)
    assert n_diff < 10


def test_duff_mean_pure_removal_points_are_a_null_set():
    # {0, 10}: mean 0 is reachable by one removal; the closed form (J-sets, >= 1 addition)
    # gives 2 there, which is the true distance at every nearby point
    data, bounds = [0.0, 10.0], (0.0, 10.0)
    assert brute_mean_distance(data, 0, bounds, 3) == 1
    assert M.duff_mean_utility(0.0, data, bounds=bounds, levels=5) == -2.0
    assert M.duff_mean_utility(1e-9, data, bounds=bounds, levels=5) == -2.0
    assert brute_mean_distance(data, Fraction(1, 10**9), bounds, 3) == 2
    # pointwise the closed form can jump by 2 between neighbours at such points (null set)
    assert M.duff_mean_utility(0.0, [0.0], bounds=bounds, levels=5) == 0.0


def test_duff_mean_sampling_and_audit():
    bounds = (0.0, 10.0)
    x = [1.0, 2.0, 2.0, 9.0]
    lefts, rights, probs = _pieces(M.duff_mean_intervals(x, 1.0, bounds=bounds, levels=4))
    assert probs.sum() == pytest.approx(1.0)
    assert lefts[0] == 0.0 and rights[-1] == 10.0
    np.testing.assert_allclose(rights[:-1], lefts[1:])
    for method in ("race", "inverse"):
        draws = M.duff_mean(x, 1.0, bounds=bounds, rng=2, levels=4, size=100_000, method=method)
        idx = np.clip(np.searchsorted(np.concatenate((lefts, rights[-1:])), draws, side="right") - 1, 0, lefts.size - 1)
        assert_frequencies_match(idx, probs)
    assert isinstance(M.duff_mean(x, 1.0, bounds=bounds, rng=1), float)

    # density-ratio audit over add/remove neighbours (levels public, fixed)
    rng = np.random.default_rng(9)
    eps = 1.0
    worst = 0.0
    for _ in range(40):
        x = rng.integers(0, 11, size=int(rng.integers(2, 6))).astype(float)
        nbrs = [np.delete(x, i) for i in range(x.size)] + [np.append(x, v) for v in range(11)]
        for y in nbrs:
            for K in (2, 50):
                lx, rx, px = _pieces(M.duff_mean_intervals(x, eps, bounds=bounds, levels=K))
                ly, ry, py = _pieces(M.duff_mean_intervals(y, eps, bounds=bounds, levels=K))
                pts = np.unique(np.concatenate((lx, rx, ly, ry)))
                mids = 0.5 * (pts[:-1] + pts[1:])
                mids = mids[pts[1:] - pts[:-1] > 1e-9]

                def dens(lo, hi, p, t):
                    k = np.clip(np.searchsorted(lo, t, side="right") - 1, 0, lo.size - 1)
                    lam = hi[k] - lo[k]
                    return p[k] / lam

                loss = np.max(np.abs(np.log(dens(lx, rx, px, mids)) - np.log(dens(ly, ry, py, mids))))
                assert loss <= eps * (1 + 1e-9)
                worst = max(worst, loss)
    assert worst > 0.6 * eps


def test_duff_mean_default_levels_depend_on_epsilon_only():
    assert MEAN._check_levels(None, 0.1) == 800
    assert MEAN._check_levels(None, 100.0) == 8
    x = np.random.default_rng(0).normal(size=1000).clip(-10, 10)
    lefts, rights, probs = _pieces(M.duff_mean_intervals(x, 0.5, bounds=(-10.0, 10.0)))
    mean = float(np.mean(x))
    err = float(np.sum(probs * np.abs(0.5 * (lefts + rights) - mean)))
    assert err < 0.2


# ---------------------------------------------------------------------------
# On the output grid: exact levels (issue 30.3) against an exact-rational brute force
# ---------------------------------------------------------------------------


def exact_levels(data, bounds, K):
    """mean, L_k, U_k (k = 1..min(K, n + 1)) by enumeration, in exact rationals.

    L_k (U_k) = min (max) over i removals (every subset of size i) and j >= 1 additions
    at a (b), i + j <= k, of the resulting mean.
    """
    a, b = Fraction(bounds[0]), Fraction(bounds[1])
    xs = [Fraction(v) for v in data]
    n, S = len(xs), sum(xs)
    sums = [[sum(c) for c in itertools.combinations(xs, i)] for i in range(n + 1)]
    big, small = [max(s) for s in sums], [min(s) for s in sums]
    L, U = [], []
    for k in range(1, min(K, n + 1) + 1):
        ops = [(i, j) for i in range(min(k - 1, n) + 1) for j in range(1, k - i + 1)]
        L.append(min((S - big[i] + j * a) / (n - i + j) for i, j in ops))
        U.append(max((S - small[i] + j * b) / (n - i + j) for i, j in ops))
    return L, U


def float_cumsum_levels(data, bounds, K):
    """Negative control: the same closed form from float cumulative sums (the code before issue 30)."""
    a, b = bounds
    y = np.sort(np.asarray(data, dtype=np.float64))
    n = y.size

    def extreme(shift):  # shift sorted descending; min over i of (T_n - T_i) / (n + k - 2i)
        T = np.concatenate(([0.0], np.cumsum(shift)))
        ks = range(1, min(K, n + 1) + 1)
        return [min((T[n] - T[i]) / (n + k - 2 * i) for i in range(min(k - 1, n) + 1)) for k in ks]

    return [a + g for g in extreme((y - a)[::-1])], [b - g for g in extreme(b - y)]


def grid_log_law(levels, bounds, lam, K, eps):
    """log P[g lambda], g = ceil(a/lambda)..floor(b/lambda): P ∝ exp(-eps d(g lambda+)/2),
    d(v+) = min{k : L_k <= v < U_k} (the right limit of the level-set distance), K + 1 if none."""
    L, U = levels
    lam = Fraction(lam)
    g0, g1 = math.ceil(Fraction(bounds[0]) / lam), math.floor(Fraction(bounds[1]) / lam)
    d = np.full(g1 - g0 + 1, K + 1.0)
    for k in range(len(L), 0, -1):
        lo = max(math.ceil(Fraction(L[k - 1]) / lam) - g0, 0)
        hi = max(math.ceil(Fraction(U[k - 1]) / lam) - g0, 0)
        d[lo:hi] = k
    logw = -0.5 * eps * d
    return logw - logsumexp(logw)


def library_log_law(x, eps, bounds, lam):
    starts, counts, probs = duff_mean_grid_law(x, eps, bounds=bounds, granularity=lam)
    assert starts[0] == math.ceil(bounds[0] / (lam or default_granularity(bounds[1] - bounds[0])))
    return np.log(np.repeat(probs, counts))


RED_TEAM_PAIRS = [  # (x, neighbour, epsilon, bounds, granularity): the float cumulative sums broke these
    ([2.0**-49] * 4, [2.0**-49] * 4 + [16.0], 4.0, (0.0, 16.0), 1.0),
    *[([2.0**-49] * n, [2.0**-49] * n + [16.0], 1.0, (0.0, 16.0), None) for n in (4, 8, 12)],
    ([0.06, 0.12, 0.07], [0.06, 0.12, 0.07, 1.0], 1.0, (0.0, 1.0), None),
]


@pytest.mark.parametrize("x, y, eps, bounds, lam", RED_TEAM_PAIRS)
def test_duff_mean_grid_law_exact_on_red_team_pairs(x, y, eps, bounds, lam):
    K = MEAN._check_levels(None, eps)
    grid = lam or default_granularity(bounds[1] - bounds[0])
    exact = {}
    for d in (x, y):
        exact[len(d)] = grid_log_law(exact_levels(d, bounds, K), bounds, grid, K, eps)
        np.testing.assert_allclose(library_log_law(d, eps, bounds, lam), exact[len(d)], rtol=0, atol=1e-9)
    loss = privacy_loss(exact[len(x)], exact[len(y)])
    assert 0.25 * eps < loss <= eps * (1 + 1e-12)
    # negative control: the same check flags the levels from float cumulative sums
    fx, fy = (grid_log_law(float_cumsum_levels(d, bounds, K), bounds, grid, K, eps) for d in (x, y))
    assert privacy_loss(fx, fy) > 1.02 * eps


@pytest.mark.parametrize("bounds", [(0.0, 1.0), (-3.0, 5.0)])
def test_duff_mean_grid_law_exact_on_decimal_data(bounds):
    rng = np.random.default_rng(30)
    eps, lam, K = 1.0, 2.0**-7, 4
    a, w = bounds[0], bounds[1] - bounds[0]
    worst = 0.0
    for _ in range(25):
        x = list(a + w * (rng.integers(0, 101, size=int(rng.integers(1, 6))) / 100))
        nbrs = [x[:i] + x[i + 1 :] for i in range(len(x)) if len(x) > 1] + [[*x, a + w * rng.integers(0, 101) / 100]]
        lx = grid_log_law(exact_levels(x, bounds, K), bounds, lam, K, eps)
        got = duff_mean_grid_law(x, eps, bounds=bounds, levels=K, granularity=lam)
        np.testing.assert_allclose(np.log(np.repeat(got[2], got[1])), lx, rtol=0, atol=1e-9)
        for y in nbrs:
            ly = grid_log_law(exact_levels(y, bounds, K), bounds, lam, K, eps)
            worst = max(worst, privacy_loss(lx, ly))
    assert 0.3 * eps < worst <= eps * (1 + 1e-12)


def test_duff_mean_levels_are_correctly_rounded():
    x = [0.06, 0.12, 0.07, 2.0**-60, 1.0 - 2.0**-53]
    levels = M.duff_mean_levels(x, bounds=(0.0, 1.0), levels=10)
    L, U = levels.lower, levels.upper
    eL, eU = exact_levels(x, (0.0, 1.0), 10)
    assert L[0] == U[0] == float(sum(Fraction(v) for v in x) / 5)
    assert list(L[1:]) == [float(v) for v in eL] and list(U[1:]) == [float(v) for v in eU]
