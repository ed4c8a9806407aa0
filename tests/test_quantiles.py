"""Grid-free single quantiles and medians: rank distance, exact laws, sampling, audits, inputs, dask."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from conftest import assert_frequencies_match
from dpselect.accounting import Accountant
from dpselect.analysis import hockey_stick, privacy_loss
from dpselect.apps import quantiles as Q
from dpselect.apps.quantiles._exponential import quantile_pieces as QL


def _pieces(law):
    """(lo, hi, p) of a law over pieces."""
    return law.lo, law.hi, law.probabilities


UNIVERSE = np.arange(0, 6)  # integers 0..5, bounds (0, 5)
BOUNDS = (0, 5)


def direct_psi(x, t, q, relation, continuous=False):
    """Independent score of candidate t (mathematics §12.1): counts by comparison; ``continuous``: a real
    output (grid point or interval point), whose rank distance is zero on [x_(k), x_(k+1)]."""
    x = np.asarray(x, dtype=float)
    n = x.size
    L = int((x < t).sum())
    C = int((x <= t).sum())
    w = max(q, 1 - q) if relation == "add_remove" else 1.0
    ind = max(L - q * n, q * n - C) / w  # IndExp, normalised
    if relation == "add_remove" and q == 0.5:
        E, G = C - L, n - C
        D = G - L
        e = max(E, 1)
        return max(max(0, 1 - E) + max(0, 1 - e - D, D - e), ind)
    k = max(1, math.ceil(q * n))
    up = min(C, L + 1) if continuous else L + 1
    return max(0, up - k, k - C, ind)


def datasets(max_n):
    for n in range(1, max_n + 1):
        for x in itertools.combinations_with_replacement(UNIVERSE, n):
            yield np.array(x, dtype=np.int64)


def add_remove_neighbours(x):
    if x.size > 1:
        for v in np.unique(x):
            yield np.delete(x, int(np.searchsorted(x, v)))
    for v in UNIVERSE:
        yield np.sort(np.append(x, v))


def replace_neighbours(x):
    for i, v in itertools.product(range(x.size), UNIVERSE):
        y = x.copy()
        y[i] = v
        yield np.sort(y)


QS = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0)


# ---------------------------------------------------------------------------
# rank distance: Lipschitz, zero exactly at the target, library == direct
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("relation", ["add_remove", "replace"])
def test_rank_distance_lipschitz_and_zero_at_target(relation):
    cand = np.concatenate((UNIVERSE, UNIVERSE[:-1] + 0.5))  # integers and interval interiors

    def scores(x, q):
        return np.array([direct_psi(x, t, q, relation, continuous=t % 1 == 0.5) for t in cand])

    nbrs = add_remove_neighbours if relation == "add_remove" else replace_neighbours
    worst = 0.0
    for q in QS:
        for x in datasets(4 if relation == "add_remove" else 3):
            px = scores(x, q)
            target = np.quantile(x, q, method="inverted_cdf")
            assert (px[:6] == 0).tolist() == (UNIVERSE == target).tolist()
            if not (relation == "add_remove" and q == 0.5):  # the best interval is next to x_(k)
                k = max(1, math.ceil(q * x.size))
                j = (x < cand[6:, None]).sum(1)
                assert (px[6:][~np.isin(j, [k - 1, k])] >= 1).all()
                assert (px[6:][j == k] < 1 / max(q, 1 - q) + 1e-12).all()
            # the library's piece values agree with the direct computation
            s = QL.check_sample(x, BOUNDS)
            pc = QL.pieces(s)
            lib = QL.rank_distance(pc.L, pc.C, s.n, q, relation)
            idx = np.searchsorted(pc.hi, UNIVERSE, side="left")
            np.testing.assert_allclose(lib[idx], px[:6])
            for y in nbrs(x):
                py = scores(y, q)
                worst = max(worst, float(np.abs(px - py).max()))
    assert worst == pytest.approx(1.0)  # sensitivity exactly 1, attained


def test_target_is_numpy_inverted_cdf():
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(1, 40))
        x = rng.normal(size=n)
        q = float(rng.choice([0.0, 0.1, 0.2, 0.3, 1 / 3, 0.5, 0.7, 0.9, 0.99, 1.0, rng.random()]))
        assert Q.true_quantile(x, q) == np.quantile(x, q, method="inverted_cdf")


# ---------------------------------------------------------------------------
# exact laws vs independent computations
# ---------------------------------------------------------------------------


def integer_pmf(x, q, eps, relation="add_remove", scale=1.0):
    """Brute-force pmf over the integers of BOUNDS: exp(-eps psi / (2 scale)), normalised.

    Integer outputs score the integers as the grid 1 (the real-output rank distance, zero on
    [x_(k), x_(k+1)]), so they never lose to the real-output mechanism on the same data.
    """
    logw = np.array([-0.5 * eps / scale * direct_psi(x, t, q, relation, continuous=True) for t in UNIVERSE])
    w = np.exp(logw - logw.max())
    return w / w.sum()


def law_on_integers(lo, hi, p):
    pmf = np.zeros(UNIVERSE.size)
    for a, b, pr in zip(lo, hi, p):
        if b >= a:
            pmf[int(a) : int(b) + 1] += pr / (b - a + 1)
    return pmf


@pytest.mark.parametrize("q", [0.1, 0.5, 0.9])
def test_integer_law_matches_brute_force(q):
    for x in itertools.islice(datasets(4), 0, None, 7):
        lo, hi, p = _pieces(Q.quantile_law(x, q, 1.3, bounds=BOUNDS))
        np.testing.assert_allclose(law_on_integers(lo, hi, p), integer_pmf(x, q, 1.3), rtol=1e-12, atol=1e-15)


def test_continuous_median_is_duff():
    rng = np.random.default_rng(0)
    for n in (1, 2, 5, 8, 31):
        x = rng.uniform(0, 10, size=n).round(1)
        for eps in (0.2, 2.0):
            lo, hi, p = _pieces(Q.quantile_law(x, 0.5, eps, bounds=(0, 10), granularity=0))
            dl, dh, dp = _pieces(Q.duff_median_intervals(x, eps, bounds=(0, 10)))
            # same mass on every non-degenerate interval
            keep = dh > dl
            mass = {(a, b): pr for a, b, pr in zip(lo, hi, p) if b > a}
            np.testing.assert_allclose([mass[(a, b)] for a, b in zip(dl[keep], dh[keep])], dp[keep], rtol=1e-10)
            assert Q.quantile_expected_error(x, 0.5, eps, bounds=(0, 10), granularity=0) == pytest.approx(
                Q.duff_median_intervals(x, eps, bounds=(0, 10)).expected_error(np.sort(x)[(len(x) - 1) // 2]), rel=1e-10
            )


def test_continuous_law_brute_force_density():
    """Density at interior points = exp(-eps psi(t)/2) / integral, integral by fine quadrature."""
    x = np.array([0.7, 1.5, 1.5, 2.2, 4.0])
    for q in (0.2, 0.6):
        lo, hi, p = _pieces(Q.quantile_law(x, q, 1.0, bounds=(0, 5), granularity=0))
        t = np.linspace(0, 5, 40001)[1:-1]
        t = t[~np.isin(t, x)]
        dens = np.exp(np.array([-0.5 * direct_psi(x, v, q, "add_remove", True) for v in t]))
        Z = dens.mean() * 5.0
        for a, b, pr in zip(lo, hi, p):
            if b > a:
                mid = 0.5 * (a + b)
                psi = direct_psi(x, mid, q, "add_remove", True)
                assert pr / (b - a) == pytest.approx(math.exp(-0.5 * psi) / Z, rel=5e-3)


def test_expected_error_matches_sampling_and_integer_closed_form():
    x = np.array([1, 2, 2, 3, 3, 3, 5], dtype=np.int64)
    lo, hi, p = _pieces(Q.quantile_law(x, 0.75, 0.8, bounds=BOUNDS))
    pmf = law_on_integers(lo, hi, p)
    t = np.quantile(x, 0.75, method="inverted_cdf")
    assert Q.quantile_expected_error(x, 0.75, 0.8, bounds=BOUNDS) == pytest.approx(
        float(np.dot(pmf, np.abs(UNIVERSE - t))), rel=1e-12
    )
    draws = Q.private_quantile(x, 0.75, 0.8, bounds=BOUNDS, rng=1, size=40_000)
    assert draws.dtype == np.int64
    assert_frequencies_match(draws, pmf)


@pytest.mark.parametrize("method", ["race", "inverse"])
def test_continuous_sampling_matches_law(method):
    x = np.array([0.5, 1.0, 1.0, 2.5, 4.5])
    lo, hi, p = _pieces(Q.quantile_law(x, 0.3, 1.5, bounds=(0, 5), granularity=0))
    draws = Q.private_quantile(x, 0.3, 1.5, bounds=(0, 5), rng=2, size=40_000, float_sampler=method, granularity=0)
    edges = np.unique(np.concatenate((lo, hi)))
    idx = np.searchsorted(edges, draws, side="right") - 1
    cell_p = np.array([p[(lo == a) & (hi == b)].sum() for a, b in itertools.pairwise(edges)])
    assert_frequencies_match(np.minimum(idx, edges.size - 2), cell_p)


def test_huge_integer_range_stays_cheap_and_exact():
    x = np.array([10**15, 10**15, 10**15 + 7], dtype=np.int64)
    lo, _hi, _p = _pieces(Q.quantile_law(x, 0.5, 5.0, bounds=(0, 2**52)))
    assert lo.size == 2 * 2 + 1  # runs and atoms, not one piece per integer
    v = Q.private_median(x, 5.0, bounds=(0, 2**52), rng=0)
    assert isinstance(v, int)


def test_ties_integer_outputs_land_on_the_tie():
    x = np.array([38] + [40] * 20 + [45], dtype=np.int64)
    draws = Q.private_median(x, 1.0, bounds=(0, 99), rng=0, size=2000)
    assert draws.dtype == np.int64 and (draws == 40).mean() > 0.99
    lo, hi, p = _pieces(Q.quantile_law(x, 0.5, 1.0, bounds=(0, 99)))
    assert p[(lo == 40) & (hi == 40)].sum() > 0.99
    assert Q.quantile_expected_error(x, 0.5, 1.0, bounds=(0, 99)) < 0.05


# ---------------------------------------------------------------------------
# exact audits (add/remove and replace) and negative controls
# ---------------------------------------------------------------------------


def _audit_integer(q, eps, relation, law):
    nbrs = add_remove_neighbours if relation == "add_remove" else replace_neighbours
    worst, worst_delta = 0.0, 0.0
    for x in datasets(4):
        px = np.log(law(x))
        for y in nbrs(x):
            py = np.log(law(y))
            worst = max(worst, privacy_loss(px, py))
            worst_delta = max(worst_delta, hockey_stick(px, py, eps))
    return worst, worst_delta


@pytest.mark.parametrize("relation", ["add_remove", "replace"])
@pytest.mark.parametrize("q", [0.1, 0.5, 0.9])
def test_audit_integer(q, relation):
    eps = 1.0

    def law(x):
        return law_on_integers(*_pieces(Q.quantile_law(x, q, eps, bounds=BOUNDS, relation=relation)))

    worst, delta = _audit_integer(q, eps, relation, law)
    assert worst <= eps * (1 + 1e-9) and delta <= 1e-12
    assert worst > 0.5 * eps  # not vacuous


def test_audit_negative_control_understated_sensitivity():
    eps = 1.0

    def law(x):  # utility sensitivity claimed 1/2: the weights use exp(-eps psi)
        s = QL.check_sample(x, BOUNDS)
        pc = QL.pieces(s)
        return law_on_integers(pc.lo, pc.hi, QL.normalise(QL.log_masses(pc, s.n, 0.3, eps, "add_remove", 0.5)))

    worst, _ = _audit_integer(0.3, eps, "add_remove", law)
    assert worst > 1.2 * eps  # caught


def test_audit_negative_control_add_remove_utility_under_replace():
    eps = 1.0

    def law(x):  # the add/remove (Duff) distance moves by 2 under one replacement
        return law_on_integers(*_pieces(Q.quantile_law(x, 0.5, eps, bounds=BOUNDS, relation="add_remove")))

    nbrs_worst = 0.0
    for x in datasets(4):
        px = np.log(law(x))
        for y in replace_neighbours(x):
            nbrs_worst = max(nbrs_worst, privacy_loss(px, np.log(law(y))))
    assert nbrs_worst > eps * 1.05  # caught


def _cell_log_masses(x, y, q, eps, bounds, relation):
    """Both laws on the common refinement of their pieces: exact (densities are constant per cell)."""
    out = []
    lx, hx, px = _pieces(Q.quantile_law(x, q, eps, bounds=bounds, relation=relation, granularity=0))
    ly, hy, py = _pieces(Q.quantile_law(y, q, eps, bounds=bounds, relation=relation, granularity=0))
    edges = np.unique(np.concatenate((lx, hx, ly, hy)))
    for lo, hi, p in ((lx, hx, px), (ly, hy, py)):
        mids = 0.5 * (edges[:-1] + edges[1:])
        j = np.searchsorted(hi, mids, side="left")
        dens = p[j] / (hi[j] - lo[j])
        out.append(np.log(dens * np.diff(edges)))
    return out


@pytest.mark.parametrize("q", [0.25, 0.5, 0.9])
def test_audit_continuous(q):
    eps, worst = 0.7, 0.0
    rng = np.random.default_rng(5)
    for _ in range(60):
        x = np.sort(rng.integers(0, 6, size=int(rng.integers(1, 5))).astype(float) + 0.25)
        nb = [np.delete(x, i) for i in range(x.size) if x.size > 1]
        nb += [np.sort(np.append(x, v)) for v in (0.0, 1.6, 3.25, 5.0)]
        for y in nb:
            lp, lq = _cell_log_masses(x, y, q, eps, (0, 6), "add_remove")
            worst = max(worst, privacy_loss(lp, lq))
    assert eps * 0.4 < worst <= eps * (1 + 1e-9)


# ---------------------------------------------------------------------------
# API: percentile / median faces, bad inputs before randomness, dask, accountant
# ---------------------------------------------------------------------------


def test_percentile_bounds_path_is_private_quantile():
    x = np.random.default_rng(1).normal(size=300)
    a = Q.private_percentile(x, 90, 1.0, bounds=(-5, 5), rng=4)
    b = Q.private_quantile(x, 0.9, 1.0, bounds=(-5, 5), rng=4)
    assert a == b
    with pytest.raises(ValueError, match="grid"):
        Q.private_percentile(x, 90, 1.0)
    with pytest.raises(ValueError, match="both"):
        Q.private_percentile(x, 90, 1.0, np.linspace(-5, 5, 11), bounds=(-5, 5))


def test_median_integer_and_duff_kept():
    x = np.array([20, 30, 30, 31, 33], dtype=np.int64)
    assert isinstance(Q.private_median(x, 1.0, bounds=(0, 100), rng=0), int)
    assert isinstance(Q.private_median(x.astype(float), 1.0, bounds=(0, 100), rng=0), float)
    assert isinstance(Q.private_median(x.astype(float), 1.0, bounds=(0, 100), integer=True, rng=0), int)
    assert isinstance(Q.duff_median(x, 1.0, bounds=(0, 100), rng=0), float)


def _bad_calls():
    g = [1.0, 2.0]
    return [
        (ValueError, "NaN", lambda r: Q.private_quantile([1.0, np.nan], 0.5, 1.0, bounds=(0, 3), rng=r)),
        (ValueError, r"\bq\b", lambda r: Q.private_quantile(g, 1.5, 1.0, bounds=(0, 3), rng=r)),
        (ValueError, r"\bq\b", lambda r: Q.private_quantile(g, -0.1, 1.0, bounds=(0, 3), rng=r)),
        (ValueError, "empty", lambda r: Q.private_quantile([], 0.5, 1.0, bounds=(0, 3), rng=r)),
        (ValueError, "bounds", lambda r: Q.private_quantile(g, 0.5, 1.0, bounds=(3, 0), rng=r)),
        (
            ValueError,
            "bounds",
            lambda r: Q.private_quantile([5.0], 0.5, 1.0, bounds=(0, 3), rng=r, on_out_of_bounds="raise"),
        ),
        (
            ValueError,
            "on_out_of_bounds",
            lambda r: Q.private_quantile([1.0], 0.5, 1.0, bounds=(0, 3), rng=r, on_out_of_bounds="clamp"),
        ),
        (ValueError, "finite", lambda r: Q.private_quantile([np.inf], 0.5, 1.0, bounds=(0, 3), rng=r)),
        (ValueError, "integers", lambda r: Q.private_quantile([1.5], 0.5, 1.0, bounds=(0, 3), integer=True, rng=r)),
        (ValueError, "epsilon", lambda r: Q.private_quantile(g, 0.5, 0.0, bounds=(0, 3), rng=r)),
        (ValueError, "1-D", lambda r: Q.private_quantile([[1.0]], 0.5, 1.0, bounds=(0, 3), rng=r)),
        (TypeError, "integer", lambda r: Q.private_quantile(g, 0.5, 1.0, bounds=(0, 3), integer="yes", rng=r)),
        (ValueError, "NaN", lambda r: Q.private_median([np.nan], 1.0, bounds=(0, 3), rng=r)),
        (ValueError, r"\bp\b", lambda r: Q.private_percentile(g, 101, 1.0, bounds=(0, 3), rng=r)),
        (ValueError, "qs", lambda r: Q.private_quantiles(g, [0.5, 2.0], 1.0, bounds=(0, 3), rng=r)),
        (ValueError, "qs", lambda r: Q.private_quantiles(g, [], 1.0, bounds=(0, 3), rng=r)),
        (ValueError, "method", lambda r: Q.private_quantiles(g, [0.5], 1.0, bounds=(0, 3), method="x", rng=r)),
        (
            ValueError,
            "bounds",
            lambda r: Q.private_quantiles([9.0], [0.5], 1.0, bounds=(0, 3), rng=r, on_out_of_bounds="raise"),
        ),
    ]


@pytest.mark.parametrize("case", range(16))
def test_bad_inputs_named_before_randomness(case):
    exc, match, call = _bad_calls()[case]
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    with pytest.raises(exc, match=match):
        call(gen)
    assert gen.bit_generator.state == state


def test_accountant_charged():
    acc = Accountant(2.0)
    Q.private_quantile([1.0, 2.0], 0.5, 0.5, bounds=(0, 3), rng=0, accountant=acc)
    Q.private_quantiles([1.0, 2.0], [0.2, 0.8], 1.0, bounds=(0, 3), rng=0, accountant=acc)
    assert acc.spent.epsilon == pytest.approx(1.5)


def test_seed_reproduces():
    x = np.random.default_rng(0).normal(size=100)
    a = Q.private_quantile(x, 0.3, 1.0, bounds=(-4, 4), rng=7)
    assert a == Q.private_quantile(x, 0.3, 1.0, bounds=(-4, 4), rng=7)


def test_dask_same_answer_as_memory():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(2)
    xi = rng.integers(0, 50, size=5000)
    xf = rng.normal(size=5000)
    for x, b in ((xi, (0, 60)), (xf, (-6, 6))):
        dx = da.from_array(x, chunks=700)
        assert Q.private_quantile(dx, 0.3, 1.0, bounds=b, rng=3) == Q.private_quantile(x, 0.3, 1.0, bounds=b, rng=3)
        np.testing.assert_array_equal(
            Q.private_quantiles(dx, [0.1, 0.9], 1.0, bounds=b, rng=3),
            Q.private_quantiles(x, [0.1, 0.9], 1.0, bounds=b, rng=3),
        )
    grid = np.arange(0, 61)
    dxi = da.from_array(xi, chunks=700)
    assert Q.private_percentile(dxi, 30, 1.0, grid, rng=3) == Q.private_percentile(xi, 30, 1.0, grid, rng=3)
    outside = da.from_array(np.array([1.0, 99.0]), chunks=1)  # 99 is clamped to the grid's top by default
    assert Q.private_percentile(outside, 30, 1.0, grid, rng=3) == Q.private_percentile(
        [1.0, 60.0], 30, 1.0, grid, rng=3
    )
    with pytest.raises(ValueError, match=r"\bx\b"):
        Q.private_percentile(outside, 30, 1.0, grid, rng=3, on_out_of_bounds="raise")
