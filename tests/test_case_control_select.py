"""Private case-control selection (allelic test): reach and distances vs breadth-first search, the
sensitivity formula vs enumeration, exact laws and exact audits of PF / EM (peeling, joint) on
neighbouring panels with negative controls, PLINK's statistic, the dispatch, validation."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from conftest import assert_frequencies_match
from dpselect import Privacy
from dpselect.analysis import audit
from dpselect.apps.genomics import (
    CaseControlCounts,
    TransmissionCounts,
    allelic_sensitivity,
    association_distances,
    association_problem,
    select_top_snps,
    simulate_case_control,
)
from dpselect.apps.genomics._casecontrol._allelic_distance import AllelicPanel, allelic_reach, allelic_statistic
from dpselect.apps.genomics._casecontrol._select import test_panel as panel_of
from dpselect.mechanisms import ExponentialMechanism, PermuteAndFlip
from dpselect.mechanisms.distance import distance_problem
from dpselect.mechanisms.top_k import TopK

#: Row moves (dx, dy) of one individual on its group's allele counts (mathematics §14).
ROW_MOVES = [(x, y) for x in range(-2, 3) for y in range(-2, 3) if abs(x + y) <= 2 and (x, y) != (0, 0)]


def _bfs_balls(t, depth):
    """Tables reachable from t in <= k row moves, k = 0..depth (breadth-first search, no closed form)."""
    seen = {tuple(t)}
    front, balls = [tuple(t)], [[tuple(t)]]
    for _ in range(depth):
        nxt = []
        for s in front:
            for row, (dx, dy) in itertools.product((0, 1), ROW_MOVES):
                u = list(s)
                u[2 * row] += dx
                u[2 * row + 1] += dy
                u = tuple(u)
                if min(u) >= 0 and u not in seen:
                    seen.add(u)
                    nxt.append(u)
        front = nxt
        balls.append(balls[-1] + nxt)
    return [np.array(b).T for b in balls]


def test_statistic_zero_margin():
    assert allelic_statistic(0, 0, 3, 4) == 0.0 and allelic_statistic(3, 0, 4, 0) == 0.0


@pytest.mark.parametrize("seed", range(3))
def test_reach_equals_breadth_first_search(seed):
    """hi(k) = the BFS maximum; lo(k) = the BFS minimum unless the ball meets both signs of ad - bc (then 0)."""
    rng = np.random.default_rng(seed)
    checked = {"exact": 0, "zero": 0}
    for _ in range(40):
        t = rng.integers(0, 16, 4)
        for k, ball in enumerate(_bfs_balls(t, 3)):
            chi = allelic_statistic(*ball)
            hi, lo = allelic_reach(*t, k)
            assert hi == pytest.approx(chi.max(), rel=1e-12, abs=1e-12)
            det = ball[0] * ball[3] - ball[1] * ball[2]
            if det.min() > 0 or det.max() < 0:
                assert lo == pytest.approx(chi.min(), rel=1e-12, abs=1e-12)
                checked["exact"] += 1
            else:
                assert lo == 0.0 <= chi.min()
                checked["zero"] += 1
    assert min(checked.values()) > 5


def _bfs_distances(tables, depth):
    balls = [[allelic_statistic(*b) for b in _bfs_balls(t, depth)] for t in tables]
    out = []
    for r in range(len(tables)):
        k = next(
            k
            for k in range(depth + 1)
            if balls[r][k].max() >= max(balls[s][k].min() for s in range(len(tables)) if s != r)
        )
        out.append(k)
    return out


@pytest.mark.parametrize("seed", range(2))
def test_distances_equal_breadth_first_search(seed):
    rng = np.random.default_rng(10 + seed)
    for _ in range(10):
        tables = rng.integers(0, 10, (3, 4))
        tables[0, 0] += 8  # a clear leader
        assert AllelicPanel(tables).distances().tolist() == _bfs_distances(tables, 4)


@pytest.mark.slow  # over ~10 s on two loaded cores: run by CI's slow step
def test_distances_are_one_lipschitz_on_every_neighbour():
    rng = np.random.default_rng(7)
    moves = [(0, (0, 0))] + [(row, mv) for row in (0, 1) for mv in ROW_MOVES]
    worst = 0
    for _ in range(2):
        tables = rng.integers(0, 9, (2, 4))
        d = AllelicPanel(tables).distances()
        for (r0, m0), (r1, m1) in itertools.product(moves, moves):
            t = tables.copy()
            t[0, 2 * r0 : 2 * r0 + 2] += m0
            t[1, 2 * r1 : 2 * r1 + 2] += m1
            if t.min() >= 0:
                worst = max(worst, int(np.abs(AllelicPanel(t).distances() - d).max()))
    assert worst == 1


def test_distances_through_counts_and_docstring_value():
    cc = CaseControlCounts([[40, 40, 20], [25, 50, 25], [22, 50, 28]], [[20, 50, 30]] * 3)
    d = association_distances(cc)
    tables = np.concatenate([cc.allele_cases, cc.allele_controls], axis=1)
    assert d.tolist() == _bfs_distances(tables, 7) == [0, 5, 7]


@pytest.mark.parametrize(("n1", "n0"), [(n1, n0) for n1 in range(1, 13) for n0 in range(1, 13)])
def test_sensitivity_formula_equals_enumeration(n1, n0):
    """max |chi2(x) - chi2(y)| over every allele table with fixed sizes and every genotype change (r_g by 1 or 2)."""
    r1, r0 = np.meshgrid(np.arange(2 * n1 + 1), np.arange(2 * n0 + 1), indexing="ij")
    base = allelic_statistic(r1, 2 * n1 - r1, r0, 2 * n0 - r0)
    best = 0.0
    for step in (1, 2):
        up1 = allelic_statistic(r1[step:], 2 * n1 - r1[step:], r0[step:], 2 * n0 - r0[step:])
        up0 = allelic_statistic(r1[:, step:], 2 * n1 - r1[:, step:], r0[:, step:], 2 * n0 - r0[:, step:])
        best = max(best, np.abs(up1 - base[:-step]).max(), np.abs(up0 - base[:, :-step]).max())
    assert allelic_sensitivity(n1, n0) == pytest.approx(best, rel=1e-12)


def test_sensitivity_equal_sizes_is_uhler():
    for n in (5, 50, 1000):
        assert allelic_sensitivity(n, n) == pytest.approx(8 * (2 * n) / (2 * n + 2))


# ---------------------------------------------------------------------------
# exact laws and audits
# ---------------------------------------------------------------------------


def _record_neighbours(cases, controls, n1, n0):
    """Every panel one individual's genotypes away (status kept; a call may go missing or appear)."""
    m = cases.shape[0]
    out = []
    for group, rows, n in ((0, cases, n1), (1, controls, n0)):
        per_snp = []
        for j in range(m):
            opts = []
            for src, dst in itertools.product(range(4), range(4)):  # 3 = missing
                if src == dst:
                    continue
                if src < 3 and rows[j, src] == 0:
                    continue
                if src == 3 and rows[j].sum() >= n:
                    continue
                delta = np.zeros(3, dtype=np.int64)
                if src < 3:
                    delta[src] -= 1
                if dst < 3:
                    delta[dst] += 1
                opts.append(delta)
            per_snp.append([np.zeros(3, np.int64), *opts])
        for combo in itertools.product(*per_snp):
            if not any(c.any() for c in combo):
                continue
            new = rows + np.array(combo)
            out.append((new, controls) if group == 0 else (cases, new))
    return out


