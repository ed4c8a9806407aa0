"""The forest's default algorithm: private greedy trees on disjoint parts (dpselect.apps.trees._forest.ensemble)."""

from __future__ import annotations

import itertools
import math
import os
import warnings

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.datasets import make_blobs

from dpselect._warnings import PrivacyLeakWarning
from dpselect.accounting import Accountant, BudgetExceededError
from dpselect.analysis import audit
from dpselect.apps.trees import DPDecisionTreeClassifier, DPRandomForestClassifier, auto_partitions, auto_tree_depth
from dpselect.apps.trees._growing.shape import RECORD_COUNT_SHARE
from dpselect.privacy import Privacy
from dpselect.problem import SelectionProblem

# ---------------------------------------------------------------------------
# exact audit of the partition step: records to parts by independent draws, an eps-DP release per part
# ---------------------------------------------------------------------------


def _rr(bit: int, eps: float) -> np.ndarray:
    """Law of randomised response on a bit (eps-DP)."""
    p = math.exp(eps) / (1.0 + math.exp(eps))
    return np.array([p, 1.0 - p]) if bit == 0 else np.array([1.0 - p, p])


class _PartitionToy:
    """Records are bits; T = 2 parts; each part releases RR_eps(whether it holds a 1).

    ``scheme="draws"`` assigns each record to a part by an independent uniform draw (the forest's rule);
    ``"chunks"`` shuffles and cuts positional chunks of floor(n/T) records (Fletcher–Islam's rule);
    ``"shared"`` gives every part all the records (no partition at all).
    """

    def __init__(self, eps: float, scheme: str):
        self.eps, self.scheme = eps, scheme

    def _parts(self, bits: tuple) -> list[tuple[float, list[tuple]]]:
        n = len(bits)
        if self.scheme == "shared":
            return [(1.0, [bits, bits])]
        if self.scheme == "draws":
            out = []
            for a in itertools.product((0, 1), repeat=n):
                out.append((0.5**n, [tuple(b for b, t in zip(bits, a) if t == s) for s in (0, 1)]))
            return out
        perms = list(itertools.permutations(range(n)))
        c = n // 2
        return [(1.0 / len(perms), [tuple(bits[i] for i in p[s * c : (s + 1) * c]) for s in (0, 1)]) for p in perms]

    def log_probabilities(self, problem: SelectionProblem) -> np.ndarray:
        bits = tuple(int(b) for b in problem.scores)
        law = np.zeros(4)
        for w, parts in self._parts(bits):
            law += w * np.outer(_rr(int(any(parts[0])), self.eps), _rr(int(any(parts[1])), self.eps)).ravel()
        return np.log(law)

    def privacy(self, problem: SelectionProblem) -> Privacy:
        return Privacy(self.eps, 0.0, "add_remove")


def _add_remove_pairs(max_n: int = 4):
    out = []
    for n in range(1, max_n):
        for bits in itertools.product((0, 1), repeat=n):
            x = SelectionProblem(np.array(bits, dtype=np.float64))
            for extra in (0, 1):
                y = SelectionProblem(np.array((*bits, extra), dtype=np.float64))
                out += [(x, y), (y, x)]
    return out


@pytest.mark.parametrize("eps", [0.2, 1.0, 3.0])
def test_exact_audit_of_the_partition(eps):
    pairs = _add_remove_pairs()
    assert not audit(_PartitionToy(eps, "draws"), pairs).violates
    # negative controls: positional chunks and unpartitioned data break the parallel-composition claim
    assert audit(_PartitionToy(eps, "chunks"), pairs).violates
    assert audit(_PartitionToy(eps, "shared"), pairs).violates


# ---------------------------------------------------------------------------
# the shape rule
# ---------------------------------------------------------------------------


