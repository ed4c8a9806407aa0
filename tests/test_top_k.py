"""Private top-k: dpselect.mechanisms.top_k and dpselect.apps.genomics.select_top_snps.

* The one-shot Gumbel top-k has the Plackett-Luce law of k-fold peeling EM
  (sampling frequencies of ordered k-tuples vs the exact law).
* Peeling with PF has the product law of PF on the restricted problems.
* Exact audits of select_top_snps (ND-PF peeling, ND-EM Gumbel, the chi2 EM)
  on small panels over every one-family neighbour, against the stated
  guarantee, with a negative control (holding it to one round's epsilon).
* A clear signal: the true top k are found.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest

from conftest import assert_frequencies_match
from dpselect import ExponentialMechanism, PermuteAndFlip, Privacy, ReportNoisyMax, SelectionProblem
from dpselect.accounting import Accountant, BudgetExceededError
from dpselect.analysis import audit
from dpselect.apps import genomics as tdt
from dpselect.apps.genomics import TransmissionCounts
from dpselect.experiments.datasets import simulate_tdt
from dpselect.mechanisms.top_k import restrict_problem, select_top_k, top_k_privacy


def _tuples(m, k):
    return list(itertools.permutations(range(m), k))


def _peeling_law(probs_of, m, k):
    """Exact law of ordered k-tuples: probs_of(remaining) -> probabilities over the remaining list."""
    law = np.zeros(len(_tuples(m, k)))
    for i, tup in enumerate(_tuples(m, k)):
        remaining, p = list(range(m)), 1.0
        for r in tup:
            p *= probs_of(remaining)[remaining.index(r)]
            remaining.remove(r)
        law[i] = p
    return law


def _em_weights(scores, eps, gs=1.0):
    return np.exp(eps * (np.asarray(scores) - np.max(scores)) / (2 * gs))


def _draw_codes(draws, m, k):
    index = {t: i for i, t in enumerate(_tuples(m, k))}
    return np.array([index[tuple(d)] for d in draws])


def test_gumbel_top_k_has_the_peeling_em_law():
    scores = np.array([3.0, 2.0, 2.0, 0.0, -1.0])
    prob = SelectionProblem(scores)
    em = ExponentialMechanism(1.2)
    w = _em_weights(scores, 1.2)
    law = _peeling_law(lambda rem: w[rem] / w[rem].sum(), 5, 3)
    assert law.sum() == pytest.approx(1.0)
    gen = np.random.default_rng(11)
    draws = [select_top_k(em, prob, 3, method="gumbel", rng=gen) for _ in range(20_000)]
    assert_frequencies_match(_draw_codes(draws, 5, 3), law)
    # report-noisy-max with Gumbel noise is the same mechanism
    assert (
        select_top_k(ReportNoisyMax(1.2, noise="gumbel"), prob, 3, method="gumbel", rng=5).tolist()
        == select_top_k(em, prob, 3, method="gumbel", rng=5).tolist()
    )
    assert top_k_privacy(em, prob, 3).epsilon == pytest.approx(3.6)


def test_peeling_pf_has_the_product_law():
    scores = np.array([1.0, 0.5, 0.0, -2.0])
    prob = SelectionProblem(scores, labels=list("abcd"))
    pf = PermuteAndFlip(2.0)
    law = _peeling_law(lambda rem: pf.probabilities(SelectionProblem(scores[rem])), 4, 2)
    gen = np.random.default_rng(12)
    draws = [select_top_k(pf, prob, 2, rng=gen) for _ in range(5000)]
    assert all(len(set(d.tolist())) == 2 for d in draws)
    assert_frequencies_match(_draw_codes(draws, 4, 2), law)
    sub = restrict_problem(prob, [3, 1])
    assert sub.scores.tolist() == [-2.0, 0.5] and sub.labels == ("d", "b")
    assert top_k_privacy(pf, prob, 2).epsilon == pytest.approx(4.0)


def test_select_top_k_validation_and_reproducibility():
    prob = SelectionProblem([1.0, 2.0, 3.0])
    em = ExponentialMechanism(1.0)
    assert select_top_k(em, prob, 3, rng=1).tolist() == select_top_k(em, prob, 3, rng=1).tolist()
    assert sorted(select_top_k(em, prob, 3, rng=1).tolist()) == [0, 1, 2]
    with pytest.raises(ValueError, match="k must be <="):
        select_top_k(em, prob, 4)
    with pytest.raises(ValueError, match="k must be >= 1"):
        select_top_k(em, prob, 0)
    with pytest.raises(TypeError, match="problem"):
        select_top_k(em, [1.0, 2.0], 1)
    with pytest.raises(TypeError):
        select_top_k(em, prob, 1, 0)  # rng is keyword-only


# ---------------------------------------------------------------------------
# exact audits of select_top_snps over one-family neighbours
# ---------------------------------------------------------------------------


@functools.cache
def _pf_law(eps, distances):
    return PermuteAndFlip(eps).probabilities(SelectionProblem(-np.array(distances, dtype=float)))


#: The audit's names -> select_top_snps's (mechanism, utility).
_SPELLING = {"nd_pf": ("pf", "distance"), "nd_em": ("em", "distance"), "em": ("em", "chi2"), "sps": ("sps", "chi2")}


class _TopSNPsLaw:
    """Exact law of select_top_snps's ordered k-tuple on a panel (b, c) (an audit 'mechanism')."""

    def __init__(self, mechanism, epsilon, k, n):
        self.mechanism, self.epsilon, self.k, self.n = mechanism, epsilon, k, n
        self._claim = {}

    def _law(self, problem):
        b = np.array([t[0] for t in problem.labels])
        c = np.array([t[1] for t in problem.labels])
        m, eps_r = len(b), self.epsilon / self.k
        if self.mechanism == "nd_em":  # EM peeling: the sub-panel's own ND utility each round (distances updated)

            def em_round(rem):
                w = _em_weights(-tdt.neighbour_distances(b[rem], c[rem], self.n), eps_r)
                return w / w.sum()

            return _peeling_law(em_round, m, self.k)
        if self.mechanism == "em":  # Gumbel one-shot on chi2, GS = 8(N-1)/N
            w = _em_weights(tdt.tdt_statistic(b, c), eps_r, tdt.global_sensitivity(self.n))
            return _peeling_law(lambda rem: w[rem] / w[rem].sum(), m, self.k)
        # ND-PF peeling: the sub-panel's own ND utility each round
        return _peeling_law(
            lambda rem: _pf_law(eps_r, tuple(tdt.neighbour_distances(b[rem], c[rem], self.n))), m, self.k
        )

    def log_probabilities(self, problem):
        return np.log(self._law(problem))

    def privacy(self, problem):
        if id(problem) not in self._claim:
            b = [t[0] for t in problem.labels]
            c = [t[1] for t in problem.labels]
            mech, util = _SPELLING[self.mechanism]
            self._claim[id(problem)] = tdt.select_top_snps(
                TransmissionCounts(b, c, self.n), self.epsilon, self.k, mechanism=mech, utility=util, rng=0
            ).privacy
        return self._claim[id(problem)]