def _problem(cases, controls, n1, n0, utility="distance"):
    cc = CaseControlCounts(cases, controls, n_cases=n1, n_controls=n0)
    return association_problem(cc, utility=utility)


def _top2(cc):
    """The distance to the top-2 set: the problem ``method="joint"`` runs on."""
    return distance_problem(panel_of(cc, "allelic", rank=2).distances().astype(np.float64), relation="replace")


_CASES = np.array([[4, 3, 1], [2, 4, 2], [1, 5, 2]])
_CONTROLS = np.array([[1, 4, 3], [2, 3, 3], [2, 4, 2]])


@pytest.mark.parametrize("mech_type", [pytest.param(PermuteAndFlip, marks=pytest.mark.slow), ExponentialMechanism])
def test_exact_audit_distance_utility_on_record_neighbours(mech_type):
    n1, n0 = 9, 9
    x = _problem(_CASES, _CONTROLS, n1, n0)
    nbrs = _record_neighbours(_CASES, _CONTROLS, n1, n0)
    assert len(nbrs) > 4000
    pairs = [(x, _problem(c1, c0, n1, n0)) for c1, c0 in nbrs[::6]]  # every 6th: the test stays under 10 s
    assert max(np.abs(y.scores - x.scores).max() for _, y in pairs) == 1.0
    rep = audit(mech_type(1.5), pairs)
    assert not rep.violates and 0.3 < rep.max_loss <= 1.5 * (1 + 1e-9), str(rep)
    # negative control: a quarter of the noise, held to the same claim, is caught
    assert audit(mech_type(6.0), pairs, claimed=Privacy(1.5, 0.0, "replace")).violates


