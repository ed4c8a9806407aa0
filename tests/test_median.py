"""Duff median / mode / mean and the NRS smooth sensitivity of the median (SPEC.md §4.5, §6.1)."""

from __future__ import annotations

import itertools
import math
import warnings
from collections import deque
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

import dpselect
from conftest import CachedMechanism, assert_frequencies_match
from dpselect._warnings import PrivacyLeakWarning
from dpselect.accounting import BudgetExceededError
from dpselect.analysis.audit import audit
from dpselect.apps import _duff_median_law as ML
from dpselect.apps import _piecewise_em as PW
from dpselect.apps import duff as M
from dpselect.apps import duff_mean as MEAN
from dpselect.apps import order_stats as O
from dpselect.privacy import Privacy

# ---------------------------------------------------------------------------
# brute-force references (independent of the closed forms)
# ---------------------------------------------------------------------------


def _lower_median(values):
    s = sorted(values)
    return s[math.ceil(len(s) / 2) - 1]


def bfs_median_distance(data, t, bounds, cap=20):
    """min #add/remove (records in bounds) so that the lower median equals t (BFS over multisets).

    Added values are drawn from {a, t, b} and the data values: every real value
    in [a, b] is below, equal to or above t, and a, t, b represent those classes.
    """
    a, b = bounds
    pool = sorted({a, b, t, *data})
    start = tuple(sorted(data))
    seen = {start: 0}
    q = deque([start])
    while q:
        state = q.popleft()
        if state and _lower_median(state) == t:
            return seen[state]
        if seen[state] >= cap:
            continue
        nxt = {state[:i] + state[i + 1 :] for i in range(len(state))}
        nxt |= {tuple(sorted(state + (v,))) for v in pool}
        for s in nxt:
            if s not in seen:
                seen[s] = seen[state] + 1
                q.append(s)
    raise AssertionError("BFS cap reached")


def random_int_data(rng, n, lo=0, hi=10):
    return rng.integers(lo, hi + 1, size=n).astype(float)


# ---------------------------------------------------------------------------
# Duff median: utility
# ---------------------------------------------------------------------------


def test_duff_median_utility_matches_bfs():
    rng = np.random.default_rng(1)
    bounds = (0.0, 10.0)
    cases = [[5.0], [0.0], [10.0], [3.0, 3.0], [1.0, 2.0, 3.0], [0.0, 0.0, 10.0, 10.0], [4.0] * 5]
    cases += [list(random_int_data(rng, int(rng.integers(1, 7)))) for _ in range(25)]
    checked = 0
    for data in cases:
        pts = sorted({0.0, 10.0, *data})
        mids = [(p + q) / 2 for p, q in zip(pts[:-1], pts[1:])]
        targets = pts + mids
        got = M.duff_median_utility(targets, data, bounds=bounds)
        for t, u in zip(targets, got):
            assert -bfs_median_distance(data, t, bounds) == u, (data, t)
            checked += 1
        # the EM's interval utilities (-d_j) agree with the point utility at midpoints
        ext = np.concatenate(([0.0], np.sort(data), [10.0]))
        n = len(data)
        for j in range(n + 1):
            if ext[j + 1] > ext[j]:
                mid = 0.5 * (ext[j] + ext[j + 1])
                assert -ML._median_costs(n, j, j)[0] == M.duff_median_utility(mid, data, bounds=bounds)
    assert checked > 200


def test_spec_level_formula_distinct_data():
    # SPEC §6.1: left k -> -2k + 1[n odd], right k (<= n-m+1) -> -2k + 1[n even]
    for n in range(1, 9):
        m = math.ceil(n / 2)
        costs = ML._median_costs(n, 0, n)
        for k in range(1, m + 1):
            assert -costs[m - k] == -2 * k + (n % 2)
        for k in range(1, n - m + 2):
            assert -costs[m + k - 1] == -2 * k + (1 - n % 2)
        assert sorted(costs) == list(range(1, n + 2))  # each level is one interval


# ---------------------------------------------------------------------------
# Duff median: exact output law
# ---------------------------------------------------------------------------


