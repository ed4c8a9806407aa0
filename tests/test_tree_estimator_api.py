"""The tree estimators' shared API: declared parameter rules, mechanism=, the accountant under clone /
GridSearchCV, honest claims when the schema is inferred, warnings once per fit."""

from __future__ import annotations

import copy
import math
import pickle
import warnings

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, make_blobs
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from dpselect._params import validate_estimator
from dpselect._warnings import PrivacyLeakWarning
from dpselect.accounting import Accountant, BudgetExceededError
from dpselect.apps import trees
from dpselect.apps.trees import DPDecisionTreeClassifier, DPRandomForestClassifier, DPSearchCV
from dpselect.apps.trees._growing.grow import leaf_values

ESTIMATORS = (DPDecisionTreeClassifier, DPRandomForestClassifier)


def _blobs(n=600, seed=0):
    X, y = make_blobs(n_samples=n, centers=3, cluster_std=1.0, random_state=seed)
    return X, y, (float(np.floor(X.min())), float(np.ceil(X.max())))


def _public(cls, **kw):
    """An estimator with public bounds and classes for _blobs (a DP fit)."""
    _, _, b = _blobs()
    return cls(bounds=b, classes=[0, 1, 2], **kw)


# ---------------------------------------------------------------------------
# one rule per parameter (the library's parameter layer)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_every_parameter_has_one_rule(cls):
    names = set(cls._get_param_names())
    assert names == set(cls._parameter_constraints)
    assert {"mechanism", "accountant", "epsilon", "delta", "random_state"} <= names
    assert "selection" not in names  # no alias of mechanism=
    validate_estimator(cls(), cls._parameter_constraints)  # the defaults are valid


BAD = [
    ("epsilon", 0.0, ValueError, "a finite float > 0"),
    ("epsilon", math.inf, ValueError, "a finite float > 0"),
    ("epsilon", "1", TypeError, "a finite float > 0"),
    ("delta", 1.0, ValueError, r"a float in \[0, 1\)"),
    ("mechanism", "nope", ValueError, "one of"),
    ("mechanism", 3, TypeError, "one of"),
    ("max_depth", -1, ValueError, "None or an int >= 0, got -1"),
    ("max_depth", 2.5, TypeError, "None or an int >= 0, got 2.5"),
    ("max_depth", True, TypeError, "None or an int >= 0"),
    ("n_records", np.int64(0), ValueError, "None or an int >= 1, got 0"),  # printed as a plain number
    ("accountant", 1.0, TypeError, "None or a dpselect.Accountant"),
    ("random_state", -3, ValueError, "None or an int >= 0"),
    ("random_state", "seed", TypeError, "None or an int >= 0"),
]


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("name,value,error,text", BAD)
def test_bad_parameters_name_the_estimator_before_data_or_randomness(cls, name, value, error, text):
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    kw = {name: value} if name == "random_state" else {name: value, "random_state": gen}
    est = cls(**kw)
    with pytest.raises(error, match=f"^{cls.__name__}: {name} must be {text}"):
        est.fit(None, None)  # the parameters are checked before X and y are looked at
    assert gen.bit_generator.state == state


