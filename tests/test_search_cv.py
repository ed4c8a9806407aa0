"""DPSearchCV and the repetition law behind it: exact audit of the selection step, refusals, accounting."""

from __future__ import annotations

import itertools
import math
import warnings

import mpmath
import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.datasets import load_breast_cancer
from sklearn.utils.estimator_checks import parametrize_with_checks

from conftest import assert_frequencies_match
from dpselect._warnings import PrivacyLeakWarning
from dpselect.accounting import Accountant, BudgetExceededError
from dpselect.analysis import audit
from dpselect.apps.trees import DPDecisionTreeClassifier, DPSearchCV
from dpselect.apps.trees._search.repeat import (
    expected_repetitions,
    gamma_for_mean,
    repetition_epsilon,
    sample_repetitions,
)
from dpselect.privacy import Privacy
from dpselect.problem import SelectionProblem

# ---------------------------------------------------------------------------
# the exact law of the best of K runs (verification only)


def repetition_pgf(x, eta, gamma):
    """G(x) = E[x^K] for x in [0, 1] (dpselect.apps.trees._search.repeat's docstring), in log1p / expm1 form."""
    x = np.asarray(x, dtype=np.float64)
    z = np.log1p(-(1.0 - gamma) * x)
    if eta == 0.0:
        return z / math.log(gamma)
    return np.expm1(-eta * z) / math.expm1(-eta * math.log(gamma))


def best_of_law(p, eta, gamma):
    """Exact law of the best of K ~ D_{eta, gamma} runs, outcomes listed worst to best with base law ``p``."""
    p = np.asarray(p, dtype=np.float64)
    F = np.concatenate([[0.0], np.cumsum(p)])
    F[-1] = min(F[-1], 1.0)
    return np.diff(repetition_pgf(F, eta, gamma))


# ---------------------------------------------------------------------------
# the law of K
# ---------------------------------------------------------------------------


def _pmf(k: int, eta: float, gamma: float) -> float:
    """P[K = k] of D_{eta, gamma} from its definition (mpmath, product form; eta = 0: logarithmic)."""
    with mpmath.workdps(40):
        g = mpmath.mpf(gamma)
        if eta == 0:
            return float((1 - g) ** k / (k * mpmath.log(1 / g)))
        prod = mpmath.fprod([(mpmath.mpf(ell) + eta) / (ell + 1) for ell in range(k)])
        return float((1 - g) ** k * prod / (g ** (-mpmath.mpf(eta)) - 1))


@pytest.mark.parametrize(("eta", "gamma"), [(0.0, 0.2), (0.5, 0.3), (1.0, 0.25), (2.0, 0.4)])
def test_pgf_and_mean_match_the_definition(eta, gamma):
    ks = np.arange(1, 400)
    pmf = np.array([_pmf(int(k), eta, gamma) for k in ks])
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12)
    assert expected_repetitions(eta, gamma) == pytest.approx(float((ks * pmf).sum()), rel=1e-10)
    for x in (0.0, 0.3, 0.9, 1.0):
        assert float(repetition_pgf(x, eta, gamma)) == pytest.approx(float((pmf * x**ks).sum()), abs=1e-12)


@pytest.mark.parametrize(("eta", "gamma"), [(0.0, 0.15), (1.0, 0.3), (0.5, 0.2)])
def test_sampler_follows_the_law(eta, gamma):
    rng = np.random.default_rng(1)
    draws = np.array([sample_repetitions(eta, gamma, rng=rng) for _ in range(20_000)])
    assert draws.min() >= 1
    top = 25
    probs = np.array([_pmf(k, eta, gamma) for k in range(1, top)])
    probs = np.append(probs, 1.0 - probs.sum())  # tail bucket
    assert_frequencies_match(np.minimum(draws, top) - 1, probs)


def test_gamma_for_mean_inverts_the_mean():
    for eta in (0.0, 0.5, 1.0, 3.0):
        for mean in (1.5, 6.0, 40.0):
            assert expected_repetitions(eta, gamma_for_mean(eta, mean)) == pytest.approx(mean, rel=1e-9)
    with pytest.raises(ValueError, match="mean"):
        gamma_for_mean(1.0, 1.0)


# ---------------------------------------------------------------------------
# exact audit of the selection step on a toy: 3 candidates, binary scores
# ---------------------------------------------------------------------------