def _interval_index(ext_breaks, draws):
    return np.clip(np.searchsorted(ext_breaks, draws, side="right") - 1, 0, ext_breaks.size - 2)


@pytest.mark.parametrize("method", ["race", "inverse"])
@pytest.mark.parametrize(
    "data,eps",
    [
        ([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0], 1.0),
        ([2.0, 2.0, 2.0, 7.0], 0.7),
        ([0.0, 10.0, 5.0], 2.0),
        ([4.2], 0.5),
    ],
)
def test_duff_median_sampling_matches_intervals(data, eps, method):
    bounds = (0.0, 10.0)
    lefts, rights, probs = M.duff_median_intervals(data, eps, bounds=bounds)
    assert probs.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(probs[rights == lefts] == 0)
    draws = M.duff_median(data, eps, bounds=bounds, rng=np.random.default_rng(7), size=100_000, method=method)
    assert draws.shape == (100_000,) and np.all((draws >= 0) & (draws <= 10))
    breaks = np.concatenate((lefts, rights[-1:]))
    idx = _interval_index(breaks, draws)
    # a draw at a shared breakpoint of a zero-length interval maps right; such
    # draws have probability 0, and zero-length intervals must never be hit
    assert_frequencies_match(idx, probs)


def test_duff_median_probabilities_brute_force_with_ties():
    # P(interval j) ∝ length * exp(-eps d / 2) with d from BFS at the midpoint; ties included
    rng = np.random.default_rng(3)
    for _ in range(30):
        data = random_int_data(rng, int(rng.integers(1, 7)))
        eps = float(rng.choice([0.1, 1.0, 5.0]))
        ext = np.concatenate(([0.0], np.sort(data), [10.0]))
        w = np.zeros(data.size + 1)
        for j in range(data.size + 1):
            if ext[j + 1] > ext[j]:
                d = bfs_median_distance(list(data), 0.5 * (ext[j] + ext[j + 1]), (0.0, 10.0))
                w[j] = (ext[j + 1] - ext[j]) * math.exp(-eps * d / 2)
        _, _, probs = M.duff_median_intervals(data, eps, bounds=(0.0, 10.0))
        np.testing.assert_allclose(probs, w / w.sum(), rtol=1e-12, atol=1e-15)


def test_duff_median_single_draw_and_seed():
    x = [1.0, 2.0, 3.0]
    v1 = M.duff_median(x, 1.0, bounds=(0, 4), rng=5)
    v2 = M.duff_median(x, 1.0, bounds=(0, 4), rng=5)
    assert isinstance(v1, float) and v1 == v2 and 0 <= v1 <= 4


def test_output_cdf_ks_and_pdf():
    rng = np.random.default_rng(11)
    x = rng.normal(size=50).clip(-3, 3)
    bounds, eps = (-3.0, 3.0), 0.8
    draws = M.duff_median(x, eps, bounds=bounds, rng=rng, size=20_000)
    res = stats.kstest(draws, lambda t: M.output_cdf(t, x, epsilon=eps, bounds=bounds))
    assert res.pvalue > 1e-3
    # the cdf is the integral of the pdf (quadrature over the breakpoints)
    lefts, rights, _ = M.duff_median_intervals(x, eps, bounds=bounds)
    pts = np.unique(np.concatenate((lefts, rights)))
    pdf = lambda s: M.duff_median_pdf(s, x, epsilon=eps, bounds=bounds)  # noqa: E731
    for t in np.linspace(-2.9, 2.9, 9):
        inner = pts[(pts > -3.0) & (pts < t)]
        val = integrate.quad(pdf, -3.0, t, points=inner, limit=500)[0]
        assert M.output_cdf(t, x, epsilon=eps, bounds=bounds) == pytest.approx(val, abs=1e-7)
    assert M.output_cdf(-3.0, x, epsilon=eps, bounds=bounds) == 0.0
    assert M.output_cdf(-4.0, x, epsilon=eps, bounds=bounds) == 0.0
    assert M.output_cdf(3.0, x, epsilon=eps, bounds=bounds) == 1.0
    assert M.duff_median_pdf(5.0, x, epsilon=eps, bounds=bounds) == 0.0
    assert M.duff_median_pdf(3.0, x, epsilon=eps, bounds=bounds) > 0.0


