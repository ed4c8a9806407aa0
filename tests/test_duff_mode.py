"""Duff mode on the library's exponential mechanism (SPEC.md §6.1, §9.1): utility, law, exact audits."""

from __future__ import annotations

import itertools
import warnings
from collections import deque

import numpy as np
import pytest

import dpselect
from conftest import CachedMechanism, assert_frequencies_match
from dpselect._warnings import PrivacyLeakWarning
from dpselect.analysis.audit import audit
from dpselect.apps import counts as M
from dpselect.privacy import Privacy

# ---------------------------------------------------------------------------
# Duff mode
# ---------------------------------------------------------------------------


def bfs_mode_distance(data, v, domain):
    """min #add/remove so that v is a mode (ties in v's favour); BFS on count vectors."""
    vals = sorted(set(domain) | set(data) | {v})
    start = tuple(int(sum(1 for d in data if d == w)) for w in vals)
    iv = vals.index(v)
    seen = {start: 0}
    q = deque([start])
    while q:
        c = q.popleft()
        if c[iv] == max(c):
            return seen[c]
        for i in range(len(c)):
            for dlt in (-1, 1):
                if c[i] + dlt < 0:
                    continue
                nc = (*c[:i], c[i] + dlt, *c[i + 1 :])
                if nc not in seen:
                    seen[nc] = seen[c] + 1
                    q.append(nc)
    raise AssertionError


def test_duff_mode_utility_bfs():
    rng = np.random.default_rng(8)
    cands = np.arange(5.0)
    for _ in range(40):
        x = rng.integers(0, 7, size=int(rng.integers(0, 7))).astype(float)  # values 5, 6: not candidates
        res = M.duff_mode_utility(x, candidates=cands)
        for v, uv in zip(res.candidates, res.utility):
            assert -bfs_mode_distance(list(x), v, list(cands)) == uv


def test_duff_mode_probabilities_and_sampling():
    x = [1, 1, 1, 2, 2, 3, 7, 7, 7, 7]
    cands = [1, 2, 3, 4]
    u = np.array([3 - 4, 2 - 4, 1 - 4, 0 - 4], dtype=float)  # n_max = 4 from the non-candidate 7
    for monotone, factor in ((True, 1.0), (False, 0.5)):  # exp(eps u) (default) / the paper's exp(eps u / 2)
        p = M.duff_mode_probabilities(x, 1.0, candidates=cands, monotone=monotone)
        assert isinstance(p, dpselect.OutputLaw)
        c = p.support
        np.testing.assert_array_equal(c, cands)
        w = np.exp(factor * u)
        np.testing.assert_allclose(p, w / w.sum(), rtol=1e-12)
        draws = M.duff_mode(x, 1.0, rng=3, candidates=cands, size=100_000, monotone=monotone)
        idx = np.searchsorted(c, draws)
        assert_frequencies_match(idx, p)
    ones = [M.duff_mode(x, 1.0, rng=s, candidates=cands) for s in range(4000)]
    assert_frequencies_match(np.searchsorted(c, ones), M.duff_mode_probabilities(x, 1.0, candidates=cands))


def test_duff_mode_warns_without_public_candidates():
    with pytest.warns(PrivacyLeakWarning):
        law = M.duff_mode_probabilities([1, 1, 2], 1.0)
    np.testing.assert_array_equal(law.support, [1.0, 2.0])
    with pytest.warns(PrivacyLeakWarning):
        M.duff_mode([1, 1, 2], 1.0, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        M.duff_mode([1, 1, 2], 1.0, rng=0, candidates=[1, 2])


def test_duff_mode_without_public_candidates_reports_no_guarantee():
    """The data's own values as outputs are not DP (SPEC errata 16): no finite epsilon, any budget refuses it."""
    import math

    from dpselect import ExponentialMechanism
    from dpselect.accounting import Accountant, BudgetExceededError

    with pytest.warns(PrivacyLeakWarning):
        problem = M.mode_problem([1, 1, 5])
    assert math.isinf(ExponentialMechanism(1.0).privacy(problem).epsilon)
    acc = Accountant(100.0)
    with pytest.warns(PrivacyLeakWarning), pytest.raises(BudgetExceededError):
        M.duff_mode([1, 1, 5], 1.0, rng=0, accountant=acc)
    assert acc.charges == ()
    assert ExponentialMechanism(1.0).privacy(M.mode_problem([1, 1, 5], candidates=[1, 5])).epsilon == 1.0


def _mode_pairs(candidates, monotone=True, relation="add_remove"):
    """(mode problem of x, of y) over all neighbours of every multiset of size <= 4 on 0..5.

    Values 5 and 6 are not candidates (they still count towards n_max).
    add/remove: remove one record or add one in 0..6; replace: change one record to another value in 0..6.
    """

    cache = {}

    def prob(data):
        key = tuple(sorted(data))
        if key not in cache:
            cache[key] = M.mode_problem(data, candidates=candidates, monotone=monotone)
        return cache[key]

    for n in range(0, 5):
        for x in itertools.combinations_with_replacement(range(6), n):
            x = np.array(x, dtype=float)
            if relation == "add_remove":
                nbrs = [np.delete(x, i) for i in range(x.size)] + [np.append(x, v) for v in range(7)]
            else:
                nbrs = [np.append(np.delete(x, i), v) for i in range(x.size) for v in range(7) if v != x[i]]
            for y in nbrs:
                yield prob(x), prob(y)


@pytest.mark.parametrize("monotone", [True, False])
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_duff_mode_exact_audit_on_library_em(eps, monotone):
    """The mode runs the library's EM: exact audit over all add/remove neighbours, and negative controls."""
    cands = np.arange(5.0)
    mech = dpselect.ExponentialMechanism(eps)
    cached = CachedMechanism(mech, key=lambda p: (p.scores.tobytes(), p.monotone))
    report = audit(cached, _mode_pairs(cands, monotone))
    assert not report.violates and report.n_pairs > 1000
    assert report.claimed.epsilon == eps and report.claimed.relation == "add_remove"
    # non-vacuous: the monotone scale uses nearly all of eps, the paper's scale at most about half of it
    assert (0.8 if monotone else 0.4) * eps < report.max_loss <= eps * (1 + 1e-12)
    x = np.array([0.0, 0.0, 1.0, 5.0, 5.0, 5.0])
    p = M.duff_mode_probabilities(x, eps, candidates=cands, monotone=monotone)
    np.testing.assert_allclose(p, mech.probabilities(M.mode_problem(x, candidates=cands, monotone=monotone)))
    if monotone:
        # negative control: the same problems under replace-one (one record changes value: one count
        # up, another down -- not monotone); the audit catches the eps claim at the monotone scale ...
        bad = audit(cached, _mode_pairs(cands, monotone, relation="replace"))
        assert bad.violates and bad.max_loss > 1.05 * eps
    # ... and the replace-one guarantee is 2 eps (group privacy of two add/remove steps)
    assert not audit(cached, _mode_pairs(cands, monotone, relation="replace"), claimed=Privacy(2 * eps)).violates
