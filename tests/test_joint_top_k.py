"""The joint exponential mechanism for top-k (select_top_k(..., method="joint")).

* Its exact law over ordered k-tuples (level counting, no enumeration of the
  normaliser) equals a brute-force enumeration of the sequence-utility EM.
* Sampling frequencies match that law.
* Exact audits over every neighbour (add/remove counts, monotone; replace,
  not monotone) hold the stated (k eps)-DP and (k eps)-bounded-range
  certificates; negative controls (understated sensitivity, a replace
  relation declared monotone) are caught.
* With a large epsilon the true top-k come back in order.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from conftest import assert_frequencies_match
from dpselect import ExponentialMechanism, PermuteAndFlip, Privacy, ReportNoisyMax, SelectionProblem
from dpselect.analysis import audit
from dpselect.apps import counts as majority
from dpselect.mechanisms._top_k_methods import joint_levels_for
from dpselect.mechanisms.top_k import TopK, select_top_k, top_k_log_probabilities, top_k_privacy


def _brute_force_law(scores, k, eps_total, sensitivity, monotone):
    """P[s] ∝ exp(-eps_total / (2 Delta*) * max_i (c_(i) - c_{s_i})), by enumeration of every tuple
    (at k = 1 the exponential mechanism's weight, eps_total / Delta*)."""
    c = np.asarray(scores, dtype=float)
    top = np.sort(c)[::-1][:k]
    delta_star = sensitivity if monotone else 2 * sensitivity
    tuples = list(itertools.permutations(range(c.size), k))
    gap = np.array([max(top[i] - c[s[i]] for i in range(k)) for s in tuples])
    logw = -eps_total / ((1 if k == 1 else 2) * delta_star) * gap
    w = np.exp(logw - logw.max())
    return tuples, w / w.sum()


CASES = [
    ([5.0, 3.0, 3.0, 1.0, 0.0], 3, 1.0, True),  # ties among counts
    ([4.0, 4.0, 4.0, 4.0], 2, 0.7, False),  # all tied
    ([0.3, -1.25, 2.5, 2.5, 0.1, 7.0], 3, 2.0, False),  # real scores, not monotone
    ([10.0, 0.0, 0.0, 0.0, 0.0], 4, 0.4, True),
    ([2.0, 1.0, 0.0], 3, 1.5, False),  # k = m
    ([9.0, 1.0, 5.0, 3.0, 2.0, 8.0], 1, 1.0, True),  # k = 1: the exponential mechanism itself
    ([0.3, -1.25, 2.5, 2.5, 0.1, 7.0], 1, 0.8, False),  # k = 1, not monotone: the same weight as EM
]


@pytest.mark.parametrize(("scores", "k", "eps", "monotone"), CASES)
def test_joint_law_equals_brute_force(scores, k, eps, monotone):
    prob = SelectionProblem(scores, global_sensitivity=1.5, monotone=monotone)
    em = ExponentialMechanism(eps)
    law = top_k_log_probabilities(em, prob, k, method="joint")
    tuples, logp = law.tuples, law.log_probabilities
    expected_tuples, expected = _brute_force_law(scores, k, k * eps, 1.5, monotone)
    assert [tuple(t) for t in tuples.tolist()] == expected_tuples
    np.testing.assert_allclose(np.exp(logp), expected, rtol=1e-12, atol=1e-15)
    if k == 1:  # one round: the joint law is the exponential mechanism's law, same weight
        ref = ExponentialMechanism(eps).probabilities(prob)
        np.testing.assert_allclose(np.exp(logp), ref, rtol=1e-12)


def test_joint_law_larger_problem_and_extreme_epsilons():
    rng = np.random.default_rng(4)
    scores = rng.integers(0, 6, size=8).astype(float)
    for eps in (1e-6, 0.3, 40.0, 1e6):
        law = top_k_log_probabilities(ExponentialMechanism(eps), SelectionProblem(scores), 3, method="joint")
        logp = law.log_probabilities
        _, expected = _brute_force_law(scores, 3, 3 * eps, 1.0, False)
        assert np.isfinite(logp).any() and math.isclose(np.exp(logp).sum(), 1.0, rel_tol=1e-12)
        np.testing.assert_allclose(np.exp(logp), expected, rtol=1e-10, atol=1e-300)


@pytest.mark.parametrize(("scores", "k", "eps", "monotone"), [CASES[0], CASES[2], CASES[4]])
def test_joint_sampling_matches_the_exact_law(scores, k, eps, monotone):
    prob = SelectionProblem(scores, monotone=monotone)
    em = ExponentialMechanism(eps)
    law = top_k_log_probabilities(em, prob, k, method="joint")
    tuples, logp = law.tuples, law.log_probabilities
    index = {tuple(t): i for i, t in enumerate(tuples.tolist())}
    gen = np.random.default_rng(21)
    draws = np.array([index[tuple(select_top_k(em, prob, k, method="joint", rng=gen).tolist())] for _ in range(3000)])
    assert_frequencies_match(draws, np.exp(logp))
    # the batched sampler behind it (levels computed once), at a tighter tolerance
    batch = joint_levels_for(em, prob, k).sample(40_000, np.random.default_rng(22))
    assert_frequencies_match(np.array([index[tuple(t)] for t in batch.tolist()]), np.exp(logp))


def test_joint_returns_the_true_top_k_in_order_at_large_epsilon():
    rng = np.random.default_rng(0)
    counts = rng.permutation(np.arange(0, 4000, 10)).astype(float)  # 400 distinct counts
    prob = SelectionProblem(counts, monotone=True)
    truth = np.argsort(-counts)[:20]
    for method in ("joint", "gumbel", "peel"):
        out = select_top_k(ExponentialMechanism(50.0), prob, 20, method=method, rng=1)
        assert out.tolist() == truth.tolist(), method
    # and a reproducible draw at moderate epsilon
    em = ExponentialMechanism(0.05)
    assert (
        select_top_k(em, prob, 20, method="joint", rng=5).tolist()
        == select_top_k(em, prob, 20, method="joint", rng=5).tolist()
    )


def _count_pairs(counts, relation):
    x = SelectionProblem(counts, monotone=relation == "add_remove", relation=relation)
    return [
        (x, SelectionProblem(y, monotone=relation == "add_remove", relation=relation))
        for y in majority.majority_neighbours(counts, relation)
    ]


def _bounded_range(law, pairs):
    """max over pairs of max_s log(p_x(s)/p_y(s)) - min_s log(p_x(s)/p_y(s))."""
    return max(float(np.ptp(law.log_probabilities(x) - law.log_probabilities(y))) for x, y in pairs)


@pytest.mark.parametrize("k", [3, 1])  # k = 1: the exponential mechanism's weight, still eps-DP and eps-BR
@pytest.mark.parametrize("relation", ["add_remove", "replace"])
def test_joint_exact_audit_over_all_neighbours(relation, k):
    counts, eps = np.array([4, 3, 3, 1, 0]), 0.5
    pairs = _count_pairs(counts, relation)
    law = TopK(ExponentialMechanism(eps), k, "joint")
    claim = law.privacy(pairs[0][0])
    assert claim == Privacy(k * eps, 0.0, relation, claim.source, bounded_range=k * eps)
    report = audit(law, pairs)
    assert not report.violates and report.max_loss <= k * eps * (1 + 1e-12), str(report)
    assert _bounded_range(law, pairs) <= k * eps * (1 + 1e-12)
    if relation == "add_remove":  # the bound is nearly attained here (a wrong constant would show)
        assert report.max_loss > 0.5 * k * eps


def test_joint_audit_negative_controls_are_caught():
    counts, k, eps = np.array([4, 3, 3, 1, 0]), 3, 0.5
    claim = Privacy(k * eps, 0.0, "add_remove")
    # (1) understated sensitivity: the problem says Delta u = 0.4 for unit counts
    x = SelectionProblem(counts, global_sensitivity=0.4, monotone=True)
    pairs = [
        (x, SelectionProblem(y, global_sensitivity=0.4, monotone=True))
        for y in majority.majority_neighbours(counts, "add_remove")
    ]
    assert audit(TopK(ExponentialMechanism(eps), k, "joint"), pairs, claimed=claim).violates
    # (2) replace neighbours (one count down, another up) declared monotone: Delta* = Delta u is too small
    counts = np.array([4, 1, 0, 0])
    x = SelectionProblem(counts, monotone=True, relation="replace")
    pairs = [
        (x, SelectionProblem(y, monotone=True, relation="replace"))
        for y in majority.majority_neighbours(counts, "replace")
    ]
    law = TopK(ExponentialMechanism(eps), k, "joint")
    assert audit(law, pairs, claimed=Privacy(k * eps, 0.0, "replace")).violates


def test_peeling_em_is_k_eps_dp_and_each_round_bounded_range():
    """The gumbel/peel law on the same pairs: k eps-DP; its parts are the k eps-BR rounds."""
    counts, k, eps = np.array([4, 3, 3, 1, 0]), 3, 0.5
    pairs = _count_pairs(counts, "add_remove")
    law = TopK(ExponentialMechanism(eps), k, "gumbel")
    assert not audit(law, pairs).violates
    total = law.privacy(pairs[0][0])
    assert total.epsilon == pytest.approx(k * eps)
    assert [p.bounded_range for p in total.atoms] == [eps] * k


def test_method_validation_before_randomness():
    prob = SelectionProblem([3.0, 2.0, 1.0])
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    with pytest.raises(ValueError, match="method must be one of"):
        select_top_k(ExponentialMechanism(1.0), prob, 2, method="best", rng=gen)
    with pytest.raises(ValueError, match="exponential-mechanism-type"):
        select_top_k(PermuteAndFlip(1.0), prob, 2, method="joint", rng=gen)
    with pytest.raises(ValueError, match="exponential-mechanism-type"):
        top_k_privacy(ReportNoisyMax(1.0, noise="laplace"), prob, 2, method="gumbel")
    with pytest.raises(ValueError, match="tuples"):
        top_k_log_probabilities(ExponentialMechanism(1.0), SelectionProblem(np.arange(30.0)), 5, method="joint")
    assert gen.bit_generator.state == state
    # RNM with Gumbel noise is the exponential mechanism: same joint law
    a = top_k_log_probabilities(ReportNoisyMax(1.0, noise="gumbel"), prob, 2, method="joint").log_probabilities
    b = top_k_log_probabilities(ExponentialMechanism(1.0), prob, 2, method="joint").log_probabilities
    np.testing.assert_array_equal(a, b)
    # non-EM mechanisms default to peeling; a non-private problem has no guarantee
    assert top_k_privacy(PermuteAndFlip(1.0), prob, 2).epsilon == pytest.approx(2.0)
    assert math.isinf(
        top_k_privacy(ExponentialMechanism(1.0), SelectionProblem([1.0, 0.0], private=False), 2, method="joint").epsilon
    )


def test_top_k_law_is_a_named_result_with_an_output_law_over_the_tuples():
    from dpselect import OutputLaw
    from dpselect.mechanisms.top_k import TopKLaw

    prob = SelectionProblem([3.0, 1.0, 0.0])
    law = top_k_log_probabilities(ExponentialMechanism(1.0), prob, 2, method="peel")
    assert isinstance(law, TopKLaw)
    p = law.probabilities()
    assert isinstance(p, OutputLaw) and p.support.shape == (6, 2)
    np.testing.assert_array_equal(p.support, law.tuples)
    mech_law = TopK(ExponentialMechanism(1.0), 2, "peel").probabilities(prob)
    np.testing.assert_array_equal(mech_law.support, law.tuples)
    np.testing.assert_allclose(mech_law, np.exp(law.log_probabilities), rtol=1e-12)
    with pytest.raises(ValueError, match="k must be >= 1"):
        TopK(ExponentialMechanism(1.0), 0)
    with pytest.raises(ValueError, match="method must be one of"):
        TopK(ExponentialMechanism(1.0), 2, "best")
    with pytest.raises(TypeError, match="mechanism must be a selection mechanism"):
        TopK("em", 2)