def test_expected_absolute_error_vs_integration():
    rng = np.random.default_rng(5)
    for data, eps, target in [
        (rng.normal(size=30).clip(-4, 4), 0.5, None),
        ([1.0, 1.0, 1.0, 2.0], 1.0, None),
        ([1.0, 3.0], 0.3, 2.5),
        ([9.5], 2.0, -1.0),
    ]:
        bounds = (-4.0, 10.0)
        lefts, rights, _ = M.duff_median_intervals(data, eps, bounds=bounds)
        c = float(np.sort(data)[math.ceil(len(data) / 2) - 1]) if target is None else target
        F = lambda t: M.output_cdf(t, data, epsilon=eps, bounds=bounds)  # noqa: E731
        pts = np.unique(np.concatenate((lefts, rights, [c])))
        # E|X - c| = int_{-inf}^c F + int_c^{inf} (1 - F); F is piecewise linear: trapezoid on breakpoints is exact
        lo, hi = pts[pts <= c], pts[pts >= c]
        exact_trap = np.trapezoid(F(lo), lo) if lo.size > 1 else 0.0
        exact_trap += np.trapezoid(1 - F(hi), hi) if hi.size > 1 else 0.0
        if c < bounds[0]:
            exact_trap += 0.0
        quad = integrate.quad(F, bounds[0], c, points=lo, limit=500)[0] if c > bounds[0] else 0.0
        quad += integrate.quad(lambda t: 1 - F(t), max(c, bounds[0]), bounds[1], points=hi, limit=500)[0]
        if c < bounds[0]:
            quad += bounds[0] - c
            exact_trap += bounds[0] - c
        eae = M.expected_absolute_error(data, eps, bounds=bounds, target=target)
        assert eae == pytest.approx(quad, rel=1e-6, abs=1e-9)
        assert eae == pytest.approx(exact_trap, rel=1e-9, abs=1e-12)


def test_paper_synthetic_setting(capsys):
    # Gillenwater & Munoz Medina synthetic: n = 1000 from N(0, 1), bounds [-10, 10], eps = 0.1
    x = np.random.default_rng(2021).normal(size=1000)
    err = M.expected_absolute_error(x, 0.1, bounds=(-10.0, 10.0))
    with capsys.disabled():
        print(f"\n[duff median] n=1000 N(0,1), bounds [-10,10], eps=0.1: exact E|out - median| = {err:.4f}")
    assert err < 0.1
    draws = M.duff_median(x, 0.1, bounds=(-10.0, 10.0), rng=0, size=20_000)
    assert np.mean(np.abs(draws - np.sort(x)[499])) == pytest.approx(err, rel=0.05)


def test_large_n_small_eps_fast_path_matches_log_path():
    # the logless geometric weighting used for wide windows gives the same law
    x = np.random.default_rng(0).normal(size=200_001)
    for eps in (1e-3, 1e-5):
        ext = O._sorted_padded(x, -10.0, 10.0)
        jlo, jhi, mx, s, wide = ML._median_plan(ext, eps)
        assert wide and jhi - jlo + 1 > ML._FAST_WINDOW and s >= mx
        w = ML._median_fast_masses(ext, eps, jlo, jhi, s)
        p_fast = w / w.sum()
        p_log = PW._normalise_log(ML._median_window_log_masses(ext, eps, jlo, jhi))
        np.testing.assert_allclose(p_fast, p_log, rtol=1e-9, atol=1e-300)
        draws = M.duff_median(x, eps, bounds=(-10.0, 10.0), rng=1, size=5000)
        assert stats.kstest(draws, lambda t: M.output_cdf(t, x, epsilon=eps, bounds=(-10.0, 10.0))).pvalue > 1e-3