class _RepeatedToy:
    """Best of K runs of Q: pick candidate j uniformly, release (j, s_j) with s_j = RR_eps(b_j).

    The problem's scores are the data bits b in {0, 1}^3.  Q is eps-DP between ANY two bit vectors (j is
    data-independent and randomised response is eps-DP per bit), so every pair of vectors is a valid
    neighbouring pair for the claim.  Outcomes (j, s) are ranked by s, ties by the smaller j winning.
    """

    def __init__(self, eps: float, eta: float, gamma: float):
        self.eps, self.eta, self.gamma = eps, eta, gamma
        self.order = sorted(itertools.product(range(3), (0, 1)), key=lambda o: (o[1], -o[0]))  # worst to best

    def base_law(self, bits: np.ndarray) -> np.ndarray:
        p1 = np.where(bits == 1, math.exp(self.eps), 1.0) / (1.0 + math.exp(self.eps))
        return np.array([(p1[j] if s else 1.0 - p1[j]) / 3.0 for j, s in self.order])

    def log_probabilities(self, problem: SelectionProblem) -> np.ndarray:
        return np.log(best_of_law(self.base_law(np.asarray(problem.scores)), self.eta, self.gamma))

    def privacy(self, problem: SelectionProblem) -> Privacy:
        return Privacy(repetition_epsilon(self.eps, self.eta), 0.0, "add_remove")

    def sample(self, bits: np.ndarray, rng: np.random.Generator) -> int:
        k = sample_repetitions(self.eta, self.gamma, rng=rng)
        p = self.base_law(bits)
        return int(rng.choice(p.size, size=k, p=p).max())  # outcomes are listed worst to best


def _toy_pairs():
    vecs = [SelectionProblem(np.array(b, dtype=np.float64)) for b in itertools.product((0, 1), repeat=3)]
    return [(x, y) for x in vecs for y in vecs if x is not y]


@pytest.mark.parametrize(("eta", "gamma"), [(0.0, 0.05), (0.0, 0.5), (0.5, 0.1), (1.0, 0.1), (1.0, 0.6), (2.0, 0.2)])
@pytest.mark.parametrize("eps", [0.3, 1.0, 2.5])
def test_exact_audit_of_repeated_selection(eps, eta, gamma):
    toy = _RepeatedToy(eps, eta, gamma)
    pairs = _toy_pairs()
    law = np.exp(toy.log_probabilities(pairs[0][0]))
    assert law.sum() == pytest.approx(1.0, abs=1e-12)
    report = audit(toy, pairs)  # claim: (2 + eta) eps
    assert not report.violates, report
    assert report.max_loss > eps  # repetition does cost more than one run: the claim is not vacuous here
    # negative control: claiming the base epsilon only is caught
    assert audit(toy, pairs, claimed=Privacy(eps, 0.0, "add_remove")).violates


def test_toy_sampler_follows_the_exact_law():
    toy = _RepeatedToy(1.0, 0.0, 0.1)
    bits = np.array([1, 0, 1])
    rng = np.random.default_rng(7)
    draws = np.array([toy.sample(bits, rng) for _ in range(20_000)])
    assert_frequencies_match(draws, best_of_law(toy.base_law(bits), 0.0, 0.1))


# ---------------------------------------------------------------------------
# DPSearchCV
# ---------------------------------------------------------------------------


def _data():
    X, y = load_breast_cancer(return_X_y=True)
    bounds = [(float(lo), float(hi)) for lo, hi in zip(X.min(axis=0), X.max(axis=0))]
    return X, y, DPDecisionTreeClassifier(bounds=bounds, classes=[0, 1], n_records=569)


GRID = {"max_depth": [1, 2, 3], "n_bins": [8, 16]}


@parametrize_with_checks([DPSearchCV(DPDecisionTreeClassifier(), {"max_depth": [1, 2]}, epsilon=4.0)])
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        check(estimator)


@pytest.mark.parametrize(
    ("method", "eta", "factor"),
    [("papernot_steinke", 0.0, 2.0), ("papernot_steinke", 0.5, 2.5), ("liu_talwar", 0.0, 3.0)],
)
def test_budget_per_run_and_total(method, eta, factor):
    X, y, tree = _data()
    s = DPSearchCV(tree, GRID, epsilon=3.0, method=method, eta=eta, random_state=0).fit(X, y)
    assert s.privacy_.epsilon == 3.0 and s.privacy_.delta == 0.0
    assert s.epsilon_per_run_ == pytest.approx(3.0 / factor, rel=1e-15)
    assert factor * s.epsilon_per_run_ <= 3.0
    assert s.best_estimator_.privacy_.epsilon <= s.epsilon_per_run_ * (1 + 1e-12)
    assert s.best_params_ in [dict(zip(GRID, v)) for v in itertools.product(*GRID.values())]
    np.testing.assert_array_equal(s.predict(X), s.best_estimator_.predict(X))
    assert s.score(X, y) > 0.8


