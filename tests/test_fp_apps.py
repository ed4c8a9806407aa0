"""Floating-point safety of the app-level releases: PTR, stable histogram, Duff median/mean,
median baselines, TDT release, trees with random_state="secure".

For each release: outputs are exact multiples of the granularity; on a coarse
grid the frequencies of neighbouring datasets differ by at most the claimed
e^eps at every grid point (40k draws each, 5 standard errors), and/or the exact
discrete law is audited on neighbours; the red team's reconstruction attack
(rebuild NumPy's float sampler, count outputs impossible under the neighbour)
flags the old float path and finds nothing on the grid.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from _quantile_grid_laws import duff_mean_grid_law, median_grid_law
from conftest import assert_frequencies_match, on_grid, possible_laplace, possible_uniform
from conftest import assert_neighbour_frequencies as _assert_neighbour_frequencies
from dpselect import accounting
from dpselect._exact_numbers import dyadic_ceil
from dpselect.apps import counts as P
from dpselect.apps.genomics import TransmissionCounts
from dpselect.apps.quantiles import duff_mean, duff_median, laplace_ln, smooth_sens_approx, smooth_sens_pure
from dpselect.apps.quantiles._order_stats import sorted_padded
from dpselect.noise.exact import discrete_laplace_logpmf

N = 40_000


def _tail(k, eps, lam=1.0):
    """P[K >= k], K the discrete Laplace of GridLaplace(1, eps, granularity=lam) (pmf formula)."""
    t = float(dyadic_ceil(Fraction(math.ceil(1 / lam)) / Fraction(eps)))
    q = math.exp(-1 / t)
    k = math.ceil(k)
    return q**k / (1 + q) if k >= 1 else 1 - q ** (1 - k) / (1 + q)


# ---------------------------------------------------------------------------- PTR


def _ptr_T(eps, delta):
    T = 0
    while _tail(T + 1, eps) > delta / 2:
        T += 1
    return T


def _ptr_law(value, gamma, bound, eps, delta, lam, window, T=None):
    """Exact law of propose_test_release: {None: P[⊥]} and grid index -> probability."""
    T = _ptr_T(eps, delta) if T is None else T
    p_pass = _tail(math.floor(T - gamma) + 1, eps)
    scale = dyadic_ceil(Fraction(math.ceil(bound / lam)) / Fraction(eps))
    c = math.floor(value / lam + 0.5)
    k = np.arange(-window, window + 1)
    law = {None: 1 - p_pass}
    law.update(zip((c + k).tolist(), (p_pass * np.exp(discrete_laplace_logpmf(k, scale))).tolist()))
    return law


def _hockey(p, q, eps):
    return sum(max(0.0, p[k] - math.exp(eps) * q.get(k, 0.0)) for k in p)


def test_ptr_value_release_on_grid_and_exact_audit():
    eps, delta, lam = 1.0, 0.1, 0.25
    out = [
        P.propose_test_release(0.3, 50.0, bound=1.0, epsilon=eps, delta=delta, granularity=lam, rng=s)
        for s in range(300)
    ]
    assert on_grid(out, lam)
    claim = accounting.ptr_privacy(eps, delta)
    worst = 0.0
    pairs = [((0.0, 3), (1.0, 2)), ((0.0, 1), (0.9, 0)), ((0.1, 0), (0.6, 0)), ((0.0, 8), (1.0, 7))]
    pairs.append(((0.0, 0), (40.0, 0)))  # both unstable, values far apart: the delta case
    for (vx, gx), (vy, gy) in pairs:
        lx = _ptr_law(vx, gx, 1.0, eps, delta, lam, 600)
        ly = _ptr_law(vy, gy, 1.0, eps, delta, lam, 600)
        d = max(_hockey(lx, ly, claim.epsilon), _hockey(ly, lx, claim.epsilon))
        assert d <= claim.delta * (1 + 1e-9)
        worst = max(worst, d)
    # attained at gamma = 0 (unstable: values 40 apart) up to the discrete tail: P[K > T] <= delta/2
    T = _ptr_T(eps, delta)
    assert worst == pytest.approx(_tail(T + 1, eps), rel=1e-6) and worst > 0.5 * claim.delta
    # negative control: one integer lower threshold passes too often at gamma = 0
    lx, ly = (_ptr_law(v, 0, 1.0, eps, delta, lam, 600, T=T - 1) for v in (0.0, 40.0))
    assert _hockey(lx, ly, claim.epsilon) > claim.delta


@pytest.mark.slow
def test_ptr_neighbour_frequencies():
    eps, delta, lam = 0.5, 0.3, 0.5
    gx = np.random.default_rng(1)
    gy = np.random.default_rng(2)
    rel = lambda v, g, gen: P.propose_test_release(v, g, bound=1.0, epsilon=eps, delta=delta, granularity=lam, rng=gen)
    enc = lambda o: math.nan if o is np.ma.masked else o
    yx = np.array([enc(rel(0.0, 3.0, gx)) for _ in range(N)])
    yy = np.array([enc(rel(1.0, 2.0, gy)) for _ in range(N)])
    assert on_grid(yx[~np.isnan(yx)], lam)
    yx[np.isnan(yx)] = -1e9  # ⊥ as one more output
    yy[np.isnan(yy)] = -1e9
    _assert_neighbour_frequencies(yx, yy, 2 * eps, N)  # ptr_privacy: (2 eps, delta/2); delta/2 unused at gamma >= 1
    with pytest.raises(AssertionError):  # negative control: an over-claimed epsilon is caught
        _assert_neighbour_frequencies(yx, yy, 0.5 * eps, N)


def test_ptr_reconstruction_attack():
    # the old float path released 0 + gen.laplace(0, bound/eps): most outputs are impossible from value 1
    gen = np.random.default_rng(0)
    old = gen.laplace(0.0, 1.0, size=300)
    assert all(possible_laplace(v, 0.0, 1.0) for v in old[:30])  # the reconstruction is faithful
    impossible_old = sum(not possible_laplace(v, 1.0, 1.0) for v in old)
    assert impossible_old > 0.5 * old.size
    # the grid path: every output has positive probability under the neighbour value 1.0
    lam = 2.0**-20
    new = np.array([P.propose_test_release(0.0, 100.0, bound=1.0, epsilon=1.0, delta=1e-6, rng=s) for s in range(300)])
    assert on_grid(new, lam)
    scale = dyadic_ceil(Fraction(math.ceil(1.0 / lam)) / Fraction(1.0))
    logp = discrete_laplace_logpmf(np.round(new / lam).astype(np.int64) - round(1.0 / lam), scale)
    assert np.isfinite(logp).all()


# ---------------------------------------------------------------------------- stable histogram


def test_stable_histogram_on_grid_and_neighbour_frequencies():
    eps, delta, lam = 1.0, 0.2, 0.5
    yx = P.stable_histogram(np.full(N, 2), eps, delta=delta, granularity=lam, rng=1)
    yy = P.stable_histogram(np.full(N, 1), eps, delta=delta, granularity=lam, rng=2)
    assert on_grid(yx, lam) and on_grid(yy, lam)
    _assert_neighbour_frequencies(yx, yy, eps, N)
    # frequencies of survival match the exact tail
    p = P.stable_histogram_probabilities([2, 1], eps, delta=delta, granularity=lam)
    for y, pk in ((yx, p[0]), (yy, p[1])):
        assert abs(np.mean(y != 0) - pk) < 5 * math.sqrt(pk * (1 - pk) / N)
    with pytest.raises(AssertionError):
        _assert_neighbour_frequencies(yx, yy, 0.5 * eps, N)
    with pytest.raises(ValueError, match="granularity"):
        P.stable_histogram([1, 2], eps, delta=delta, granularity=2.0)
    with pytest.raises(ValueError, match="granularity"):
        P.stable_histogram([1, 2], eps, delta=delta, granularity=0.3)


# ---------------------------------------------------------------------------- Duff median / mean


def _median_point_law(x, eps, bounds, lam):
    a, b = bounds
    starts, counts, probs = median_grid_law(sorted_padded(x, a, b), eps, lam)
    k0 = math.ceil(a / lam)
    law = np.zeros(math.floor(b / lam) - k0 + 1)
    for s, c, p in zip(starts, counts, probs):
        law[s - k0 : s - k0 + c] = p
    return law


def test_duff_median_on_grid_frequencies_and_exact_audit():
    eps, bounds, lam = 1.0, (0.0, 1.0), 0.125
    x = [0.1, 0.35, 0.6, 0.61]
    law = _median_point_law(x, eps, bounds, lam)
    assert law.sum() == pytest.approx(1.0) and (law > 0).all()  # every grid point possible
    y = duff_median(x, eps, bounds=bounds, granularity=lam, size=N, rng=3)
    assert on_grid(y, lam)
    assert_frequencies_match(np.round(y / lam).astype(np.int64), law)
    # exact audit on add/remove neighbours: max log-ratio <= eps, attained; over-claim caught
    rng = np.random.default_rng(5)
    worst = 0.0
    for _ in range(300):
        d = rng.integers(0, 9, size=rng.integers(1, 6)) / 8.0 + rng.choice([0.0, 0.03])
        d = np.clip(d, 0, 1)
        z = float(np.clip(rng.integers(0, 9) / 8.0 + rng.choice([0.0, 0.03]), 0, 1))
        lx = _median_point_law(d, eps, bounds, lam)
        ly = _median_point_law(np.append(d, z), eps, bounds, lam)
        worst = max(worst, float(np.abs(np.log(lx) - np.log(ly)).max()))
    assert worst <= eps + 1e-9
    assert worst > 0.9 * eps
    # frequencies of neighbours
    yy = duff_median(x[:-1], eps, bounds=bounds, granularity=lam, size=N, rng=4)
    _assert_neighbour_frequencies(y, yy, eps, N)
    with pytest.raises(AssertionError):
        _assert_neighbour_frequencies(y, yy, 0.3 * eps, N)


def test_duff_median_reconstruction_attack():
    bounds, eps = (0.0, 1.0), 1.0
    bounds = (-1.0, 1.0)
    x = [-0.9, 0.001, 0.9]
    xp = [-0.9, 0.001, 0.0015, 0.9]  # neighbour: one record added inside the median's piece
    # old float path: a draw in [0.001, 0.9) is lo + U (hi - lo), U = k 2^-53; under x' the draws above 0.0015
    # come from 0.0015 + U (0.9 - 0.0015): another lattice, sparser than the floats where |y| << 0.9
    y = duff_median(x, eps, bounds=bounds, granularity=0, size=3000, rng=0)
    inside = y[(y > 0.0015) & (y < 0.9)][:300]
    assert inside.size == 300
    assert all(possible_uniform(v, 0.001, 0.9) for v in inside[:30])  # the reconstruction is faithful
    impossible = sum(not possible_uniform(v, 0.0015, 0.9) for v in inside)
    assert impossible > 0.2 * inside.size  # 90 of 300 at this seed
    # grid path: outputs on the grid, and every grid point has positive probability under x'
    lam = 2.0**-20
    ynew = duff_median(x, eps, bounds=bounds, size=300, rng=0)
    assert on_grid(ynew, lam)
    _starts, counts, probs = median_grid_law(sorted_padded(xp, *bounds), eps, lam)
    assert counts.sum() == 2**21 + 1 and (probs[counts > 0] > 0).all()


def test_duff_mean_on_grid_frequencies_and_exact_audit():
    eps, bounds, lam = 1.0, (0.0, 1.0), 0.0625
    x = [0.2, 0.3, 0.9]
    _starts, counts, probs = duff_mean_grid_law(x, eps, bounds=bounds, levels=4, granularity=lam)
    law = np.repeat(probs, counts)
    assert law.size == 17 and law.sum() == pytest.approx(1.0) and (law > 0).all()
    y = duff_mean(x, eps, bounds=bounds, levels=4, granularity=lam, size=N, rng=6)
    assert on_grid(y, lam)
    assert_frequencies_match(np.round(y / lam).astype(np.int64), law)
    rng = np.random.default_rng(7)
    worst = 0.0
    for _ in range(200):
        d = np.clip(rng.integers(0, 17, size=rng.integers(1, 5)) / 16 + rng.choice([0.0, 0.01]), 0, 1)
        z = float(rng.integers(0, 17) / 16)
        lx = np.repeat(*duff_mean_grid_law(d, eps, bounds=bounds, levels=4, granularity=lam)[2:0:-1])
        ly = np.repeat(*duff_mean_grid_law(np.append(d, z), eps, bounds=bounds, levels=4, granularity=lam)[2:0:-1])
        worst = max(worst, float(np.abs(np.log(lx) - np.log(ly)).max()))
    assert eps * 0.5 < worst <= eps + 1e-9
    yy = duff_mean(x[:-1], eps, bounds=bounds, levels=4, granularity=lam, size=N, rng=8)
    _assert_neighbour_frequencies(y, yy, eps, N)


def test_duff_default_grid_secure_and_bad_granularity():
    y = duff_median([1.0, 2.0, 3.0], 1.0, bounds=(0.0, 5.0), size=50, rng="secure")
    assert on_grid(y, 2.0**-18)  # 2^(floor(log2 5) - 20)
    assert on_grid(duff_mean([1.0, 2.0], 1.0, bounds=(0.0, 4.0), size=20, rng=0), 2.0**-18)
    for bad in (0.3, -1.0, 8.0):
        with pytest.raises(ValueError, match="granularity"):
            duff_median([1.0], 1.0, bounds=(0.0, 5.0), granularity=bad)


# ---------------------------------------------------------------------------- median baselines, TDT


def test_median_baselines_on_grid_and_neighbour_frequencies():
    x, bounds, lam = np.linspace(0, 1, 21), (0.0, 1.0), 2.0**-6
    for f, kw in ((smooth_sens_pure, {}), (smooth_sens_approx, {"delta": 1e-6}), (laplace_ln, {})):
        y = f(x, 1.0, bounds=bounds, granularity=lam, size=200, rng=0, **kw)
        assert on_grid(y, lam)
        assert not on_grid(f(x, 1.0, bounds=bounds, granularity=0, size=200, rng=0, **kw), lam)
    # smooth_sens_approx (exact grid Laplace) on replace-one neighbours, coarse grid
    xp = x.copy()
    xp[10] = 0.9
    lam = 2.0**-4
    yx = smooth_sens_approx(x, 1.0, delta=1e-6, bounds=bounds, granularity=lam, size=N, rng=1)
    yy = smooth_sens_approx(xp, 1.0, delta=1e-6, bounds=bounds, granularity=lam, size=N, rng=2)
    _assert_neighbour_frequencies(yx, yy, 1.0, N)


def test_tdt_release_granularity():
    from dpselect.apps.genomics._tdt._release import release_mechanism, release_statistic

    b, c = np.array([30, 12, 5]), np.array([10, 14, 6])
    lam = 2.0**-8
    y = release_statistic(TransmissionCounts(b, c, 100), 1.0, 0, granularity=lam, size=300, rng=0)
    assert on_grid(y, lam)
    assert release_mechanism(100, 1.0, granularity=lam).granularity == lam
    assert not on_grid(release_statistic(TransmissionCounts(b, c, 100), 1.0, 0, granularity=0, size=300, rng=0), lam)


# ---------------------------------------------------------------------------- trees


def test_tree_random_state_secure():
    pytest.importorskip("sklearn")
    from dpselect.apps.trees import DPDecisionTreeClassifier

    X = np.random.default_rng(0).integers(0, 8, size=(60, 2)).astype(float)
    y = (X[:, 0] > 3).astype(int)
    clf = DPDecisionTreeClassifier(epsilon=1.0, bounds=[(0, 8)] * 2, classes=[0, 1], random_state="secure")
    assert clf.fit(X, y).predict(X).shape == (60,)
    with pytest.raises((TypeError, ValueError), match="random_state"):
        DPDecisionTreeClassifier(epsilon=1.0, random_state="insecure").fit(X, y)
