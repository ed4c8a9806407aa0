"""Percentile selection over a public grid (apps.percentile): t* vs BFS, paths, DPBench."""

from __future__ import annotations

import itertools
import math
import os
import warnings
from collections import deque
from dataclasses import astuple
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpselect
from conftest import CachedMechanism, assert_frequencies_match, scores_and_profile
from dpselect import ExponentialMechanism, PermuteAndFlip, ReportNoisyMax
from dpselect._warnings import PrivacyLeakWarning
from dpselect.analysis import audit, expected_error
from dpselect.apps import quantiles as Q
from dpselect.apps.quantiles._percentile import percentile as pct
from dpselect.apps.quantiles._percentile.grid import bin_counts, rank, snap, stability
from dpselect.experiments import _quantile_papers as papers

# ---------------------------------------------------------------------------
# brute force over (L, E, G) states (modelled on spec-checks/percentile_bfs.py)
# ---------------------------------------------------------------------------
# Data on the grid [0, 1, 2]: L records at 0, E at 1, G at 2; v = 1 is the
# percentile value.  The BFS uses the library's rank convention
# k = max(1, floor(p n / 100)); the empty dataset has no percentile.

XL, XE, XG = 30, 10, 12  # checked states: L < XL, 1 <= E < XE, G < XG
MARGIN = 11  # add/remove BFS box: coordinate i < X_i + MARGIN (asserted large enough)
B_AR = (XL + MARGIN, XE + MARGIN, XG + MARGIN)
N_RO = XL + XE + XG  # replace keeps n fixed: enumerate every state with n <= N_RO


def _value(s, p, conv="paper"):
    L, E, G = s
    n = L + E + G
    if n == 0:
        return None
    k = max(1, math.floor(p * n / 100)) if conv == "paper" else min(math.floor(p * n / 100) + 1, n)
    return 0 if k <= L else (1 if k <= L + E else 2)


def _nbrs(s, rel):
    if rel == "add_remove":
        for i in range(3):
            for d in (1, -1):
                t = list(s)
                t[i] += d
                if t[i] >= 0:
                    yield tuple(t)
    else:
        for i in range(3):
            if s[i]:
                for j in range(3):
                    if j != i:
                        t = list(s)
                        t[i] -= 1
                        t[j] += 1
                        yield tuple(t)


def _bfs_tstar(p, rel, conv="paper"):
    """Distance from every state to the nearest state with LS = 1 (multi-source BFS)."""
    if rel == "add_remove":
        states = list(itertools.product(*(range(b) for b in B_AR)))
        inside = lambda t: all(a < b for a, b in zip(t, B_AR))
    else:
        states = [s for s in itertools.product(range(N_RO + 1), repeat=3) if sum(s) <= N_RO]
        inside = lambda t: True
    ls1 = [s for s in states if any(_value(t, p, conv) != _value(s, p, conv) for t in _nbrs(s, rel))]
    dist = {s: 0 for s in ls1}
    q = deque(ls1)
    while q:
        s = q.popleft()
        for t in _nbrs(s, rel):
            if inside(t) and t not in dist:
                dist[t] = dist[s] + 1
                q.append(t)
    return dist


def _checked_states(p, conv="paper"):
    for L in range(XL):
        for E in range(1, XE):
            for G in range(XG):
                if _value((L, E, G), p, conv) == 1:
                    yield (L, E, G)


def _lib_tstar(s, p, rel, conv="paper"):
    L, E, G = s
    pr = pct.percentile_problem([0] * L + [1] * E + [2] * G, p, [0, 1, 2], relation=rel, rank_convention=conv)
    assert pr.local_sensitivity(0) in (0.0, 1.0)
    t = next(t for t in range(200) if pr.local_sensitivity(t) == 1.0)
    assert pr.smooth_sensitivity(0.3) == pytest.approx(math.exp(-0.3 * t), rel=1e-12)
    np.testing.assert_allclose(pr.candidate_smooth_sensitivity(0.3), math.exp(-0.3 * t), rtol=1e-12)
    return t


