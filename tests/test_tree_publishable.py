"""Issue #30 for the tree estimators: a fitted model is publishable (released values only, on a grid).

* #30.1: no Generator / BitGenerator / SeedSequence / RandomState survives ``fit`` anywhere in the pickled
  object graph of a tree, a partition forest, a Fletcher–Islam forest or a search (``best_estimator_``
  included) under ``random_state`` None, an int and "secure"; the red team's reproducer (rewind the
  generator found in the model, redraw the noise, subtract it from the leaf counts) recovers the exact
  counts only from an int seed (documented: reproducible, not private).
* #30.2: every noisy count released (``n_records_``, ``tree_.leaf_counts``, ``tree_.noisy_count``, the
  forests' ``n_records_``, ``DPSearchCV.best_noisy_correct_``) is an integer (the grid 2^0 Z) with the exact
  discrete Laplace law; the float path's outputs at n = 30 that are impossible at n = 31 (Mironov 2012)
  are gone.
* #30.6: ``DPSearchCV`` refuses an accountant it cannot charge (``cross_validate(n_jobs=2)``), charges the
  candidates' delta and records what a leaking candidate cost.
"""

from __future__ import annotations

import copy
import math
import pickle
import pickletools
import re
import warnings
from fractions import Fraction

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import make_blobs
from sklearn.model_selection import cross_validate

from conftest import assert_frequencies_match, on_grid, possible_laplace
from dpselect import Accountant, Privacy
from dpselect._exact_numbers import dyadic_ceil
from dpselect.apps.trees import DPDecisionTreeClassifier, DPRandomForestClassifier, DPSearchCV
from dpselect.noise import discrete_laplace_logpmf

#: What a pickled generator's state looks like at the pickle level (class paths and constructor helpers).
_RNG_NAMES = re.compile(r"numpy\.random|Generator|SeedSequence|RandomState|PCG64|MT19937|Philox|SFC64|_ctor")


def _blobs(n=600, seed=0):
    X, y = make_blobs(n_samples=n, centers=3, cluster_std=1.0, random_state=seed)
    return X, y, (float(np.floor(X.min())), float(np.ceil(X.max())))


def _rng_names(obj) -> set[str]:
    """Every class path or helper name in ``obj``'s pickle that belongs to a random generator."""
    blob = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return {arg for _, arg, _ in pickletools.genops(blob) if isinstance(arg, str) and _RNG_NAMES.search(arg)}


