r"""DPSearchCV's plan, fixed before any data or randomness: the configurations and the budget per run.

:func:`plan_search` checks the grid against the estimator's parameters and splits the
search's (epsilon, delta) into the runs' (eps_0, delta_0) (:mod:`dpselect.apps.trees._search.search`,
mathematics §11.2); :func:`best_run` runs the candidates and keeps the best.

A public cap T on the number of runs (every one of the T runs is performed, the best of
the first K' = min(K, T) is released) makes the number of fits, and so the time, the same
whatever K.  The guarantee of the best of K' runs of an eps_0-DP run, for any law of K'
with probability generating function f (derived here, mathematics §11.2): append to each
run an independent uniform tie-break, so that the runs' outputs are totally ordered; the
released one has density f'(F(o)) with respect to one run's law, F(o) = P[run < o].  For
neighbours x, y, F_x(o) <= phi(F_y(o)) with

.. math::

    \phi(v) = \min\bigl(e^{\varepsilon_0} v,\; 1 - e^{-\varepsilon_0} (1 - v)\bigr),

and f' is increasing, so the density ratio is at most e^{eps_0} sup_v f'(phi(v)) / f'(v):

.. math::

    \varepsilon' = \varepsilon_0 + \ln \sup_{0 \le v \le 1} \frac{f'(\phi(v))}{f'(v)}.

(For the uncapped laws this gives Papernot & Steinke's (2 + eta) eps_0.)  The capped law
f(u) = sum_{k<T} P[K = k] u^k + P[K >= T] u^T is a polynomial with non-negative
coefficients; :func:`capped_epsilon` bounds the supremum from above on a grid
v_0 < ... < v_N of [0, 1] by max_i f'(phi(v_{i+1})) / f'(v_i) (f' and phi increasing).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import gammaln
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import ParameterGrid

from ...._validation import check_positive
from ...._warnings import PrivacyLeakWarning
from ....mechanisms import APPROXIMATE_NAMES
from ....privacy import Privacy
from .._estimator import child_random_states
from .._growing.grow import noisy_counts
from .repeat import expected_repetitions, gamma_for_mean, repetition_epsilon

__all__ = [
    "RESERVED",
    "BestRun",
    "SearchPlan",
    "above_one",
    "best_run",
    "capped_epsilon",
    "default_max_runs",
    "estimator_rule",
    "plan_search",
]

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
    max_runs: int


@dataclass(frozen=True)
class BestRun:
    """The best of the runs (released), and what the search re-issues or records about all of them."""

    noisy_correct: float
    index: int
    model: Any
    leaks: dict[str, type[Warning]]
    overspent: bool


def estimator_rule(value: object, name: str) -> object:
    """``value`` itself if it is a scikit-learn estimator (``fit`` and ``get_params``)."""
    if not hasattr(value, "fit") or not hasattr(value, "get_params"):
        raise TypeError(f"{name} must be a scikit-learn estimator, got {type(value).__name__}")
    return value


def above_one(value: object, name: str) -> float:
    """``value`` as a float if it is finite and > 1."""
    x = check_positive(value, name)
    if not x > 1.0:
        raise ValueError(f"{name} must be finite and > 1, got {x!r}")
    return x


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


def _capped_pgf_slope(eta: float, gamma: float, T: int) -> np.ndarray:
    """Coefficients c_1..c_T of f'(u) = sum_k c_k u^(k-1) for K' = min(K, T), K ~ D_{eta, gamma}."""
    k = np.arange(1, T, dtype=np.float64)
    if eta == 0.0:
        logp = k * math.log1p(-gamma) - np.log(k) - math.log(-math.log(gamma))
    else:
        logp = gammaln(k + eta) - gammaln(k + 1.0) - gammaln(eta) + k * math.log1p(-gamma)
        logp -= math.log(-math.expm1(eta * math.log(gamma))) - eta * math.log(gamma)
    p = np.exp(logp)
    return np.append(k * p, T * max(0.0, 1.0 - float(p.sum())))


def capped_epsilon(eps0: float, eta: float, gamma: float, max_runs: int, points: int = 65537) -> float:
    """An upper bound on the guarantee of the best of min(K, T) runs of an eps0-DP run (module docstring).

    eps0 + ln max_i f'(phi(v_{i+1})) / f'(v_i) on an even grid of ``points`` values of [0, 1],
    widened by a relative 1e-9 for rounding.

    Examples
    --------
    >>> round(capped_epsilon(1.0, 1.0, 0.25, 10**4) / 1.0, 3) <= 3.0   # the uncapped law's 3 eps_0 (Liu-Talwar)
    True
    """
    c = _capped_pgf_slope(eta, gamma, max_runs)
    v = np.linspace(0.0, 1.0, points)
    phi = np.minimum(math.exp(eps0) * v, 1.0 - math.exp(-eps0) * (1.0 - v))
    num = np.polynomial.polynomial.polyval(phi[1:], c)
    den = np.polynomial.polynomial.polyval(v[:-1], c)
    return eps0 + math.log(float(np.max(num / den)) * (1.0 + 1e-9))


def default_max_runs(eta: float, gamma: float) -> int:
    """T = ceil(2 E[K]): the public cap on the runs when ``max_runs`` is None (twice the mean time)."""
    return max(2, math.ceil(2.0 * expected_repetitions(eta, gamma) - 1e-9))  # gamma_for_mean rounds E[K]


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
    T = default_max_runs(eta, gamma) if params["max_runs"] is None else int(params["max_runs"])
    eps0 = epsilon / (2.0 + eta)
    while repetition_epsilon(eps0, eta) > epsilon:  # never claim more than the budget after rounding
        eps0 = math.nextafter(eps0, 0.0)
    if capped_epsilon(eps0, eta, gamma, T) > epsilon:  # the cap's bound exceeds (2 + eta) eps_0: a smaller eps_0
        lo, hi = 0.0, eps0
        for _ in range(40):  # eps_0 to a relative 1e-12
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if capped_epsilon(mid, eta, gamma, T) <= epsilon else (lo, mid)
        eps0 = lo
    # delta_0 E[K'] (1 + e^eps) <= delta with E[K'] <= E[K], rounded down (relative 1e-9) against float error
    delta0 = delta / (expected_repetitions(eta, gamma) * (1.0 + math.exp(epsilon))) * (1.0 - 1e-9)
    return SearchPlan(grid, eta, gamma, eps0, delta0, T)


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
    """Perform all T = ``plan.max_runs`` runs; keep the best of the first K' = min(``runs``, T).

    Each run draws a configuration, fits a clone at (eps_0, delta_0) on ``train`` and releases
    its number of correct ``held_out`` predictions plus exact discrete Laplace noise of scale
    1/eps_0; only the best of the first K' is returned (K and the others are never released).
    The runs after the K'-th are performed all the same, so the number of fits is T whatever K.
    """
    X_tr, y_tr = train
    X_ho, y_ho = held_out
    best: tuple[float, int, Any] | None = None
    leaks: dict[str, type[Warning]] = {}
    overspent = False
    for i in range(plan.max_runs):
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
        if i < runs and (best is None or score > best[0]):  # the runs after the K-th: time only
            best = (score, j, model)
    assert best is not None  # K >= 1
    return BestRun(best[0], best[1], best[2], leaks, overspent)