def test_exact_audit_chi2_baseline_on_record_neighbours():
    n1, n0 = 9, 9
    full_c, full_o = _CASES + np.array([0, 0, 1]), _CONTROLS + np.array([1, 0, 0])
    x = _problem(full_c, full_o, n1, n0, "chi2")
    assert x.global_sensitivity == allelic_sensitivity(9, 9)
    pairs = []
    for c1, c0 in _record_neighbours(full_c, full_o, n1, n0):
        if (c1.sum(axis=1) == n1).all() and (c0.sum(axis=1) == n0).all():  # the baseline's relation: no missing
            pairs.append((x, _problem(c1, c0, n1, n0, "chi2")))
    assert len(pairs) > 100
    rep = audit(ExponentialMechanism(1.0), pairs)
    assert not rep.violates, str(rep)
    assert audit(
        ExponentialMechanism(1.0),
        [
            (x, y.__class__(y.scores * 20, global_sensitivity=x.global_sensitivity, relation="replace"))
            for _, y in pairs[:5]
        ],
    ).violates


class _PeelLaw:
    """Exact law of peeling with the distances recomputed on the SNPs left (independent of the library's
    peeling): P[(r1, ..., rk)] = prod_j P_mech[r_j | distances of the panel without r_1..r_{j-1}]."""

    def __init__(self, mech, k):
        self.mech, self.k = mech, k

    def privacy(self, problem):
        return Privacy(self.k * self.mech.epsilon, 0.0, "replace")

    def log_probabilities(self, problem):
        tables = np.array(problem.labels)
        m = tables.shape[0]
        out, rounds = [], {}
        for tup in itertools.permutations(range(m), self.k):
            left, lp = list(range(m)), 0.0
            for r in tup:
                key = tuple(left)
                if key not in rounds:
                    d = AllelicPanel(tables[left]).distances().astype(float)
                    rounds[key] = self.mech.log_probabilities(distance_problem(d, relation="replace"))
                lp += rounds[key][left.index(r)]
                left.remove(r)
            out.append(lp)
        return np.array(out)


def _tables_problem(cases, controls, n1, n0):
    cc = CaseControlCounts(cases, controls, n_cases=n1, n_controls=n0)
    tables = np.concatenate([cc.allele_cases, cc.allele_controls], axis=1)
    return distance_problem(
        association_distances(cc).astype(float), relation="replace", labels=[tuple(t) for t in tables.tolist()]
    )


