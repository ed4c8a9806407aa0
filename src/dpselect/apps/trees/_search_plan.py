"""DPSearchCV's plan, fixed before any data or randomness: the configurations and the budget per run.

:func:`plan_search` checks the grid against the estimator's parameters and splits the
search's (epsilon, delta) into the runs' (eps_0, delta_0) (:mod:`dpselect.apps.trees._search`,
mathematics §11.2); :func:`best_run` runs the candidates and keeps the best.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import ParameterGrid

from ..._warnings import PrivacyLeakWarning
from ...mechanisms import APPROXIMATE_NAMES
from ...privacy import Privacy
from ._estimator import child_random_states
from ._grow import noisy_counts
from ._repeat import expected_repetitions, gamma_for_mean, repetition_epsilon

__all__ = ["RESERVED", "BestRun", "SearchPlan", "best_run", "plan_search"]

#: Parameters the search sets on every run (budget per run, seeds, the accountant).
RESERVED = ("epsilon", "delta", "random_state", "accountant")


@dataclass(frozen=True)
class SearchPlan:
    """The configurations and the runs' budget (every check done, nothing drawn)."""

    grid: list[dict[str, Any]]
    eta: float
    gamma: float
    eps0: float
    delta0: float


@dataclass(frozen=True)
class BestRun:
    """The best of the runs (released), and what the search re-issues or records about all of them."""

    noisy_correct: float
    index: int
    model: Any
    leaks: dict[str, type[Warning]]
    overspent: bool


def _grid(estimator: BaseEstimator, param_grid: Any, delta: float, shown_delta: object) -> list[dict[str, Any]]:
    """The configurations of ``param_grid``, each checked against ``estimator``'s parameters."""
    base = estimator.get_params(deep=False)
    for name in ("epsilon", "random_state"):
        if name not in base:
            raise ValueError(f"estimator must have an {name!r} parameter (a differentially private estimator)")
    try:
        grid = list(ParameterGrid(param_grid))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"param_grid: {exc}") from None
    if not grid or grid == [{}]:
        raise ValueError("param_grid must give at least one configuration")
    for cfg in grid:
        for name in cfg:
            if name in RESERVED:
                raise ValueError(f"param_grid may not set {name!r}: DPSearchCV sets it (budget per run, seeds)")
            if name not in base:
                raise ValueError(f"param_grid: {name!r} is not a parameter of {type(estimator).__name__}")
        mechanism = {**base, **cfg}.get("mechanism")
        if mechanism in APPROXIMATE_NAMES and not (delta > 0.0 and "delta" in base):
            raise ValueError(
                f"cannot meet the budget with mechanism={mechanism!r} and delta={shown_delta!r}: candidates "
                "with delta > 0 need the search's delta > 0 (and an estimator with a delta parameter)"
            )
    return grid


def plan_search(params: Mapping[str, Any]) -> SearchPlan:
    """The search's plan from its checked parameters (``validate_estimator``'s output).

    Parameters
    ----------
    params : mapping
        The search's parameters (``get_params(deep=False)``), each checked by its rule.

    Returns
    -------
    SearchPlan
        The configurations, eta, gamma and the runs' (eps_0, delta_0): (2 + eta) eps_0 <= epsilon
        and delta_0 E[K] (1 + e^epsilon) <= delta (mathematics §11.2).
    """
    epsilon, delta = float(params["epsilon"]), float(params["delta"])
    eta = 1.0 if params["method"] == "liu_talwar" else float(params["eta"])
    grid = _grid(params["estimator"], params["param_grid"], delta, params["delta"])
    mean = 2.0 * len(grid) if params["mean_repetitions"] is None else float(params["mean_repetitions"])
    gamma = gamma_for_mean(eta, mean)
    eps0 = epsilon / (2.0 + eta)
    while repetition_epsilon(eps0, eta) > epsilon:  # never claim more than the budget after rounding
        eps0 = math.nextafter(eps0, 0.0)
    # delta_0 E[K] (1 + e^eps) <= delta, rounded down (relative 1e-9) so that float error never overclaims
    delta0 = delta / (expected_repetitions(eta, gamma) * (1.0 + math.exp(epsilon))) * (1.0 - 1e-9)
    return SearchPlan(grid, eta, gamma, eps0, delta0)


def best_run(
    estimator: BaseEstimator,
    plan: SearchPlan,
    own: dict[str, Any],
    random_state: object,
    runs: int,
    train: tuple[Any, Any],
    held_out: tuple[Any, np.ndarray],
    gen: np.random.Generator,
) -> BestRun:
    """Run K = ``runs`` candidates and keep the one with the largest noisy held-out count.

    Each run draws a configuration, fits a clone at (eps_0, delta_0) on ``train`` and releases
    its number of correct ``held_out`` predictions plus exact discrete Laplace noise of scale
    1/eps_0; only the best run is returned (K and the others are never released).
    """
    X_tr, y_tr = train
    X_ho, y_ho = held_out
    best: tuple[float, int, Any] | None = None
    leaks: dict[str, type[Warning]] = {}
    overspent = False
    for _ in range(runs):
        j = int(gen.integers(len(plan.grid)))
        seed = child_random_states(random_state, gen, 1)[0]  # never gen itself: it draws the noise
        model = clone(estimator).set_params(**plan.grid[j], **own, epsilon=plan.eps0, random_state=seed)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model.fit(X_tr, y_tr)
            correct = int(np.sum(np.asarray(model.predict(X_ho)) == y_ho)) if y_ho.size else 0
        for w in caught:  # schema leaks (public configuration) are re-issued once; data-dependent notes are not
            if issubclass(w.category, PrivacyLeakWarning):
                leaks.setdefault(str(w.message), w.category)
        spent = getattr(model, "privacy_", None)
        overspent |= not (
            isinstance(spent, Privacy)
            and spent.epsilon <= plan.eps0 * (1.0 + 1e-12)
            and spent.delta <= plan.delta0 * (1.0 + 1e-12)
        )
        score = float(noisy_counts(correct, plan.eps0, gen))
        if best is None or score > best[0]:
            best = (score, j, model)
    assert best is not None  # K >= 1
    return BestRun(best[0], best[1], best[2], leaks, overspent)
