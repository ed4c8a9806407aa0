"""TDT sensitivity maths (dpselect.apps.genomics) and the generic Thm 4/5 helpers.

Every closed form is compared with an independent brute force written here:
Python loops over the table-level moves, exact ``fractions.Fraction``
arithmetic, and breadth-first search on the (b, c) lattice.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import deque
from fractions import Fraction

import numpy as np
import pytest

from _beta_max_reference import thm4_beta_max, thm5_beta_max
from dpselect.apps import genomics as tdt
from dpselect.apps.genomics._tdt import _distance as tdt_distance
from dpselect.sensitivity import distance_to_instability_bound

# ---------------------------------------------------------------------------
# independent brute force
# ---------------------------------------------------------------------------

BF_MOVES = [
    (db, dc) for db in (-2, -1, 0, 1, 2) for dc in (-2, -1, 0, 1, 2) if abs(db + dc) <= 2 and (db, dc) != (0, 0)
]


def bf_chi(b: int, c: int) -> Fraction:
    return Fraction(0) if b + c == 0 else Fraction((b - c) ** 2, b + c)


def bf_nbrs(b: int, c: int, n: int):
    for db, dc in BF_MOVES:
        b2, c2 = b + db, c + dc
        if b2 >= 0 and c2 >= 0 and b2 + c2 <= 2 * n:
            yield b2, c2


def bf_ls(b: int, c: int, n: int) -> Fraction:
    here = bf_chi(b, c)
    return max(abs(here - bf_chi(*y)) for y in bf_nbrs(b, c, n))


def bf_states(n: int) -> list[tuple[int, int]]:
    return [(b, c) for b in range(2 * n + 1) for c in range(2 * n + 1 - b)]


def bf_bfs(sources, n: int) -> dict:
    dist = {s: 0 for s in sources}
    queue = deque(sources)
    while queue:
        x = queue.popleft()
        for y in bf_nbrs(x[0], x[1], n):
            if y not in dist:
                dist[y] = dist[x] + 1
                queue.append(y)
    return dist


@functools.cache
def bf_space(n: int):
    """states, b array, c array, exact LS dict."""
    states = bf_states(n)
    ls = {s: bf_ls(*s, n) for s in states}
    b = np.array([s[0] for s in states])
    c = np.array([s[1] for s in states])
    return states, b, c, ls


def bf_beta_max(n: int, bound: str, threshold: int = 6) -> float:
    states, _, _, ls = bf_space(n)
    gs = max(ls.values())
    if bound == "thm4":
        dist = bf_bfs([s for s in states if ls[s] == gs], n)
    else:
        dist = bf_bfs([s for s in states if ls[s] > threshold], n)
    return min(math.log(gs / ls[s]) / dist[s] for s in states if dist[s] > 0 and ls[s] > 0)


# ---------------------------------------------------------------------------
# tdt_statistic
# ---------------------------------------------------------------------------


def test_tdt_statistic_vectorised_million():
    rng = np.random.default_rng(1)
    b = rng.integers(0, 3000, size=1_000_000)
    c = rng.integers(0, 3000, size=1_000_000)
    b[:10] = 0
    c[:10] = 0  # b = c = 0 tables
    stat = tdt.tdt_statistic(b, c)
    assert stat.shape == b.shape and stat.dtype == np.float64
    assert np.all(stat[:10] == 0.0)
    for i in list(range(10)) + list(rng.integers(0, b.size, size=2000)):
        bi, ci = int(b[i]), int(c[i])
        expected = 0.0 if bi + ci == 0 else (bi - ci) ** 2 / (bi + ci)
        assert stat[i] == pytest.approx(expected, rel=1e-14, abs=0)


def test_tdt_statistic_scalar_and_2d():
    assert tdt.tdt_statistic(0, 0) == 0.0
    assert tdt.tdt_statistic(9, 1) == pytest.approx(6.4)
    assert tdt.tdt_statistic(np.array([[3.0, 0.0]]), np.array([[1, 2]])).tolist() == [[1.0, 2.0]]


# ---------------------------------------------------------------------------
# sensitivities and lemmas vs brute force
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("n", [5, 10, 20])
def test_local_sensitivity_matches_brute_force(n):
    _, b, c, ls = bf_space(n)
    got = tdt.local_sensitivity(b, c, n)
    expected = np.array([float(ls[s]) for s in zip(b.tolist(), c.tolist())])
    # exact integer fractions, one rounding: equal to the correctly rounded value
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 10, 20])
def test_global_sensitivity_is_max_local_sensitivity(n):
    _, _, _, ls = bf_space(n)
    exact = max(ls.values())
    assert tdt.global_sensitivity(n) == float(exact)
    if n >= 2:
        assert exact == Fraction(8 * (n - 1), n)


@pytest.mark.parametrize("n", [5, 10, 20])
def test_lemma2_region_equals_exact_ls_above_6(n):
    states, b, c, ls = bf_space(n)  # exact Fraction LS
    region = tdt.lemma2_region(b, c)
    expected = np.array([ls[s] > 6 for s in states])
    np.testing.assert_array_equal(region, expected)
    assert expected.any() or n < 5
    # the library's U for T = 6 (exact integer comparison) is the same set
    np.testing.assert_array_equal(tdt.unstable_distance(b, c, n) == 0, expected)


def test_lemma2_region_far_outside_small_state_spaces():
    # the region does not depend on N: check a large exact sample
    rng = np.random.default_rng(3)
    n = 400
    b = rng.integers(0, 2 * n + 1, size=300)
    c = rng.integers(0, 2 * n + 1, size=300)
    keep = b + c <= 2 * n
    b, c = b[keep], c[keep]
    expected = np.array([bf_ls(int(x), int(y), n) > 6 for x, y in zip(b, c)])
    np.testing.assert_array_equal(tdt.lemma2_region(b, c), expected)


@pytest.mark.parametrize("n", [5, 10, 20])
def test_table_distance_matches_bfs(n):
    states, b, c, _ = bf_space(n)
    step = 1 if n == 5 else 7
    sources = [*states[::step], (0, 0), (2 * n, 0), (0, 2 * n), (n, n)]
    for s in sources:
        dist = bf_bfs([s], n)
        expected = np.array([dist[t] for t in states])
        got = tdt.table_distance(s[0], s[1], b, c)
        np.testing.assert_array_equal(got, expected)
        # symmetric
        np.testing.assert_array_equal(tdt.table_distance(b, c, s[0], s[1]), expected)


@pytest.mark.parametrize("n", [5, 10, 20])
def test_gs_and_unstable_distance_match_multisource_bfs(n):
    states, b, c, ls = bf_space(n)
    gs = max(ls.values())
    gd = bf_bfs([s for s in states if ls[s] == gs], n)
    np.testing.assert_array_equal(tdt.gs_distance(b, c, n), [gd[s] for s in states])
    for threshold in (6, 6.5, 7):
        if threshold >= gs:
            continue
        ud = bf_bfs([s for s in states if ls[s] > threshold], n)
        np.testing.assert_array_equal(tdt.unstable_distance(b, c, n, threshold=threshold), [ud[s] for s in states])
    with pytest.raises(ValueError, match="threshold must be >= 6"):
        tdt.unstable_distance(b, c, n, threshold=4.5)


# ---------------------------------------------------------------------------
# beta_max
# ---------------------------------------------------------------------------


def test_beta_max_reproduces_spec_numbers():
    b4_30 = tdt.beta_max(30, bound="thm4")
    b4_150 = tdt.beta_max(150, bound="thm4")
    b5_30 = tdt.beta_max(30, bound="thm5", threshold=6)
    b5_150 = tdt.beta_max(150, bound="thm5", threshold=6)
    # SPEC §4.4 quotes spec-checks/tdt_thm.py, which prints 5 decimals:
    # 0.00058 / 0.14565 (N = 30) and 0.00002 / 0.03369 (N = 150).
    assert f"{b4_30:.5f}" == "0.00058" and f"{b4_30:.1e}" == "5.8e-04"
    assert f"{b4_150:.5f}" == "0.00002"  # SPEC's "2.0e-5"; the value is 2.24e-5
    assert f"{b5_30:.5f}" == "0.14565"  # SPEC's "0.1457" = 0.14565 rounded again
    assert abs(b5_30 - 0.1457) < 1e-4  # (the value is 0.145648)
    assert f"{b5_150:.5f}" == "0.03369" and f"{b5_150:.4f}" == "0.0337"
    # more digits, from the same inequalities evaluated by spec-checks/tdt_thm.py
    assert b4_30 == pytest.approx(5.846243954878788e-04, rel=1e-9)
    assert b4_150 == pytest.approx(2.244643718695549e-05, rel=1e-9)
    assert b5_30 == pytest.approx(0.14564770007424316, rel=1e-9)
    assert b5_150 == pytest.approx(0.03368895347123547, rel=1e-9)


@pytest.mark.parametrize("n", [5, 10, 20])
def test_beta_max_matches_brute_force(n):
    assert tdt.beta_max(n, bound="thm4") == pytest.approx(bf_beta_max(n, "thm4"), rel=1e-12)
    assert tdt.beta_max(n, bound="thm5") == pytest.approx(bf_beta_max(n, "thm5"), rel=1e-12)


def _check_smooth_upper_bound(n, s_of, beta):
    """(is upper bound, is beta-smooth) over all states / neighbouring pairs."""
    states, _, _, ls = bf_space(n)
    upper = all(s_of[s] >= float(ls[s]) - 1e-9 for s in states)
    smooth = all(s_of[x] <= math.exp(beta) * s_of[y] + 1e-12 for x in states for y in bf_nbrs(*x, n))
    return upper, smooth


@pytest.mark.parametrize("bound", ["thm4", "thm5"])
def test_bounds_at_beta_max_are_smooth_upper_bounds(bound):
    n = 20
    states, b, c, _ = bf_space(n)
    beta = tdt.beta_max(n, bound=bound)
    s = tdt.smooth_upper_bound(b, c, n, beta, bound=bound)
    s_of = dict(zip(states, s.tolist()))
    assert _check_smooth_upper_bound(n, s_of, beta) == (True, True)


@pytest.mark.parametrize("bound", ["thm4", "thm5"])
def test_bounds_beyond_beta_max_break(bound):
    n = 20
    states, b, c, _ = bf_space(n)
    beta = 1.5 * tdt.beta_max(n, bound=bound)
    with pytest.raises(ValueError, match="beta"):
        tdt.smooth_upper_bound(b, c, n, beta, bound=bound)
    dist = tdt.gs_distance(b, c, n) if bound == "thm4" else tdt.unstable_distance(b, c, n)
    s = distance_to_instability_bound(tdt.global_sensitivity(n), dist, beta)
    upper, smooth = _check_smooth_upper_bound(n, dict(zip(states, s.tolist())), beta)
    assert not (upper and smooth)


def test_thm4_bound_is_exact_smooth_sensitivity():
    n = 10
    states, b, c, ls = bf_space(n)
    beta = tdt.beta_max(n, bound="thm4")
    s = tdt.smooth_upper_bound(b, c, n, beta, bound="thm4")
    for i, x in enumerate(states):
        dist = bf_bfs([x], n)
        s_star = max(float(ls[y]) * math.exp(-beta * dist[y]) for y in states)
        assert s[i] == pytest.approx(s_star, rel=1e-12)


@pytest.mark.slow
def test_panel_max_bound_is_smooth_over_neighbours():
    # S(x) = max_r S(x, r) over a 3-SNP panel, all (over-approximated) neighbours
    n = 20
    beta = tdt.beta_max(n, bound="thm5")
    b = np.array([0, 12, 30])
    c = np.array([3, 12, 1])
    s_x = tdt.smooth_upper_bound(b, c, n, beta).max()
    nbrs = tdt.tdt_neighbours(b, c, n)
    sizes = [len(list(bf_nbrs(int(x), int(y), n))) + 1 for x, y in zip(b, c)]
    assert sizes == [12, 19, 16]
    assert len(nbrs) == math.prod(sizes) - 1
    for b2, c2 in nbrs:
        s_y = tdt.smooth_upper_bound(b2, c2, n, beta).max()
        assert s_x <= math.exp(beta) * s_y + 1e-12
        assert s_y <= math.exp(beta) * s_x + 1e-12


def test_neighbours_enumerates_product_of_moves():
    n = 4
    b = np.array([0, 3])
    c = np.array([0, 5])  # (0,0): 5 legal moves + identity; (3,5) on b + c = 8 = 2N
    per_snp = [{(x, y) for x, y in bf_nbrs(0, 0, n)} | {(0, 0)}, {(x, y) for x, y in bf_nbrs(3, 5, n)} | {(3, 5)}]
    expected = {(p, q) for p in per_snp[0] for q in per_snp[1] if (p, q) != ((0, 0), (3, 5))}
    got = tdt.tdt_neighbours(b, c, n)
    got_set = {((int(x[0]), int(y[0])), (int(x[1]), int(y[1]))) for x, y in got}
    assert len(got) == len(got_set) == len(expected)
    assert got_set == expected
    with pytest.raises(ValueError, match="limit"):
        tdt.tdt_neighbours([10] * 5, [10] * 5, 20)
    assert len(tdt.tdt_neighbours([10] * 4, [10] * 4, 20)) == 19**4 - 1


# ---------------------------------------------------------------------------
# generic Part A helpers
# ---------------------------------------------------------------------------


def test_distance_to_instability_bound_values():
    out = distance_to_instability_bound(2.0, [0, 1, 2.5, np.inf], 0.5)
    np.testing.assert_allclose(out, [2.0, 2 * math.exp(-0.5), 2 * math.exp(-1.25), 0.0])
    with pytest.raises(ValueError, match="distance"):
        distance_to_instability_bound(2.0, [-1.0], 0.5)
    with pytest.raises(ValueError, match="beta"):
        distance_to_instability_bound(2.0, [1.0], -0.5)
    with pytest.raises(ValueError, match="global_sensitivity"):
        distance_to_instability_bound(0.0, [1.0], 0.5)


def test_thm4_thm5_beta_max_generic():
    gs = 4.0
    ls = np.array([4.0, 2.0, 1.0, 0.0])
    gd = np.array([0, 1, 1, 3])
    # LS = 0 imposes nothing; min(ln 2, ln 4) = ln 2
    assert thm4_beta_max(gs, ls, gd) == pytest.approx(math.log(2))
    assert thm5_beta_max(gs, ls, gd) == pytest.approx(math.log(2))
    assert thm4_beta_max(gs, [4.0, 0.0], [0, 2]) == math.inf
    assert thm5_beta_max(gs, [4.0, 3.0], [0, 0]) == math.inf
    with pytest.raises(ValueError, match="gd"):
        thm4_beta_max(gs, [4.0, 2.0], [0, 0])  # gd = 0 off {LS = GS}
    with pytest.raises(ValueError, match="local_sensitivity"):
        thm5_beta_max(gs, [5.0], [1])
    with pytest.raises(ValueError, match="same shape"):
        thm5_beta_max(gs, [1.0, 2.0], [1])


# ---------------------------------------------------------------------------
# argument validation
# ---------------------------------------------------------------------------


def test_bad_inputs():
    with pytest.raises(ValueError, match="b must be non-negative"):
        tdt.tdt_statistic([-1, 2], [0, 1])
    with pytest.raises(ValueError, match="same shape"):
        tdt.tdt_statistic([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="c must hold integers"):
        tdt.tdt_statistic([1.0], [1.5])
    with pytest.raises(TypeError, match="b"):
        tdt.tdt_statistic(["x"], [1])
    with pytest.raises(ValueError, match="n_families"):
        tdt.local_sensitivity([5], [6], 5)  # b + c = 11 > 2N
    with pytest.raises(ValueError, match="n_families"):
        tdt.global_sensitivity(0)
    with pytest.raises(TypeError, match="n_families"):
        tdt.global_sensitivity(3.0)
    with pytest.raises(ValueError, match="b1 and c1"):
        tdt.table_distance([1, 2], [1], 0, 0)
    with pytest.raises(ValueError, match="c must be non-negative"):
        tdt.lemma2_region([1], [-3])
    with pytest.raises(ValueError, match=r"beta = .* exceeds beta_max = "):
        tdt.smooth_upper_bound([1], [2], 30, 0.2)
    with pytest.raises(ValueError, match="beta"):
        tdt.smooth_upper_bound([1], [2], 30, -0.01)
    with pytest.raises(ValueError, match="bound"):
        tdt.beta_max(30, bound="thm6")
    with pytest.raises(ValueError, match="threshold"):
        tdt.beta_max(4, bound="thm5")  # GS = 6: U = {LS > 6} empty
    with pytest.raises(ValueError, match="threshold must be >= 6"):
        tdt.tdt_problem([1], [2], 30, threshold=3)
    # no state-space table: any N works
    assert tdt.gs_distance([1], [1], 10**7).tolist() == [10**7 - 1]  # to (2, 2N - 2): ceil((2N - 2)/2)
    with pytest.raises(ValueError, match="1-D"):
        tdt.tdt_neighbours([[1]], [[1]], 5)


# ---------------------------------------------------------------------------
# closed forms vs a vectorised breadth-first search over the whole state space
# (the reference the library used to ship; kept here for tests only)
# ---------------------------------------------------------------------------


def _state_arrays(n: int):
    w = 2 * n + 1
    sb = np.repeat(np.arange(w, dtype=np.int64), w - np.arange(w))
    sc = np.arange(sb.size, dtype=np.int64) - np.repeat(
        np.cumsum(w - np.arange(w)) - (w - np.arange(w)), w - np.arange(w)
    )
    return sb, sc


def _index(n: int, b, c):
    w = 2 * n + 1
    return b * w - (b * (b - 1)) // 2 + c


def _bfs_reference(n: int, sources: np.ndarray) -> np.ndarray:
    """Multi-source BFS on the move graph (every state, by index)."""
    sb, sc = _state_arrays(n)
    dist = np.full(sb.size, -1, dtype=np.int64)
    frontier = np.flatnonzero(sources)
    dist[frontier] = 0
    k = 0
    while frontier.size:
        fb, fc = sb[frontier], sc[frontier]
        nxt = []
        for db, dc in BF_MOVES:
            b2, c2 = fb + db, fc + dc
            ok = (b2 >= 0) & (c2 >= 0) & (b2 + c2 <= 2 * n)
            nxt.append(_index(n, b2[ok], c2[ok]))
        cand = np.concatenate(nxt)
        k += 1
        dist[cand[dist[cand] < 0]] = k  # repeated indices write the same k
        frontier = np.flatnonzero(dist == k)
    assert (dist >= 0).all()
    return dist


def _exact_ls_above(n: int, sb, sc, num_t: int, den_t: int):
    """(LS == GS, LS > num_t/den_t) decided in exact integer arithmetic, and float LS."""
    gs_num, gs_den = (2, 1) if n == 1 else (8 * (n - 1), n)
    p1, q1 = (sb - sc) ** 2, np.maximum(sb + sc, 1)
    in_g = np.zeros(sb.size, bool)
    above = np.zeros(sb.size, bool)
    ls = np.zeros(sb.size)
    for db, dc in BF_MOVES:
        b2, c2 = sb + db, sc + dc
        ok = (b2 >= 0) & (c2 >= 0) & (b2 + c2 <= 2 * n)
        q2 = np.maximum(b2 + c2, 1)
        num, den = np.abs(p1 * q2 - (b2 - c2) ** 2 * q1), q1 * q2
        in_g |= ok & (num * gs_den == gs_num * den)
        above |= ok & (num * den_t > num_t * den)
        ls = np.maximum(ls, np.where(ok, num / den, 0.0))
    return in_g, above, ls


def _assert_states_equal(what: str, n: int, sb, sc, got, want) -> None:
    """Every state equal, else name N, the first states and both values."""
    got, want = np.asarray(got), np.asarray(want)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, f"{what}, N = {n}: {bad.size} states differ, e.g. " + "; ".join(
        f"(b, c) = ({sb[i]}, {sc[i]}): closed form {got[i]!r}, BFS {want[i]!r}" for i in bad[:5]
    )


def _check_smooth_bound(n: int, sb, sc, ls, dist, bound: str, t: float = 6.0) -> None:
    """smooth_upper_bound at beta_max over every state: GS e^{-beta dist} with the BFS
    distance, >= the exact LS, beta-smooth on every move, and no longer an upper
    bound once beta exceeds beta_max by a factor 1 + 1e-6 (so beta_max is the largest)."""
    gs = tdt.global_sensitivity(n)
    beta = tdt.beta_max(n, bound, t)
    s = tdt.smooth_upper_bound(sb, sc, n, beta, bound=bound, threshold=t)
    expected = gs * np.exp(-beta * dist)
    np.testing.assert_allclose(s, expected, rtol=1e-14, atol=0, err_msg=f"{bound}, T = {t}, N = {n}")
    assert (s >= ls * (1 - 1e-12)).all(), (bound, t, n)
    for db, dc in BF_MOVES:
        b2, c2 = sb + db, sc + dc
        ok = (b2 >= 0) & (c2 >= 0) & (b2 + c2 <= 2 * n)
        y = _index(n, b2[ok], c2[ok])
        assert (s[ok] <= math.exp(beta) * s[y] * (1 + 1e-12)).all(), (bound, t, n, db, dc)
    assert (gs * np.exp(-beta * (1 + 1e-6) * dist) < ls).any(), (bound, t, n)


def _assert_rounded_down(got: float, naive: float, what) -> None:
    """beta_max is the float ln(GS/LS)/dist minimum lowered by a few ulps of the logarithm (never above)."""
    assert naive * (1 - 1e-6) <= got <= naive, (what, got, naive)


def _check_against_bfs(n: int, thresholds=((6, 1), (13, 2), (15, 2)), sample=None):
    sb, sc = _state_arrays(n)
    gs = tdt.global_sensitivity(n)
    in_g, _, ls = _exact_ls_above(n, sb, sc, 6, 1)
    gd = _bfs_reference(n, in_g)
    idx = np.arange(sb.size) if sample is None else sample
    _assert_states_equal("gd", n, sb[idx], sc[idx], tdt.gs_distance(sb[idx], sc[idx], n), gd[idx])
    if sample is None:
        _assert_states_equal("LS", n, sb, sc, tdt.local_sensitivity(sb, sc, n), ls)
        ls_g = np.where(in_g, gs, ls)
        _assert_rounded_down(tdt.beta_max(n, "thm4"), thm4_beta_max(gs, ls_g, gd), n)
        _check_smooth_bound(n, sb, sc, ls, gd, "thm4")
    for num_t, den_t in thresholds:
        t = num_t / den_t
        if t >= gs:
            continue
        _, in_u, _ = _exact_ls_above(n, sb, sc, num_t, den_t)
        ud = _bfs_reference(n, in_u)
        got = tdt.unstable_distance(sb[idx], sc[idx], n, threshold=t)
        _assert_states_equal(f"ud (T = {t})", n, sb[idx], sc[idx], got, ud[idx])
        if sample is None:
            _assert_rounded_down(tdt.beta_max(n, "thm5", t), thm5_beta_max(gs, ls, ud), (n, t))
            _check_smooth_bound(n, sb, sc, ls, ud, "thm5", t)


FAST_NS = [*list(range(1, 13)), 30, 77]


@pytest.mark.parametrize("n", FAST_NS)
def test_closed_forms_equal_bfs_every_state(n):
    _check_against_bfs(n)


@pytest.mark.slow
def test_closed_forms_equal_bfs_every_state_every_n_to_300():
    # every N <= 300 (the fast test covers FAST_NS); one test: ~N^2 work per N
    for n in range(1, 301):
        if n not in FAST_NS:
            _check_against_bfs(n)


@pytest.mark.slow
def test_closed_forms_equal_bfs_random_states_n2000():
    n = 2000
    rng = np.random.default_rng(2000)
    sb, _ = _state_arrays(n)
    _check_against_bfs(n, thresholds=((6, 1),), sample=rng.integers(0, sb.size, size=20_000))


# ---------------------------------------------------------------------------
# neighbour-distance utility (SPEC §9.1)
# ---------------------------------------------------------------------------


def _ball_extremes(n: int):
    """{state: (hi_k, lo_k) for k = 0..n+1} by BFS from every state (exact Fractions)."""
    states = bf_states(n)
    out = {}
    for s in states:
        dist = bf_bfs([s], n)
        out[s] = [
            (max(bf_chi(*y) for y in states if dist[y] <= k), min(bf_chi(*y) for y in states if dist[y] <= k))
            for k in range(n + 2)
        ]
    return out


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_reach_extremes_equal_bfs(n):
    for (b, c), ext in _ball_extremes(n).items():
        ks = np.arange(n + 2)
        hi = tdt_distance.reach_max(abs(b - c), b + c, ks, n)
        lo = tdt_distance.reach_min(abs(b - c), b + c, ks, n)
        np.testing.assert_array_equal(hi, [float(h) for h, _ in ext])
        np.testing.assert_array_equal(lo, [float(x) for _, x in ext])


def _nd_brute(panel, n, ext):
    """d_r = min k with hi_r(k) >= max_{s != r} lo_s(k), from BFS balls (exact)."""
    out = []
    for r, t in enumerate(panel):
        k = 0
        while True:
            others = [ext[u][k][1] for s, u in enumerate(panel) if s != r]
            if not others or ext[t][k][0] >= max(others):
                break
            k += 1
        out.append(k)
    return out


@pytest.mark.slow
def test_neighbour_distances_equal_bfs_and_sensitivity_one_exhaustive_n4():
    n = 4
    ext = _ball_extremes(n)
    states = bf_states(n)
    util = {}
    for x in itertools.product(states, repeat=2):
        got = tdt.neighbour_distances([t[0] for t in x], [t[1] for t in x], n)
        assert got.tolist() == _nd_brute(x, n, ext), x
        util[x] = got
    worst = 0
    for x, ux in util.items():
        for b2, c2 in tdt.tdt_neighbours([t[0] for t in x], [t[1] for t in x], n):
            uy = util[tuple(zip(b2.tolist(), c2.tolist()))]
            worst = max(worst, int(np.abs(ux - uy).max()))
    assert worst == 1  # attained, never exceeded


@pytest.mark.parametrize("n", [1, 2, 3])
def test_neighbour_distance_sensitivity_one_exhaustive_small_n(n):
    states = bf_states(n)
    util = {
        x: tdt.neighbour_distances([t[0] for t in x], [t[1] for t in x], n) for x in itertools.product(states, repeat=2)
    }
    for x, ux in util.items():
        for b2, c2 in tdt.tdt_neighbours([t[0] for t in x], [t[1] for t in x], n):
            assert np.abs(ux - util[tuple(zip(b2.tolist(), c2.tolist()))]).max() <= 1


@pytest.mark.slow
def test_neighbour_distances_random_n40_m4_against_brute_force_and_lipschitz():
    n = 40
    rng = np.random.default_rng(40)
    states = bf_states(n)
    moves = [(0, 0), *BF_MOVES]
    ext = {}
    worst = 0
    for _ in range(150):
        x = [states[i] for i in rng.integers(0, len(states), size=4)]
        y = []
        for b, c in x:
            while True:
                db, dc = moves[rng.integers(len(moves))]
                if b + db >= 0 and c + dc >= 0 and b + db + c + dc <= 2 * n:
                    y.append((b + db, c + dc))
                    break
        ux = tdt.neighbour_distances([t[0] for t in x], [t[1] for t in x], n)
        uy = tdt.neighbour_distances([t[0] for t in y], [t[1] for t in y], n)
        worst = max(worst, int(np.abs(ux - uy).max()))
        for t in x[:1]:
            if t not in ext:
                ext[t] = None
    assert worst <= 1
    # distances against the Lemma-3 brute force on a few panels
    sb, sc = _state_arrays(n)
    chi = np.where(sb + sc > 0, (sb - sc) ** 2 / np.maximum(sb + sc, 1), 0.0)
    for _ in range(20):
        x = [states[i] for i in rng.integers(0, len(states), size=4)]
        d = [tdt.table_distance(b, c, sb, sc) for b, c in x]
        expect = []
        for r in range(4):
            k = 0
            while not chi[d[r] <= k].max() >= max(chi[d[s] <= k].min() for s in range(4) if s != r):
                k += 1
            expect.append(k)
        assert tdt.neighbour_distances([t[0] for t in x], [t[1] for t in x], n).tolist() == expect


def test_neighbour_distances_large_panel_and_validation():
    rng = np.random.default_rng(0)
    n = 500
    s = rng.binomial(2 * n, 2 / 3, size=200_000)
    b = rng.binomial(s, 0.5)
    b[7] = s[7]  # one strong signal
    d = tdt.neighbour_distances(b, s - b, n)
    assert d[7] == 0 and (d[np.arange(d.size) != 7] > 0).all()
    assert tdt.neighbour_distances([3], [1], 5).tolist() == [0]
    with pytest.raises(ValueError, match="1-D"):
        tdt.neighbour_distances([[1, 2]], [[1, 2]], 5)
    with pytest.raises(ValueError, match="n_families"):
        tdt.neighbour_distances([6], [5], 5)


# ---------------------------------------------------------------------------
# beta_max by branch and bound == the full scan (docs/mathematics.md §4.4)
# ---------------------------------------------------------------------------


def _bb_configs(n: int):
    """(bound, T) pairs valid at N: Thm 4 and Thm 5 at T = 6, 6.5, 7.5 where T < GS."""
    gs = tdt.global_sensitivity(n)
    return [("thm4", 0.0)] + [("thm5", t) for t in (6.0, 6.5, 7.5) if t < gs]


@pytest.mark.slow  # over ~10 s on two loaded cores: run by CI's slow step
def test_beta_max_branch_and_bound_equals_the_full_scan_every_n_to_150():
    from dpselect.apps.genomics._tdt._beta_max import beta_max_branch_and_bound, beta_max_scan

    for n in range(1, 151):
        for bound, t in _bb_configs(n):
            if t == 6.5 and n % 25:
                continue
            assert beta_max_branch_and_bound(n, bound, t) == beta_max_scan(n, bound, t), (n, bound, t)


def test_beta_max_is_not_the_top_rows_band_at_n201_t7_5():
    # the old 16-row band gave 0.014267 here, above the true minimum: beta_max must be the scan's value
    from dpselect.apps.genomics._tdt._beta_max import beta_max_scan

    full = beta_max_scan(201, "thm5", 7.5)
    assert tdt.beta_max(201, "thm5", 7.5) == full < 0.014267
    # the full scan against the generic Thm 5 helper on every state (independent assembly of LS and ud)
    sb, sc = _state_arrays(201)
    ls = tdt.local_sensitivity(sb, sc, 201)
    _assert_rounded_down(
        full, thm5_beta_max(tdt.global_sensitivity(201), ls, tdt.unstable_distance(sb, sc, 201, 7.5)), 201
    )


def test_beta_max_thm4_refused_where_float_cannot_certify_it():
    # N > 500000: LS is a float chi2 difference, whose error exceeds ln(GS/LS) ~ 1/(2N^2) at the minimiser
    with pytest.raises(ValueError, match="bound='thm4' at n_families=1000000: no beta > 0"):
        tdt.beta_max(10**6, "thm4")
    assert 0 < tdt.beta_max(10**5, "thm4") < 1 / (2 * 10**10 - 3 * 10**5)  # the exact minimum, from below


def _random_blocks(n: int, rng, count: int):
    top = 2 * n
    b0 = rng.integers(0, top + 1, size=count)
    c0 = (rng.random(count) * (top + 1 - b0)).astype(np.int64)
    wb = rng.integers(1, 40, size=count)
    wc = rng.integers(1, 40, size=count)
    return b0, np.minimum(b0 + wb - 1, top), c0, np.minimum(c0 + wc - 1, top)


@pytest.mark.parametrize("n", [7, 40, 333])
def test_block_lower_bounds_are_lower_bounds(n):
    """Each block's bound <= f at every state of the block (exact LS and distances), and the
    bound's ingredient LS_hi >= LS holds."""
    from dpselect.apps.genomics._tdt._beta_max import _leaf_states, _ls_upper, _margin, _ratios, block_lower_bounds

    rng = np.random.default_rng(n)
    gs = tdt.global_sensitivity(n)
    b0, b1, c0, c1 = _random_blocks(n, rng, 150)
    for bound, t in _bb_configs(n):
        lower, _ = block_lower_bounds(b0, b1, c0, c1, n, bound, t)
        ls_hi = _ls_upper(b0, b1, c0, c1, n)
        for i in range(b0.size):
            sb, sc = _leaf_states(b0[i : i + 1], b1[i : i + 1], c0[i : i + 1], c1[i : i + 1], n)
            dist = tdt.gs_distance(sb, sc, n) if bound == "thm4" else tdt.unstable_distance(sb, sc, n, t)
            f = _ratios(sb, sc, n, gs, dist)
            assert lower[i] <= f.min(), (n, bound, t, b0[i], b1[i], c0[i], c1[i])
            # the raw bound may sit one ulp below LS (float): the margin used by the search covers it
            assert ls_hi[i] * (1 + _margin(n)) >= tdt.local_sensitivity(sb, sc, n).max(), (n, b0[i], c0[i])


