"""Split criteria of the private trees: sensitivities by brute force, exact audits, batched selection."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("sklearn")

from conftest import assert_frequencies_match
from dpselect.analysis import audit
from dpselect.apps.trees import DPDecisionTreeClassifier
from dpselect.apps.trees._growing.nodes import binary_split_problem, node_neighbours, select_nodes, split_problem
from dpselect.apps.trees._growing.split_criteria import (
    binary_candidates,
    info_gain,
    info_gain_element_sensitivity,
    info_gain_sensitivity,
    max_operator,
)
from dpselect.apps.trees._params import MECHANISMS
from dpselect.mechanisms.registry import make_mechanism
from dpselect.problem import SelectionProblem

APPROX = ("snm_laplace", "snm_lln")


def _node_data():
    # 6 records, attributes: 0 continuous with 3 bins, 1 categorical with 3 values, 2 binary; 2 classes
    codes = np.array([[0, 0, 1], [0, 1, 0], [1, 0, 0], [2, 2, 1], [2, 0, 0], [1, 2, 1]])
    y = np.array([0, 0, 0, 1, 1, 0])
    return codes, y, np.array([3, 3, 2]), np.array([True, False, False]), 2


def _brute_binary_scores(codes, y, nv, is_cont, C, utility):
    """Scores of every valid cut, from the definition (independent of binary_candidates)."""
    out = []
    for f in range(nv.size):
        for b in range(nv[f]):
            yes = codes[:, f] < b if is_cont[f] else codes[:, f] == b
            side_yes = [v for v in range(nv[f]) if (v < b if is_cont[f] else v == b)]
            if not side_yes or len(side_yes) == nv[f]:
                continue
            tab = np.array([[np.sum(yes & (y == c)) for c in range(C)], [np.sum(~yes & (y == c)) for c in range(C)]])
            out.append(tab.max(axis=1).sum() if utility == "max_operator" else info_gain(tab[None])[0])
    return np.array(out, dtype=float)


@pytest.mark.parametrize("utility", ["max_operator", "info_gain"])
def test_binary_scores_match_definition(utility):
    codes, y, nv, is_cont, C = _node_data()
    pr = binary_split_problem(codes, y, nv, is_cont, C, mechanism="pf", split_utility=utility, n_max=50)
    np.testing.assert_allclose(pr.scores, _brute_binary_scores(codes, y, nv, is_cont, C, utility), atol=1e-12)


def test_binary_max_operator_sensitivity_is_one_and_monotone():
    """Over all add/remove neighbours of random small nodes: every score moves by 0 or +1 (add) / -1 (remove)."""
    rng = np.random.default_rng(0)
    nv, is_cont, C = np.array([3, 3, 2]), np.array([True, False, False]), 3
    for _ in range(20):
        n = int(rng.integers(0, 7))
        codes = np.column_stack([rng.integers(0, k, n) for k in nv]).reshape(n, 3)
        y = rng.integers(0, C, n)
        u = binary_split_problem(codes, y, nv, is_cont, C).scores
        for c2, y2 in node_neighbours(codes, y, nv, C):
            d = binary_split_problem(c2, y2, nv, is_cont, C).scores - u
            sign = 1 if y2.size > y.size else -1
            assert set(np.unique(d * sign)) <= {0.0, 1.0}


def test_live_codes_restrict_the_candidates():
    codes, y, nv, is_cont, C = _node_data()
    live = np.ones((3, 3), dtype=bool)
    live[0, 0] = False  # continuous feature 0 already cut at 1: codes {1, 2} remain -> only cut b = 2
    live[1, :] = [True, False, False]  # categorical feature 1 fixed to value 0 -> no cut
    live[2, 2] = False
    pr = binary_split_problem(codes[codes[:, 0] > 0], y[codes[:, 0] > 0], nv, is_cont, C, live=live)
    assert pr.labels == ((0, 2), (2, 0), (2, 1))
    tabs, valid = binary_candidates(np.zeros((3, 3, C)), live, is_cont)
    assert valid.sum() == 3 and tabs.shape == (3, 3, 2, C)


@pytest.mark.parametrize(
    "mechanism", [pytest.param(s, marks=pytest.mark.slow) if s == "snm_lln" else s for s in MECHANISMS]
)  # LLN's quadrature makes its audits > 10 s
@pytest.mark.parametrize("utility", ["max_operator", "info_gain"])
@pytest.mark.parametrize("splits", ["binary", "multiway"])
def test_audit_split_selection(mechanism, utility, splits):
    """Exact audit of the problem a node builds, over all add/remove neighbours of the node's data."""
    codes, y, nv, is_cont, C = _node_data()
    eps = 0.7
    delta = 1e-3 if mechanism in APPROX else 0.0
    mech = make_mechanism(mechanism, eps, delta)

    def build(c, yy):
        if splits == "binary":
            return binary_split_problem(c, yy, nv, is_cont, C, mechanism=mechanism, split_utility=utility, n_max=50)
        return split_problem(c, yy, nv, C, mechanism, utility, n_max=50)

    x = build(codes, y)
    rep = audit(mech, [(x, build(c, yy)) for c, yy in node_neighbours(codes, y, nv, C)])
    assert not rep.violates, str(rep)
    assert rep.claimed.epsilon <= eps * (1 + 1e-9)
    if delta == 0.0:
        assert rep.max_loss <= eps * (1 + 1e-9)


