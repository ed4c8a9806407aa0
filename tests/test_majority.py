"""Argmax-indicator utility (apps.majority): exact t* vs BFS, smooth sensitivity, audits."""

from __future__ import annotations

import itertools
import math
from collections import deque

import numpy as np
import pytest

import dpselect
from conftest import CachedMechanism, assert_frequencies_match
from dpselect import ExponentialMechanism, PermuteAndFlip, ReportNoisyMax, StepProfile
from dpselect.analysis import audit
from dpselect.apps import counts as majority

M = 3
CAP = 8  # states with every count < CAP are checked
RELS = ("add_remove", "replace")
RULES = ("tieset", "first")


# ---------------------------------------------------------------------------
# independent brute force (modelled on spec-checks/argmax_bf.py)
# ---------------------------------------------------------------------------


def _u(c, rule):
    mx = max(c)
    if rule == "tieset":
        return tuple(int(v == mx) for v in c)
    i = c.index(mx)
    return tuple(int(k == i) for k in range(len(c)))


def _nbrs(c, rel):
    m = len(c)
    if rel == "add_remove":
        for i in range(m):
            for d in (1, -1):
                if c[i] + d >= 0:
                    t = list(c)
                    t[i] += d
                    yield tuple(t)
    else:
        for i in range(m):
            if c[i] == 0:
                continue
            for j in range(m):
                if j != i:
                    t = list(c)
                    t[i] -= 1
                    t[j] += 1
                    yield tuple(t)


def _ls_vec(c, rule, rel):
    """Per-candidate element local sensitivity LS_u(c, r) (0/1)."""
    uc = _u(c, rule)
    out = [0] * len(c)
    for t in _nbrs(c, rel):
        ut = _u(t, rule)
        out = [max(o, abs(a - b)) for o, a, b in zip(out, uc, ut)]
    return tuple(out)


def _box(rel):
    # AR: counts < CAP, distances <= B - CAP stay inside the box (asserted below);
    # RO: n is preserved, every state with counts < CAP has n <= 3 (CAP - 1) < B.
    return 18 if rel == "add_remove" else 3 * (CAP - 1) + 1


_BF_CACHE: dict = {}


def _brute(rule, rel):
    """Multi-source BFS distances to {LS_r = 1} (per candidate r) and to {LS = 1} on a box."""
    key = (rule, rel)
    if key in _BF_CACHE:
        return _BF_CACHE[key]
    B = _box(rel)
    states = list(itertools.product(range(B), repeat=M))
    ls = {s: _ls_vec(s, rule, rel) for s in states}

    def bfs(targets):
        dist = {s: 0 for s in targets}
        q = deque(targets)
        while q:
            s = q.popleft()
            for t in _nbrs(s, rel):
                if max(t) < B and t not in dist:
                    dist[t] = dist[s] + 1
                    q.append(t)
        return dist

    per = [bfs([s for s in states if ls[s][r]]) for r in range(M)]
    glob = bfs([s for s in states if max(ls[s])])
    _BF_CACHE[key] = (ls, per, glob, B)
    return _BF_CACHE[key]


def _small_states():
    return list(itertools.product(range(CAP), repeat=M))