def _rng_objects(obj, seen=None) -> list:
    """The generator-like objects reachable from ``obj`` (attributes, containers, estimator parameters)."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    kinds = (np.random.Generator, np.random.BitGenerator, np.random.SeedSequence, np.random.RandomState)
    if isinstance(obj, kinds):
        return [obj]
    if isinstance(obj, dict):
        children = list(obj.values())
    elif isinstance(obj, (list, tuple, set)):
        children = list(obj)
    elif hasattr(obj, "__dict__") and not isinstance(obj, (type, np.ndarray)):
        children = list(vars(obj).values())
    else:
        children = []
    return [g for c in children for g in _rng_objects(c, seen)]


def _fitted(random_state):
    X, y, b = _blobs()
    kw = dict(bounds=b, classes=[0, 1, 2], random_state=random_state)
    tree = DPDecisionTreeClassifier(epsilon=1.0, **kw)
    return (
        {
            "tree": tree,
            "forest": DPRandomForestClassifier(epsilon=1.0, n_estimators=3, **kw),
            "fletcher_islam": DPRandomForestClassifier(epsilon=1.0, algorithm="fletcher_islam", **kw),
            "search": DPSearchCV(
                DPDecisionTreeClassifier(bounds=b, classes=[0, 1, 2], n_records=600),
                {"max_depth": [1, 2]},
                epsilon=2.0,
                random_state=random_state,
            ),
            "search_forest": DPSearchCV(
                DPRandomForestClassifier(bounds=b, classes=[0, 1, 2], n_estimators=2, n_records=600),
                {"max_depth": [1, 2]},
                epsilon=2.0,
                random_state=random_state,
            ),
        },
        X,
        y,
    )


@pytest.mark.parametrize("random_state", [None, 7, "secure"])
def test_no_generator_survives_fit(random_state):
    models, X, y = _fitted(random_state)
    for name, model in models.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X, y)
        assert _rng_names(model) == set(), name
        assert _rng_objects(model) == [], name
        restored = pickle.loads(pickle.dumps(model))
        np.testing.assert_array_equal(restored.predict_proba(X), model.predict_proba(X))
    seeds = [t.random_state for t in models["forest"].estimators_]
    if random_state == 7:  # fresh int seeds (reproducible), never the parent's seed itself
        assert all(isinstance(s, int) for s in seeds) and len(set(seeds)) == 3 and 7 not in seeds
        assert isinstance(models["search"].best_estimator_.random_state, int)
    else:  # as the user gave it
        assert seeds == [random_state] * 3 and models["search"].best_estimator_.random_state == random_state


def test_the_scan_catches_a_generator():
    """Negative control: a Generator passed by the user is a parameter, and both scans report it."""
    X, y, b = _blobs()
    gen = np.random.default_rng(0)
    model = DPRandomForestClassifier(epsilon=1.0, n_estimators=2, bounds=b, classes=[0, 1, 2], random_state=gen)
    model.fit(X, y)
    assert any("Generator" in s or "_ctor" in s for s in _rng_names(model))
    assert gen in _rng_objects(model)


def _leaf_attack(model, X, y, eps_leaf, C=3):
    """The red team's reproducer on a one-leaf member tree: find the model's generator (or seed), rewind
    it, redraw the leaf noise (float Laplace, as before, or the exact discrete sampler, as now) and subtract
    it from the released leaf counts.  Returns whether the true counts came out."""
    from dpselect._validation import check_random_state
    from dpselect.apps.trees._growing.grow import noisy_counts

    member = model.estimators_[0]
    released = member.tree_.leaf_counts[0]
    truth = np.bincount(y, minlength=C)
    candidates = [*_rng_objects(model), member.random_state]
    for state in candidates:
        for back in range(0, 4 * C + 1):
            if isinstance(state, np.random.Generator):
                g = copy.deepcopy(state)
                g.bit_generator.advance(-back)
            elif back == 0:
                g = check_random_state(copy.deepcopy(state))
            else:
                continue
            redraws = (
                copy.deepcopy(g).laplace(0.0, 1.0 / eps_leaf, size=C),
                noisy_counts(np.zeros(C), eps_leaf, copy.deepcopy(g)),
            )
            if any(np.allclose(released - noise, truth, rtol=0, atol=1e-6) for noise in redraws):
                return True
    return False


@pytest.mark.parametrize(("random_state", "recovered"), [(None, False), ("secure", False), (11, True)])
def test_red_team_rewinding_the_generator_no_longer_recovers_counts(random_state, recovered):
    """Issue #30.1's reproducer.  Before the fix every member tree held the forest's Generator, and
    rewinding it by C draws regenerated the Laplace noise of a leaf exactly.  Now nothing but the user's
    random_state is left: None and "secure" recover nothing, an int seed (documented as reproducible,
    not private) regenerates the noise -- the positive control that the attack works."""
    X, y, b = _blobs(400, seed=3)
    model = DPRandomForestClassifier(
        epsilon=0.5, n_estimators=1, max_depth=0, n_records=400, bounds=b, classes=[0, 1, 2], random_state=random_state
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    assert _leaf_attack(model, X, y, eps_leaf=0.5) is recovered


# ------------------------------------------------------------------ grid releases


def _dlap_law(eps, window):
    t = dyadic_ceil(Fraction(1) / Fraction(eps))
    k = np.arange(-window, window + 1)
    return k, np.exp(discrete_laplace_logpmf(k, t))


def test_leaf_counts_are_exact_discrete_laplace():
    """A one-leaf tree (public n_records, max_depth 0): leaf counts - true counts ~ discrete Laplace(1/eps)."""
    X = np.linspace(0.0, 1.0, 30)[:, None]
    y = np.arange(30) % 2
    eps, fits = 1.0, 1500
    noise = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s in range(fits):
            clf = DPDecisionTreeClassifier(
                epsilon=eps, max_depth=0, n_records=30, bounds=(0, 1), classes=[0, 1], random_state=s
            ).fit(X, y)
            noise.append(clf.tree_.leaf_counts[0] - [15, 15])
    noise = np.concatenate(noise)
    assert on_grid(noise, 1.0)
    _k, p = _dlap_law(eps, 12)
    inside = np.abs(noise) <= 12
    assert inside.mean() > 0.999
    assert_frequencies_match((noise[inside] + 12).astype(np.int64), p / p.sum())


def test_noisy_record_counts_have_no_impossible_outputs():
    """Mironov 2012 on n_records_: the float path (n + Laplace) gives outputs at n = 30 that no draw can give
    at n = 31 (the red team measured 35 %); the integer outputs are all reachable from both."""
    eps = 1.0  # the count gets 5 %: eps_n = 0.05, scale 20 (the red team's setting)
    X30 = np.linspace(0.0, 1.0, 30)[:, None]
    y30 = np.arange(30) % 2
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s in range(150):
            clf = DPDecisionTreeClassifier(epsilon=eps, n_bins=8, bounds=(0, 1), classes=[0, 1], random_state=s)
            out.append(clf.fit(X30, y30).n_records_)
    out = np.array(out)
    # integers: the discrete Laplace has every integer in its support, at n = 30 and at n = 31 alike
    assert on_grid(out, 1.0) and len(np.unique(out)) > 20
    gen = np.random.default_rng(0)
    old = 30 + gen.laplace(0.0, 20.0, size=150)  # the previous release
    impossible = np.mean([not possible_laplace(v, 31.0, 20.0) for v in old])
    assert impossible > 0.2  # the red team's 35 %, up to sampling


def test_every_released_count_is_an_integer():
    X, y, b = _blobs(800)
    kw = dict(bounds=b, classes=[0, 1, 2], random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = DPDecisionTreeClassifier(epsilon=1.0, **kw).fit(X, y)
        multi = DPDecisionTreeClassifier(epsilon=2.0, splits="multiway", n_bins=4, **kw).fit(X, y)
        forest = DPRandomForestClassifier(epsilon=1.0, n_estimators=2, **kw).fit(X, y)
        fi = DPRandomForestClassifier(epsilon=1.0, algorithm="fletcher_islam", **kw).fit(X, y)
        search = DPSearchCV(
            DPDecisionTreeClassifier(bounds=b, classes=[0, 1, 2]), {"max_depth": [1, 2]}, epsilon=2.0, random_state=0
        ).fit(X, y)
    assert multi.stopping_ == "count" and np.isfinite(multi.tree_.noisy_count).any()
    released = [
        tree.n_records_,
        tree.tree_.leaf_counts,
        multi.tree_.leaf_counts,
        multi.tree_.noisy_count[np.isfinite(multi.tree_.noisy_count)],
        forest.n_records_,
        *[m.tree_.leaf_counts for m in forest.estimators_],
        fi.n_records_,
        search.best_noisy_correct_,
        search.best_estimator_.tree_.leaf_counts,
    ]
    for value in released:
        assert on_grid(value, 1.0)


# ------------------------------------------------------------------ DPSearchCV accounting (#30.6)


class _ThirdParty(ClassifierMixin, BaseEstimator):
    """A non-dpselect candidate that reports (epsilon, reported_delta) and predicts the majority label."""

    def __init__(self, *, epsilon=1.0, random_state=None, reported_delta=0.0, delta=0.0):
        self.epsilon = epsilon
        self.random_state = random_state
        self.reported_delta = reported_delta
        self.delta = delta

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        self.majority_ = self.classes_[0]
        spent = self.reported_delta if self.reported_delta >= 0 else self.delta
        self.privacy_ = Privacy(self.epsilon, spent, "add_remove")
        return self

    def predict(self, X):
        return np.full(len(X), self.majority_)


def test_search_refuses_an_accountant_in_a_worker_process():
    """cross_validate(n_jobs=2) sends a copy of the search (and its accountant) to worker processes: every
    fit is refused there, and the caller's accountant is untouched; with n_jobs=1 it is charged."""
    X, y, b = _blobs(300)
    acc = Accountant(3.0)
    search = DPSearchCV(
        DPDecisionTreeClassifier(bounds=b, classes=[0, 1, 2], n_records=300),
        {"max_depth": [1, 2]},
        epsilon=1.0,
        accountant=acc,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="unpickled"):
            cross_validate(search, X, y, cv=3, n_jobs=2, error_score="raise")
        assert acc.spent.epsilon == 0.0
        cross_validate(search, X, y, cv=3, n_jobs=1)
    assert acc.spent.epsilon == pytest.approx(3.0)