def test_estimator_specific_parameters():
    with pytest.raises(ValueError, match=r"^DPDecisionTreeClassifier: n_bins must be None or an int >= 2, got 1"):
        DPDecisionTreeClassifier(n_bins=1).fit(None, None)
    with pytest.raises(ValueError, match=r"^DPDecisionTreeClassifier: splits must be one of"):
        DPDecisionTreeClassifier(splits="ternary").fit(None, None)
    with pytest.raises(ValueError, match=r"^DPRandomForestClassifier: n_estimators must be None or an int >= 1"):
        DPRandomForestClassifier(n_estimators=0).fit(None, None)
    with pytest.raises(ValueError, match=r"^DPRandomForestClassifier: leaf_utility must be None or one of"):
        DPRandomForestClassifier(leaf_utility="gini").fit(None, None)
    with pytest.raises(ValueError, match=r"^DPDecisionTreeClassifier: delta must be > 0 for mechanism='snm_laplace'"):
        DPDecisionTreeClassifier(mechanism="snm_laplace", delta=0.0).fit(None, None)
    with pytest.raises(ValueError, match=r"^DPRandomForestClassifier: leaf_utility='count' needs mechanism="):
        DPRandomForestClassifier(mechanism="snm_t", leaf_utility="count", algorithm="fletcher_islam").fit(None, None)
    with pytest.raises(ValueError, match=r"^DPRandomForestClassifier: leaf_utility applies to algorithm="):
        DPRandomForestClassifier(leaf_utility="count").fit(None, None)
    with pytest.raises(ValueError, match=r"^DPRandomForestClassifier: algorithm must be one of"):
        DPRandomForestClassifier(algorithm="boost").fit(None, None)


@pytest.mark.parametrize(
    ("func", "args", "error", "name"),
    [
        (trees.auto_tree_depth, (-1.0, 2, 1.0), ValueError, "n_records"),
        (trees.auto_tree_depth, (100, 2.5, 1.0), TypeError, "n_classes"),
        (trees.auto_n_bins, (100, 0.0), ValueError, "epsilon"),
        (trees.auto_partitions, (100, 2, float("inf")), ValueError, "epsilon"),
        (trees.auto_n_estimators, (float("nan"),), ValueError, "n_records"),
        (trees.auto_forest_depth, (100, 0, 3), ValueError, "n_estimators"),
        (trees.fletcher_islam_depth, (-1, 0), ValueError, "n_continuous"),
    ],
)
def test_shape_rules_check_their_arguments(func, args, error, name):
    with pytest.raises(error, match=f"^{name} must"):
        func(*args)


def test_search_rules_name_the_search():
    tree = DPDecisionTreeClassifier()
    assert set(DPSearchCV._parameter_constraints) == set(DPSearchCV._get_param_names())
    with pytest.raises(ValueError, match=r"^DPSearchCV: n_splits must be an int >= 2, got 1"):
        DPSearchCV(tree, {"max_depth": [1]}, epsilon=1.0, n_splits=1).fit(None, None)
    with pytest.raises(TypeError, match=r"^DPSearchCV: estimator must be a scikit-learn estimator"):
        DPSearchCV(object(), {"max_depth": [1]}, epsilon=1.0).fit(None, None)