def test_audit_catches_an_understated_sensitivity():
    """Negative control: claiming Delta = 1/2 for the max operator is caught by the same audit."""
    codes, y, nv, is_cont, C = _node_data()
    mech = make_mechanism("pf", 0.7)

    def halved(c, yy):
        pr = binary_split_problem(c, yy, nv, is_cont, C)
        return SelectionProblem(pr.scores, global_sensitivity=0.5, monotone=True)

    x = halved(codes, y)
    rep = audit(mech, [(x, halved(c, yy)) for c, yy in node_neighbours(codes, y, nv, C)])
    assert rep.violates and rep.max_loss > 0.7


def test_root_selection_is_the_public_node_problem():
    """The tree's root cut (EM, huge budget) is the argmax of binary_split_problem on all records."""
    codes, y, nv, is_cont, C = _node_data()
    X = np.repeat(codes, 40, axis=0).astype(float)
    yy = np.repeat(y, 40)
    pr = binary_split_problem(X.astype(int), yy, nv, is_cont, C, mechanism="em")
    best = pr.labels[int(np.argmax(pr.scores))]
    assert np.sum(pr.scores == pr.scores.max()) == 1
    clf = DPDecisionTreeClassifier(
        epsilon=300.0,
        max_depth=1,
        n_bins=3,
        bounds={0: (0.0, 3.0)},
        classes=[0, 1],
        categorical_features={1: [0, 1, 2], 2: [0, 1]},
        mechanism="em",
        random_state=0,
    ).fit(X + np.array([0.5, 0, 0]), yy)
    assert (clf.tree_.feature[0], clf.tree_.cut[0]) == best
    np.testing.assert_array_equal(max_operator(np.ones((2, 2, 3))), [2.0, 2.0])


@pytest.mark.parametrize("name", ["pf", "em"])
def test_batched_level_selection_has_the_mechanisms_law(name):
    """select_nodes draws every row from mech's exact law on the row's valid candidates."""
    mech = make_mechanism(name, 0.8)
    scores = np.array([[3.0, 1.0, 0.0, 2.0], [5.0, 5.0, 4.0, -1.0]])
    valid = np.array([[True, True, False, True], [True, True, True, True]])
    reps = 20_000
    S = np.repeat(scores, reps, axis=0)
    V = np.repeat(valid, reps, axis=0)
    template = SelectionProblem(np.zeros(2), global_sensitivity=1.0, monotone=True)
    got = select_nodes(mech, S, V, template, np.random.default_rng(0), problem_of=None)
    for i in range(2):
        cols = np.flatnonzero(valid[i])
        probs = mech.probabilities(SelectionProblem(scores[i, cols], global_sensitivity=1.0, monotone=True))
        draws = got[i * reps : (i + 1) * reps]
        assert np.isin(draws, cols).all()
        assert_frequencies_match(np.searchsorted(cols, draws), probs)


def test_info_gain_element_sensitivity_brute_force():
    """delta(T, t, A) upper-bounds the exact LS over all node datasets within t steps (and equals LS at t=0)."""
    rng = np.random.default_rng(1)
    for _ in range(6):
        tab = rng.integers(0, 4, size=(1, 2, 2))  # one attribute, 2 values, 2 classes

        def moves(t):
            for j in range(2):
                for c in range(2):
                    for d in (1, -1):
                        if t[0, j, c] + d >= 0:
                            u = t.copy()
                            u[0, j, c] += d
                            yield u

        def ls(t):
            q0 = info_gain(t)[0]
            return max(abs(info_gain(u)[0] - q0) for u in moves(t))

        frontier = {tab.tobytes(): tab}
        exact = [ls(tab)]
        for _step in range(1, 4):
            new = {u.tobytes(): u for t in frontier.values() for u in moves(t)}
            frontier.update(new)
            exact.append(max(ls(t) for t in frontier.values()))
        prof = info_gain_element_sensitivity(tab, horizon=3)[:, 0]
        assert abs(prof[0] - exact[0]) < 1e-9
        assert (prof >= np.array(exact) - 1e-9).all()
        assert (np.diff(prof) >= 0).all()
        assert prof.max() <= info_gain_sensitivity(tab.sum() + 3) + 1e-9
        assert math.isfinite(prof.max())