def _panel(b, c):
    """A panel carried as a SelectionProblem (the audit's currency); labels hold the tables."""
    return SelectionProblem(np.asarray(tdt.tdt_statistic(b, c)), labels=list(zip(map(int, b), map(int, c))))


@pytest.mark.parametrize("mechanism", [pytest.param("nd_pf", marks=pytest.mark.slow), "nd_em", "em"])
def test_select_top_snps_exact_audit_all_neighbours(mechanism):
    n, eps, k = 6, 2.0, 2
    b, c = np.array([0, 9, 0]), np.array([0, 1, 0])  # corners keep the neighbour set small (6 x 16 x 6 - 1)
    x = _panel(b, c)
    pairs = [(x, _panel(bn, cn)) for bn, cn in tdt.tdt_neighbours(b, c, n)]
    law = _TopSNPsLaw(mechanism, eps, k, n)
    assert law._law(x).sum() == pytest.approx(1.0)
    claim = law.privacy(x)
    assert claim.epsilon == pytest.approx(eps) and claim.relation == "replace"
    rep = audit(law, pairs)
    assert not rep.violates and rep.max_loss <= eps * (1 + 1e-9), str(rep)
    # negative control: held to one round's budget only, the audit catches it
    assert audit(law, pairs, claimed=Privacy(eps / k / 4, 0.0, "replace")).violates


