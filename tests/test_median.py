"""Duff median (SPEC.md §6.1): utility vs BFS, exact law, sampling, audit; the apps.median compatibility API."""

from __future__ import annotations

import itertools
import math
from collections import deque

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

import dpselect
from conftest import assert_frequencies_match
from dpselect.accounting import BudgetExceededError
from dpselect.apps import counts as C
from dpselect.apps import quantiles as M
from dpselect.apps.quantiles import _order_stats as O
from dpselect.apps.quantiles._duff import mean as MEAN
from dpselect.apps.quantiles._duff import median_masses as ML
from dpselect.apps.quantiles._exponential import piecewise_em as PW


def _pieces(law):
    """(lo, hi, p) of a law over pieces."""
    return law.lo, law.hi, law.probabilities


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
        nxt |= {tuple(sorted((*state, v))) for v in pool}
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
        mids = [(p + q) / 2 for p, q in itertools.pairwise(pts)]
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
    lefts, rights, probs = _pieces(M.duff_median_intervals(data, eps, bounds=bounds))
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
        _, _, probs = _pieces(M.duff_median_intervals(data, eps, bounds=(0.0, 10.0)))
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
    lefts, rights, _ = _pieces(M.duff_median_intervals(x, eps, bounds=bounds))
    pts = np.unique(np.concatenate((lefts, rights)))
    pdf = lambda s: M.duff_median_pdf(s, x, epsilon=eps, bounds=bounds)
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
        lefts, rights, _ = _pieces(M.duff_median_intervals(data, eps, bounds=bounds))
        c = float(np.sort(data)[math.ceil(len(data) / 2) - 1]) if target is None else target
        F = lambda t: M.output_cdf(t, data, epsilon=eps, bounds=bounds)
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
    draws = M.duff_median(x, 0.1, bounds=(-10.0, 10.0), rng=0, size=20_000, granularity=0)
    assert np.mean(np.abs(draws - np.sort(x)[499])) == pytest.approx(err, rel=0.05)


def test_large_n_small_eps_fast_path_matches_log_path():
    # the logless geometric weighting used for wide windows gives the same law
    x = np.random.default_rng(0).normal(size=200_001)
    for eps in (1e-3, 1e-5):
        ext = O.sorted_padded(x, -10.0, 10.0)
        jlo, jhi, mx, s, wide = ML._median_plan(ext, eps)
        assert wide and jhi - jlo + 1 > ML._FAST_WINDOW and s >= mx
        w = ML._median_fast_masses(ext, eps, jlo, jhi, s)
        p_fast = w / w.sum()
        p_log = PW._normalise_log(ML._median_window_log_masses(ext, eps, jlo, jhi))
        np.testing.assert_allclose(p_fast, p_log, rtol=1e-9, atol=1e-300)
        draws = M.duff_median(x, eps, bounds=(-10.0, 10.0), rng=1, size=5000, granularity=0)
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
        _, _, probs = _pieces(M.duff_median_intervals(x, eps, bounds=(0.0, 1.0)))
        ext = O.sorted_padded(x, 0.0, 1.0)
        full = PW._normalise_log(ML._median_window_log_masses(ext, eps, 0, x.size))
        np.testing.assert_allclose(probs, full, rtol=1e-12, atol=0)


def test_heavy_ties_and_data_at_bounds():
    x = np.array([0.0] * 5 + [3.0] * 20 + [10.0] * 4)
    lefts, rights, probs = _pieces(M.duff_median_intervals(x, 2.0, bounds=(0.0, 10.0)))
    assert probs.sum() == pytest.approx(1.0)
    nz = probs > 0
    assert np.all(rights[nz] > lefts[nz])
    # only the two non-empty intervals (0,3) and (3,10) carry mass
    assert nz.sum() == 2
    d = M.duff_median(x, 2.0, bounds=(0.0, 10.0), rng=0, size=1000)
    assert np.all((d >= 0) & (d <= 10))
    # all-equal data
    y = np.full(7, 4.0)
    _, _, p = _pieces(M.duff_median_intervals(y, 1.0, bounds=(0.0, 10.0)))
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
        nbrs = M.median_neighbours(x, bounds=bounds, values=np.arange(11.0))
        assert len(nbrs) == (np.unique(x).size if x.size > 1 else 0) + 11
        for y in nbrs:
            loss = _max_log_density_ratio(x, y, eps, bounds)
            assert loss <= eps * (1 + 1e-9), (x, y, loss)
            worst = max(worst, loss)
            n_pairs += 1
    assert n_pairs > 1000
    assert worst > 0.8 * eps  # close to the bound: the audit is not vacuous