@pytest.mark.parametrize("conv", ["paper", "code"])
@pytest.mark.parametrize("p", [50, 90, 99])
def test_tstar_add_remove_vs_bfs(p, conv):
    dist = _bfs_tstar(p, "add_remove", conv)
    n_eq = n_states = 0
    for s in _checked_states(p, conv):
        bf = dist[s]
        assert all(a + bf < b for a, b in zip(s, B_AR))  # the shortest path stayed inside the box
        lib = _lib_tstar(s, p, "add_remove", conv)
        st_ = pct.percentile_stability([0] * s[0] + [1] * s[1] + [2] * s[2], p, [0, 1, 2], rank_convention=conv)
        _k, v, jl, jg = st_.rank, st_.index, st_.below, st_.above
        assert v == 1 and jl + jg + 1 == s[1]
        if p == 50:
            assert lib == bf, (s, lib, bf)  # exact (SPEC §4.3)
        else:
            assert lib == min(jl, jg) <= bf, (s, lib, bf)  # valid lower bound
        n_eq += lib == bf
        n_states += 1
    assert n_states > 250
    print(f"p={p}, {conv} ranks: library t* exact in {n_eq}/{n_states} states")


@pytest.mark.parametrize("conv", ["paper", "code"])
@pytest.mark.parametrize("p", [50, 90, 99])
def test_tstar_replace_is_valid_lower_bound(p, conv):
    dist = _bfs_tstar(p, "replace", conv)
    for s in _checked_states(p, conv):
        lib = _lib_tstar(s, p, "replace", conv)
        st_ = pct.percentile_stability([0] * s[0] + [1] * s[1] + [2] * s[2], p, [0, 1, 2], rank_convention=conv)
        jl, jg = st_.below, st_.above
        assert lib == min(jl, jg) // 2 <= dist[s], (s, lib, dist[s])


def test_paper_s_is_too_small_at_p50():
    # n even, j_l = 0: t* = 0 (LS = 1) while the paper's S = e^{-(2j+1) beta} < 1 (errata 14)
    data = [0, 1, 1, 2]  # n = 4, k = 2: rank 2 is the first 1, so j_l = 0, j_g = 1
    st_ = pct.percentile_stability(data, 50, [0, 1, 2])
    assert (st_.rank, st_.index, st_.below, st_.above) == (2, 1, 0, 1)
    assert pct.percentile_problem(data, 50, [0, 1, 2]).smooth_sensitivity(0.2) == 1.0


# ---------------------------------------------------------------------------
# snapping, rank conventions, histogram path
# ---------------------------------------------------------------------------


def test_snapping_and_rank():
    grid = [0.0, 1.0, 2.0, 4.0]
    # 0.5 is half-way -> lower point 0; 3.0 is half-way between 2 and 4 -> 2; 3.1 -> 4
    h = bin_counts(np.array([0.5, 0.49, 0.51, 3.0, 3.1, 4.0]), np.asarray(grid), False)
    np.testing.assert_array_equal(h, [2, 1, 1, 2])
    assert rank(0, 10) == 1 and rank(100, 10) == 10 and rank(50, 1) == 1
    assert rank(50, 7) == 3 and rank(90, 10) == 9 and rank(99, 100) == 99
    assert pct.true_percentile([3, 1, 2, 5, 4], 50, np.arange(6)) == 2  # k = 2 (1-indexed)
    assert pct.true_percentile([3, 1, 2, 5, 4], 0, np.arange(6)) == 1
    assert pct.true_percentile([3, 1, 2, 5, 4], 100, np.arange(6)) == 5
    assert pct.true_percentile([7.0], 50, [7.0]) == 7.0


