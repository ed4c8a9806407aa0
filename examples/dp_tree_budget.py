"""A private decision tree on adult-like data: model selection and the final fit on one budget.

The data are synthetic, shaped like the UCI Adult census extract (age,
years of education, hours worked per week, sex; label: income > 50k).  The
feature bounds and the class labels are public (what the fields can hold),
so nothing about them is read from the data.

An ``Accountant`` holds the total budget of the analysis and is given to the
estimator's constructor, so every clone charges it: a ``GridSearchCV`` over
2 depths x 5 folds charges 10 fits, then the final tree charges its own
epsilon.  Each fit is charged before any randomness is drawn; a fit that
would exceed the budget raises ``BudgetExceededError`` and releases nothing.
(The cross-validated scores are computed on the private data: they are
released too, which is why the search is charged.)
"""

from __future__ import annotations

import numpy as np
from sklearn.model_selection import GridSearchCV

import dpselect
from dpselect.apps.trees import DPDecisionTreeClassifier

BUDGET = 2.0
SEARCH_EPSILON = 0.1  # per fit of the model selection
BOUNDS = [(17.0, 90.0), (1.0, 16.0), (1.0, 99.0)]  # age, education years, hours per week
CLASSES = [0, 1]


def adult_like(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    age = rng.integers(17, 91, n).astype(float)
    education = rng.integers(1, 17, n).astype(float)
    hours = rng.normal(40, 12, n).clip(1, 99).round()
    sex = rng.integers(0, 2, n).astype(float)  # categorical
    logit = -9.0 + 0.04 * age + 0.35 * education + 0.04 * hours + 0.6 * sex
    income = (rng.random(n) < 1.0 / (1.0 + np.exp(-logit))).astype(int)
    return np.column_stack([age, education, hours, sex]), income


def main() -> None:
    rng = np.random.default_rng(3)
    X_train, y_train = adult_like(20_000, rng)
    X_test, y_test = adult_like(5_000, rng)

    accountant = dpselect.Accountant(BUDGET)
    base = DPDecisionTreeClassifier(
        epsilon=SEARCH_EPSILON,
        mechanism="pf",
        bounds=BOUNDS,
        categorical_features={3: [0.0, 1.0]},
        classes=CLASSES,
        random_state=0,
        accountant=accountant,
    )
    search = GridSearchCV(base, {"max_depth": [2, 3]}, cv=5, refit=False).fit(X_train, y_train)
    depth = search.best_params_["max_depth"]
    print(f"model selection spent: {accountant.spent.epsilon:g} over {len(accountant.charges)} fits")
    print(f"chosen max_depth: {depth}")

    clf = base.set_params(epsilon=0.5, max_depth=depth)  # the same accountant
    clf.fit(X_train, y_train)
    print(f"tree spent: {clf.privacy_}")
    print(f"test accuracy: {clf.score(X_test, y_test):.3f}")
    print(f"majority-class rate: {max(np.mean(y_test), 1 - np.mean(y_test)):.3f}")
    print(f"budget remaining: {accountant.remaining.epsilon:g}")

    second = DPDecisionTreeClassifier(
        epsilon=1.0,
        max_depth=depth,
        bounds=BOUNDS,
        categorical_features={3: [0.0, 1.0]},
        classes=CLASSES,
        random_state=1,
        accountant=accountant,
    )
    try:
        second.fit(X_train, y_train)
    except dpselect.BudgetExceededError:
        print("second tree refused: BudgetExceededError")


if __name__ == "__main__":
    main()