@pytest.mark.slow
def test_peeling_exact_audit():
    n1, n0 = 9, 9
    eps = 2.0
    x = _tables_problem(_CASES, _CONTROLS, n1, n0)
    assert np.exp(_PeelLaw(PermuteAndFlip(eps / 2), 2).log_probabilities(x)).sum() == pytest.approx(1.0)
    pairs = [(x, _tables_problem(c1, c0, n1, n0)) for c1, c0 in _record_neighbours(_CASES, _CONTROLS, n1, n0)[::20]]
    rep = audit(_PeelLaw(PermuteAndFlip(eps / 2), 2), pairs)
    assert not rep.violates and rep.max_loss > 0.3, str(rep)
    assert audit(_PeelLaw(PermuteAndFlip(4 * eps), 2), pairs, claimed=Privacy(eps, 0.0, "replace")).violates


@pytest.mark.slow
def test_peeling_draws_follow_the_exact_law():
    eps = 2.0
    x = _tables_problem(_CASES, _CONTROLS, 9, 9)
    law = np.exp(_PeelLaw(PermuteAndFlip(eps / 2), 2).log_probabilities(x))
    cc = CaseControlCounts(_CASES, _CONTROLS, n_cases=9, n_controls=9)
    tuples = list(itertools.permutations(range(3), 2))
    draws = np.array([tuples.index(tuple(select_top_snps(cc, eps, 2, rng=s).indices.tolist())) for s in range(3000)])
    assert_frequencies_match(draws, law)


@pytest.mark.slow  # over ~10 s on two loaded cores: run by CI's slow step
def test_joint_top_k_exact_audit():
    n1, n0 = 9, 9
    eps = 2.0
    cc = CaseControlCounts(_CASES, _CONTROLS, n_cases=n1, n_controls=n0)
    x = _top2(cc)  # the joint method runs on the distance to the top-2 set (mathematics §9.1)
    law = TopK(ExponentialMechanism(eps / 2), 2, "joint")
    assert select_top_snps(cc, eps, 2, mechanism="em", method="joint", rng=0).privacy.epsilon == pytest.approx(eps)
    pairs = [
        (x, _top2(CaseControlCounts(c1, c0, n_cases=n1, n_controls=n0)))
        for c1, c0 in _record_neighbours(_CASES, _CONTROLS, n1, n0)[::5]
    ]
    assert not audit(law, pairs).violates
    assert audit(TopK(ExponentialMechanism(4 * eps), 2, "joint"), pairs, claimed=Privacy(eps, 0.0, "replace")).violates


@pytest.mark.slow
def test_joint_and_single_round_draws_follow_the_exact_laws():
    eps = 2.0
    cc = CaseControlCounts(_CASES, _CONTROLS, n_cases=9, n_controls=9)
    x = association_problem(cc)
    top2 = _top2(cc)  # the joint method runs on the distance to the top-2 set (mathematics §9.1)
    law = TopK(ExponentialMechanism(eps / 2), 2, "joint")
    outs = [tuple(t) for t in law.outputs(top2).tolist()]
    draws = np.array(
        [
            outs.index(tuple(select_top_snps(cc, eps, 2, mechanism="em", method="joint", rng=s).indices.tolist()))
            for s in range(3000)
        ]
    )
    assert_frequencies_match(draws, law.probabilities(top2))
    p = PermuteAndFlip(1.0).probabilities(x)
    draws = np.array([select_top_snps(cc, 1.0, 1, rng=s).indices[0] for s in range(3000)])
    assert_frequencies_match(draws, p)


# ---------------------------------------------------------------------------
# API
# ---------------------------------------------------------------------------