def test_auto_partitions_is_its_definition():
    for n, C, eps in itertools.product((50, 455, 5_000, 39_000, 4e5, 1e6, 4e7), (2, 3, 10), (0.1, 1.0, 4.75)):
        T = auto_partitions(n, C, eps)
        d = auto_tree_depth(n, C, eps)
        assert T in (1, 2, 4, 8)
        assert T == 1 or auto_tree_depth(n / (2 * T), C, eps) >= d
        assert T == 8 or d == 0 or auto_tree_depth(n / (4 * T), C, eps) < d
        assert d > 0 or T == 1  # issue #33.6: never a forest of single-leaf trees
    assert auto_partitions(200, 2, 0.1) == 1 and auto_tree_depth(200, 2, 0.1) == 0  # it was 8 stumps
    assert auto_partitions(1e9, 2, 5.0, cap=2) == 2
    with pytest.raises(ValueError, match="cap"):
        auto_partitions(100, 2, 1.0, cap=0)


# ---------------------------------------------------------------------------
# the estimator
# ---------------------------------------------------------------------------


def _blobs(n=3000):
    X, y = make_blobs(n_samples=n, centers=3, cluster_std=1.0, random_state=0)
    return X, y, (float(np.floor(X.min())), float(np.ceil(X.max())))


def test_one_part_is_the_tree():
    X, y, b = _blobs()
    rf = DPRandomForestClassifier(epsilon=1.0, bounds=b, classes=[0, 1, 2], random_state=5).fit(X, y)
    member = rf.estimators_[0]
    assert isinstance(member.random_state, int) and member.random_state != 5  # a fresh seed drawn from 5
    tree = DPDecisionTreeClassifier(
        epsilon=0.9, bounds=b, classes=[0, 1, 2], n_records=int(rf.n_records_), random_state=member.random_state
    ).fit(X, y)
    assert rf.n_estimators_ == 1 and rf.privacy_.epsilon == pytest.approx(1.0)
    assert tree.privacy_.epsilon == pytest.approx(0.9)
    np.testing.assert_array_equal(rf.predict_proba(X), tree.predict_proba(X))


def test_parts_privacy_and_shape():
    X, y, b = _blobs()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        rf = DPRandomForestClassifier(epsilon=2.0, n_estimators=4, bounds=b, classes=[0, 1, 2], random_state=0).fit(
            X, y
        )
    assert rf.n_estimators_ == len(rf.estimators_) == 4 and rf.algorithm_ == "trees"
    assert rf.privacy_ == Privacy(2.0, 0.0, "add_remove", rf.privacy_.source)
    eps_tree = 2.0 * (1 - RECORD_COUNT_SHARE)
    assert all(m.privacy_.epsilon <= eps_tree * (1 + 1e-12) for m in rf.estimators_)
    # each part's shape uses its share of the released class counts
    assert all(m.n_records_ == pytest.approx(rf.n_records_ / 4) for m in rf.estimators_)
    assert rf.dense_ and rf.n_leaves_ == sum(m.tree_.n_leaves for m in rf.estimators_)
    assert rf.score(X, y) > 0.9
    P = rf.predict_proba(X)
    np.testing.assert_allclose(P, np.mean([m.predict_proba(X) for m in rf.estimators_], axis=0))
    pub = DPRandomForestClassifier(epsilon=2.0, n_records=3000, bounds=b, classes=[0, 1, 2], random_state=0).fit(X, y)
    assert pub.privacy_.epsilon == 2.0 and pub.estimators_[0].privacy_.epsilon == pytest.approx(2.0)


def test_accountant_and_bad_input_before_randomness():
    X, y, b = _blobs(500)
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    acc = Accountant(0.5)
    with pytest.raises(BudgetExceededError):
        DPRandomForestClassifier(epsilon=1.0, bounds=b, classes=[0, 1, 2], random_state=gen).fit(X, y, accountant=acc)
    with pytest.raises(ValueError, match="leaf_utility"):
        DPRandomForestClassifier(leaf_utility="count", bounds=b, random_state=gen).fit(X, y)
    with pytest.raises(ValueError, match="algorithm"):
        DPRandomForestClassifier(algorithm="boost", bounds=b, random_state=gen).fit(X, y)
    assert gen.bit_generator.state == state
    DPRandomForestClassifier(epsilon=0.5, bounds=b, classes=[0, 1, 2], random_state=gen).fit(X, y, accountant=acc)
    assert acc.spent.epsilon == pytest.approx(0.5)