# ---------------------------------------------------------------------------
# t* formulas vs brute force
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("rel", RELS)
def test_global_tstar_matches_bfs(rule, rel):
    _, _, glob, B = _brute(rule, rel)
    bad = []
    for c in _small_states():
        bf = glob.get(c, math.inf)
        if rel == "add_remove":
            assert bf <= B - CAP  # the shortest path stayed inside the box
        t = majority.distance_to_instability(c, tie_rule=rule, relation=rel)
        if t != bf:
            bad.append((c, t, bf))
    assert not bad, bad[:10]


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("rel", RELS)
def test_candidate_tstar_matches_bfs(rule, rel):
    _, per, _, _B = _brute(rule, rel)
    bad = []
    for c in _small_states():
        bf = np.array([per[r].get(c, math.inf) for r in range(M)])
        lib = majority.candidate_distances(c, tie_rule=rule, relation=rel)
        if not np.array_equal(lib, bf):
            bad.append((c, lib.tolist(), bf.tolist()))
        assert lib.min() == majority.distance_to_instability(c, tie_rule=rule, relation=rel)
    assert not bad, bad[:10]


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("rel", RELS)
def test_profiles_and_smooth_sensitivity_match_bfs(rule, rel):
    _, per, glob, _ = _brute(rule, rel)
    for c in _small_states():
        pr = majority.majority_problem(c, relation=rel, tie_rule=rule)
        t = glob.get(c, math.inf)
        tr = np.array([per[r].get(c, math.inf) for r in range(M)])
        for beta in (0.05, 0.9):
            assert pr.smooth_sensitivity(beta) == pytest.approx(math.exp(-beta * t), rel=1e-12, abs=0)
            np.testing.assert_allclose(pr.candidate_smooth_sensitivity(beta), np.exp(-beta * tr), rtol=1e-12, atol=0)
        for tt in range(10):
            assert pr.local_sensitivity(tt) == float(tt >= t)
            np.testing.assert_array_equal(pr.candidate_local_sensitivity(tt), (tt >= tr).astype(float))
        assert pr.max_distance >= max(x for x in [*list(tr), 0] if math.isfinite(x))


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("rel", RELS)
def test_smooth_sensitivity_by_horizon_bfs(rule, rel):
    """S*_beta(x) = max_y LS(y) exp(-beta d(x, y)) by a plain BFS from x (sampled states)."""
    ls, _, _, B = _brute(rule, rel)
    rng = np.random.default_rng(3)
    states = _small_states()
    horizon = B - CAP
    for i in rng.choice(len(states), size=16, replace=False):
        x = states[i]
        dist = {x: 0}
        q = deque([x])
        while q:
            s = q.popleft()
            if dist[s] >= horizon:
                continue
            for t in _nbrs(s, rel):
                if max(t) < B and t not in dist:
                    dist[t] = dist[s] + 1
                    q.append(t)
        pr = majority.majority_problem(x, relation=rel, tie_rule=rule)
        for beta in (0.1, 0.9):
            bf = max(max(ls[y]) * math.exp(-beta * d) for y, d in dist.items())
            assert pr.smooth_sensitivity(beta) == pytest.approx(bf, rel=1e-12, abs=1e-300)
            bfr = np.array([max(ls[y][r] * math.exp(-beta * d) for y, d in dist.items()) for r in range(M)])
            np.testing.assert_allclose(pr.candidate_smooth_sensitivity(beta), bfr, rtol=1e-12, atol=1e-300)


def test_spec_examples_and_paper_s_is_not_an_upper_bound():
    # gap 1 already has LS = 1 (errata 12): the paper's S = e^{-j beta} < 1 = LS
    pr = majority.majority_problem([4, 3, 0])
    assert pr.local_sensitivity(0) == 1.0
    assert pr.smooth_sensitivity(0.5) == 1.0
    # g = 5: AR t* = 4, RO t* = ceil(5/2) - 1 = 2
    assert majority.distance_to_instability([9, 4, 1]) == 4
    assert majority.distance_to_instability([9, 4, 1], relation="replace") == 2
    # T2: winner index 0 with M = 9 - 4 + 1 = 6 -> AR 5, RO 2
    assert majority.distance_to_instability([9, 4, 1], tie_rule="first") == 5
    assert majority.distance_to_instability([9, 4, 1], tie_rule="first", relation="replace") == 2
    # T2 on a tie: lower index wins with margin 1 -> t* = 0
    pr = majority.majority_problem([3, 3], tie_rule="first")
    np.testing.assert_array_equal(pr.scores, [1.0, 0.0])
    assert pr.local_sensitivity(0) == 1.0


def test_degenerate_cases():
    pr = majority.majority_problem([7])
    assert pr.smooth_sensitivity(0.3) == 0.0 and pr.local_sensitivity(100) == 0.0
    pr = majority.majority_problem([0, 0, 0], relation="replace")
    assert pr.smooth_sensitivity(0.3) == 0.0
    np.testing.assert_array_equal(pr.candidate_smooth_sensitivity(0.3), 0.0)
    pr = majority.majority_problem([0, 0, 0])
    np.testing.assert_array_equal(pr.scores, 1.0)
    assert pr.smooth_sensitivity(0.3) == 1.0


