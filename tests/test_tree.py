"""DPDecisionTreeClassifier (DiffP-ID3): scikit-learn conformance, privacy audits, accuracy."""

from __future__ import annotations

import math
import os
import warnings

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.datasets import load_breast_cancer, load_digits, make_blobs
from sklearn.model_selection import StratifiedKFold
from sklearn.utils.estimator_checks import parametrize_with_checks

from dpselect._warnings import PrivacyLeakWarning
from dpselect.analysis import audit
from dpselect.apps.tree import (
    SELECTIONS,
    DPDecisionTreeClassifier,
    info_gain,
    info_gain_element_sensitivity,
    info_gain_sensitivity,
    make_mechanism,
    node_neighbours,
    split_problem,
)

# scikit-learn's generic checks fit on data without public bounds / classes:
# the PrivacyLeakWarning that this triggers is expected there.
pytestmark = pytest.mark.filterwarnings("ignore::dpselect._warnings.PrivacyLeakWarning")


# ---------------------------------------------------------------------------
# scikit-learn conformance
# ---------------------------------------------------------------------------

@parametrize_with_checks(
    [
        DPDecisionTreeClassifier(),
        DPDecisionTreeClassifier(selection="em", split_utility="info_gain", n_max=10_000),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _blobs():
    X, y = make_blobs(n_samples=600, centers=3, cluster_std=1.0, random_state=0)
    return X, y, (float(np.floor(X.min())), float(np.ceil(X.max())))


@pytest.mark.parametrize("selection", SELECTIONS)
def test_learns_easy_data_with_generous_budget(selection):
    X, y, b = _blobs()
    util = "info_gain" if selection == "ld" else "max_operator"
    clf = DPDecisionTreeClassifier(epsilon=50.0, max_depth=2, n_bins=8, bounds=b, classes=[0, 1, 2],
                                   selection=selection, split_utility=util, n_max=1000, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # public bounds/classes/n_max: no leak
        clf.fit(X, y)
    assert clf.score(X, y) > 0.9
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(X))


def test_random_state_reproducible():
    X, y, b = _blobs()
    kw = dict(epsilon=5.0, max_depth=3, bounds=b, classes=[0, 1, 2])
    p1 = DPDecisionTreeClassifier(random_state=3, **kw).fit(X, y).predict_proba(X)
    p2 = DPDecisionTreeClassifier(random_state=3, **kw).fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(p1, p2)
    p3 = DPDecisionTreeClassifier(random_state=np.random.default_rng(3), **kw).fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(p1, p3)
    p4 = DPDecisionTreeClassifier(random_state=4, **kw).fit(X, y).predict_proba(X)
    assert not np.array_equal(p1, p4)


def test_bad_inputs():
    X, y, b = _blobs()
    clf = DPDecisionTreeClassifier(bounds=b, classes=[0, 1, 2])
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        clf.fit(Xn, y)
    for eps in (0.0, -1.0, math.inf):
        with pytest.raises(ValueError, match="epsilon"):
            DPDecisionTreeClassifier(epsilon=eps, bounds=b).fit(X, y)
    with pytest.raises(ValueError, match="selection"):
        DPDecisionTreeClassifier(selection="nope", bounds=b).fit(X, y)
    with pytest.raises(ValueError, match="split_utility"):
        DPDecisionTreeClassifier(split_utility="gini", bounds=b).fit(X, y)
    with pytest.raises(ValueError, match="bounds"):
        DPDecisionTreeClassifier(bounds=(1.0, 1.0)).fit(X, y)
    with pytest.raises(ValueError, match="bounds"):
        DPDecisionTreeClassifier(bounds=np.zeros((5, 2))).fit(X, y)
    with pytest.raises(ValueError, match="not in classes"):
        DPDecisionTreeClassifier(bounds=b, classes=[0, 1]).fit(X, y)
    with pytest.raises(ValueError, match="n_max"):
        DPDecisionTreeClassifier(bounds=b, split_utility="info_gain", n_max=10).fit(X, y)
    with pytest.raises(ValueError, match="delta"):
        DPDecisionTreeClassifier(bounds=b, selection="snm_laplace", delta=0.0).fit(X, y)
    clf.fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        clf.predict(Xn)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :1])