def test_histogram_path_equals_raw_path():
    rng = np.random.default_rng(5)
    for _ in range(60):
        G = int(rng.integers(1, 40))
        grid = np.sort(rng.choice(np.linspace(-5, 5, 400), size=G, replace=False))
        n = int(rng.integers(1, 300))
        data = rng.uniform(grid[0], grid[-1], size=n)
        if rng.random() < 0.5:  # many duplicates on grid points
            data = rng.choice(grid, size=n)
        h = np.bincount(snap(data, grid), minlength=G)
        p = float(rng.choice([0, 3.5, 25, 50, 90, 99, 100, rng.uniform(0, 100)]))
        for rel in ("add_remove", "replace"):
            a = pct.percentile_problem(data, p, grid, relation=rel)
            b = pct.percentile_problem(h, p, grid, histogram=True, relation=rel)
            np.testing.assert_array_equal(a.scores, b.scores)
            assert a.smooth_sensitivity(0.1) == b.smooth_sensitivity(0.1)
            assert a.relation == b.relation == rel
        assert pct.percentile_stability(data, p, grid) == pct.percentile_stability(h, p, grid, histogram=True)
        # against a direct sort of the snapped records
        snapped = np.sort(grid[snap(data, grid)])
        k = max(1, math.floor(p * n / 100))
        assert pct.true_percentile(data, p, grid) == snapped[k - 1]
        st_ = pct.percentile_stability(data, p, grid)
        kk, _v, jl, jg = st_.rank, st_.index, st_.below, st_.above
        assert kk == k
        assert jl == int((snapped[: k - 1] == snapped[k - 1]).sum())
        assert jg == int((snapped[k:] == snapped[k - 1]).sum())


def test_problem_attributes_and_loss():
    grid = np.array([10, 20, 30, 40])
    pr = pct.percentile_problem([12, 19, 31, 33, 40], 50, grid)
    assert pr.labels == (10, 20, 30, 40) and pr.global_sensitivity == 1.0 and not pr.monotone
    np.testing.assert_array_equal(pr.scores, [0, 1, 0, 0])
    assert pr.relation == "add_remove"
    loss = pct.absolute_error_loss(grid, 20)
    np.testing.assert_array_equal(loss(pr.scores), [10, 0, 10, 20])
    mech = ExponentialMechanism(1.0)
    assert expected_error(mech, pr, loss=loss) == pytest.approx(mech.probabilities(pr) @ [10, 0, 10, 20])
    with pytest.raises(ValueError, match="candidates"):
        loss(np.zeros(3))


def test_private_percentile_returns_grid_values_and_matches_exact_probabilities():
    rng = np.random.default_rng(0)
    grid = np.linspace(0, 10, 11)
    data = rng.normal(5, 1.5, size=60).clip(0, 10)
    for name in ("em", "pf", "rnm_laplace"):
        for s in range(5):
            out = pct.private_percentile(data, 90, 2.0, grid, mechanism=name, rng=s)
            assert out in grid
    pr = pct.percentile_problem(data, 90, grid)
    for mech in (ExponentialMechanism(1.5), PermuteAndFlip(1.5), ReportNoisyMax(1.5, "laplace")):
        draws = mech.select(pr, size=100_000, rng=np.random.default_rng(1))
        assert_frequencies_match(draws, mech.probabilities(pr), n_se=5.0)
    # the convenience function draws from the law of its default, PF on the rank utility
    outs = np.array([pct.private_percentile(data, 90, 0.5, grid, rng=s) for s in range(1500)])
    idx = np.searchsorted(grid, outs)
    law = PermuteAndFlip(0.5).probabilities(pct.percentile_problem(data, 90, grid, utility="rank"))
    assert_frequencies_match(idx, law)
    outs = np.array(
        [pct.private_percentile(data, 90, 1.5, grid, mechanism="em", utility="indicator", rng=s) for s in range(1500)]
    )
    assert_frequencies_match(np.searchsorted(grid, outs), ExponentialMechanism(1.5).probabilities(pr))


def test_exact_audit_on_raw_neighbours():
    rng = np.random.default_rng(8)
    grid = np.array([0.0, 1.0, 2.0, 3.0])
    for rel in ("add_remove", "replace"):
        pairs = []
        for _ in range(25):
            data = rng.choice(grid, size=int(rng.integers(1, 7)))
            x = pct.percentile_problem(data, 50, grid, relation=rel)
            pairs += [
                (x, pct.percentile_problem(y, 50, grid, relation=rel))
                for y in Q.percentile_neighbours(data, grid, relation=rel)
            ]
        for mech in (ExponentialMechanism(0.8), PermuteAndFlip(0.8), ReportNoisyMax(0.8, "laplace")):
            rep = audit(CachedMechanism(mech), pairs)
            assert not rep.violates and rep.max_loss <= 0.8 * (1 + 1e-9), str(rep)