def test_problem_attributes():
    pr = majority.majority_problem([5, 2, 9], relation="replace", tie_rule="first", labels=["a", "b", "c"])
    assert pr.relation == "replace" and not pr.monotone and pr.global_sensitivity == 1.0
    assert pr.labels == ("a", "b", "c")
    np.testing.assert_array_equal(pr.scores, [0, 0, 1])
    np.testing.assert_array_equal(majority.majority_problem([2, 5, 5]).scores, [0, 1, 1])
    np.testing.assert_array_equal(majority.majority_problem([2, 5, 5], tie_rule="first").scores, [0, 1, 0])


def test_large_candidate_sets_are_vectorised():
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 50, size=3000)
    for rel in RELS:
        for rule in RULES:
            tr = majority.candidate_distances(counts, tie_rule=rule, relation=rel)
            assert tr.shape == (3000,) and np.isfinite(tr).all()
            assert tr.min() == majority.distance_to_instability(counts, tie_rule=rule, relation=rel)


def test_candidate_tstar_random_vs_bfs_more_classes():
    """m = 4 and 5, random states, plain BFS per candidate (unbounded counts)."""
    rng = np.random.default_rng(11)
    for _ in range(60):
        m = int(rng.integers(2, 6))
        c = tuple(int(v) for v in rng.integers(0, 6, size=m))
        for rule in RULES:
            for rel in RELS:
                lib = majority.candidate_distances(c, tie_rule=rule, relation=rel)
                for r in range(m):
                    seen = {c: 0}
                    q = deque([c])
                    found = math.inf
                    while q:
                        s = q.popleft()
                        if _ls_vec(s, rule, rel)[r]:
                            found = seen[s]
                            break
                        for t in _nbrs(s, rel):
                            if t not in seen:
                                seen[t] = seen[s] + 1
                                q.append(t)
                    assert lib[r] == found, (c, rule, rel, r, lib, found)


# ---------------------------------------------------------------------------
# neighbours and audits
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("rel", RELS)
def test_neighbours_match_bruteforce(rel):
    for c in [(0, 0, 0), (3, 0, 1), (2, 2)]:
        lib = sorted(tuple(int(v) for v in y) for y in majority.majority_neighbours(c, rel))
        assert lib == sorted(_nbrs(c, rel))


def test_exact_audit_classic_mechanisms():
    rng = np.random.default_rng(2024)
    mechs = []
    for eps in (0.1, 0.7, 2.5):
        mechs += [ExponentialMechanism(eps), PermuteAndFlip(eps), ReportNoisyMax(eps, "laplace")]
    pairs = {rule: [] for rule in RULES}
    for _ in range(120):
        m = int(rng.integers(2, 6))
        c = rng.integers(0, 7, size=m)
        for rule in RULES:
            x = majority.majority_problem(c, tie_rule=rule)
            pairs[rule] += [(x, majority.majority_problem(y, tie_rule=rule)) for y in majority.majority_neighbours(c)]
    for mech in mechs:
        for rule in RULES:
            rep = audit(CachedMechanism(mech), pairs[rule])
            assert not rep.violates, (mech, rule, str(rep))
            assert rep.max_loss <= mech.epsilon * (1 + 1e-9)
            assert rep.claimed.relation == "add_remove" and rep.n_pairs == len(pairs[rule])


# ---------------------------------------------------------------------------
# private_argmax
# ---------------------------------------------------------------------------


def _random_pairs(rel, *, seed, n_vectors, high, **kwargs):
    """(problem(x), problem(y)) for all neighbours y of random count vectors x (2-4 classes, counts < high)."""
    rng = np.random.default_rng(seed)
    pairs = []
    for _ in range(n_vectors):
        c = rng.integers(0, high, size=int(rng.integers(2, 5)))
        if rel == "replace" and c.sum() == 0:
            c[0] = 1
        x = majority.majority_problem(c, relation=rel, **kwargs)
        pairs += [
            (x, majority.majority_problem(y, relation=rel, **kwargs)) for y in majority.majority_neighbours(c, rel)
        ]
    return pairs


def _pf_by_permutations(scores, scale):
    """Permute-and-flip from its definition (McKenna & Sheldon 2020): visit candidates in a uniformly
    random order, accept r with probability exp((u_r - u*)/scale); exact over all m! orders."""
    scores = np.asarray(scores, dtype=float)
    accept = np.exp((scores - scores.max()) / scale)
    out = np.zeros(scores.size)
    perms = list(itertools.permutations(range(scores.size)))
    for order in perms:
        reach = 1.0
        for r in order:
            out[r] += reach * accept[r] / len(perms)
            reach *= 1.0 - accept[r]
    return out


