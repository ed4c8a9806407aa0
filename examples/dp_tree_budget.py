"""A private decision tree on adult-like data, charged to one privacy budget.

The data are synthetic, shaped like the UCI Adult census extract (age,
years of education, hours worked per week, sex; label: income > 50k).  The
feature bounds and the class labels are public (what the fields can hold),
so nothing about them is read from the data.

An ``Accountant`` holds the total budget of the analysis.  Each ``fit``
charges it before drawing any randomness; a fit that would exceed the budget
raises ``BudgetExceededError`` and releases nothing.
"""

from __future__ import annotations

import numpy as np

import dpselect
from dpselect.apps.trees import DPDecisionTreeClassifier

BUDGET = 1.5
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
    clf = DPDecisionTreeClassifier(epsilon=1.0, max_depth=3, bounds=BOUNDS, categorical_features={3: [0.0, 1.0]},
                                   classes=CLASSES, random_state=0)
    clf.fit(X_train, y_train, accountant=accountant)
    print(f"tree spent: {clf.privacy_}")
    print(f"test accuracy: {clf.score(X_test, y_test):.3f}")
    print(f"majority-class rate: {max(np.mean(y_test), 1 - np.mean(y_test)):.3f}")
    print(f"budget remaining: {accountant.remaining.epsilon:g}")

    second = DPDecisionTreeClassifier(epsilon=1.0, max_depth=3, bounds=BOUNDS, categorical_features={3: [0.0, 1.0]},
                                      classes=CLASSES, random_state=1)
    try:
        second.fit(X_train, y_train, accountant=accountant)
    except dpselect.BudgetExceededError:
        print("second tree refused: BudgetExceededError")


if __name__ == "__main__":
    main()
