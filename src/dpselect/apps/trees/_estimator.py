"""What the private tree estimators share: validated parameters, the budget, honest claims, warnings.

* **Parameters** are checked by the library's one parameter layer
  (:func:`dpselect._params.validate_estimator` against the estimator's
  ``_parameter_constraints``, built from :mod:`dpselect.apps.trees._params`) before any data are
  read or any randomness is drawn.
* **The accountant** is a constructor parameter, so ``clone``, ``Pipeline``
  and ``GridSearchCV`` carry it (the :class:`~dpselect.accounting.Accountant`
  survives ``sklearn.base.clone`` as the same object: every clone charges the
  one budget).  ``fit(X, y, accountant=...)`` is accepted too; both at once
  must be the same object.  An estimator unpickled with its accountant (a
  joblib worker process, e.g. ``GridSearchCV(n_jobs=2)``) holds a detached
  copy of the budget, so its ``fit`` and its clones' refuse to charge it
  (fit in the accountant's process: ``n_jobs=1`` or joblib's threading
  backend).
* **Honest claims**: when bounds, categories, classes or the info-gain
  sensitivity come from the training data, the fit has no differential
  privacy guarantee: ``privacy_`` has ``epsilon = inf`` (as every mechanism
  reports on a problem with a data-dependent candidate set), and a finite
  accountant refuses the fit before any randomness is drawn.
* **Out-of-bounds records change nothing observable** (``on_out_of_bounds="clip"``,
  the default): continuous values are clamped to the public bounds, records
  whose category or label lies outside the declared domain are dropped
  (each a map of one record alone, so add/remove neighbours stay neighbours
  or become equal), with no exception and no warning.
  ``on_out_of_bounds="raise"`` is an opt-in for a curator looking for data
  errors: the fit raises a ``ValueError`` naming the features, which tells
  whether some record lies outside the schema -- **not private**.
* **Warnings once per fit**: one :class:`~dpselect.PrivacyLeakWarning`
  listing everything inferred, with no data value, and none per node or per
  tree.  The texts depend on the configuration and the schema only, so the
  folds of a cross-validation repeat the same text (once per fit:
  scikit-learn resets the warning filters for every fit it dispatches).
* **A fitted estimator holds released values only**: the generator that drew
  a fit's noise is a local of ``fit``; sub-estimators (a forest's trees, a
  search's runs) get fresh integer seeds drawn from it when the user gave an
  integer seed (reproducible, hence **not private**: anyone holding the seed
  can redraw the noise), and the user's ``random_state`` itself otherwise
  (None or ``"secure"``: fresh operating-system entropy, nothing stored).  A
  numpy ``Generator``, ``RandomState`` or ``SeedSequence`` passed as ``random_state`` is a
  constructor parameter, so it stays in the estimator and its pickle: pass
  None or ``"secure"`` for a model you publish.
"""

from __future__ import annotations

import math
import numbers
import warnings
import weakref
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import Tags

from ..._docstrings import fill_doc
from ..._params import Rule, validate_estimator
from ..._warnings import PrivacyLeakWarning
from ...accounting import Accountant, BudgetExceededError, charge
from ...mechanisms import APPROXIMATE_NAMES
from ...privacy import Privacy
from ._tabular import encode_fit

__all__ = ["DPClassifierBase", "check_attached", "child_random_states", "remember_detached"]

#: Accountants unpickled inside an estimator (detached copies of a budget kept in another process or file);
#: held weakly, by identity, so that clones made after unpickling (e.g. inside a worker) are refused too.
_DETACHED: weakref.WeakSet[Accountant] = weakref.WeakSet()


def remember_detached(state: dict[str, Any]) -> None:
    """Mark the accountant of an unpickled estimator's ``state`` as a detached copy of a budget."""
    if isinstance(state.get("accountant"), Accountant):
        _DETACHED.add(state["accountant"])


def check_attached(owner: str, accountant: Accountant | None) -> None:
    """Refuse (``ValueError``) an accountant that was unpickled with an estimator: charges would not reach it."""
    if accountant is not None and accountant in _DETACHED:
        raise ValueError(
            f"{owner}: the accountant was unpickled with the estimator (e.g. sent to a joblib worker process by "
            "GridSearchCV(n_jobs>1) or cross_validate(n_jobs>1)); charges to this copy would not reach the original "
            "budget. Fit in the accountant's process (n_jobs=1 or joblib's threading backend) or set_params("
            "accountant=...) with the accountant to charge."
        )


def resolve_accountant(owner: str, own: Accountant | None, given: Accountant | None) -> Accountant | None:
    """The accountant a fit charges: the constructor's ``own`` or fit's ``given`` (the same object if both)."""
    if given is not None and not isinstance(given, Accountant):
        raise TypeError(f"{owner}: accountant must be a dpselect.Accountant or None, got {type(given).__name__}")
    if own is not None and given is not None and own is not given:
        raise ValueError(
            f"{owner}: fit(accountant=...) differs from the constructor's accountant; a fit "
            "spends one budget: pass it once"
        )
    check_attached(owner, own)
    check_attached(owner, given)
    return given if given is not None else own