def test_two_stage_sampler_law():
    # the few-draws path for long weight vectors (block sums, then one block)
    rng = np.random.default_rng(5)
    w = rng.random(1 << 17) * np.exp(-np.linspace(0, 8, 1 << 17))
    w[::7] = 0.0
    w[-5000:] = 0.0
    draws = np.concatenate([PW._sample_categorical(8, rng, "inverse", w=w) for _ in range(2500)])
    assert np.all(w[draws] > 0)
    coarse = draws // 4096
    probs = np.add.reduceat(w, np.arange(0, w.size, 4096)) / w.sum()
    assert_frequencies_match(coarse, probs)


def test_window_truncation_is_exact():
    # probabilities outside the window are exactly those of the full log-domain computation
    x = np.random.default_rng(4).uniform(size=5000)
    for eps in (0.05, 1.0, 20.0):
        _, _, probs = M.duff_median_intervals(x, eps, bounds=(0.0, 1.0))
        ext = O._sorted_padded(x, 0.0, 1.0)
        full = PW._normalise_log(ML._median_window_log_masses(ext, eps, 0, x.size))
        np.testing.assert_allclose(probs, full, rtol=1e-12, atol=0)


def test_heavy_ties_and_data_at_bounds():
    x = np.array([0.0] * 5 + [3.0] * 20 + [10.0] * 4)
    lefts, rights, probs = M.duff_median_intervals(x, 2.0, bounds=(0.0, 10.0))
    assert probs.sum() == pytest.approx(1.0)
    nz = probs > 0
    assert np.all(rights[nz] > lefts[nz])
    # only the two non-empty intervals (0,3) and (3,10) carry mass
    assert nz.sum() == 2
    d = M.duff_median(x, 2.0, bounds=(0.0, 10.0), rng=0, size=1000)
    assert np.all((d >= 0) & (d <= 10))
    # all-equal data
    y = np.full(7, 4.0)
    _, _, p = M.duff_median_intervals(y, 1.0, bounds=(0.0, 10.0))
    assert p[0] + p[-1] == pytest.approx(1.0)
    assert M.duff_median(np.full(3, 0.0), 1.0, bounds=(0, 1), rng=1) >= 0.0


# ---------------------------------------------------------------------------
# Duff median: exact privacy audit (add/remove)
# ---------------------------------------------------------------------------


def _max_log_density_ratio(x, y, eps, bounds):
    bx = np.concatenate((bounds, x))
    by = np.concatenate((bounds, y))
    pts = np.unique(np.concatenate((bx, by)))
    mids = 0.5 * (pts[:-1] + pts[1:])
    px = M.duff_median_pdf(mids, x, epsilon=eps, bounds=bounds)
    py = M.duff_median_pdf(mids, y, epsilon=eps, bounds=bounds)
    assert np.all(px > 0) and np.all(py > 0)
    return float(np.max(np.abs(np.log(px) - np.log(py))))


@pytest.mark.parametrize("eps", [0.3, 1.0, 3.0])
def test_duff_median_audit_add_remove(eps):
    rng = np.random.default_rng(int(eps * 10))
    bounds = (0.0, 10.0)
    worst = 0.0
    n_pairs = 0
    for _ in range(110):
        x = random_int_data(rng, int(rng.integers(1, 7)))
        nbrs = M.neighbours(x, bounds=bounds, values=np.arange(11.0))
        assert len(nbrs) == (np.unique(x).size if x.size > 1 else 0) + 11
        for y in nbrs:
            loss = _max_log_density_ratio(x, y, eps, bounds)
            assert loss <= eps * (1 + 1e-9), (x, y, loss)
            worst = max(worst, loss)
            n_pairs += 1
    assert n_pairs > 1000
    assert worst > 0.8 * eps  # close to the bound: the audit is not vacuous


# ---------------------------------------------------------------------------
# Duff mode
# ---------------------------------------------------------------------------


