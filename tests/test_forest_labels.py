"""The partition forest on labels outside ``classes``: neighbours fit alike (no "0 sample(s)" refusal)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpselect.apps.trees import DPDecisionTreeClassifier, DPRandomForestClassifier

X = np.random.default_rng(0).uniform(0, 1, (5, 2))


@pytest.mark.parametrize("n_estimators", [None, 1, 3])
def test_no_label_in_the_domain_fits_like_its_neighbour(n_estimators):
    """The issue's example: every label out of classes=[0, 1] vs one valid label: both fit, alike."""
    fitted = []
    for y in ([2, 2, 2, 2, 2], [2, 2, 2, 2, 0]):
        rf = DPRandomForestClassifier(
            epsilon=1.0, bounds=(0, 1), classes=[0, 1], n_estimators=n_estimators, random_state=0
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted.append(rf.fit(X, np.array(y)))
    for rf in fitted:
        assert list(rf.classes_) == [0, 1] and rf.predict_proba(X).shape == (5, 2)
    assert fitted[0].privacy_ == fitted[1].privacy_


def test_an_out_of_domain_row_leaves_a_tree_unchanged():
    """What the one-tree forest relies on: a row whose label lies outside ``classes`` changes nothing."""
    rng = np.random.default_rng(1)
    Xs, ys = rng.uniform(0, 1, (40, 2)), rng.integers(0, 2, 40)
    kw = {"epsilon": 2.0, "bounds": [(0.0, 1.0)] * 2, "classes": [0, 1], "n_records": 40, "max_depth": 3}
    for seed in range(5):
        a = DPDecisionTreeClassifier(random_state=seed, **kw).fit(Xs, ys)
        b = DPDecisionTreeClassifier(random_state=seed, **kw).fit(np.vstack([Xs, [[0.5, 0.5]]]), np.append(ys, 2))
        grid = rng.uniform(0, 1, (50, 2))
        np.testing.assert_array_equal(a.predict_proba(grid), b.predict_proba(grid))
