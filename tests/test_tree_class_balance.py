"""The trees' class-balance rules: released class counts, the effective record count, the label fallback."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest

from dpselect.analysis.audit import privacy_loss
from dpselect.apps.trees import DPDecisionTreeClassifier, DPRandomForestClassifier, auto_tree_depth
from dpselect.apps.trees._growing.grow import LABEL_MARGIN, leaf_values
from dpselect.apps.trees._growing.shape import RECORD_COUNT_SHARE, effective_records
from dpselect.noise import GridLaplace
from dpselect.noise.exact import discrete_laplace_logpmf


def test_effective_records_independent_formula():
    rng = np.random.default_rng(0)
    for _ in range(200):
        C = int(rng.integers(2, 6))
        c = rng.integers(-20, 400, size=C).astype(float)
        pos = np.maximum(c, 0.0)
        want = C / (C - 1) * (pos.sum() - pos.max())
        assert effective_records(c) == pytest.approx(want)
        assert 0.0 <= effective_records(c) <= pos.sum() + 1e-9  # never more records than were counted
    assert effective_records([500, 500]) == 1000.0 and effective_records([970, 30]) == 60.0
    assert effective_records([7.0]) == 7.0


def _histogram_log_law(labels, C, eps, window=60):
    """Exact log-law of the released class counts (product of discrete Laplace) on a window of outputs."""
    counts = np.bincount(np.asarray(labels, dtype=np.int64), minlength=C)
    t = GridLaplace(1.0, eps, granularity=1.0).scale_units
    grid = np.arange(-window, window + 1)
    out = np.zeros((grid.size,) * C)
    for k in range(C):
        shape = [1] * C
        shape[k] = grid.size
        out = out + discrete_laplace_logpmf(grid - counts[k], t).reshape(shape)
    return out.ravel()


def test_class_count_histogram_exact_audit():
    """The released class counts (one record in one class) are eps_n-DP under add/remove: every pair."""
    eps = RECORD_COUNT_SHARE * 2.0
    C, worst = 2, 0.0
    for n in range(0, 3):
        for labels in itertools.product(range(C), repeat=n):
            for extra in range(C):
                lx = _histogram_log_law(labels, C, eps)
                ly = _histogram_log_law((*labels, extra), C, eps)
                worst = max(worst, privacy_loss(lx, ly, floor=1e-200))
    assert worst <= eps + 1e-9 and worst > 0.99 * eps  # tight: the bound is met
    # negative control: cumulative counts (a record of class 0 also counts in "class <= 1") cost 2 eps
    t = GridLaplace(1.0, eps, granularity=1.0).scale_units
    j = np.arange(-60, 61)
    joint_x = (discrete_laplace_logpmf(j, t)[:, None] + discrete_laplace_logpmf(j, t)[None, :]).ravel()
    joint_y = (discrete_laplace_logpmf(j - 1, t)[:, None] + discrete_laplace_logpmf(j - 1, t)[None, :]).ravel()
    assert privacy_loss(joint_x, joint_y, floor=1e-200) > 1.9 * eps


def test_root_label_and_margin_fallback_are_post_processing():
    # root 0 with leaves 1 and 2
    arr = {"leaf": np.array([-1, 0, 1]), "parent": np.array([-1, 0, 0]), "depth": np.array([0, 1, 1])}
    eps_leaf = 0.5

    def need(total):  # one leaf: a standard deviation of the noise and two of the sampling spread
        return LABEL_MARGIN * 2.0 * math.sqrt(1.0 / eps_leaf**2 + total)

    # leaf 0 favours class 1 by less than the margin; leaf 1 by more; the root's label is class 0
    counts = np.array([[60.0, 70.0], [10.0, 60.0]])
    assert 10.0 < need(130.0) and 50.0 >= need(70.0)
    prior = (np.array([500.0, 100.0]), 1.0)
    _, value = leaf_values(arr, counts, eps_leaf, prior)
    w0, w1 = 1.0, eps_leaf**2 / 2
    root = (w0 * prior[0] + w1 * counts.sum(axis=0)) / (w0 + w1)  # inverse-variance mean
    np.testing.assert_allclose(value[0], root / root.sum())  # falls back to the root's label (class 0)
    np.testing.assert_allclose(value[1], counts[1] / counts[1].sum())  # clears the margin: its own counts
    # without a prior the root is the leaves' sum: class 1 now, so leaf 0 keeps its own (same) label
    _, value = leaf_values(arr, counts, eps_leaf)
    np.testing.assert_allclose(value[0], counts[0] / counts[0].sum())


def test_no_signal_predicts_the_majority_label():
    """Labels independent of the features, 90% majority: the default tree falls back to the majority label."""
    rng = np.random.default_rng(1)
    n = 2000
    X = rng.uniform(0, 1, size=(n, 4))
    y = (rng.uniform(size=n) < 0.1).astype(int)
    Xt = rng.uniform(0, 1, size=(5000, 4))
    all_majority = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for seed in range(20):
            for eps in (0.1, 1.0):
                clf = DPDecisionTreeClassifier(epsilon=eps, bounds=(0, 1), classes=[0, 1], random_state=seed)
                pred = clf.fit(X, y).predict(Xt)
                assert clf.depth_ >= 1
                assert np.mean(pred == 0) > 0.9  # never far below the majority rate
                all_majority += bool(np.all(pred == 0))
    assert all_majority >= 36  # of 40 fits: the depth-0 choice, made by the released counts


def test_depth_weighs_the_class_balance():
    """At the same n and epsilon a 97% majority gets a shallower tree than balanced classes."""
    rng = np.random.default_rng(2)
    n = 10_000
    X = rng.uniform(0, 1, size=(n, 3))
    balanced = (X[:, 0] > 0.5).astype(int)
    skewed = (X[:, 0] > 0.97).astype(int)
    kw = dict(epsilon=5.0, bounds=(0, 1), classes=[0, 1], random_state=0)
    d_bal = DPDecisionTreeClassifier(**kw).fit(X, balanced).depth_
    d_skew = DPDecisionTreeClassifier(**kw).fit(X, skewed).depth_
    eps_r = 5.0 * (1 - RECORD_COUNT_SHARE)
    assert d_bal == auto_tree_depth(n, 2, eps_r)  # noise of scale 2 on counts of 5,000: the same threshold
    assert d_skew == auto_tree_depth(2 * 0.03 * n, 2, eps_r) < d_bal
    # a public n_records sizes the tree from n alone (no class counts spent)
    pub = DPDecisionTreeClassifier(n_records=n, **kw).fit(X, skewed)
    assert pub.depth_ == auto_tree_depth(n, 2, 5.0)


def test_default_forest_is_the_default_tree_below_a_million_records():
    rng = np.random.default_rng(3)
    X = rng.uniform(0, 1, size=(3000, 3))
    y = (X[:, 0] + 0.1 * rng.normal(size=3000) > 0.6).astype(int)
    kw = dict(epsilon=1.0, bounds=(0, 1), classes=[0, 1])
    forest_depths, tree_depths = [], []
    for seed in range(10):
        rf = DPRandomForestClassifier(random_state=seed, **kw).fit(X, y)
        assert rf.n_estimators_ == 1 and math.isclose(rf.privacy_.epsilon, 1.0)
        forest_depths.append(rf.depth_)
        tree_depths.append(DPDecisionTreeClassifier(random_state=seed, **kw).fit(X, y).depth_)
        assert rf.estimators_[0].n_records_ == rf.n_records_  # its one tree reads the forest's class counts
    assert sorted(set(forest_depths)) == sorted(set(tree_depths))  # the same rule on the same counts' law


def test_no_signal_deep_tree_stays_near_the_majority_rate():
    """60/40 labels independent of the features, epsilon = 5: the depth rule grows 8 levels; the label margin's
    sampling term keeps the held-out accuracy within 1 point of the majority rate (0.6 below; one sampling
    standard deviation instead of two: 1.1 below; no margin: 1.6 below)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (5000, 6))
    y = (rng.uniform(size=5000) < 0.4).astype(int)
    Xt = rng.uniform(0, 1, (4000, 6))
    yt = (rng.uniform(size=4000) < 0.4).astype(int)
    accs = [
        DPDecisionTreeClassifier(epsilon=5.0, bounds=(0, 1), classes=[0, 1], random_state=s).fit(X, y).score(Xt, yt)
        for s in range(8)
    ]
    assert np.mean(accs) > np.mean(yt == 0) - 0.01