# ---------------------------------------------------------------------------
# neighbours, bad inputs
# ---------------------------------------------------------------------------


def test_neighbours():
    nb = M.median_neighbours([1.0, 1.0, 3.0], bounds=(0, 4), values=[0.0, 4.0])
    as_lists = [list(v) for v in nb]
    assert as_lists == [[1.0, 3.0], [1.0, 1.0], [0.0, 1.0, 1.0, 3.0], [1.0, 1.0, 3.0, 4.0]]
    assert len(M.median_neighbours([2.0], bounds=(0, 4))) == 3  # no empty dataset; adds at 0, 2, 4
    with pytest.raises(ValueError, match="values"):
        M.median_neighbours([1.0], bounds=(0, 4), values=[5.0])


def _calls():
    good_x = [1.0, 2.0, 3.0]
    return [
        lambda x, e, bd: M.duff_median(x, e, bounds=bd, rng=GEN),
        lambda x, e, bd: _pieces(M.duff_median_intervals(x, e, bounds=bd)),
        lambda x, e, bd: M.expected_absolute_error(x, e, bounds=bd),
        lambda x, e, bd: M.duff_mean(x, e, bounds=bd, rng=GEN),
        lambda x, e, bd: O.smooth_sensitivity_median(x, e, bounds=bd),
    ], good_x


GEN = np.random.default_rng(0)

bad_eps = st.sampled_from([0.0, -1.0, float("nan"), float("inf"), "1", None, True])
bad_bounds = st.sampled_from(
    [(1.0, 1.0), (3.0, 0.0), (0.0,), (float("nan"), 1.0), (0.0, float("inf")), "ab", 5, (-1e308, 1e308)]
)
# (records outside the bounds are clamped, not refused: tests/test_out_of_bounds.py)
bad_x = st.sampled_from([[], [float("nan")], [[1.0, 2.0]], ["a"], [float("inf")], [1 + 2j]])


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
        lambda: C.duff_mode([1.0], 1.0, candidates=[1.0, 1.0]),
        lambda: C.duff_mode([1.0], 0.0, candidates=[1.0]),
        lambda: C.duff_mode([], 1.0),
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


def test_quantiles_face_is_the_one_import_path():
    from dpselect.apps import quantiles

    # private_median is the integer-aware quantile mechanism at q = 1/2 (Duff's law on continuous data;
    # the same float draw with granularity=0, the same grid law otherwise: tests/test_fp_quantiles.py)
    x = [0.1, 0.35, 0.4, 0.45, 0.5, 0.8]
    assert quantiles.private_median(x, 2.0, bounds=(0, 1), rng=3, granularity=0) == quantiles.duff_median(
        x, 2.0, bounds=(0, 1), rng=3, granularity=0
    )
    assert quantiles.duff_mean is MEAN.duff_mean
    assert quantiles.smooth_sensitivity_median is O.smooth_sensitivity_median
    assert set(quantiles.__all__) >= set(O.__all__) | set(MEAN.__all__)


@pytest.mark.parametrize(
    "call",
    [
        lambda: M.duff_median([1.0], 1.0, (0, 2)),
        lambda: M.duff_mean([1.0], 1.0, (0, 2)),
        lambda: C.duff_mode([1.0], 1.0, None, [1.0]),
        lambda: M.expected_absolute_error([1.0], 1.0, (0, 2)),
        lambda: O.smooth_sensitivity_median([1.0], 1.0, (0, 2)),
    ],
)
def test_keyword_only(call):
    with pytest.raises(TypeError, match="positional"):
        call()


ACCOUNTED = [
    lambda acc, g: M.duff_median([1.0, 2.0, 3.0], 0.5, bounds=(0, 4), rng=g, accountant=acc),
    lambda acc, g: M.duff_median([1.0, 2.0, 3.0], 0.25, bounds=(0, 4), rng=g, size=2, accountant=acc),  # 2 x 0.25
    lambda acc, g: M.duff_mean([1.0, 2.0, 3.0], 0.5, bounds=(0, 4), rng=g, accountant=acc),
    lambda acc, g: C.duff_mode([1.0, 1.0, 3.0], 0.5, candidates=[1.0, 3.0], rng=g, accountant=acc),
    lambda acc, g: C.duff_mode([1.0, 1.0, 3.0], 0.25, candidates=[1.0, 3.0], rng=g, size=2, accountant=acc),
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