def bfs_mode_distance(data, v, domain):
    """min #add/remove so that v is a mode (ties in v's favour); BFS on count vectors."""
    vals = sorted(set(domain) | set(data) | {v})
    start = tuple(int(sum(1 for d in data if d == w)) for w in vals)
    iv = vals.index(v)
    seen = {start: 0}
    q = deque([start])
    while q:
        c = q.popleft()
        if c[iv] == max(c):
            return seen[c]
        for i in range(len(c)):
            for dlt in (-1, 1):
                if c[i] + dlt < 0:
                    continue
                nc = c[:i] + (c[i] + dlt,) + c[i + 1 :]
                if nc not in seen:
                    seen[nc] = seen[c] + 1
                    q.append(nc)
    raise AssertionError


def test_duff_mode_utility_bfs():
    rng = np.random.default_rng(8)
    cands = np.arange(5.0)
    for _ in range(40):
        x = rng.integers(0, 7, size=int(rng.integers(0, 7))).astype(float)  # values 5, 6: not candidates
        c, u = M.duff_mode_utility(x, candidates=cands)
        for v, uv in zip(c, u):
            assert -bfs_mode_distance(list(x), v, list(cands)) == uv


def test_duff_mode_probabilities_and_sampling():
    x = [1, 1, 1, 2, 2, 3, 7, 7, 7, 7]
    cands = [1, 2, 3, 4]
    u = np.array([3 - 4, 2 - 4, 1 - 4, 0 - 4], dtype=float)  # n_max = 4 from the non-candidate 7
    for monotone, factor in ((True, 1.0), (False, 0.5)):  # exp(eps u) (default) / the paper's exp(eps u / 2)
        c, p = M.duff_mode_probabilities(x, 1.0, candidates=cands, monotone=monotone)
        w = np.exp(factor * u)
        np.testing.assert_allclose(p, w / w.sum(), rtol=1e-12)
        draws = M.duff_mode(x, 1.0, rng=3, candidates=cands, size=100_000, monotone=monotone)
        idx = np.searchsorted(c, draws)
        assert_frequencies_match(idx, p)
    ones = [M.duff_mode(x, 1.0, rng=s, candidates=cands) for s in range(4000)]
    assert_frequencies_match(np.searchsorted(c, ones), M.duff_mode_probabilities(x, 1.0, candidates=cands)[1])


