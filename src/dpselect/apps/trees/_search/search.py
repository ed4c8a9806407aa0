"""DPSearchCV: private choice of a differentially private estimator's hyper-parameters.

Algorithm
---------
Each record is put in a held-out part with probability 1 / ``n_splits`` by an
independent draw (the rest is the training part), once.  One *run* Q:

1. draw a configuration uniformly from the grid;
2. fit the estimator with it at budget eps_0 on the training part;
3. release the noisy number of correct held-out predictions
   s = #{i held out: h(x_i) = y_i} + K_0, K_0 exact discrete Laplace of
   scale 1/eps_0 (an integer, :func:`~dpselect.apps.trees._growing.grow.noisy_counts`).

Q is eps_0-DP under add/remove for every fixed assignment of the existing
records: an added record x lands either in the training part (the model is
eps_0-DP, s is its post-processing with the held-out part unchanged) or in
the held-out part (the model is unchanged and the count moves by at most one:
the Laplace mechanism, Dwork et al. 2006).  Since x's own draw is independent
of everything else, the output law under D + x is a mixture of two laws each
within e^{eps_0} of the law under D.

The search runs Q K times (K from the truncated negative binomial law
D_{eta, gamma}, :mod:`dpselect.apps.trees._search.repeat`) on the same assignment and
releases the best run only (its configuration, its fitted model, its noisy
count).  Conditional on the assignment the runs are i.i.d. copies of an
eps_0-DP algorithm, so the release is (2 + eta) eps_0-DP
(Papernot & Steinke 2022, Theorem 2; eta = 1, ``method="liu_talwar"``: the
geometric law and Liu & Talwar's 3 eps_0), and mixing over the assignment of
the added record keeps it.  ``fit`` sets eps_0 = epsilon / (2 + eta), so the
total is ``epsilon``; K and the other runs are never released (releasing K
would break the bound).  The derivation, with its constants, is on the
documentation's mathematics page.

**The number of fits is public**: all T = ``max_runs`` runs are performed
and the best of the first min(K, T) released (fit count and time never follow
K); eps_0 is lowered only if the capped law's bound
(:func:`~dpselect.apps.trees._search.plan.capped_epsilon`) exceeds epsilon.

Candidates with delta > 0: every run gets delta_0 = delta / (E[K] (1 + e^epsilon))
(through the estimator's ``delta`` parameter), and the release is
(epsilon, delta)-DP (Kairouz, Oh & Viswanath 2015, Thm 2.1: mathematics
§11.2).  ``privacy_`` is charged before anything is drawn; a run that reports
more than (eps_0, delta_0) voids the guarantee (``privacy_.epsilon = inf``,
recorded on the accountant, which then refuses every later charge).

References
----------
Liu & Talwar, "Private selection from private candidates", STOC 2019, Theorem 3.1.
Papernot & Steinke, "Hyperparameter tuning with Renyi differential privacy", ICLR 2022, Theorem 2.
Dwork, McSherry, Nissim & Smith, "Calibrating noise to sensitivity in private data analysis", TCC 2006.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils import Tags, _safe_indexing
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from ...._docstrings import fill_doc
from ...._params import ACCOUNTANT, DELTA, EPSILON, SEED, Rule, int_at_least, options, positive, validate_estimator
from ...._validation import check_random_state
from ...._warnings import PrivacyLeakWarning
from ....accounting import Accountant, BudgetExceededError, charge
from ....privacy import Privacy
from ....typing import ArrayLike, SeedLike
from .._estimator import remember_detached, resolve_accountant
from .._params import PARAM_GRID
from .._tabular import is_dataframe
from .plan import above_one, best_run, estimator_rule, plan_search
from .repeat import sample_repetitions

__all__ = ["METHODS", "DPSearchCV"]

#: Repetition laws: Papernot–Steinke's truncated negative binomial (``eta``), Liu–Talwar's geometric (eta = 1).
METHODS = ("papernot_steinke", "liu_talwar")


class DPSearchCV(ClassifierMixin, BaseEstimator):
    """Private hyper-parameter search over a grid of differentially private classifiers.

    The search is (epsilon, delta)-DP for add/remove neighbours (one training
    record added or removed) when every candidate fit is (eps_0, delta_0)-DP for
    add/remove neighbours (mathematics §11.2).  See the module docstring for the
    algorithm and its guarantee.

    Parameters
    ----------
    estimator : BaseEstimator
        A differentially private classifier with ``epsilon`` and
        ``random_state`` parameters whose ``fit`` is ``epsilon``-DP (pure) for
        the add/remove relation, e.g. :class:`~dpselect.apps.trees.DPDecisionTreeClassifier`
        with a pure ``mechanism`` (not "snm_laplace" / "snm_lln").  Its own
        ``accountant`` (if any) is not charged: the runs are clones with
        ``accountant=None``, and the search charges its total once.
    param_grid : dict or list of dicts
        The configurations (as :class:`sklearn.model_selection.ParameterGrid`:
        {parameter name: sequence of values}, or a list of such dicts);
        may not set ``epsilon``, ``delta``, ``random_state`` or ``accountant``.
    epsilon : float
        Total budget (> 0): every run gets epsilon / (2 + eta).
    delta : float, default=0.0
        Total delta.  0: the candidates must be pure (a dpselect candidate with
        an approximate mechanism is refused; a third-party candidate that
        reports delta > 0 voids the guarantee).  > 0: every run gets
        delta_0 = delta / (E[K] (1 + e^epsilon)) (module docstring).
    n_splits : int, default=5
        A record is held out with probability 1 / n_splits (>= 2).
    method : {"papernot_steinke", "liu_talwar"}, default="papernot_steinke"
        The law of the number of runs K: truncated negative binomial with
        ``eta`` (total (2 + eta) eps_0), or geometric (Liu–Talwar, 3 eps_0).
    eta : float, default=0.0
        Papernot–Steinke's eta >= 0 (0: the logarithmic law, total 2 eps_0).
    mean_repetitions : float or None, default=None
        E[K] (> 1); None: twice the number of configurations.  It costs time,
        not privacy.
    max_runs : int or None, default=None
        The public cap T on the runs: all T runs are fitted whatever K, and
        the best of the first min(K, T) is released, so the number of fits
        (and the time) never follows the hidden K.  None: T = ceil(2 E[K]).
        eps_0 is epsilon / (2 + eta), made smaller only if the capped law's
        bound (:func:`~dpselect.apps.trees._search.plan.capped_epsilon`)
        would exceed epsilon.
    random_state : None, int or "secure", default=None
        The source of randomness.  None or ``"secure"``: the runs get the
        same value and the fitted search (``best_estimator_`` included) holds
        no generator.  An int seed: the runs get fresh int seeds drawn from it
        (reproducible, **not private**: the seed redraws the noise).
    accountant : Accountant or None, default=None
        Charged with ``privacy_`` before any randomness is drawn.  An
        accountant that was unpickled with the search (a joblib worker, e.g.
        ``cross_validate(..., n_jobs=2)``) is refused: charges to that copy
        would not reach the caller's budget.  When a
        dpselect candidate would infer bounds, categories, classes or
        ``n_max`` from the data, the search reports no guarantee
        (``privacy_.epsilon = inf``) and a finite accountant is refused,
        both before anything is charged or drawn.

    Attributes
    ----------
    best_params_ : dict
        the configuration of the best run.
    best_estimator_ : estimator
        the best run's model (fitted on the training part).
    best_noisy_correct_ : float
        its noisy number of correct held-out predictions (an integer: exact
        discrete Laplace of scale 1/eps_0).
    privacy_ : Privacy
        the total guarantee.
    epsilon_per_run_ : float
        eps_0.
    delta_per_run_ : float
        delta_0.
    classes_ : ndarray
        the best model's classes.

    Notes
    -----
    **Recommendation: prefer the default tree.**  Every run gets at most
    epsilon / 2 on 80% of the records, and the trees' shape rule already
    sizes them from public quantities.  Held out (stratified 5-fold x 2,
    public bounds from the whole file) on scikit-learn's breast_cancer,
    wine, digits (label >= 5) and iris, the search over
    ``{"max_depth": [None, 2, 4], "n_bins": [8, 16]}`` lost to the default
    tree at the same total epsilon in 6 of 8 cells (epsilon = 1: -0.018,
    -0.121, -0.018, -0.157; epsilon = 5: -0.014, +0.000, -0.008, +0.000);
    ``n_splits=10`` with E[K] = 6 or 3 did no better.  Use the search for
    choices the shape rule does not make (e.g. ``mechanism``,
    ``split_utility``), at large epsilon, or where no default is known.

    **Preprocessing.**  A ``Pipeline`` candidate may scale with
    :class:`~dpselect.apps.trees.PublicBoundsScaler` (public bounds) or any
    fixed per-record map, never with a step fitted on the data
    (``MinMaxScaler``, ``StandardScaler``, ...): its learned parameters are
    private and carry no guarantee.

    References
    ----------
    Liu & Talwar, "Private selection from private candidates", STOC 2019, Theorem 3.1.
    Papernot & Steinke, "Hyperparameter tuning with Renyi differential privacy", ICLR 2022, Theorem 2.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from dpselect.apps.trees import DPDecisionTreeClassifier, DPSearchCV
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> bounds = list(zip(X.min(axis=0), X.max(axis=0)))  # stand-ins for public bounds
    >>> tree = DPDecisionTreeClassifier(bounds=bounds, classes=[0, 1], n_records=569)
    >>> search = DPSearchCV(tree, {"max_depth": [1, 2, 3]}, epsilon=3.0, random_state=0).fit(X, y)
    >>> search.privacy_.epsilon, sorted(search.best_params_)
    (3.0, ['max_depth'])
    """

    _parameter_constraints: ClassVar[dict[str, Rule]] = {
        "estimator": Rule("a scikit-learn estimator", check=estimator_rule),
        "param_grid": PARAM_GRID,
        "epsilon": EPSILON,
        "delta": DELTA,
        "n_splits": int_at_least(2),
        "method": options(*METHODS),
        "eta": positive(allow_zero=True),
        "mean_repetitions": Rule("a finite float > 1", check=above_one, none=True),
        "max_runs": int_at_least(1, none=True),
        "random_state": SEED,
        "accountant": ACCOUNTANT,
    }

    def __init__(
        self,
        estimator: BaseEstimator,
        param_grid: Mapping[str, Sequence[object]] | Sequence[Mapping[str, Sequence[object]]],
        *,
        epsilon: float,
        delta: float = 0.0,
        n_splits: int = 5,
        method: str = "papernot_steinke",
        eta: float = 0.0,
        mean_repetitions: float | None = None,
        max_runs: int | None = None,
        random_state: SeedLike = None,
        accountant: Accountant | None = None,
    ) -> None:
        self.estimator = estimator
        self.param_grid = param_grid
        self.epsilon = epsilon
        self.delta = delta
        self.n_splits = n_splits
        self.method = method
        self.eta = eta
        self.mean_repetitions = mean_repetitions
        self.max_runs = max_runs
        self.random_state = random_state
        self.accountant = accountant

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        remember_detached(state)  # a detached copy of the pickled budget: refused by fit

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.classifier_tags.poor_score = True  # differential privacy (see DPDecisionTreeClassifier)
        return tags

    # ------------------------------------------------------------------- fit
    def _checked_data(self, X: ArrayLike, y: ArrayLike) -> tuple[Any, Any]:
        """(X, y) checked as scikit-learn does; a DataFrame stays one (categorical columns, names)."""
        data: Any = X  # array-like or DataFrame (scikit-learn's validators below are untyped)
        labels: Any = y
        if labels is None:
            raise ValueError(f"This {type(self).__name__} estimator requires y to be passed, but the target y is None.")
        if is_dataframe(data):  # kept as a DataFrame (categorical columns, names) for the estimator
            validate_data(self, data, labels, reset=True, skip_check_array=True)
            labels = column_or_1d(labels)
            if len(labels) != data.shape[0]:
                raise ValueError(
                    f"Found input variables with inconsistent numbers of samples: [{data.shape[0]}, {len(labels)}]"
                )
            return data, labels
        return validate_data(self, data, labels, reset=True, dtype=None, accept_sparse=False)

    def _claim(self, budget: Accountant | None, inferred: list[str]) -> None:
        """No guarantee when a candidate would infer its schema from the data (a finite budget is refused)."""
        if not inferred:
            return
        if budget is not None and math.isfinite(budget.budget.epsilon):
            raise BudgetExceededError(
                f"{type(self).__name__}: the candidates infer {'; '.join(inferred)} from the training data, so "
                f"the search has no differential-privacy guarantee and cannot be charged to the finite budget "
                f"{budget.budget}; pass public bounds, categories and classes"
            )
        self.privacy_ = Privacy(
            math.inf, 0.0, "add_remove", "no guarantee: " + "; ".join(inferred) + " inferred from the training data"
        )
        warnings.warn(
            f"{type(self).__name__}: the candidates infer {'; '.join(inferred)} from the training "
            "data, so the search has no guarantee (privacy_.epsilon = inf).",
            PrivacyLeakWarning,
            stacklevel=3,
        )

    def fit(self, X: ArrayLike, y: ArrayLike, accountant: Accountant | None = None) -> DPSearchCV:
        """Run the private search; charge the accountant (if any) before drawing any randomness.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Training records (a DataFrame is passed to the candidates as is).
        y : array-like of shape (n_samples,)
            Class labels.
        accountant : Accountant or None, default=None
            Charged instead of the constructor's (both given: they must be the
            same object).

        Returns
        -------
        DPSearchCV
            The fitted search (``best_params_``, ``best_estimator_``,
            ``privacy_``, ...).
        """
        params = validate_estimator(self, self._parameter_constraints)
        plan = plan_search(params)
        budget = resolve_accountant(type(self).__name__, self.accountant, accountant)
        data, labels = self._checked_data(X, y)
        n = len(labels)
        source = (
            f"best of min(K, {plan.max_runs}) runs, K ~ geometric (Liu & Talwar 2019; the cap: mathematics §11.2)"
            if self.method == "liu_talwar"
            else f"best of min(K, {plan.max_runs}) runs, K ~ truncated negative binomial eta={plan.eta:g} "
            "(Papernot & Steinke 2022; the cap: mathematics §11.2)"
        )
        base = self.estimator.get_params(deep=False)
        # the search charges its total: the runs charge nothing (else the estimator's accountant pays again)
        own: dict[str, Any] = {"accountant": None} if "accountant" in base else {}
        if "delta" in base:
            own["delta"] = plan.delta0
        self.privacy_ = Privacy(float(self.epsilon), float(self.delta), "add_remove", source)
        self.epsilon_per_run_, self.delta_per_run_ = plan.eps0, plan.delta0
        # known before any charge or draw: no guarantee, and a finite budget is refused
        self._claim(budget, self._inferred_by_candidates(data, plan.grid, own, plan.eps0))
        charge(budget, self.privacy_)
        gen = check_random_state(self.random_state, "random_state")
        y_arr = np.asarray(labels)
        held = gen.random(n) < 1.0 / int(self.n_splits)
        tr, ho = np.flatnonzero(~held), np.flatnonzero(held)
        train = (_safe_indexing(data, tr), _safe_indexing(labels, tr))
        held_out = (_safe_indexing(data, ho), y_arr[ho])
        K = sample_repetitions(plan.eta, plan.gamma, rng=gen)  # never stored nor released
        best = best_run(self.estimator, plan, own, self.random_state, K, train, held_out, gen)
        for msg, cat in best.leaks.items():
            warnings.warn(msg, cat, stacklevel=2)
        # a candidate did not keep its budget (a third-party estimator, checked only now): no guarantee is left,
        # and the accountant records what was actually spent
        if math.isfinite(self.privacy_.epsilon) and best.overspent:
            self.privacy_ = Privacy(math.inf, 0.0, "add_remove", "a candidate fit reported more than its budget")
            if budget is not None:
                budget.record(self.privacy_)
            warnings.warn(
                f"{type(self).__name__}: a candidate fit reported more than its budget (eps_0, delta_0) "
                f"= ({plan.eps0:.6g}, {plan.delta0:.6g}) or no guarantee, so the search has none; the "
                "accountant records an infinite cost.",
                PrivacyLeakWarning,
                stacklevel=2,
            )
        self.best_noisy_correct_, self.best_estimator_ = best.noisy_correct, best.model
        self.best_params_ = dict(plan.grid[best.index])
        self.classes_ = getattr(self.best_estimator_, "classes_", None)
        return self

    def _inferred_by_candidates(
        self, X: Any, grid: list[dict[str, Any]], own: dict[str, Any], eps0: float
    ) -> list[str]:
        """Everything some grid candidate would infer from ``X``.

        dpselect estimators only: others are checked after their fits, from their ``privacy_``.
        """
        found: dict[str, None] = {}
        for params in grid:
            model = clone(self.estimator).set_params(**params, **own, epsilon=eps0)
            probe = getattr(model, "_inferred_from", None)
            if probe is not None:
                found.update(dict.fromkeys(probe(X)))
        return list(found)

    # --------------------------------------------------------------- predict
    @fill_doc
    def predict(self, X: ArrayLike) -> np.ndarray:
        """The best model's predictions.

        %(samples_X)s
        ndarray of shape (n_samples,)
            ``best_estimator_.predict(X)``.
        """
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(X)

    @fill_doc
    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """The best model's class probabilities.

        %(samples_X)s
        ndarray of shape (n_samples, n_classes)
            ``best_estimator_.predict_proba(X)``.
        """
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict_proba(X)