# ---------------------------------------------------------------------------
# mechanism=
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_mechanism_has_no_alias(cls):
    with pytest.raises(TypeError, match="selection"):
        cls(selection="em")
    X, y, _ = _blobs()
    a = _public(cls, mechanism="em", random_state=0).fit(X, y)
    b = _public(cls, mechanism="em", random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert clone(a).get_params()["mechanism"] == "em"


# ---------------------------------------------------------------------------
# the accountant: constructor, clone, GridSearchCV
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_accountant_survives_clone_as_the_same_object(cls):
    acc = Accountant(5.0)
    est = _public(cls, accountant=acc)
    assert clone(est).accountant is acc
    pipe = Pipeline([("id", FunctionTransformer()), ("model", est)])
    assert clone(pipe).named_steps["model"].accountant is acc
    assert clone(acc) is acc
    assert copy.deepcopy(acc) is not acc  # a deep copy stays an independent copy (documented)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_fit_and_constructor_accountants(cls):
    X, y, _ = _blobs()
    acc = Accountant(5.0)
    _public(cls, accountant=acc, random_state=0).fit(X, y)
    _public(cls, accountant=acc, random_state=0).fit(X, y, accountant=acc)  # the same object: charged once
    _public(cls, random_state=0).fit(X, y, accountant=acc)
    assert len(acc.charges) == 3 and math.isclose(acc.spent.epsilon, 3.0)
    with pytest.raises(ValueError, match="differs from the constructor's accountant"):
        _public(cls, accountant=acc).fit(X, y, accountant=Accountant(5.0))
    with pytest.raises(TypeError, match=r"accountant must be a dpselect.Accountant"):
        _public(cls).fit(X, y, accountant=5.0)
    assert len(acc.charges) == 3


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_unpickled_accountant_is_refused(cls):
    """A joblib worker process gets a pickled copy: charging it would not reach the original budget."""
    X, y, _ = _blobs()
    acc = Accountant(5.0)
    moved = pickle.loads(pickle.dumps(_public(cls, accountant=acc, random_state=0)))
    with pytest.raises(ValueError, match="unpickled with the estimator"):
        moved.fit(X, y)
    assert len(moved.accountant.charges) == 0 and len(acc.charges) == 0
    with pytest.raises(ValueError, match="unpickled with the estimator"):
        clone(moved).fit(X, y)  # a clone made after unpickling (e.g. inside a worker) holds the same copy
    moved.set_params(accountant=acc).fit(X, y)  # an accountant set in this process is charged
    assert len(acc.charges) == 1
    plain = pickle.loads(pickle.dumps(_public(cls, random_state=0)))  # no accountant: nothing to refuse
    plain.fit(X, y)


GRID = {"mechanism": ["pf", "em"], "max_depth": [1, 2]}  # 4 configurations


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_grid_search_charges_every_fit_to_one_accountant(cls):
    X, y, _ = _blobs()
    acc = Accountant(math.inf)
    search = GridSearchCV(_public(cls, epsilon=0.5, accountant=acc, random_state=0), GRID, cv=5, refit=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # public schema: no leak
        search.fit(X, y)
    assert len(acc.charges) == 20  # 4 configurations x 5 folds
    assert math.isclose(acc.spent.epsilon, 20 * 0.5)
    refit = Accountant(math.inf)
    GridSearchCV(_public(cls, epsilon=0.5, accountant=refit, random_state=0), GRID, cv=5).fit(X, y)
    assert len(refit.charges) == 21  # refit=True fits the best configuration once more


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_grid_search_refuses_the_first_fit_that_would_overspend(cls):
    X, y, _ = _blobs()
    acc = Accountant(3.5)
    search = GridSearchCV(
        _public(cls, epsilon=0.5, accountant=acc, random_state=0), GRID, cv=5, refit=False, error_score="raise"
    )
    with pytest.raises(BudgetExceededError):
        search.fit(X, y)
    assert len(acc.charges) == 7 and math.isclose(acc.spent.epsilon, 3.5)  # the 8th fit was refused


# ---------------------------------------------------------------------------
# honest claims
# ---------------------------------------------------------------------------

INFERRED = [  # (what is left out, match in the warning)
    (dict(classes=[0, 1, 2]), "bounds of continuous features"),
    (dict(bounds=(-12, 12)), "classes"),
]


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("kw,what", INFERRED)
def test_inferred_schema_claims_no_guarantee_and_refuses_a_finite_accountant(cls, kw, what):
    X, y, _ = _blobs()
    with pytest.warns(PrivacyLeakWarning, match=what):
        est = cls(epsilon=1.0, random_state=0, **kw).fit(X, y)
    assert math.isinf(est.privacy_.epsilon) and est.privacy_.relation == "add_remove"
    for level in getattr(est, "level_privacy_", []):
        assert math.isinf(level.epsilon)
    acc = Accountant(100.0)
    gen = np.random.default_rng(1)
    state = gen.bit_generator.state
    with pytest.raises(BudgetExceededError, match="no differential-privacy guarantee"), warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        cls(epsilon=1.0, random_state=gen, **kw).fit(X, y, accountant=acc)
    assert gen.bit_generator.state == state and acc.charges == ()  # refused before any randomness
    track = Accountant(math.inf)  # a track-only accountant records the absence of a guarantee
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        cls(epsilon=1.0, random_state=0, **kw).fit(X, y, accountant=track)
    assert math.isinf(track.spent.epsilon)


def test_inferred_categories_and_n_max_claim_no_guarantee():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    s = rng.choice(["a", "b", "c"], 300)
    y = (s == "a").astype(int)
    df = pd.DataFrame({"s": s})
    with pytest.warns(PrivacyLeakWarning, match="categories of features"):
        tree = DPDecisionTreeClassifier(classes=[0, 1], n_records=300, random_state=0).fit(df, y)
    assert math.isinf(tree.privacy_.epsilon)
    X, y3, b = _blobs()
    with pytest.warns(PrivacyLeakWarning, match="n_max"):
        ig = DPDecisionTreeClassifier(bounds=b, classes=[0, 1, 2], split_utility="info_gain").fit(X, y3)
    assert math.isinf(ig.privacy_.epsilon)
    public = DPDecisionTreeClassifier(bounds=b, classes=[0, 1, 2], split_utility="info_gain", n_max=1000)
    assert math.isclose(public.fit(X, y3).privacy_.epsilon, 1.0)


@pytest.mark.parametrize("seed", [1, 2])
def test_snm_laplace_auto_shape_does_not_crash(seed):
    """The configuration that crashed with "eps_d must be >= m beta = 0.11875..., got 0.11875" (rounding)."""
    X, y = load_breast_cancer(return_X_y=True)
    b = np.column_stack([np.floor(X.min(axis=0)), np.ceil(X.max(axis=0)) + 1])
    acc = Accountant(1.0, 1e-6)
    clf = DPDecisionTreeClassifier(
        mechanism="snm_laplace",
        splits="binary",
        max_depth=None,
        n_bins=None,
        bounds=b,
        classes=[0, 1],
        random_state=seed,
        accountant=acc,
    ).fit(X, y)
    assert len(acc.charges) == 1 and clf.privacy_.epsilon <= 1.0 * (1 + 1e-12)
    assert clf.privacy_.delta <= 1e-6 * (1 + 1e-9)


def test_invalid_public_configuration_is_not_charged():
    """A public shape is planned (mechanism built) before the charge: a failing calibration charges nothing."""
    X, y, b = _blobs()
    acc = Accountant(1.0)
    with pytest.raises(ValueError, match="epsilon"):  # eps / 13 levels is subnormal: the mechanism refuses it
        DPDecisionTreeClassifier(
            epsilon=1e-307, max_depth=12, n_bins=8, bounds=b, classes=[0, 1, 2], accountant=acc
        ).fit(X, y)
    assert acc.charges == ()


# ---------------------------------------------------------------------------
# warnings once per fit
# ---------------------------------------------------------------------------


def _count(record, category, text=""):
    return [str(w.message) for w in record if issubclass(w.category, category) and text in str(w.message)]


def test_one_leak_warning_per_fit_whatever_is_inferred():
    X, y, _ = _blobs()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        DPDecisionTreeClassifier(split_utility="info_gain", random_state=0).fit(X, y)
    leaks = _count(record, PrivacyLeakWarning)
    assert len(leaks) == 1
    assert all(w in leaks[0] for w in ("bounds", "classes", "n_max"))


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_grid_search_warns_once_per_fit(cls):
    X, y, _ = _blobs(200)
    grid = {"mechanism": ["pf", "em"], "max_depth": [0, 1]}  # depth 0: a single leaf (warned) in 10 fits
    search = GridSearchCV(cls(epsilon=0.05, random_state=0), grid, cv=5, refit=False)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        search.fit(X, y)
    leaks = _count(record, PrivacyLeakWarning)
    assert len(leaks) == 20 and len(set(leaks)) == 1  # one per fit, the same text in every fit
    single = _count(record, UserWarning, "same class for every sample")
    # once per fit that predicts one class (every depth-0 fit, and depth-1 fits whose leaves fell back to the
    # root's label), one text per depth (the forest's default algorithm re-issues its trees' warnings once)
    assert 10 <= len(single) <= 20 and len(set(single)) <= 2


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_out_of_bounds_record_changes_nothing_observable(cls):
    """Issue #30.5: one record outside the public schema (a continuous value, a category, a label) vs the
    same record in bounds: no exception and identical warnings (none), by default; "raise" is the opt-in."""
    X, y, _ = _blobs()
    X = np.column_stack([X, np.arange(X.shape[0]) % 2]).astype(float)  # a categorical feature, domain {0, 1}
    kw = dict(bounds=(-12, 12), categorical_features={2: [0.0, 1.0]}, classes=[0, 1, 2], random_state=0)
    variants = {"value": (3, 1, 123.456), "category": (4, 2, 7.0)}
    for what, (i, j, v) in variants.items():
        bad = X.copy()
        bad[i, j] = v
        seen = []
        for data in (X, bad):
            with warnings.catch_warnings(record=True) as record:
                warnings.simplefilter("always")
                cls(**kw).fit(data, y)
            seen.append([(w.category, str(w.message)) for w in record])
        assert seen[0] == seen[1] == [], what
        with pytest.raises(ValueError, match="not private") as err:
            cls(**kw, on_out_of_bounds="raise").fit(bad, y)
        assert "123" not in str(err.value) and "7.0" not in str(err.value)  # names the feature, not the value
    bad_y = y.copy()
    bad_y[5] = 9  # a label outside the public classes
    for labels in (y, bad_y):
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            cls(**kw).fit(X, labels)
        assert not record
    with pytest.raises(ValueError, match="y lie outside"):
        cls(**kw, on_out_of_bounds="raise").fit(X, bad_y)
    # clamping is what the fit does: the out-of-bounds value and the bound itself give the same model
    at_bound = X.copy()
    at_bound[3, 1] = 12.0
    far = X.copy()
    far[3, 1] = 1e9
    a, b = cls(**kw, n_records=300).fit(at_bound, y), cls(**kw, n_records=300).fit(far, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


# ---------------------------------------------------------------------------
# predict_proba
# ---------------------------------------------------------------------------


def test_tree_predict_proba_is_the_released_leaf_frequencies():
    X, y, b = _blobs(3000)
    clf = DPDecisionTreeClassifier(epsilon=1.0, max_depth=3, n_bins=8, bounds=b, classes=[0, 1, 2], random_state=0).fit(
        X, y
    )
    tr = clf.tree_
    proba = clf.predict_proba(X)
    np.testing.assert_array_equal(proba, tr.value[clf.apply(X)])
    # independent: a leaf whose own noisy total is at least twice its noise keeps its own counts,
    # clipped at 0 and normalised
    counts = tr.leaf_counts
    C = counts.shape[1]
    own = counts.sum(axis=1) >= 2.0 * np.sqrt(2.0 * C) / clf.epsilon_per_query_
    assert own.any()
    clipped = np.clip(counts[own], 0.0, None)
    np.testing.assert_allclose(tr.value[own], clipped / clipped.sum(axis=1, keepdims=True))
    arr = {"leaf": tr.leaf, "parent": tr.parent, "depth": tr.depth}
    np.testing.assert_allclose(leaf_values(arr, counts, clf.epsilon_per_query_)[1], tr.value)


def test_forest_predict_proba_is_the_vote_share():
    X, y, b = _blobs(3000)
    rf = DPRandomForestClassifier(
        epsilon=1.0,
        n_estimators=8,
        max_depth=3,
        bounds=b,
        classes=[0, 1, 2],
        algorithm="fletcher_islam",
        random_state=0,
    ).fit(X, y)
    proba = rf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(proba * 8, np.round(proba * 8), atol=1e-12)  # multiples of 1/n_estimators