def test_seed_reproduces():
    X, y, tree = _data()
    a = DPSearchCV(tree, GRID, epsilon=2.0, random_state=3).fit(X, y)
    b = DPSearchCV(tree, GRID, epsilon=2.0, random_state=3).fit(X, y)
    assert a.best_params_ == b.best_params_ and a.best_noisy_correct_ == b.best_noisy_correct_
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def test_the_number_of_runs_is_not_released():
    X, y, tree = _data()
    s = DPSearchCV(tree, GRID, epsilon=2.0, random_state=0).fit(X, y)
    fitted = {k for k in vars(s) if k.endswith("_") and not k.startswith("_")}
    assert fitted <= {
        "privacy_",
        "epsilon_per_run_",
        "delta_per_run_",
        "best_noisy_correct_",
        "best_estimator_",
        "best_params_",
        "classes_",
        "n_features_in_",
        "feature_names_in_",
    }


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"param_grid": {"epsilon": [1.0, 2.0]}}, "epsilon"),
        ({"param_grid": {"random_state": [1]}}, "random_state"),
        ({"param_grid": {"nope": [1]}}, "nope"),
        ({"param_grid": {}}, "at least one"),
        ({"param_grid": {"mechanism": ["pf", "snm_laplace"]}}, "delta > 0"),
        ({"param_grid": {"accountant": [None]}}, "accountant"),
        ({"method": "other"}, "method"),
        ({"eta": -0.5}, "eta"),
        ({"n_splits": 1}, "n_splits"),
        ({"mean_repetitions": 1.0}, "mean_repetitions"),
        ({"epsilon": 0.0}, "epsilon"),
        ({"delta": 1.5}, "delta"),
    ],
)
def test_refusals_before_any_randomness(kwargs, match):
    X, y, tree = _data()
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    args = {"param_grid": GRID, "epsilon": 1.0, **kwargs}
    grid = args.pop("param_grid")
    with pytest.raises(ValueError, match=match):
        DPSearchCV(tree, grid, random_state=gen, **args).fit(X, y)
    assert gen.bit_generator.state == state


def test_accountant_charged_first():
    X, y, tree = _data()
    acc = Accountant(2.0)
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    with pytest.raises(BudgetExceededError):
        DPSearchCV(tree, GRID, epsilon=3.0, random_state=gen, accountant=acc).fit(X, y)
    assert gen.bit_generator.state == state
    s = DPSearchCV(tree, GRID, epsilon=1.5, random_state=gen, accountant=acc).fit(X, y)
    assert acc.spent.epsilon == pytest.approx(1.5) and s.privacy_.epsilon == 1.5
    with pytest.raises(TypeError, match="accountant"):
        DPSearchCV(tree, GRID, epsilon=1.0, accountant="x").fit(X, y)


def test_inner_accountant_not_charged():
    """The runs are clones with accountant=None: only the search's own total is charged, once."""
    X, y, tree = _data()
    inner, outer = Accountant(50.0), Accountant(2.0)
    s = DPSearchCV(
        tree.set_params(accountant=inner), GRID, epsilon=1.5, mean_repetitions=6, random_state=0, accountant=outer
    ).fit(X, y)
    assert inner.spent.epsilon == 0.0 and outer.spent.epsilon == pytest.approx(1.5)
    assert s.best_estimator_.accountant is None
    assert tree.accountant is inner  # the user's estimator is left as it was
    DPSearchCV(tree, GRID, epsilon=1.0, mean_repetitions=6, random_state=1).fit(X, y)  # no accountant at all
    assert inner.spent.epsilon == 0.0


def test_schema_leak_warned_once():
    X, y, _ = _data()
    tree = DPDecisionTreeClassifier(bounds=(0.0, 5000.0), n_records=569)  # classes inferred: leaks
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = DPSearchCV(tree, GRID, epsilon=2.0, mean_repetitions=12, random_state=0).fit(X, y)
    leaks = [str(w.message) for w in caught if issubclass(w.category, PrivacyLeakWarning)]
    # the search's own (known before the runs: no guarantee), and the candidates' leak (the same text
    # for every run) once
    assert len(leaks) == 2 and "no guarantee" in leaks[0] and "classes" in leaks[1], leaks
    assert math.isinf(s.privacy_.epsilon) and math.isinf(s.best_estimator_.privacy_.epsilon)


def test_inferred_schema_refuses_a_finite_accountant_before_charging():
    X, y, _ = _data()
    budget = Accountant(10.0)
    tree = DPDecisionTreeClassifier(bounds=(0.0, 5000.0), n_records=569)  # classes inferred
    search = DPSearchCV(tree, GRID, epsilon=2.0, mean_repetitions=6, random_state=0, accountant=budget)
    with pytest.raises(BudgetExceededError, match="classes"):
        search.fit(X, y)
    assert budget.spent.epsilon == 0.0 and not hasattr(search, "best_estimator_")
    # the same search with public classes is charged its epsilon
    public = DPDecisionTreeClassifier(bounds=(0.0, 5000.0), n_records=569, classes=np.unique(y))
    DPSearchCV(public, GRID, epsilon=2.0, mean_repetitions=6, random_state=0, accountant=budget).fit(X, y)
    assert budget.spent.epsilon == pytest.approx(2.0)
    # an infinite budget takes the no-guarantee search (epsilon = inf) as before
    unlimited = Accountant(math.inf)
    s = DPSearchCV(tree, GRID, epsilon=2.0, mean_repetitions=6, random_state=0, accountant=unlimited)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        s.fit(X, y)
    assert math.isinf(s.privacy_.epsilon)