def test_duff_mode_warns_without_public_candidates():
    with pytest.warns(PrivacyLeakWarning):
        c, p = M.duff_mode_probabilities([1, 1, 2], 1.0)
    np.testing.assert_array_equal(c, [1.0, 2.0])
    with pytest.warns(PrivacyLeakWarning):
        M.duff_mode([1, 1, 2], 1.0, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        M.duff_mode([1, 1, 2], 1.0, rng=0, candidates=[1, 2])


def _mode_pairs(candidates, monotone=True, relation="add_remove"):
    """(mode problem of x, of y) over all neighbours of every multiset of size <= 4 on 0..5.

    Values 5 and 6 are not candidates (they still count towards n_max).
    add/remove: remove one record or add one in 0..6; replace: change one record to another value in 0..6.
    """

    cache = {}

    def prob(data):
        key = tuple(sorted(data))
        if key not in cache:
            cache[key] = M.mode_problem(data, candidates=candidates, monotone=monotone)
        return cache[key]

    for n in range(0, 5):
        for x in itertools.combinations_with_replacement(range(6), n):
            x = np.array(x, dtype=float)
            if relation == "add_remove":
                nbrs = [np.delete(x, i) for i in range(x.size)] + [np.append(x, v) for v in range(7)]
            else:
                nbrs = [np.append(np.delete(x, i), v) for i in range(x.size) for v in range(7) if v != x[i]]
            for y in nbrs:
                yield prob(x), prob(y)


@pytest.mark.parametrize("monotone", [True, False])
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_duff_mode_exact_audit_on_library_em(eps, monotone):
    """The mode runs the library's EM: exact audit over all add/remove neighbours, and negative controls."""
    cands = np.arange(5.0)
    mech = dpselect.ExponentialMechanism(eps)
    cached = CachedMechanism(mech, key=lambda p: (p.scores.tobytes(), p.monotone))
    report = audit(cached, _mode_pairs(cands, monotone))
    assert not report.violates and report.n_pairs > 1000
    assert report.claimed.epsilon == eps and report.claimed.relation == "add_remove"
    # non-vacuous: the monotone scale uses nearly all of eps, the paper's scale at most about half of it
    assert (0.8 if monotone else 0.4) * eps < report.max_loss <= eps * (1 + 1e-12)
    x = np.array([0.0, 0.0, 1.0, 5.0, 5.0, 5.0])
    _, p = M.duff_mode_probabilities(x, eps, candidates=cands, monotone=monotone)
    np.testing.assert_allclose(p, mech.probabilities(M.mode_problem(x, candidates=cands, monotone=monotone)))
    if monotone:
        # negative control: the same problems under replace-one (one record changes value: one count
        # up, another down -- not monotone); the audit catches the eps claim at the monotone scale ...
        bad = audit(cached, _mode_pairs(cands, monotone, relation="replace"))
        assert bad.violates and bad.max_loss > 1.05 * eps
    # ... and the replace-one guarantee is 2 eps (group privacy of two add/remove steps)
    assert not audit(cached, _mode_pairs(cands, monotone, relation="replace"), Privacy(2 * eps)).violates


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
    lefts, rights, utils, probs = M.duff_mean_intervals(x, 1.0, bounds=bounds, levels=4)
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
                lx, rx, _, px = M.duff_mean_intervals(x, eps, bounds=bounds, levels=K)
                ly, ry, _, py = M.duff_mean_intervals(y, eps, bounds=bounds, levels=K)
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
    lefts, rights, utils, probs = M.duff_mean_intervals(x, 0.5, bounds=(-10.0, 10.0))
    mean = float(np.mean(x))
    err = float(np.sum(probs * np.abs(0.5 * (lefts + rights) - mean)))
    assert err < 0.2


# ---------------------------------------------------------------------------
# NRS smooth sensitivity of the median (replace-one)
# ---------------------------------------------------------------------------


def smooth_sens_quadratic(x, beta, bounds, index):
    a, b = bounds
    ext = np.concatenate(([a], np.sort(x), [b]))
    n = len(x)
    m = index + 1
    best = 0.0
    for i in range(0, m + 1):
        for j in range(m, n + 2):
            if i < j:
                best = max(best, (ext[j] - ext[i]) * math.exp(-beta * (j - i - 1)))
    return best


def test_smooth_sensitivity_vs_quadratic_bruteforce():
    rng = np.random.default_rng(21)
    for trial in range(200):
        n = int(rng.integers(1, 41))
        kind = trial % 4
        if kind == 0:
            x = rng.integers(0, 6, size=n).astype(float)  # ties, values at the bounds
        elif kind == 1:
            x = rng.uniform(0, 5, size=n)
        elif kind == 2:
            x = np.where(rng.random(n) < 0.4, rng.choice([0.0, 5.0], size=n), rng.uniform(0, 5, size=n))
        else:
            x = np.full(n, float(rng.integers(0, 6)))
        beta = float(rng.choice([0.01, 0.1, 0.5, 2.0, 30.0]))
        got = O.smooth_sensitivity_median(x, beta, bounds=(0.0, 5.0))
        want = smooth_sens_quadratic(x, beta, (0.0, 5.0), (n + 1) // 2 - 1)
        assert got == pytest.approx(want, rel=1e-12, abs=1e-300), (x, beta)
        idx = int(rng.integers(0, n))
        gq = O.smooth_sensitivity_quantile(x, beta, bounds=(0.0, 5.0), index=idx)
        assert gq == pytest.approx(smooth_sens_quadratic(x, beta, (0.0, 5.0), idx), rel=1e-12, abs=1e-300)
        ls = O.local_sensitivity_median(x, bounds=(0.0, 5.0))
        assert O.smooth_sensitivity_median(x, beta, bounds=(0.0, 5.0)) >= ls


def _ls_bruteforce_grid(y, grid):
    """LS of the lower median over replace-one neighbours with values in the grid."""
    med = _lower_median(y)
    best = 0
    for i in range(len(y)):
        for v in grid:
            z = y[:i] + (v,) + y[i + 1 :]
            best = max(best, abs(_lower_median(z) - med))
    return best


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_smooth_sensitivity_vs_true_bfs(n):
    grid = range(5)
    states = list(itertools.combinations_with_replacement(grid, n))
    ls = {s: _ls_bruteforce_grid(s, grid) for s in states}
    for s in states:
        assert ls[s] == O.local_sensitivity_median(np.array(s, float), bounds=(0, 4))
    # replace-one graph
    adj = {}
    for s in states:
        nb = set()
        for i in range(n):
            for v in grid:
                nb.add(tuple(sorted(s[:i] + (v,) + s[i + 1 :])))
        nb.discard(s)
        adj[s] = nb
    for beta in (0.1, 0.7, 2.0):
        for s in states:
            dist = {s: 0}
            q = deque([s])
            while q:
                c = q.popleft()
                for d in adj[c]:
                    if d not in dist:
                        dist[d] = dist[c] + 1
                        q.append(d)
            true = max(ls[y] * math.exp(-beta * dist[y]) for y in states)
            got = O.smooth_sensitivity_median(np.array(s, float), beta, bounds=(0.0, 4.0))
            assert got == pytest.approx(true, rel=1e-12), (s, beta)


def test_smooth_sensitivity_large_n_fast():
    import time

    x = np.random.default_rng(0).uniform(size=200_000)
    t0 = time.perf_counter()
    s = O.smooth_sensitivity_median(x, 0.01, bounds=(0.0, 1.0))
    assert time.perf_counter() - t0 < 5.0
    assert s >= O.local_sensitivity_median(x, bounds=(0.0, 1.0))


# ---------------------------------------------------------------------------
# neighbours, bad inputs
# ---------------------------------------------------------------------------


def test_neighbours():
    nb = M.neighbours([1.0, 1.0, 3.0], bounds=(0, 4), values=[0.0, 4.0])
    as_lists = [list(v) for v in nb]
    assert as_lists == [[1.0, 3.0], [1.0, 1.0], [0.0, 1.0, 1.0, 3.0], [1.0, 1.0, 3.0, 4.0]]
    assert len(M.neighbours([2.0], bounds=(0, 4))) == 3  # no empty dataset; adds at 0, 2, 4
    with pytest.raises(ValueError, match="values"):
        M.neighbours([1.0], bounds=(0, 4), values=[5.0])


def _calls():
    good_x = [1.0, 2.0, 3.0]
    return [
        lambda x, e, bd: M.duff_median(x, e, bounds=bd, rng=GEN),
        lambda x, e, bd: M.duff_median_intervals(x, e, bounds=bd),
        lambda x, e, bd: M.expected_absolute_error(x, e, bounds=bd),
        lambda x, e, bd: M.duff_mean(x, e, bounds=bd, rng=GEN),
        lambda x, e, bd: O.smooth_sensitivity_median(x, e, bounds=bd),
    ], good_x


GEN = np.random.default_rng(0)

bad_eps = st.sampled_from([0.0, -1.0, float("nan"), float("inf"), "1", None, True])
bad_bounds = st.sampled_from(
    [(1.0, 1.0), (3.0, 0.0), (0.0,), (float("nan"), 1.0), (0.0, float("inf")), "ab", 5, (-1e308, 1e308)]
)
bad_x = st.sampled_from([[], [float("nan")], [1.0, 11.0], [-0.5], [[1.0, 2.0]], ["a"], [float("inf")], [1 + 2j]])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(which=st.integers(0, 4), what=st.integers(0, 2), e=bad_eps, bd=bad_bounds, x=bad_x)
def test_bad_inputs_raise_before_randomness(which, what, e, bd, x):
    calls, good_x = _calls()
    args = [good_x, 1.0, (0.0, 10.0)]
    args[what] = [x, e, bd][what]
    state = GEN.bit_generator.state
    with pytest.raises((ValueError, TypeError)):
        calls[which](*args)
    assert GEN.bit_generator.state == state


@pytest.mark.parametrize(
    "call",
    [
        lambda: M.duff_median([1.0], 1.0, bounds=(0, 2), size=0),
        lambda: M.duff_median([1.0], 1.0, bounds=(0, 2), rng=-1),
        lambda: M.duff_median([1.0], 1.0, bounds=(0, 2), method="x"),
        lambda: M.duff_mode([1.0], 1.0, candidates=[1.0, 1.0]),
        lambda: M.duff_mode([1.0], 0.0, candidates=[1.0]),
        lambda: M.duff_mode([], 1.0),
        lambda: M.duff_mean([1.0], 1.0, bounds=(0, 2), levels=0),
        lambda: M.duff_mean([1.0], 1.0, bounds=(0, 2), levels=2.5),
        lambda: O.smooth_sensitivity_quantile([1.0, 2.0], 1.0, bounds=(0, 2), index=2),
        lambda: O.smooth_sensitivity_quantile([1.0, 2.0], 0.0, bounds=(0, 2), index=0),
        lambda: M.duff_median_utility(3.0, [1.0], bounds=(0, 2)),
        lambda: M.output_cdf(float("nan"), [1.0], epsilon=1.0, bounds=(0, 2)),
    ],
)
def test_more_bad_inputs(call):
    with pytest.raises((ValueError, TypeError)):
        call()


# ---------------------------------------------------------------------------
# API: compatibility module, keyword-only arguments, budget accountant
# ---------------------------------------------------------------------------


def test_median_module_reexports_the_split_modules():
    from dpselect.apps import median

    assert median.private_median is median.duff_median is M.duff_median
    assert median.duff_mean is MEAN.duff_mean and median.duff_mode is M.duff_mode
    assert median.smooth_sensitivity_median is O.smooth_sensitivity_median
    assert set(median.__all__) >= set(M.__all__) | set(O.__all__)


@pytest.mark.parametrize(
    "call",
    [
        lambda: M.duff_median([1.0], 1.0, (0, 2)),
        lambda: M.duff_mean([1.0], 1.0, (0, 2)),
        lambda: M.duff_mode([1.0], 1.0, None, [1.0]),
        lambda: M.expected_absolute_error([1.0], 1.0, (0, 2)),
        lambda: O.smooth_sensitivity_median([1.0], 1.0, (0, 2)),
    ],
)
def test_keyword_only(call):
    with pytest.raises(TypeError, match="positional"):
        call()


ACCOUNTED = [
    lambda acc, g: M.duff_median([1.0, 2.0, 3.0], 0.5, bounds=(0, 4), rng=g, accountant=acc),
    lambda acc, g: M.duff_median([1.0, 2.0, 3.0], 0.5, bounds=(0, 4), rng=g, size=5, accountant=acc),
    lambda acc, g: M.duff_mean([1.0, 2.0, 3.0], 0.5, bounds=(0, 4), rng=g, accountant=acc),
    lambda acc, g: M.duff_mode([1.0, 1.0, 3.0], 0.5, candidates=[1.0, 3.0], rng=g, accountant=acc),
    lambda acc, g: M.duff_mode([1.0, 1.0, 3.0], 0.5, candidates=[1.0, 3.0], rng=g, size=4, accountant=acc),
]


@pytest.mark.parametrize("call", ACCOUNTED)
def test_accountant_charged_before_randomness(call):
    acc = dpselect.Accountant(1.0)
    call(acc, np.random.default_rng(0))
    assert acc.spent.epsilon == pytest.approx(0.5) and acc.spent.delta == 0
    assert acc.spent.relation == "add_remove"
    call(acc, np.random.default_rng(0))
    gen = np.random.default_rng(1)
    state = gen.bit_generator.state
    with pytest.raises(BudgetExceededError):
        call(acc, gen)  # a third charge of 0.5 exceeds the budget 1.0
    assert gen.bit_generator.state == state and len(acc.charges) == 2
