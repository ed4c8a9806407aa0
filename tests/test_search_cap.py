"""DPSearchCV fits a public number of candidates (the cap T), whatever the hidden K; the capped law's bound."""

from __future__ import annotations

import itertools
import math
import warnings

import mpmath
import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.datasets import load_breast_cancer

from dpselect.analysis import audit
from dpselect.apps.trees import DPDecisionTreeClassifier, DPSearchCV
from dpselect.apps.trees._search.plan import capped_epsilon, default_max_runs
from dpselect.apps.trees._search.repeat import gamma_for_mean, repetition_epsilon
from dpselect.privacy import Privacy
from dpselect.problem import SelectionProblem


class CountingTree(DPDecisionTreeClassifier):
    """The search's base estimator, counting its fits (class-level: the search fits clones)."""

    fits = 0

    def fit(self, X, y, accountant=None):
        type(self).fits += 1
        return super().fit(X, y, accountant=accountant)


def _data(n=None):
    X, y = load_breast_cancer(return_X_y=True)
    if n is not None:
        X, y = X[:n], y[:n]
    bounds = [(float(lo), float(hi)) for lo, hi in zip(X.min(axis=0), X.max(axis=0))]
    return X, y, bounds


def _fit_counts(seeds, X, y, bounds, **kw):
    counts = []
    for seed in seeds:
        CountingTree.fits = 0
        base = CountingTree(bounds=bounds, classes=[0, 1], n_records=569)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            DPSearchCV(base, {"max_depth": [1, 2, 3]}, epsilon=2.0, random_state=seed, **kw).fit(X, y)
        counts.append(CountingTree.fits)
    return counts


def test_fit_counts_do_not_follow_k():
    """The issue's check: six seeds gave 3, 4, 4, 1, 4, 1 fits; now every seed and dataset fits T."""
    X, y, bounds = _data()
    counts = _fit_counts(range(6), X, y, bounds)
    T = default_max_runs(0.0, gamma_for_mean(0.0, 6.0))  # E[K] = twice the 3 configurations
    assert counts == [T] * 6
    Xs, ys, _ = _data(300)  # another dataset, the same public parameters
    assert _fit_counts(range(3), Xs, ys, bounds) == [T] * 3
    assert _fit_counts(range(3), X, y, bounds, max_runs=4, method="liu_talwar") == [4] * 3


def test_default_cap_keeps_the_budget_per_run():
    X, y, bounds = _data()
    s = DPSearchCV(
        DPDecisionTreeClassifier(bounds=bounds, classes=[0, 1], n_records=569), {"max_depth": [1, 2]}, epsilon=3.0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s.fit(X, y)
    assert s.epsilon_per_run_ == pytest.approx(1.5) and s.privacy_.epsilon == 3.0


def _pmf(k, eta, gamma):
    with mpmath.workdps(40):
        g = mpmath.mpf(gamma)
        if eta == 0:
            return float((1 - g) ** k / (k * mpmath.log(1 / g)))
        prod = mpmath.fprod([(mpmath.mpf(ell) + eta) / (ell + 1) for ell in range(k)])
        return float((1 - g) ** k * prod / (g ** (-mpmath.mpf(eta)) - 1))


class _CappedToy:
    """Best of min(K, T) runs of randomised response on one of 3 bits (eps-DP between ANY two bit vectors)."""

    def __init__(self, eps, eta, gamma, T):
        self.eps, self.T = eps, T
        p = [_pmf(k, eta, gamma) for k in range(1, T)]
        self.pk = np.array([*p, 1.0 - sum(p)])  # P[K' = k], k = 1..T
        self.order = sorted(itertools.product(range(3), (0, 1)), key=lambda o: (o[1], -o[0]))

    def log_probabilities(self, problem):
        bits = np.asarray(problem.scores)
        p1 = np.where(bits == 1, math.exp(self.eps), 1.0) / (1.0 + math.exp(self.eps))
        base = np.array([(p1[j] if s else 1.0 - p1[j]) / 3.0 for j, s in self.order])
        F = np.minimum(np.concatenate([[0.0], np.cumsum(base)]), 1.0)
        G = sum(pk * F ** (k + 1) for k, pk in enumerate(self.pk))
        return np.log(np.diff(G))

    def privacy(self, problem):
        return Privacy(self.eps, 0.0, "add_remove")


@pytest.mark.parametrize(("eta", "mean"), [(0.0, 6.0), (1.0, 6.0), (0.5, 4.0)])
@pytest.mark.parametrize("T", [2, 6, 12])
@pytest.mark.parametrize("eps", [0.3, 1.0, 2.5])
def test_capped_law_bound_holds_on_an_exact_audit(eps, eta, mean, T):
    """The exact law of the capped best-of on every pair of bit vectors stays within capped_epsilon."""
    gamma = gamma_for_mean(eta, mean)
    toy = _CappedToy(eps, eta, gamma, T)
    vecs = [SelectionProblem(np.array(b, dtype=np.float64)) for b in itertools.product((0, 1), repeat=3)]
    pairs = [(x, y) for x in vecs for y in vecs if x is not y]
    bound = capped_epsilon(eps, eta, gamma, T)
    report = audit(toy, pairs, claimed=Privacy(bound, 0.0, "add_remove"))
    assert not report.violates, report
    assert report.max_loss > eps  # the runs do cost more than one: the bound is not vacuous
    assert audit(toy, pairs, claimed=Privacy(eps, 0.0, "add_remove")).violates  # negative control


def test_capped_bound_tends_to_the_uncapped_theorem():
    """A large cap gives at most the theorems' (2 + eta) eps_0 (Papernot-Steinke; Liu-Talwar for eta = 1)."""
    for eta, mean in ((0.0, 6.0), (1.0, 6.0), (2.0, 3.0)):
        gamma = gamma_for_mean(eta, mean)
        for eps in (0.1, 1.0):
            assert capped_epsilon(eps, eta, gamma, 400) <= repetition_epsilon(eps, eta) + 1e-9
