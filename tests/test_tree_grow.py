"""The tree's level-wise histogramming and split scoring vs independent per-node references."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("sklearn")

from dpselect.apps.trees import DPDecisionTreeClassifier
from dpselect.apps.trees._growing import grow as tree_grow
from dpselect.apps.trees._growing.nodes import select_nodes
from dpselect.apps.trees._growing.split_criteria import (
    binary_candidates,
    binary_scores,
    info_gain,
    max_operator,
    node_tables,
)
from dpselect.problem import SelectionProblem


@pytest.mark.parametrize("utility", ["max_operator", "info_gain"])
@pytest.mark.parametrize("C", [2, 3])
def test_binary_scores_match_stacked_tables(utility, C):
    """binary_scores (incl. the two-class shortcut) equals the utility of the explicit two-child tables."""
    rng = np.random.default_rng(C)
    hist = rng.integers(0, 40, size=(7, 5, 6, C))
    is_cont = np.array([True, False, True, False, True])
    tabs, _ = binary_candidates(hist, np.ones((7, 5, 6), dtype=bool), is_cont)  # (7, 5, 6, 2, C)
    ref = max_operator(tabs) if utility == "max_operator" else info_gain(tabs)
    got = binary_scores(hist, is_cont, utility)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, ref) if utility == "max_operator" else np.testing.assert_allclose(got, ref)


def _reference_level(spec, cells, buf, loc, n_lvl, splits, prev, cand_ok, gen):
    """Each splitting node's tables counted from its own records (a loop over nodes), generic scores."""
    C, k = spec.n_classes, int(spec.n_values.max())
    p = cells.shape[1]
    y = cells[:, 0] % C
    codes = cells // C - np.arange(p)[None, :] * k
    scores, ok = [], []
    for node in splits:
        mine = loc == node
        tables = node_tables(codes[mine], y[mine], spec.n_values, C)
        if spec.binary:
            tabs, _ = binary_candidates(tables, cand_ok[node], spec.is_cont)
        else:
            tabs = tables
        scores.append(max_operator(tabs) if spec.split_utility == "max_operator" else info_gain(tabs))
        ok.append(cand_ok[node])
    template = SelectionProblem(np.zeros(2), global_sensitivity=spec.sensitivity, monotone=True)
    S = len(scores)
    chosen = select_nodes(
        spec.mech, np.asarray(scores).reshape(S, -1), np.asarray(ok).reshape(S, -1), template, gen, None
    )
    return chosen, None


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    "params",
    [
        {},
        {"split_utility": "info_gain", "n_max": 10_000, "mechanism": "em"},
        {"splits": "multiway", "n_bins": 4, "max_depth": 3},
        {"stopping": "count", "epsilon": 4.0},
    ],
)
def test_tree_identical_to_per_node_reference(monkeypatch, seed, params):
    """Same seed: the fitted tree equals one grown with per-node brute-force histograms and generic scores."""
    rng = np.random.default_rng(10 + seed)
    n = 3000
    X = np.c_[rng.uniform(0, 1, size=(n, 3)), rng.integers(0, 4, size=(n, 2))]
    y = ((X[:, 0] + (X[:, 3] == 2) + 0.3 * rng.normal(size=n)) > 1.0).astype(int) + (X[:, 4] == 1)
    kw = (
        dict(
            bounds=(0.0, 1.0),
            classes=[0, 1, 2],
            categorical_features={3: range(4), 4: range(4)},
            max_depth=5,
            random_state=seed,
        )
        | params
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast = DPDecisionTreeClassifier(**kw).fit(X, y)
        y2 = (y > 0).astype(int)  # two classes: the max-operator shortcut
        fast2 = DPDecisionTreeClassifier(**(kw | {"classes": [0, 1]})).fit(X, y2)
        monkeypatch.setattr(tree_grow, "_split_level", _reference_level)
        ref = DPDecisionTreeClassifier(**kw).fit(X, y)
        ref2 = DPDecisionTreeClassifier(**(kw | {"classes": [0, 1]})).fit(X, y2)
    for a, b in ((fast, ref), (fast2, ref2)):
        assert a.tree_.node_count > 3
        for name in ("feature", "cut", "child_start", "leaf", "leaf_counts", "value"):
            np.testing.assert_array_equal(getattr(a.tree_, name), getattr(b.tree_, name), err_msg=name)