def test_neighbours():
    grid = [0.0, 1.0, 2.0]
    nb = Q.percentile_neighbours([0.0, 0.0, 2.0], grid)
    as_sets = sorted(tuple(sorted(y)) for y in nb)
    assert as_sets == sorted({(0.0, 2.0), (0.0, 0.0), (0.0, 0.0, 0.0, 2.0), (0.0, 0.0, 1.0, 2.0), (0.0, 0.0, 2.0, 2.0)})
    one = sorted(tuple(sorted(y)) for y in Q.percentile_neighbours([1.0], grid))
    assert one == [(0.0, 1.0), (1.0, 1.0), (1.0, 2.0)]
    ro = sorted(tuple(sorted(y)) for y in Q.percentile_neighbours([0.0, 2.0], grid, relation="replace"))
    assert ro == sorted({(1.0, 2.0), (2.0, 2.0), (0.0, 0.0), (0.0, 1.0)})
    with pytest.raises(ValueError, match="p"):
        Q.percentile_neighbours([0.0], grid, p=101)


# ---------------------------------------------------------------------------
# the paper's variant
# ---------------------------------------------------------------------------


def test_paper_problem_warns_and_reproduces_the_code():
    x = np.array([5, 1, 3, 3, 3, 3, 9, 3])  # sorted: 1 3 3 3 3 3 5 9; code index floor(8/2) = 4
    with pytest.warns(PrivacyLeakWarning, match="NOT differentially private"):
        pr = papers.paper_problem(x, 50)
    np.testing.assert_array_equal(pr.scores, [0, 1, 1, 1, 1, 1, 0, 0])
    assert pr.labels == (1, 3, 3, 3, 3, 3, 5, 9)
    # j_l = 3 (positions 1..3), j_g = 1 (position 5): j = 1, S = e^{-3 beta}
    assert pr.smooth_sensitivity(0.4) == pytest.approx(math.exp(-1.2))
    with pytest.warns(PrivacyLeakWarning):
        fixed = papers.paper_problem(x, 50, beta=0.1)
    assert fixed.smooth_sensitivity(0.7) == pytest.approx(math.exp(-0.3))
    with pytest.warns(PrivacyLeakWarning):
        pp = papers.paper_problem(x, 50, rank_convention="paper")  # rank 4 -> index 3: j_l = 2, j_g = 2
    assert pp.smooth_sensitivity(1.0) == pytest.approx(math.exp(-5.0))
    with pytest.warns(PrivacyLeakWarning):
        assert papers.paper_problem([2.0, 1.0], 100).scores.tolist() == [0.0, 1.0]  # clamped index


# ---------------------------------------------------------------------------
# DPBench (skipped without the data)
# ---------------------------------------------------------------------------


def _dpbench_dir():
    d = os.environ.get("DPSELECT_DATA")
    if not d:
        pytest.skip("DPSELECT_DATA is not set")
    for name in papers.DPBENCH_NAMES:
        if not any((Path(d) / sub / f"{name}.n4096.npy").is_file() for sub in ("dpbench_1d", ".")):
            pytest.skip(f"{name}.n4096.npy not found under {d}")
    return d