@pytest.mark.parametrize("kwargs", [{}, {"bounds": "public"}, {"classes": [0, 1, 2]}])
def test_inferred_schema_has_no_guarantee(kwargs):
    """Bounds or classes from the data: epsilon = inf, although every member tree sees a public schema."""
    X, y, b = _blobs(2000)
    kwargs = {k: (b if v == "public" else v) for k, v in kwargs.items()}
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    acc = Accountant(100.0)
    with pytest.raises(BudgetExceededError, match="inferred"), pytest.warns(PrivacyLeakWarning):
        DPRandomForestClassifier(n_estimators=2, random_state=gen, accountant=acc, **kwargs).fit(X, y)
    assert gen.bit_generator.state == state and acc.spent.epsilon == 0.0  # refused before any randomness
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rf = DPRandomForestClassifier(n_estimators=2, random_state=gen, **kwargs).fit(X, y)
    assert math.isinf(rf.privacy_.epsilon) and "no guarantee" in rf.privacy_.source
    assert all(math.isfinite(m.privacy_.epsilon) for m in rf.estimators_)  # what the forest must not report
    leaks = [w for w in caught if issubclass(w.category, PrivacyLeakWarning)]
    assert len(leaks) == 1 and str(leaks[0].message).startswith("DPRandomForestClassifier")
    infinite = Accountant(math.inf)
    with pytest.warns(PrivacyLeakWarning):
        DPRandomForestClassifier(n_estimators=2, random_state=0, **kwargs).fit(X, y, accountant=infinite)
    assert math.isinf(infinite.spent.epsilon)


def test_values_outside_bounds_clamped_silently():
    X, y, b = _blobs(2000)
    narrow = (b[0] + 2.0, b[1] - 2.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rf = DPRandomForestClassifier(n_estimators=4, bounds=narrow, classes=[0, 1, 2], random_state=0).fit(X, y)
    assert not caught  # issue #30.5: no data-dependent warning
    assert rf.privacy_.epsilon == pytest.approx(1.0)


def test_tree_warnings_reissued_once():
    X, y, b = _blobs(200)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DPRandomForestClassifier(
            epsilon=1.0, n_estimators=4, max_depth=0, bounds=b, classes=[0, 1, 2], random_state=0
        ).fit(X, y)
    single = [w for w in caught if "same class for every sample" in str(w.message)]
    assert len(single) == 1 and str(single[0].message).startswith("DPRandomForestClassifier")


def test_categorical_and_unseen_categories():
    import pandas as pd

    rng = np.random.default_rng(0)
    n = 4000
    df = pd.DataFrame({"c": rng.choice(["a", "b", "c"], size=n), "x": rng.uniform(0, 1, size=n)})
    y = ((df["c"] == "a") ^ (df["x"] > 0.5)).astype(int).to_numpy()
    rf = DPRandomForestClassifier(
        epsilon=3.0,
        n_estimators=2,
        bounds={"x": (0, 1)},
        categorical_features={"c": ["a", "b", "c"]},
        classes=[0, 1],
        random_state=0,
    )
    rf.fit(df, y)
    assert rf.score(df, y) > 0.9
    test = pd.DataFrame({"c": ["zz", "a"], "x": [0.2, 0.2]})
    assert rf.predict_proba(test).shape == (2, 2)


@pytest.mark.skipif(not os.environ.get("DPSELECT_DATA"), reason="DPSELECT_DATA is not set")
@pytest.mark.parametrize(
    ("name", "shape", "n_classes", "n_categorical"),
    [
        ("br2000", (38_000, 13), 2, 9),
        ("credit_approval", (653, 15), 2, 9),
        ("gamma", (19_020, 10), 2, 0),
        ("nursery", (12_960, 8), 5, 8),
        ("pima_diabetes", (768, 8), 2, 0),
    ],
)
def test_benchmark_loaders(name, shape, n_classes, n_categorical):
    from dpselect.experiments._tabular import load

    d = load(name, os.environ["DPSELECT_DATA"])
    assert d.X.shape == shape and len(d.classes) == n_classes and len(d.categorical) == n_categorical
    assert set(d.bounds) | set(d.categorical) == set(d.X.columns)
    assert all(lo < hi for lo, hi in d.bounds.values())