def test_search_fit_takes_the_accountant():
    X, y, b = _blobs(300)
    acc = Accountant(1.0)
    search = DPSearchCV(
        DPDecisionTreeClassifier(bounds=b, classes=[0, 1, 2], n_records=300),
        {"max_depth": [1, 2]},
        epsilon=1.0,
        random_state=0,
    )
    search.fit(X, y, accountant=acc)
    assert acc.spent.epsilon == pytest.approx(1.0)
    with pytest.raises(ValueError, match="differs"):
        DPSearchCV(search.estimator, {"max_depth": [1]}, epsilon=1.0, accountant=Accountant(2.0)).fit(
            X, y, accountant=acc
        )


def test_search_charges_the_candidates_delta():
    X, y, _ = _blobs(300)
    grid = {"reported_delta": [-1.0]}  # the candidate spends the delta it is given
    acc = Accountant(2.0, delta=1e-3)
    search = DPSearchCV(_ThirdParty(), grid, epsilon=2.0, delta=1e-3, mean_repetitions=4.0, random_state=0)
    search.fit(X, y, accountant=acc)
    assert search.privacy_.epsilon == 2.0 and search.privacy_.delta == 1e-3 == acc.spent.delta
    # delta_0 E[K] (1 + e^eps) <= delta (module docstring)
    assert 0 < search.delta_per_run_ * 4.0 * (1 + math.exp(2.0)) <= 1e-3
    # delta = 0: a candidate reporting delta > 0 voids the guarantee (it used to give a pure-DP result)
    with pytest.warns(UserWarning, match="more than its budget"):
        pure = DPSearchCV(_ThirdParty(), {"reported_delta": [0.05]}, epsilon=2.0, random_state=0).fit(X, y)
    assert pure.privacy_.epsilon == math.inf