def child_random_states(random_state: Any, gen: np.random.Generator, k: int) -> list[Any]:
    """``random_state`` of k sub-estimators (a forest's trees, a search's runs) fitted with ``gen``'s help.

    An integer seed or a ``SeedSequence`` (reproducible: not private) gives k
    fresh integer seeds drawn from ``gen``; anything else (None, ``"secure"``,
    the user's own Generator or RandomState) is passed on as the user gave
    it, so no generator created by a fit outlives it.
    """
    reproducible = isinstance(random_state, (numbers.Integral, np.random.SeedSequence)) and not isinstance(
        random_state, (bool, np.bool_)
    )
    if reproducible:
        return [int(s) for s in gen.integers(0, 2**63 - 1, size=k)]
    return [random_state] * k


class DPClassifierBase(ClassifierMixin, BaseEstimator):
    """Base class of the private tree classifiers (see the module docstring)."""

    #: One rule per constructor parameter (each subclass declares its own).
    _parameter_constraints: ClassVar[dict[str, Rule]] = {}

    def predict_proba(self, X: Any) -> np.ndarray:  # pragma: no cover - each estimator defines it
        """The class probabilities of the samples (each subclass defines them)."""
        raise NotImplementedError

    @fill_doc
    def predict(self, X: Any) -> np.ndarray:
        """The most probable class of each sample (the first on ties; post-processing of the released model).

        %(samples_X)s
        ndarray of shape (n_samples,)
            The argmax of :meth:`predict_proba` (the first class on ties),
            as labels of ``classes_``.
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.input_tags.categorical = True
        # differential privacy trades accuracy for privacy: at the default budget a private tree need not reach
        # scikit-learn's training-accuracy threshold on its tiny blobs (the tests check accuracy instead)
        tags.classifier_tags.poor_score = True
        return tags

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        remember_detached(state)  # a detached copy of the pickled budget

    # ------------------------------------------------------------ parameters
    def _validated(self) -> dict[str, Any]:
        """The parameters, checked by ``_parameter_constraints`` and the relations between them."""
        params = validate_estimator(self, self._parameter_constraints)
        mechanism = params["mechanism"]
        if mechanism in APPROXIMATE_NAMES and not params["delta"] > 0.0:
            raise ValueError(
                f"{type(self).__name__}: delta must be > 0 for mechanism={mechanism!r}, got {float(params['delta'])}"
            )
        return params

    def _budget(self, accountant: Accountant | None) -> Accountant | None:
        """The accountant a fit charges: the constructor's or fit's (the same object if both are given)."""
        return resolve_accountant(type(self).__name__, self.accountant, accountant)

    # --------------------------------------------------------------- privacy
    def _inferred(self, schema: Any) -> list[str]:
        """What the fit takes from the training data instead of public parameters (empty: a DP fit)."""
        inferred = list(schema.inferred)
        if self.classes is None:
            inferred.append("the classes (from y)")
        return inferred

    def _inferred_from(self, X: Any) -> list[str]:
        """What a fit on ``X`` would take from the data instead of public parameters.

        Runs only the public-schema step (no randomness, nothing stored on
        ``self`` but the input-shape attributes), so a caller such as
        :class:`DPSearchCV` can refuse or report before it charges anything.
        """
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the fit itself warns once
            schema, Xc, _ = encode_fit(self, X, self.bounds, self.categorical_features)
        inferred = self._inferred(schema)
        ig_sensitivity = getattr(self, "_ig_sensitivity", None)
        if ig_sensitivity is not None:
            ig_sensitivity(Xc.shape[0], inferred)
        return inferred

    def _claim(self, privacy: Privacy, inferred: list[str]) -> Privacy:
        """``privacy`` if nothing was inferred from the data, else no guarantee (epsilon = inf)."""
        if not inferred:
            return privacy
        return Privacy(
            math.inf, 0.0, "add_remove", "no guarantee: " + "; ".join(inferred) + " inferred from the training data"
        )

    def _charge(self, accountant: Accountant | None, privacy: Privacy, inferred: list[str]) -> None:
        """Charge ``accountant`` (before any randomness); refuse a finite one when nothing is guaranteed."""
        if inferred and accountant is not None and math.isfinite(accountant.budget.epsilon):
            raise BudgetExceededError(
                f"{type(self).__name__}: {'; '.join(inferred)} inferred from the training data, so the fit has "
                f"no differential-privacy guarantee and cannot be charged to the finite budget {accountant.budget}; "
                "pass public bounds, categories and classes"
            )
        charge(accountant, self._claim(privacy, inferred))

    def _warn(self, inferred: list[str], *, stacklevel: int = 3) -> None:
        """The fit's warning about a schema taken from the data, at most once (``stacklevel`` 3: ``fit``'s caller)."""
        if inferred:
            warnings.warn(
                f"{type(self).__name__}: {'; '.join(inferred)} inferred from the training data, which leaks private "
                "information: the fit has no differential-privacy guarantee (privacy_.epsilon = inf). Pass the "
                "public bounds=..., categorical_features={feature: categories}, classes=... (and n_max=... for "
                "split_utility='info_gain').",
                PrivacyLeakWarning,
                stacklevel=stacklevel,
            )
