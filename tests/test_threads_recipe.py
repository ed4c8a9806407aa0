"""The recipe of the README and docs/tasks.md: GridSearchCV(n_jobs>1) with an accountant needs threads.

Under joblib's threading backend every fit charges the caller's accountant (in worker processes the fits
hold a copy of it and are refused: tests/test_tree_publishable.py).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sklearn")
joblib = pytest.importorskip("joblib")

from sklearn.datasets import make_blobs  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402

from dpselect import Accountant  # noqa: E402
from dpselect.apps.trees import DPDecisionTreeClassifier  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _search(acc: Accountant) -> tuple[GridSearchCV, np.ndarray, np.ndarray]:
    X, y = make_blobs(n_samples=300, centers=3, random_state=0)
    bounds = (float(np.floor(X.min())), float(np.ceil(X.max())))
    est = DPDecisionTreeClassifier(epsilon=0.5, bounds=bounds, classes=[0, 1, 2], n_records=300, accountant=acc)
    return GridSearchCV(est, {"max_depth": [1, 2]}, cv=2, n_jobs=2, error_score="raise"), X, y


def test_grid_search_with_threads_charges_the_accountant():
    acc = Accountant(10.0)
    search, X, y = _search(acc)
    with joblib.parallel_config(backend="threading"):
        search.fit(X, y)
    # 2 settings x 2 folds, then the refit on all records: 5 fits of epsilon 0.5
    assert acc.spent.epsilon == pytest.approx(2.5)


def test_readme_and_task_map_say_so():
    for page in (ROOT / "README.md", ROOT / "docs" / "tasks.md"):
        text = " ".join(page.read_text(encoding="utf-8").split())
        assert "GridSearchCV(n_jobs>1)" in text and 'parallel_config(backend="threading")' in text, page.name
