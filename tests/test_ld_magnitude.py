"""Local dampening on the argmax indicator: cost and memory do not follow the counts (issue: LD echoes a count)."""

from __future__ import annotations

import itertools
import tracemalloc

import numpy as np
import pytest

from dpselect import LocalDampening, select_top_k
from dpselect.analysis import audit
from dpselect.apps.counts import majority_problem, private_argmax
from dpselect.mechanisms import dampened_utilities


def _dampened_by_definition(problem):
    """D(x, r) from the sums b(i) = sum_{j<i} delta(x, j, r), read at every t (mathematics §5.1, D = 0 at u = 0)."""
    horizon = problem.profile_horizon
    out = []
    for r, u in enumerate(problem.scores):
        deltas = [problem.candidate_local_sensitivity(min(j, horizon))[r] for j in range(horizon + 4)]
        if u == 0 or not any(deltas):
            out.append(0.0 if u == 0 else np.inf)
            continue
        b = np.concatenate([[0.0], np.cumsum(deltas)])
        i = next(k for k in range(b.size - 1) if b[k] <= u < b[k + 1])
        out.append(i + (u - b[i]) / (b[i + 1] - b[i]))
    return np.array(out)


def _law(d, eps):
    """exp(eps D / 2) normalised; uniform over the D = +inf candidates when there are any."""
    if np.isposinf(d).any():
        return np.isposinf(d) / np.isposinf(d).sum()
    w = np.exp(0.5 * eps * (d - d.max()))
    return w / w.sum()


@pytest.mark.parametrize("rel", ["add_remove", "replace"])
@pytest.mark.parametrize("rule", ["tieset", "first"])
def test_law_unchanged_on_small_counts(rel, rule):
    """The closed form over the breakpoints gives the law of the definition read at every t."""
    ld = LocalDampening(0.8)
    for c in itertools.product(range(5), repeat=3):
        p = majority_problem(np.array(c), tie_rule=rule, relation=rel)
        np.testing.assert_allclose(
            ld.probabilities(p), _law(_dampened_by_definition(p), 0.8), atol=1e-12, err_msg=str(c)
        )


def test_issue_example_releases_without_echo():
    """The issue's example: a count of 1.2e14 is one selection, not a 898 TiB allocation."""
    out = private_argmax(np.array([123456789012345, 0, 0]), 1.0, mechanism="ld", utility="indicator", rng=0)
    assert out in (0, 1, 2)
    p = majority_problem(np.array([123456789012345, 0, 0]))
    # the winner's D is t*_r + 1 = g + 1 (its indicator needs g + 1 removals to drop), the losers' 0
    np.testing.assert_array_equal(dampened_utilities(p), [123456789012346.0, 0.0, 0.0])
    np.testing.assert_array_equal(LocalDampening(1.0).probabilities(p), [1.0, 0.0, 0.0])


def _peak(counts) -> int:
    tracemalloc.start()
    try:
        private_argmax(np.array(counts), 1.0, mechanism="ld", utility="indicator", rng=1)
        select_top_k(LocalDampening(1.0), majority_problem(np.array(counts)), 2, method="peel", rng=1)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_does_not_follow_the_counts():
    """Peak traced memory at counts ~1e14 equals that at counts ~10 (the profile has m + 1 steps at most)."""
    small, large = _peak([12, 3, 0, 7]), _peak([123456789012345, 3, 0, 98765432109876])
    assert large <= 1.5 * small + 65536, (small, large)


@pytest.mark.parametrize("rel", ["add_remove", "replace"])
def test_audit_at_large_counts(rel):
    """Exact audit on neighbours of tables with counts ~1e12 (the closed form keeps eps-DP)."""
    big = 10**12
    pairs = []
    for c in ([big, big - 2, 5], [big, big, 0], [big + 1, big - 1, 3], [0, big, big - 1]):
        c = np.array(c, dtype=np.int64)
        for i in range(3):
            if rel == "add_remove":
                d = c.copy()
                d[i] += 1
            elif c[i] > 0:
                d = c.copy()
                d[i] -= 1
                d[(i + 1) % 3] += 1
            else:
                continue
            pairs.append((majority_problem(c, relation=rel), majority_problem(d, relation=rel)))
    for eps in (0.5, 2.0):
        assert not audit(LocalDampening(eps), pairs).violates