def test_dpbench_stability_table(capsys):
    d = _dpbench_dir()
    grid = np.arange(4096)
    rows = []
    paper_j = {}
    for name in papers.DPBENCH_NAMES:
        h = papers.load_dpbench(name, d)
        assert h.shape == (4096,) and h.dtype == np.int64
        sub = Path(d) / "dpbench_1d"
        assert np.array_equal(h, papers.load_dpbench(name.lower(), sub if sub.is_dir() else Path(d)))
        x = np.sort(h)  # the authors' code: sorted bin counts treated as 4096 data points
        hx = np.bincount(x, minlength=int(x.max()) + 1)
        for p in (50, 90, 99):
            n = int(h.sum())
            _k, v, jl, jg = astuple(pct.percentile_stability(h, p, grid, histogram=True))
            pr = pct.percentile_problem(h, p, grid, histogram=True)
            assert pr.scores[v] == 1.0 and pr.scores.sum() == 1.0
            prof = pr._ls  # StepProfile([0, t*], [0, 1]) or constant 1
            t = 0 if prof.values[0] == 1.0 else int(prof.breakpoints[-1])
            assert pr.local_sensitivity(t) == 1.0 and (t == 0 or pr.local_sensitivity(t - 1) == 0.0)
            assert t == (min(2 * jl + n % 2, 2 * jg + 1 - n % 2) if p == 50 else min(jl, jg))
            kc = math.floor(p * x.size / 100) + 1  # code: 0-indexed floor(p n/100)
            vc, jlc, jgc = stability(hx, kc)
            _kp, vp, jlp, jgp = astuple(pct.percentile_stability(x, p, np.arange(hx.size)))
            rows.append((name, p, n, v, jl, jg, t, vc, jlc, jgc, vp, jlp, jgp))
            if p == 50:
                paper_j[name] = min(jlc, jgc)
                with pytest.warns(PrivacyLeakWarning):
                    ppr = papers.paper_problem(h, 50)
                assert ppr.smooth_sensitivity(1.0) == pytest.approx(math.exp(-(2 * paper_j[name] + 1)))
    with capsys.disabled():
        print(
            "\n dataset  p   n           v_bin  j_l    j_g    t*      | sorted-counts: code x  j_l j_g "
            "| paper-rank x j_l j_g"
        )
        for r in rows:
            print(
                " {:7s} {:2d}  {:<10d}  {:5d}  {:5d}  {:5d}  {:6d}  | {:>8d} {:3d} {:3d} | {:>8d} {:3d} {:3d}".format(
                    *r
                )
            )
    # the published j for p = 50 (HEPTH 2, PATENT 0, INCOME 10) come from the code's rank convention
    assert paper_j == {"HEPTH": 2, "PATENT": 0, "INCOME": 10}


def test_load_dpbench_errors(tmp_path, monkeypatch):
    monkeypatch.delenv("DPSELECT_DATA", raising=False)
    with pytest.raises(FileNotFoundError, match="DPSELECT_DATA"):
        papers.load_dpbench("HEPTH")
    with pytest.raises(FileNotFoundError, match=r"HEPTH\.n4096\.npy"):
        papers.load_dpbench("HEPTH", tmp_path)
    with pytest.raises(ValueError, match="name"):
        papers.load_dpbench("ADULT", tmp_path)
    np.save(tmp_path / "PATENT.n4096.npy", np.arange(4096))
    monkeypatch.setenv("DPSELECT_DATA", str(tmp_path))
    np.testing.assert_array_equal(papers.load_dpbench("patent"), np.arange(4096))


# ---------------------------------------------------------------------------
# bad inputs
# ---------------------------------------------------------------------------


def test_bad_inputs():
    grid = [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match=r"\bx\b"):
        pct.percentile_problem([], 50, grid)
    with pytest.raises(ValueError, match=r"\bx\b"):
        pct.percentile_problem([0.0, np.nan], 50, grid)
    with pytest.raises(ValueError, match=r"\bx\b"):  # out of the grid range: clamped unless asked to raise
        pct.percentile_problem([0.0, 3.0], 50, grid, on_out_of_bounds="raise")
    with pytest.raises(ValueError, match="on_out_of_bounds"):
        pct.percentile_problem([0.0, 1.0], 50, grid, on_out_of_bounds="ignore")
    with pytest.raises(ValueError, match=r"\bx\b"):
        pct.percentile_problem([0, 0, 0], 50, grid, histogram=True)
    with pytest.raises(ValueError, match=r"\bx\b"):
        pct.percentile_problem([1, 2], 50, grid, histogram=True)
    with pytest.raises(ValueError, match=r"\bx\b"):
        pct.percentile_problem([1, -2, 0], 50, grid, histogram=True)
    with pytest.raises(ValueError, match="p"):
        pct.percentile_problem([1.0], 101, grid)
    with pytest.raises(ValueError, match="p"):
        pct.percentile_problem([1.0], -0.5, grid)
    with pytest.raises(ValueError, match="p"):
        pct.percentile_problem([1.0], float("nan"), grid)
    with pytest.raises(ValueError, match="grid"):
        pct.percentile_problem([1.0], 50, grid[::-1])
    with pytest.raises(ValueError, match="grid"):
        pct.percentile_problem([1.0], 50, [0.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="grid"):
        pct.percentile_problem([1.0], 50, [0.0, np.inf])
    with pytest.raises(ValueError, match="grid"):
        pct.percentile_problem([1.0], 50, [])
    with pytest.raises(ValueError, match="relation"):
        pct.percentile_problem([1.0], 50, grid, relation="swap")
    with pytest.raises(TypeError, match="histogram"):
        pct.percentile_problem([1.0], 50, grid, histogram="yes")
    with pytest.raises(ValueError, match="epsilon"):
        pct.private_percentile([1.0], 50, 0.0, grid)
    with pytest.raises(ValueError, match="mechanism"):
        pct.private_percentile([1.0], 50, 1.0, grid, mechanism="median")
    with pytest.raises(ValueError, match="data"):  # validated before the warning
        papers.paper_problem([], 50)


def test_errors_before_randomness():
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    with pytest.raises(ValueError):
        pct.private_percentile([5.0], 50, 1.0, [0.0, 1.0], rng=gen, on_out_of_bounds="raise")
    assert gen.bit_generator.state == state


_grid_st = st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=12, unique=True).map(sorted)