def test_a_leaking_candidate_is_charged_what_it_cost():
    """A candidate that reports more than its budget: privacy_ is inf, and so is the accountant's spend
    (it used to show the nominal epsilon); every later charge is refused."""
    X, y, _ = _blobs(300)
    acc = Accountant(3.0)
    with pytest.warns(UserWarning, match="more than its budget"):
        search = DPSearchCV(_Overspender(), {"reported_delta": [0.0]}, epsilon=1.0, random_state=0)
        search.fit(X, y, accountant=acc)
    assert search.privacy_.epsilon == math.inf and acc.spent.epsilon == math.inf
    with pytest.raises(ValueError):
        acc.spend(Privacy(0.1))


class _Overspender(_ThirdParty):
    """Ignores the epsilon it is given: reports 10."""

    def fit(self, X, y):
        super().fit(X, y)
        self.privacy_ = Privacy(10.0, 0.0, "add_remove")
        return self


def test_fit_takes_the_accountant_for_every_estimator():
    """The README's promise: fit(X, y, accountant=...) charges that accountant, for every estimator."""
    X, y, b = _blobs(300)
    tree = DPDecisionTreeClassifier(bounds=b, classes=[0, 1, 2], n_records=300)
    models = [
        tree,
        DPRandomForestClassifier(bounds=b, classes=[0, 1, 2], n_records=300),
        DPRandomForestClassifier(bounds=b, classes=[0, 1, 2], n_records=300, algorithm="fletcher_islam"),
        DPSearchCV(tree, {"max_depth": [1, 2]}, epsilon=1.0),
    ]
    for model in models:
        acc = Accountant(1.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X, y, accountant=acc)
        assert acc.spent.epsilon == pytest.approx(1.0) == model.privacy_.epsilon, type(model).__name__


def test_search_with_approximate_dpselect_candidates():
    """With delta > 0 the search accepts an approximate mechanism and gives every run delta_0."""
    X, y, b = _blobs(300)
    tree = DPDecisionTreeClassifier(
        bounds=b, classes=[0, 1, 2], n_records=300, max_depth=1, n_bins=8, mechanism="snm_laplace"
    )
    search = DPSearchCV(tree, {"n_bins": [8]}, epsilon=2.0, delta=1e-4, mean_repetitions=2.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    assert search.privacy_.epsilon == 2.0 and search.privacy_.delta == 1e-4
    assert search.best_estimator_.delta == search.delta_per_run_ > 0
    assert search.best_estimator_.privacy_.delta <= search.delta_per_run_