def test_issue_11_figure_private_argmax_default_vs_em_indicator():
    """Issue #11, first table: votes [22, 8, 17, 4, 0], eps = 1: P[best] 0.29 (EM, indicator) vs 0.997 (PF, counts)."""
    counts = [22, 8, 17, 4, 0]
    em_ind = ExponentialMechanism(1.0).probabilities(majority.majority_problem(counts))
    assert em_ind[0] == pytest.approx(math.exp(0.5) / (math.exp(0.5) + 4), rel=1e-12)  # closed form
    assert round(em_ind[0], 2) == 0.29
    default = majority.majority_problem(counts, utility="count")
    assert default.monotone and default.global_sensitivity == 1.0
    pf = PermuteAndFlip(1.0).probabilities(default)
    np.testing.assert_allclose(pf, _pf_by_permutations(counts, 1.0), rtol=1e-10, atol=1e-15)  # scale 1/eps
    assert round(pf[0], 3) == 0.997
    # the default of private_argmax draws from exactly that law
    draws = np.array([majority.private_argmax(counts, 1.0, rng=s) for s in range(3000)])
    assert_frequencies_match(draws, pf)


@pytest.mark.parametrize("rel", RELS)
def test_count_utility_problem(rel):
    c = [3, 0, 7, 7]
    pr = majority.majority_problem(c, utility="count", relation=rel, labels=list("abcd"))
    np.testing.assert_array_equal(pr.scores, [3, 0, 7, 7])
    assert pr.monotone == (rel == "add_remove") and pr.relation == rel and pr.labels == tuple("abcd")
    # replace moves one count up and another down: not monotone, EM keeps the 2/eps scale
    em = ExponentialMechanism(1.2).probabilities(pr)
    w = np.exp(np.array(c) * 1.2 / (1.0 if rel == "add_remove" else 2.0))
    np.testing.assert_allclose(em, w / w.sum(), rtol=1e-12)
    with pytest.raises(ValueError, match="utility"):
        majority.majority_problem(c, utility="votes")


@pytest.mark.parametrize("rel", RELS)
def test_count_utility_exact_audit_with_negative_control(rel):
    """PF / EM on counts: loss <= eps on all neighbours; treating replace as monotone is caught."""
    pairs = _random_pairs(rel, seed=3, n_vectors=40, high=7, utility="count")
    for mech in (PermuteAndFlip(0.7), ExponentialMechanism(0.7)):
        rep = audit(CachedMechanism(mech), pairs)
        assert not rep.violates and rep.max_loss <= 0.7 * (1 + 1e-9), str(rep)
        assert rep.claimed.relation == rel
    if rel == "replace":  # negative control: the halved (monotone) scale is not private under replace
        wrong = [
            (
                dpselect.SelectionProblem(x.scores, monotone=True, relation=rel),
                dpselect.SelectionProblem(y.scores, monotone=True, relation=rel),
            )
            for x, y in pairs
        ]
        for mech in (PermuteAndFlip(0.7), ExponentialMechanism(0.7)):
            rep = audit(mech, wrong)
            assert rep.violates and rep.max_loss > 0.7 * 1.2, str(rep)


@pytest.mark.parametrize(
    "name", ["em", "pf", "rnm_laplace", "rnm_gumbel", "snm_laplace", "snm_t", "snm_lln", "sps", "ld"]
)
@pytest.mark.parametrize("utility", ["count", "indicator"])
def test_private_argmax_equals_the_named_mechanism_on_the_problem(name, utility):
    counts = [9, 3, 8, 0]
    eps = 1.0
    delta = 1e-6 if name in dpselect.mechanisms.registry.APPROXIMATE_NAMES else 0.0
    pr = majority.majority_problem(counts, utility=utility, labels=["w", "x", "y", "z"])
    mech = dpselect.mechanisms.registry.make_mechanism(name, eps, delta)
    for s in range(4):
        expect = pr.labels[int(mech.select(pr, rng=s))]
        got = majority.private_argmax(
            counts, eps, mechanism=name, utility=utility, delta=delta, rng=s, labels=["w", "x", "y", "z"]
        )
        assert got == expect
    # without labels the index is returned, the same draw
    assert majority.private_argmax(counts, eps, mechanism=name, utility=utility, delta=delta, rng=7) == int(
        mech.select(pr, rng=7)
    )