@settings(max_examples=60, deadline=None)
@given(
    p=st.one_of(st.floats(max_value=-1e-9, allow_nan=False), st.floats(min_value=100.000001, allow_nan=False)),
    grid=_grid_st,
)
def test_hypothesis_p_out_of_range(p, grid):
    with pytest.raises(ValueError, match="p"):
        pct.percentile_problem([grid[0]], p, grid)


@settings(max_examples=60, deadline=None)
@given(grid=_grid_st, data=st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=8))
def test_hypothesis_bad_or_outside_data(grid, data):
    arr = np.asarray(data, dtype=float)
    outside = (arr < grid[0]).any() or (arr > grid[-1]).any()
    if not np.isfinite(arr).all():
        with pytest.raises(ValueError, match=r"\bx\b"):
            pct.percentile_problem(arr, 50, grid)
    else:  # records outside the grid range are clamped to it (or refused on request)
        pr = pct.percentile_problem(arr, 50, grid)
        assert pr.scores.sum() == 1.0
        assert np.array_equal(pr.scores, pct.percentile_problem(np.clip(arr, grid[0], grid[-1]), 50, grid).scores)
        if outside:
            with pytest.raises(ValueError, match=r"\bx\b"):
                pct.percentile_problem(arr, 50, grid, on_out_of_bounds="raise")


@settings(max_examples=60, deadline=None)
@given(grid=st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=2, max_size=10))
def test_hypothesis_non_increasing_grid(grid):
    if (np.diff(grid) > 0).all():
        assert pct.percentile_problem([grid[0]], 50, grid).n_candidates == len(grid)
    else:
        with pytest.raises(ValueError, match="grid"):
            pct.percentile_problem([grid[0]], 50, grid)


@settings(max_examples=60, deadline=None)
@given(counts=st.lists(st.integers(0, 50), min_size=1, max_size=20), p=st.floats(0, 100))
def test_hypothesis_histogram_consistency(counts, p):
    grid = np.arange(len(counts))
    if sum(counts) == 0:
        with pytest.raises(ValueError, match=r"\bx\b"):
            pct.percentile_problem(counts, p, grid, histogram=True)
        return
    raw = np.repeat(grid, counts).astype(float)
    assert pct.percentile_stability(counts, p, grid, histogram=True) == pct.percentile_stability(raw, p, grid)


