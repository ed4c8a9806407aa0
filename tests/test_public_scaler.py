"""PublicBoundsScaler: a Pipeline step that scales by declared public bounds and learns nothing."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MinMaxScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from dpselect.apps.trees import DPDecisionTreeClassifier, PublicBoundsScaler


@parametrize_with_checks(
    [PublicBoundsScaler(bounds=(-5.0, 5.0)), PublicBoundsScaler(bounds=(0.0, 1.0), clip_output=False)]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_fit_learns_nothing_from_the_values():
    """Two datasets with the same shape give the same map (MinMaxScaler's depends on the data)."""
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0, 1, (20, 3)), rng.uniform(0, 1, (20, 3))
    b[0, 0] = 0.999  # a neighbour-like change of one record
    probe = rng.uniform(-1, 2, (50, 3))
    s_a, s_b = PublicBoundsScaler(bounds=(0, 1)).fit(a), PublicBoundsScaler(bounds=(0, 1)).fit(b)
    np.testing.assert_array_equal(s_a.transform(probe), s_b.transform(probe))
    assert not np.array_equal(MinMaxScaler().fit(a).transform(probe), MinMaxScaler().fit(b).transform(probe))


def test_formula_clip_and_inverse():
    X = np.array([[5.0, 0.0, -3.0], [12.0, -1.0, 3.0]])
    sc = PublicBoundsScaler(bounds=[(0, 10), (-1, 1), (-2, 2)])
    np.testing.assert_array_equal(sc.fit_transform(X), [[0.5, 0.5, 0.0], [1.0, 0.0, 1.0]])
    raw = PublicBoundsScaler(bounds=[(0, 10), (-1, 1), (-2, 2)], clip_output=False).fit(X)
    np.testing.assert_allclose(raw.transform(X), [[0.5, 0.5, -0.25], [1.2, 0.0, 1.25]])
    np.testing.assert_allclose(raw.inverse_transform(raw.transform(X)), X)


@pytest.mark.parametrize(
    "bounds, match",
    [(None, "bounds must be given"), ([(0, 1)] * 2, r"shape \(3, 2\)"), ((1, 1), "lo < hi"), ((0, np.inf), "finite")],
)
def test_bad_bounds_are_refused_at_fit(bounds, match):
    with pytest.raises(ValueError, match=match):
        PublicBoundsScaler(bounds=bounds).fit(np.zeros((4, 3)))


def test_pipeline_with_the_issue_shape_keeps_public_bounds():
    """The issue's pipeline with PublicBoundsScaler in place of MinMaxScaler: fits in GridSearchCV, the tree's
    bounds (0, 1) are the scaler's public output range, and the scaler holds no data-derived attribute."""
    X, y = load_breast_cancer(return_X_y=True)
    X = X[:, :13]
    hi = np.ceil(X.max(axis=0) * 2)  # stands for bounds declared from the feature definitions
    pipe = Pipeline(
        [
            ("scale", PublicBoundsScaler(bounds=np.c_[np.zeros(13), hi])),
            ("tree", DPDecisionTreeClassifier(epsilon=2.0, bounds=[(0, 1)] * 13, classes=[0, 1], n_records=569)),
        ]
    )
    search = GridSearchCV(pipe, {"tree__max_depth": [1, 2]}, cv=2).fit(X, y)
    scaler = search.best_estimator_.named_steps["scale"]
    learned = {k for k in vars(scaler) if k.endswith("_") and not k.startswith("_")}
    assert learned == {"n_features_in_", "lower_", "upper_"}
    np.testing.assert_array_equal(scaler.upper_, hi)