def test_private_argmax_instances_and_errors():
    counts = [100, 3, 2]
    pr = majority.majority_problem(counts, utility="count")
    pf = PermuteAndFlip(0.05)
    for s in range(3):
        assert majority.private_argmax(counts, None, mechanism=pf, rng=s) == int(pf.select(pr, rng=s))
        assert majority.private_argmax(counts, 0.05, mechanism=pf, rng=s) == int(pf.select(pr, rng=s))
    with pytest.raises(ValueError, match="epsilon"):
        majority.private_argmax(counts, 2.0, mechanism=PermuteAndFlip(1.0))
    with pytest.raises(ValueError, match="mechanism"):
        majority.private_argmax(counts, 1.0, mechanism="nope")
    with pytest.raises(TypeError, match="mechanism"):
        majority.private_argmax(counts, 1.0, mechanism=object())
    with pytest.raises(ValueError, match="epsilon"):
        majority.private_argmax(counts, -1.0)
    with pytest.raises(ValueError, match="delta"):
        majority.private_argmax(counts, 1.0, delta=1.5)
    with pytest.raises(ValueError, match="utility"):
        majority.private_argmax(counts, 1.0, utility="rank")
    with pytest.raises(TypeError):
        majority.private_argmax(counts, 1.0, "pf")  # keyword-only after epsilon


def test_private_argmax_charges_the_accountant_before_drawing():
    acc = dpselect.Accountant(1.0)
    gen = np.random.default_rng(5)
    state = gen.bit_generator.state
    majority.private_argmax([5, 1, 0], 0.6, accountant=acc, rng=gen)
    assert acc.spent.epsilon == pytest.approx(0.6) and acc.spent.relation == "add_remove"
    state = gen.bit_generator.state
    with pytest.raises(dpselect.accounting.BudgetExceededError):
        majority.private_argmax([5, 1, 0], 0.6, accountant=acc, rng=gen)
    assert gen.bit_generator.state == state  # refused before any randomness was drawn
    assert acc.spent.epsilon == pytest.approx(0.6)
    with pytest.raises(TypeError, match="accountant"):
        majority.private_argmax([5, 1, 0], 0.6, accountant=0.6)


def test_private_argmax_frequencies_match_exact_probabilities():
    counts = [6, 5, 5, 1]
    pr = majority.majority_problem(counts)
    mech = ExponentialMechanism(1.3)
    draws = np.array(
        [majority.private_argmax(counts, 1.3, mechanism="em", utility="indicator", rng=s) for s in range(2000)]
    )
    assert_frequencies_match(draws, mech.probabilities(pr))


def test_bad_inputs():
    with pytest.raises(ValueError, match="counts"):
        majority.majority_problem([3, -1])
    with pytest.raises(ValueError, match="counts"):
        majority.majority_problem([1.5, 2])
    with pytest.raises(ValueError, match="counts"):
        majority.majority_problem([[1, 2]])
    with pytest.raises(ValueError, match="counts"):
        majority.majority_problem([])
    with pytest.raises(ValueError, match="counts"):
        majority.majority_problem([1.0, np.nan])
    with pytest.raises(TypeError, match="counts"):
        majority.majority_problem(["a", "b"])
    with pytest.raises(ValueError, match="tie_rule"):
        majority.majority_problem([1, 2], tie_rule="last")
    with pytest.raises(ValueError, match="relation"):
        majority.majority_problem([1, 2], relation="swap")
    with pytest.raises(ValueError, match="labels"):
        majority.majority_problem([1, 2], labels=["a"])
    assert isinstance(majority.majority_problem([1, 2])._ls, StepProfile)


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("rel", RELS)
def test_local_dampening_audit_uses_exact_candidate_profiles(rule, rel):
    """Integration: local dampening reads candidate_local_sensitivity; exact audit on neighbours."""
    LocalDampening = getattr(dpselect.mechanisms, "LocalDampening", None)
    if LocalDampening is None:
        pytest.skip("LocalDampening not available")
    pairs = _random_pairs(rel, seed=7, n_vectors=30, high=6, tie_rule=rule)
    for eps in (0.5, 2.0):
        rep = audit(LocalDampening(eps), pairs)
        assert not rep.violates, str(rep)