def test_branch_and_bound_catches_an_unsound_block_bound(monkeypatch):
    """Negative control: an LS bound 20 % too small (no longer an upper bound) is caught by the
    block test's check and makes the branch and bound drop blocks holding the minimum."""
    from dpselect.apps.genomics._tdt import _beta_max as bm

    sound = bm._ls_upper
    monkeypatch.setattr(bm, "_ls_upper", lambda *args: 0.8 * sound(*args))
    b0, b1, c0, c1 = _random_blocks(40, np.random.default_rng(40), 150)
    sb, sc = _state_arrays(40)
    ls = tdt.local_sensitivity(sb, sc, 40)
    too_small = [
        i
        for i in range(b0.size)
        if bm._ls_upper(b0[i : i + 1], b1[i : i + 1], c0[i : i + 1], c1[i : i + 1], 40)[0]
        < ls[(sb >= b0[i]) & (sb <= b1[i]) & (sc >= c0[i]) & (sc <= c1[i])].max()
    ]
    assert too_small
    wrong = [
        (n, bound, t)
        for n in (60, 120, 201)
        for bound, t in (("thm4", 0.0), ("thm5", 7.5))
        if bm.beta_max_branch_and_bound(n, bound, t) > bm.beta_max_scan(n, bound, t)
    ]
    assert len(wrong) >= 4, wrong


def _slow_bb_ns():
    import os

    if os.environ.get("DPSELECT_BETA_MAX_ALL"):
        return list(range(151, 2001))
    return list(range(151, 401)) + list(range(410, 1001, 30)) + [1500, 2000]


@pytest.mark.slow
def test_beta_max_branch_and_bound_equals_the_full_scan_more_n():
    """151 <= N <= 400, every 30th N to 1,000, N = 1,500 and 2,000 (every N <= 2,000 with
    DPSELECT_BETA_MAX_ALL=1, hours); benchmarks/verify_beta_max.py is the same check as a script."""
    from dpselect.apps.genomics._tdt._beta_max import beta_max_branch_and_bound, beta_max_scan

    for n in _slow_bb_ns():
        for bound, t in _bb_configs(n):
            assert beta_max_branch_and_bound(n, bound, t) == beta_max_scan(n, bound, t), (n, bound, t)