def test_warnings_module_contract():
    assert issubclass(PrivacyLeakWarning, UserWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pct.percentile_problem([1.0], 50, [0.0, 1.0])  # the private path never warns


@pytest.mark.parametrize("p", [50, 90])
def test_exact_audit_of_instance_based_mechanisms_on_100_datasets(p):
    """SNM (t, Laplace), SPS and local dampening on all add/remove neighbours of 100 small datasets."""
    from dpselect import LocalDampening, SmoothNoisyMax, SmoothPrivateSelection

    rng = np.random.default_rng(11 + p)
    grid = np.arange(5.0)
    pairs = []
    for _ in range(100):
        data = rng.choice(grid, size=int(rng.integers(1, 9)), p=[0.1, 0.2, 0.4, 0.2, 0.1])
        x = pct.percentile_problem(data, p, grid)
        pairs += [(x, pct.percentile_problem(y, p, grid)) for y in Q.percentile_neighbours(data, grid)]
    mechs = (
        SmoothNoisyMax(1.0, noise="student_t"),
        SmoothNoisyMax(1.0, 1e-6, noise="laplace"),
        SmoothPrivateSelection(1.0),
        SmoothPrivateSelection(1.0, one_sided=False),
        LocalDampening(1.0),
    )
    for mech in mechs:
        rep = audit(CachedMechanism(mech, scores_and_profile), pairs)
        assert not rep.violates, str(rep)
        assert rep.max_loss > 0.05  # informative: some pair moves the output law


# ---------------------------------------------------------------------------
# the rank utility as the default (issue #11)
# ---------------------------------------------------------------------------


def _sorted_rank_distances(x, grid, k, P, Q):
    """Independent add/remove rank distance (paper ranks, p = 100 P/Q) from the sorted snapped data:
    max(0, L + 1 - k, k - C, min(L, ceil((Q(L+1) - P n)/w)), ceil((P n - Q(C+1) + 1)/w)), w = max(P, Q - P)."""
    xs = np.sort(x)
    n = xs.size
    low = np.searchsorted(xs, grid, side="left")  # records below the grid point
    c = np.searchsorted(xs, grid, side="right")  # records at or below
    w = max(P, Q - P)
    psi_a = np.minimum(low, -((P * n - Q * (low + 1)) // w))
    psi_b = -((Q * (c + 1) - 1 - P * n) // w)
    return np.maximum.reduce([np.zeros(grid.size, dtype=np.int64), low + 1 - k, k - c, psi_a, psi_b]).astype(float)


def test_issue_11_figure_rank_utility_vs_em_indicator():
    """N(0, 1), n = 1e5, 1001-point grid on [-5, 5], p = 90, eps = 1: E|err| 2.66 (EM, indicator) vs ~1e-3."""
    grid = np.linspace(-5, 5, 1001)
    eps, m = 1.0, grid.size
    ind, em_rank, pf_rank = [], [], []
    for seed in range(10):
        x = np.random.default_rng(seed).normal(size=100_000)
        xs = grid[snap(x, grid)]
        k = math.floor(90 * x.size / 100)
        truth = np.sort(xs)[k - 1]
        assert pct.true_percentile(x, 90, grid) == truth
        err = np.abs(grid - truth)
        # EM on the indicator, closed form: e^{eps/2} on the true point, 1 elsewhere
        w = np.where(err == 0, math.exp(eps / 2), 1.0)
        ind.append(w @ err / w.sum())
        assert expected_error(
            ExponentialMechanism(eps), pct.percentile_problem(x, 90, grid), loss=pct.absolute_error_loss(grid, truth)
        ) == pytest.approx(ind[-1], rel=1e-9)
        # EM on the rank utility, closed form on independently computed distances
        d = _sorted_rank_distances(xs, grid, k, 9, 10)
        rank_prob = pct.percentile_problem(x, 90, grid, utility="rank")
        np.testing.assert_array_equal(rank_prob.scores, -d)
        w = np.exp(-eps * (d - d.min()) / 2)
        em_rank.append(w @ err / w.sum())
        assert expected_error(
            ExponentialMechanism(eps), rank_prob, loss=pct.absolute_error_loss(grid, truth)
        ) == pytest.approx(em_rank[-1], rel=1e-6, abs=1e-300)
        pf_rank.append(PermuteAndFlip(eps).probabilities(rank_prob) @ err)
    assert 2.655 <= min(ind) and max(ind) <= 2.675 and m == 1001  # the issue: 2.66
    assert np.mean(em_rank) < 1e-3 and np.mean(pf_rank) < 1e-3
    assert np.mean(pf_rank) <= np.mean(em_rank)  # PF is the default: never worse here
    assert np.mean(ind) / np.mean(pf_rank) > 1000


def test_private_percentile_default_accountant_and_conventions():
    grid = np.linspace(0, 10, 21)
    data = np.random.default_rng(4).uniform(0, 10, size=40)
    acc = dpselect.Accountant(1.0)
    gen = np.random.default_rng(9)
    out = pct.private_percentile(data, 50, 0.7, grid, rng=gen, accountant=acc)
    assert out in grid and acc.spent.epsilon == pytest.approx(0.7) and acc.spent.relation == "add_remove"
    state = gen.bit_generator.state
    with pytest.raises(dpselect.accounting.BudgetExceededError):
        pct.private_percentile(data, 50, 0.7, grid, rng=gen, accountant=acc)
    assert gen.bit_generator.state == state and acc.spent.epsilon == pytest.approx(0.7)
    # same seed -> same value as the default mechanism on the default problem, for both conventions
    for conv in pct.RANK_CONVENTIONS:
        pr = pct.percentile_problem(data, 50, grid, utility="rank", rank_convention=conv)
        for s in range(5):
            assert (
                pct.private_percentile(data, 50, 0.7, grid, rng=s, rank_convention=conv)
                == grid[int(PermuteAndFlip(0.7).select(pr, rng=s))]
            )
    assert rank(50, 10, convention="code") == 6 and rank(100, 10, convention="code") == 10
    assert rank(0, 10, convention="code") == 1 and rank(99, 100, convention="code") == 100
    with pytest.raises(ValueError, match="rank_convention"):
        pct.percentile_problem(data, 50, grid, rank_convention="excel")
    with pytest.raises(ValueError, match="utility"):
        pct.private_percentile(data, 50, 1.0, grid, utility="count")
    with pytest.raises(TypeError):
        pct.private_percentile(data, 50, 1.0, grid, "pf")  # keyword-only after grid
    with pytest.raises(TypeError, match="accountant"):
        pct.private_percentile(data, 50, 1.0, grid, accountant=1.0)


def test_paper_problem_reports_no_guarantee():
    """The paper's problem is not DP whatever the noise (data-dependent candidates): privacy() must say so."""
    with pytest.warns(PrivacyLeakWarning):
        pr = papers.paper_problem([1.0, 3.0, 3.0, 3.0, 5.0, 9.0], 50)
    for mech in (
        ExponentialMechanism(1.0),
        PermuteAndFlip(1.0),
        dpselect.ReportNoisyMax(1.0, noise="laplace"),
        dpselect.SmoothNoisyMax(1.0, noise="student_t"),
        dpselect.SmoothPrivateSelection(1.0),
        dpselect.LocalDampening(1.0),
        dpselect.PrivateSensitivityBound(0.5, 0.5),
    ):
        assert math.isinf(mech.privacy(pr).epsilon), type(mech).__name__
    # a grid problem of the same data keeps its finite guarantee
    assert ExponentialMechanism(1.0).privacy(pct.percentile_problem([1.0, 3.0], 50, [1.0, 3.0])).epsilon == 1.0


def test_experiment_rank_baseline_column_and_best_sound_claim():
    from dpselect.experiments import percentile as exp
    from dpselect.experiments.runner import Task

    h = exp.synthetic_histogram("PATENT")
    grid = np.arange(exp.GRID_SIZE)
    loss = pct.absolute_error_loss(grid, pct.true_percentile(h, 99, grid, histogram=True))
    rows = []
    for mech in ("PF-rank", "SNM-T (paper)"):
        task = Task(
            ("PATENT-like", 99, mech),
            {"dataset": "PATENT", "source": "synthetic", "p": 99, "mechanism": mech, "epsilons": [0.5, 5.0]},
        )
        rows += exp.run_task(task, np.random.SeedSequence(0))
    rank_prob = pct.percentile_problem(h, 99, grid, histogram=True, utility="rank")
    for r in rows:
        if r["mechanism"] == "PF-rank":
            assert r["aee"] == pytest.approx(
                expected_error(PermuteAndFlip(r["epsilon"]), rank_prob, loss=loss), rel=1e-12
            )
            assert r["eps_proven"] == r["epsilon"] and r["delta_proven"] == 0.0
    claim = exp.claims(rows)[0]
    assert claim.text.startswith("Best sound mechanism (PF-rank")
    by = {(r["epsilon"], r["mechanism"]): r["aee"] for r in rows}
    wins = sum(by[(e, "PF-rank")] < by[(e, "SNM-T (paper)")] for e in (0.5, 5.0))
    assert claim.ours.startswith(f"PF-rank AEE lower in {wins}/2 settings") and claim.ok == (wins * 2 > 2)