def test_dispatch_and_result():
    sim = simulate_case_control(400, 400, 60, n_causal=3, odds_ratio=3.0, rng=3)
    res = select_top_snps(sim.counts, 3.0, 3, rng=1)
    assert res.method == "peeling" and res.privacy.epsilon == pytest.approx(3.0)
    assert res.round_privacy.epsilon == pytest.approx(1.0) and res.privacy.relation == "replace"
    assert res.labels == sim.counts.snp_ids[res.indices].tolist()
    again = select_top_snps(sim.counts, epsilon=3.0, k=3, rng=1)
    assert again.indices.tolist() == res.indices.tolist()
    add = select_top_snps(sim.counts, 3.0, 3, relation="add_remove", rng=1)
    assert add.privacy.relation == "add_remove"
    chi = select_top_snps(sim.counts, 3.0, 3, utility="chi2", mechanism="em", rng=1)
    assert chi.method == "gumbel_top_k"
    b, c = np.array([40, 30, 20]), np.array([10, 20, 20])
    tc = TransmissionCounts(
        b, c, 100, snp_ids=["a", "b", "c"], chrom=["1"] * 3, pos=np.arange(3), a1=["A"] * 3, a2=["G"] * 3
    )
    via_counts = select_top_snps(tc, 2.0, 2, rng=5)
    assert via_counts.indices.tolist() == select_top_snps(TransmissionCounts(b, c, 100), 2.0, 2, rng=5).indices.tolist()
    assert via_counts.labels == [["a", "b", "c"][i] for i in via_counts.indices]
    inst = select_top_snps(sim.counts, None, 2, mechanism=PermuteAndFlip(1.0), rng=2)
    assert inst.privacy.epsilon == pytest.approx(2.0)


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"test": "logistic"}, ValueError, "test must be one of"),
        ({"utility": "rank"}, ValueError, "utility must be one of"),
        ({"relation": "swap"}, ValueError, "relation must be one of"),
        ({"method": "all"}, ValueError, "method must be one of"),
        ({"k": 0}, ValueError, "k must be >= 1"),
        ({"k": 4}, ValueError, "k must be <="),
        ({"epsilon": -1.0}, ValueError, "epsilon"),
        ({"utility": "chi2", "relation": "add_remove"}, ValueError, "relation='replace'"),
    ],
)
def test_validation_before_randomness(kwargs, err, match):
    cc = CaseControlCounts(_CASES, _CONTROLS, n_cases=9, n_controls=9)
    args = {"epsilon": 1.0, "k": 2, **kwargs}
    with pytest.raises(err, match=match):
        select_top_snps(cc, args.pop("epsilon"), args.pop("k"), **args)


def test_chi2_needs_full_calls_and_tdt_refuses_case_control_options():
    cc = CaseControlCounts(_CASES, _CONTROLS, n_cases=9, n_controls=9)  # missing calls
    with pytest.raises(ValueError, match="fully called"):
        association_problem(cc, utility="chi2")
    tc = TransmissionCounts([4, 3], [1, 2], 10)
    with pytest.raises(ValueError, match="CaseControlCounts only"):
        select_top_snps(tc, 1.0, 1, test="allelic")
    with pytest.raises(ValueError, match="one family replaced"):
        select_top_snps(tc, 1.0, 1, relation="add_remove")
    with pytest.raises(TypeError, match="labels"):  # one form: the counts name their SNPs
        select_top_snps(cc, 1.0, 2, labels=["x", "y", "z"])
    with pytest.raises(TypeError):  # one form: (counts, epsilon, k), k required
        select_top_snps(tc, 1.0)
    with pytest.raises(TypeError, match="epsilon"):
        select_top_snps(cc, 1.0, 2, epsilon=1.0)
    with pytest.raises(TypeError, match="counts must be"):
        select_top_snps([4, 3], [1, 2], 10)
    with pytest.raises(TypeError, match="CaseControlCounts"):
        association_distances(np.zeros((2, 4)))


def test_no_count_in_repr_or_result():
    cc = CaseControlCounts(_CASES, _CONTROLS, n_cases=9, n_controls=9)
    res = select_top_snps(cc, 1.0, 2, rng=0)
    text = repr(res) + repr(cc)
    assert "4, 3, 1" not in text and "[4 3 1]" not in text
    assert math.isfinite(res.privacy.epsilon)
