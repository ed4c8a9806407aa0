"""Differentially private decision trees and forests as scikit-learn classifiers (extra ``ml``).

- :class:`DPDecisionTreeClassifier`: one tree, splits chosen by a private selection
  mechanism, leaves released as noisy class counts.
- :class:`DPRandomForestClassifier`: private trees on disjoint parts of the records (as many as keep
  one tree's depth), or Fletcher & Islam's random-structure trees (``algorithm="fletcher_islam"``).
- :class:`DPSearchCV`: private choice of an estimator's hyper-parameters (best of a random number of
  private runs, each scored by a noisy held-out count; Liu & Talwar 2019, Papernot & Steinke 2022).
- :class:`PublicBoundsScaler`: scale features by declared public bounds (a Pipeline step that learns
  nothing from the data; a scaler fitted on the data makes "public" bounds private).

Shapes (depth, bins, number of trees) come from public quantities only:
:func:`auto_tree_depth`, :func:`auto_n_bins`, :func:`auto_partitions`, :func:`auto_forest_depth`,
:func:`auto_n_estimators`, :func:`fletcher_islam_depth`.
Neighbour relation: add/remove one training record.

Examples
--------
>>> from sklearn.datasets import load_iris
>>> from dpselect.apps.trees import DPDecisionTreeClassifier
>>> X, y = load_iris(return_X_y=True)
>>> clf = DPDecisionTreeClassifier(epsilon=2.0, bounds=[(0, 8)] * 4, classes=[0, 1, 2], random_state=0)
>>> clf.fit(X, y).score(X, y) > 0.5
True
"""

from __future__ import annotations

from ..._optional import require

require("sklearn", "ml", purpose="dpselect.apps.trees")

from ._forest.ensemble import auto_partitions  # noqa: E402
from ._forest.forest import DPRandomForestClassifier, auto_forest_depth, auto_n_estimators, fletcher_islam_depth  # noqa: E402
from ._growing.shape import auto_n_bins, auto_tree_depth  # noqa: E402
from ._scaler import PublicBoundsScaler  # noqa: E402
from ._search.search import DPSearchCV  # noqa: E402
from ._tree import DPDecisionTreeClassifier  # noqa: E402

__all__ = [
    "DPDecisionTreeClassifier",
    "DPRandomForestClassifier",
    "DPSearchCV",
    "PublicBoundsScaler",
    "auto_forest_depth",
    "auto_n_bins",
    "auto_n_estimators",
    "auto_partitions",
    "auto_tree_depth",
    "fletcher_islam_depth",
]