@pytest.mark.slow
def test_select_top_snps_sampling_matches_exact_law():
    n, eps, k = 10, 2.0, 2
    b, c = np.array([9, 3, 0]), np.array([1, 4, 0])
    for mechanism in ("nd_pf", "nd_em"):
        law = _TopSNPsLaw(mechanism, eps, k, n)._law(_panel(b, c))
        gen = np.random.default_rng(3)
        mech, util = _SPELLING[mechanism]
        draws = [
            tdt.select_top_snps(TransmissionCounts(b, c, n), eps, k, mechanism=mech, utility=util, rng=gen).indices
            for _ in range(3000)
        ]
        assert_frequencies_match(_draw_codes(draws, 3, 2), law)


def test_select_top_snps_finds_clear_signal():
    n = 500
    b, c = simulate_tdt(200, n, rng=8)
    strong = [17, 42, 150]
    for j, i in enumerate(strong):
        s = b[i] + c[i]
        b[i], c[i] = s - 5 * (j + 1), 5 * (j + 1)  # chi2 in the hundreds
    labels = [f"rs{i}" for i in range(200)]
    for mechanism in ("nd_pf", "nd_em", "sps"):
        mech, util = _SPELLING[mechanism]
        out = tdt.select_top_snps(
            TransmissionCounts(b, c, n, snp_ids=labels), 30.0, 3, mechanism=mech, utility=util, rng=1
        )
        assert sorted(out.indices.tolist()) == strong, mechanism
        assert out.labels == [labels[i] for i in out.indices]
        assert out.privacy.epsilon == pytest.approx(30.0) and out.round_privacy.epsilon == pytest.approx(10.0)
        assert out.method == "peeling"  # the distance utility: every mechanism peels on updated distances
    # exact: the first ND-PF round picks a strong SNP with probability ~1
    p = PermuteAndFlip(10.0).probabilities(tdt.distance_utility_problem(b, c, n))
    assert p[strong].sum() > 1 - 1e-6


def test_select_top_snps_accountant_and_validation():
    b, c = simulate_tdt(6, 50, rng=2)
    acc = Accountant(3.0)
    tdt.select_top_snps(TransmissionCounts(b, c, 50), 2.0, 2, accountant=acc, rng=0)
    assert acc.spent.epsilon == pytest.approx(2.0)
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    with pytest.raises(BudgetExceededError):
        tdt.select_top_snps(TransmissionCounts(b, c, 50), 2.0, 3, accountant=acc, rng=gen)
    assert gen.bit_generator.state == state
    with pytest.raises(ValueError, match="k must be <="):
        tdt.select_top_snps(TransmissionCounts(b, c, 50), 1.0, 7)
    with pytest.raises(ValueError, match="k must be >= 1"):
        tdt.select_top_snps(TransmissionCounts(b, c, 50), 1.0, 0)
    with pytest.raises(TypeError, match="labels"):  # one form: the counts name their SNPs
        tdt.select_top_snps(TransmissionCounts(b, c, 50), 1.0, 2, labels=["a"])
    with pytest.raises(ValueError, match="snp_ids"):
        TransmissionCounts(b, c, 50, snp_ids=["a"])
    with pytest.raises(ValueError, match="epsilon"):
        tdt.select_top_snps(TransmissionCounts(b, c, 50), -1.0, 2)
    assert math.isclose(tdt.select_top_snps(TransmissionCounts(b, c, 50), 1.0, 1).privacy.epsilon, 1.0)


def test_restricted_problem_keeps_the_whole_sensitivity_profile():
    """Peeling must not flatten LS(x, t) to LS(x, 0): profile-based mechanisms (LD) would lose their noise."""
    import dpselect
    from dpselect.mechanisms.top_k import restrict_problem
    from dpselect.sensitivity import StepProfile

    step = StepProfile(np.array([0, 3]), np.array([0.0, 1.0]))
    p = dpselect.SelectionProblem([3.0, 2.0, 1.0], local_sensitivity=step)
    r = restrict_problem(p, [1, 2])
    assert [r.local_sensitivity(t) for t in range(6)] == [p.local_sensitivity(t) for t in range(6)]
    np.testing.assert_array_equal(r.candidate_local_sensitivity(4), p.candidate_local_sensitivity(4)[[1, 2]])
    for mech in (dpselect.make_mechanism("ld", 1.0), dpselect.SmoothNoisyMax(1.0)):
        np.testing.assert_allclose(mech.log_probabilities(restrict_problem(p, [0, 1, 2])), mech.log_probabilities(p))
        assert np.isfinite(mech.log_probabilities(r)).all()  # still noisy after restriction