def test_leak_warnings():
    X, y, b = _blobs()
    with pytest.warns(PrivacyLeakWarning, match="bounds"):
        DPDecisionTreeClassifier(classes=[0, 1, 2]).fit(X, y)
    with pytest.warns(PrivacyLeakWarning, match="classes"):
        DPDecisionTreeClassifier(bounds=b).fit(X, y)
    with pytest.warns(PrivacyLeakWarning, match="n_max"):
        DPDecisionTreeClassifier(bounds=b, classes=[0, 1, 2], split_utility="info_gain").fit(X, y)


def test_single_class_and_unseen_categories():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    n = 400
    colour = pd.Categorical(rng.choice(["red", "green", "blue"], n), categories=["red", "green", "blue"])
    x = rng.uniform(0, 10, n)
    y = np.where(np.asarray(colour) == "red", "a", "b")
    df = pd.DataFrame({"colour": colour, "x": x})
    clf = DPDecisionTreeClassifier(epsilon=100.0, max_depth=1, bounds={"x": (0, 10)}, classes=["a", "b"],
                                   random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        clf.fit(df, y)
    assert list(clf.feature_names_in_) == ["colour", "x"]
    assert clf.tree_.feature[0] == 0  # splits on the colour
    assert clf.score(df, y) == 1.0
    # an unseen category follows the child with the largest noisy count
    test = pd.DataFrame({"colour": pd.Categorical(["purple"], categories=["purple"]), "x": [5.0]})
    leaf = clf.apply(test)[0]
    tr = clf.tree_
    assert leaf == tr.leaf[tr.default_child[0]]
    assert tr.default_child[0] == 1 + int(np.argmax(tr.noisy_count[1:4]))
    # a single class: every prediction is that class
    one = DPDecisionTreeClassifier(bounds={"x": (0, 10)}, random_state=0).fit(df, np.full(n, "z"))
    assert set(one.predict(df)) == {"z"}


def test_object_columns_and_declared_categories():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"s": ["u", "v", "u", "w"] * 50, "x": np.arange(200.0)})
    y = (df["s"] == "u").to_numpy().astype(int)
    with pytest.warns(PrivacyLeakWarning, match="categories"):
        DPDecisionTreeClassifier(bounds={"x": (0, 200)}, classes=[0, 1]).fit(df, y)
    clf = DPDecisionTreeClassifier(bounds={"x": (0, 200)}, classes=[0, 1],
                                   categorical_features={"s": ["u", "v", "w", "z"]}, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        clf.fit(df, y)
    assert clf._schema.n_categories.tolist() == [4]
    with pytest.raises(ValueError, match="outside its declared categories"):
        DPDecisionTreeClassifier(bounds={"x": (0, 200)}, classes=[0, 1],
                                 categorical_features={"s": ["u", "v"]}).fit(df, y)


# ---------------------------------------------------------------------------
# privacy
# ---------------------------------------------------------------------------

def _node_data():
    # 6 records, 3 binary attributes, 2 classes (attribute 0 predicts the class)
    codes = np.array([[0, 0, 1], [0, 1, 0], [0, 0, 0], [1, 1, 1], [1, 0, 0], [1, 0, 1]])
    y = np.array([0, 0, 0, 1, 1, 0])
    return codes, y, np.array([2, 2, 2]), 2


@pytest.mark.parametrize("selection", SELECTIONS)
@pytest.mark.parametrize("split_utility", ["max_operator", "info_gain"])
def test_audit_split_selection(selection, split_utility):
    """Exact audit of the problem a depth-1 tree builds at its root, over all add/remove neighbours."""
    codes, y, nv, C = _node_data()
    eps = 0.7
    delta = 1e-3 if selection in ("snm_laplace", "snm_lln") else 0.0
    mech = make_mechanism(selection, eps, delta)
    n_max = 50
    x = split_problem(codes, y, nv, C, selection, split_utility, n_max=n_max)
    pairs = [(x, split_problem(c, yy, nv, C, selection, split_utility, n_max=n_max))
             for c, yy in node_neighbours(codes, y, nv, C)]
    rep = audit(mech, pairs)
    assert not rep.violates, str(rep)
    assert rep.claimed.epsilon <= eps * (1 + 1e-9)
    if delta == 0.0:
        assert rep.max_loss <= eps * (1 + 1e-9)


def test_split_problem_matches_the_tree():
    """The tree's root selection is the public split_problem on the root's records."""
    codes, y, nv, C = _node_data()
    X = np.repeat(codes, 40, axis=0).astype(float)
    yy = np.repeat(y, 40)
    clf = DPDecisionTreeClassifier(epsilon=30.0, max_depth=1, n_bins=2, bounds=(0.0, 1.0), classes=[0, 1],
                                   selection="em", random_state=0).fit(X, yy)
    pr = split_problem(np.repeat(codes, 40, axis=0), yy, nv, C, "em")
    np.testing.assert_array_equal(pr.scores, [200.0, 160.0, 160.0])  # MaxOp per attribute
    assert clf.tree_.feature[0] == 0


def test_indicator_sensitivity_is_computed_at_the_node():
    codes, y, nv, C = _node_data()
    big = np.repeat(codes, 10, axis=0)
    pr = split_problem(big, np.repeat(y, 10), nv, C, "snm_t")
    mo = np.array([50.0, 40.0, 40.0])
    np.testing.assert_array_equal(pr.scores, [1.0, 0.0, 0.0])
    beta = 0.01
    assert math.isclose(pr.smooth_sensitivity(beta), math.exp(-beta * (mo[0] - mo[1] - 1)))


def test_info_gain_element_sensitivity_brute_force():
    """delta(T, t, A) upper-bounds the exact LS over all node datasets within t steps (and equals LS at t=0)."""
    rng = np.random.default_rng(1)
    for _ in range(6):
        tab = rng.integers(0, 4, size=(1, 2, 2))  # one attribute, 2 values, 2 classes

        def moves(t):
            """Tables one add/remove away: one cell +-1, staying non-negative."""
            for j in range(2):
                for c in range(2):
                    for d in (1, -1):
                        if t[0, j, c] + d >= 0:
                            u = t.copy()
                            u[0, j, c] += d
                            yield u

        def ls(t):
            q0 = info_gain(t)[0]
            return max(abs(info_gain(u)[0] - q0) for u in moves(t))

        frontier = {tab.tobytes(): tab}
        exact = [ls(tab)]
        for step in range(1, 4):
            new = {u.tobytes(): u for t in frontier.values() for u in moves(t)}
            frontier.update(new)
            exact.append(max(ls(t) for t in frontier.values()))
        prof = info_gain_element_sensitivity(tab, horizon=3)[:, 0]
        assert abs(prof[0] - exact[0]) < 1e-9
        assert (prof >= np.array(exact) - 1e-9).all()
        assert (np.diff(prof) >= 0).all()
        assert prof.max() <= info_gain_sensitivity(tab.sum() + 3) + 1e-9


def test_privacy_is_the_composition_of_what_was_spent():
    X, y, b = _blobs()
    X = np.vstack([X] * 20)
    y = np.tile(y, 20)
    for selection in ("snm_laplace", "snm_t", "em"):
        clf = DPDecisionTreeClassifier(epsilon=2.0, max_depth=2, n_bins=4, bounds=b, classes=[0, 1, 2],
                                       selection=selection, delta=1e-6, random_state=0).fit(X, y)
        assert clf.tree_.max_depth == 2  # grew to full depth
        spent = sum(clf.level_privacy_[1:], clf.level_privacy_[0])
        assert math.isclose(spent.epsilon, clf.privacy_.epsilon, rel_tol=1e-9)
        assert math.isclose(spent.delta, clf.privacy_.delta, rel_tol=1e-9, abs_tol=1e-18)
        assert math.isclose(clf.privacy_.epsilon, 2.0, rel_tol=1e-9)
        assert clf.privacy_.relation == "add_remove"
        assert clf.privacy_.delta <= 1e-6 * (1 + 1e-9)
        assert math.isclose(clf.epsilon_per_query_, 2.0 / 6)
        if selection != "snm_laplace":
            assert clf.privacy_.delta == 0.0
        else:
            assert clf.privacy_.delta > 0
    # a stump on data too small to split: spends less than the a-priori guarantee
    clf = DPDecisionTreeClassifier(epsilon=0.1, bounds=b, classes=[0, 1, 2], random_state=0).fit(X[:50], y[:50])
    assert clf.tree_.node_count == 1
    assert sum(clf.level_privacy_[1:], clf.level_privacy_[0]).epsilon < clf.privacy_.epsilon


# ---------------------------------------------------------------------------
# accuracy (printed table; the SNM-vs-EM/PF comparison is reported, see below)
# ---------------------------------------------------------------------------

def _cv_accuracy(make, X, y, folds=5, seed=0):
    accs = []
    for i, (tr, te) in enumerate(StratifiedKFold(folds, shuffle=True, random_state=seed).split(X, y)):
        clf = make(i).fit(X[tr], y[tr])
        accs.append(clf.score(X[te], y[te]))
    return float(np.mean(accs))


def _bundled():
    bc = load_breast_cancer()
    # "public" bounds for breast cancer: the data's min/max rounded outward (documented stand-in for
    # domain knowledge; strictly speaking they come from the data)
    lo = np.floor(bc.data.min(axis=0))
    hi = np.ceil(bc.data.max(axis=0))
    hi = np.where(hi > lo, hi, lo + 1)
    dg = load_digits()
    return {
        "breast_cancer": (bc.data, bc.target, np.column_stack([lo, hi]), [0, 1]),
        "digits": (dg.data, dg.target, (0.0, 16.0), list(range(10))),
    }


TREE_PARAMS = dict(max_depth=2, n_bins=4)


def _tree_table(datasets, epsilons, reps=1):
    rows = {}
    for name, (X, y, b, classes) in datasets.items():
        for eps in epsilons:
            for sel in SELECTIONS:
                util = "info_gain" if sel == "ld" else "max_operator"

                def make(i, sel=sel, util=util, eps=eps):
                    return DPDecisionTreeClassifier(epsilon=eps, selection=sel, split_utility=util,
                                                    n_max=len(X), bounds=b, classes=classes,
                                                    random_state=1000 * i + 7, **TREE_PARAMS)

                rows[(name, eps, sel)] = np.mean([_cv_accuracy(make, X, y, seed=r) for r in range(reps)])
    return rows


def _print_table(title, rows, epsilons, columns=SELECTIONS):
    names = sorted({k[0] for k in rows})
    print(f"\n{title}")
    print(f"{'dataset':<14} {'eps':>5} " + " ".join(f"{s:>11}" for s in columns))
    for name in names:
        for eps in epsilons:
            print(f"{name:<14} {eps:>5} " + " ".join(f"{rows[(name, eps, s)]:>11.3f}" for s in columns))


def test_accuracy_bundled_datasets():
    epsilons = (0.1, 1.0)
    rows = _tree_table(_bundled(), epsilons)
    _print_table("DiffP-ID3, 5-fold accuracy (max_depth=2, n_bins=4; ld uses info_gain)", rows, epsilons)
    # every configuration beats chance on digits at eps = 1 ...
    for sel in SELECTIONS:
        assert rows[("digits", 1.0, sel)] > 0.15
    # ... and the trees learn something on breast cancer at eps = 1 (majority class: 0.63)
    assert np.mean([rows[("breast_cancer", 1.0, s)] for s in SELECTIONS]) > 0.7
    # What is true under the proven calibrations (see the report): the exponential mechanism on the
    # monotone max-operator score is at least as accurate as the smooth mechanisms on its indicator.
    snm = np.mean([rows[(n, e, s)] for n in ("breast_cancer", "digits") for e in epsilons
                   for s in ("snm_t", "snm_lln", "snm_laplace")])
    em_pf = np.mean([rows[(n, e, s)] for n in ("breast_cancer", "digits") for e in epsilons for s in ("em", "pf")])
    print(f"mean accuracy: SNM variants {snm:.3f}, EM/PF {em_pf:.3f}")
    # The paper's claim (SNM >= EM) does NOT hold under the proven calibration: the smoothing parameter is
    # beta = (1 - kappa) eps' / (m L_d) with m = number of attributes, so S = e^{-beta max(k - 1, 0)} stays ~1
    # unless the max-operator gap k is in the thousands, and the noise on the 0/1 indicator is ~S/A >> 1,
    # while the exponential mechanism on the (monotone) max-operator score uses the gap directly.
    assert em_pf > snm


def _real_datasets(data_dir):
    """NLTCS, ACS (binary attributes: domain {0, 1}), Adult (adult_clean), Mushroom.

    Stand-ins for public domain knowledge, taken from the files (documented, not private-safe): Adult's
    numeric bounds are the data's min/max rounded outward and the categorical domains of Adult and
    Mushroom are the categories present in the files (UCI publishes these domains).
    """
    pd = pytest.importorskip("pandas")
    out = {}
    for name, label in (("nltcs", "15"), ("acs", "22")):
        df = pd.read_csv(os.path.join(data_dir, name, f"{name}.csv"))
        y = df[label].to_numpy()
        X = df.drop(columns=[label])
        X = X.astype("category").apply(lambda s: s.cat.set_categories([0, 1]))  # public binary domains
        out[name] = (X, y, None, [0, 1])
    adult = pd.read_parquet(os.path.join(data_dir, "adult", "adult_clean.parquet"))
    adult = adult.drop(columns=[c for c in ("index",) if c in adult.columns])
    y = (adult["income"].astype(str).str.contains(">")).astype(int).to_numpy()
    X = adult.drop(columns=["income"])
    bounds = {c: (float(np.floor(X[c].min())), float(np.ceil(X[c].max())))
              for c in X.columns if pd.api.types.is_numeric_dtype(X[c])}
    for c in X.columns:
        if not pd.api.types.is_numeric_dtype(X[c]):
            X[c] = X[c].astype("category")
    out["adult"] = (X, y, bounds, [0, 1])
    mush = pd.read_csv(os.path.join(data_dir, "mushroom", "mushroom.csv"))
    y = (mush.iloc[:, 0].astype(str) == "p").astype(int).to_numpy()
    out["mushroom"] = (mush.iloc[:, 1:].astype(str).astype("category"), y, None, [0, 1])
    return out


@pytest.mark.skipif(not os.environ.get("DPSELECT_DATA"), reason="DPSELECT_DATA is not set")
def test_accuracy_real_datasets():
    data = _real_datasets(os.environ["DPSELECT_DATA"])
    epsilons = (0.1, 1.0)
    rows = {}
    for name, (X, y, b, classes) in data.items():
        for eps in epsilons:
            for sel in SELECTIONS:
                util = "info_gain" if sel == "ld" else "max_operator"

                def make(i, sel=sel, util=util, eps=eps, X=X, b=b, classes=classes):
                    return DPDecisionTreeClassifier(epsilon=eps, selection=sel, split_utility=util, max_depth=5,
                                                    n_max=len(X), bounds=b, classes=classes,
                                                    random_state=1000 * i + 7)

                accs = []
                for i, (tr, te) in enumerate(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y)):
                    clf = make(i).fit(X.iloc[tr], y[tr])
                    accs.append(clf.score(X.iloc[te], y[te]))
                rows[(name, eps, sel)] = float(np.mean(accs))
    _print_table("DiffP-ID3 on the paper datasets, 5-fold accuracy (max_depth=5, n_bins=20)", rows, epsilons)
    for name in data:
        assert max(rows[(name, 1.0, s)] for s in SELECTIONS) > 0.5
