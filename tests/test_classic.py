"""Classic mechanisms: equivalences, exact probabilities vs sampling, audits."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, stats

from conftest import assert_frequencies_match
from dpselect import ExponentialMechanism, PermuteAndFlip, Privacy, ReportNoisyMax, SelectionProblem
from dpselect.analysis import accuracy, audit, expected_error, output_distribution


def _random_problems(n, seed, monotone=False):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        m = int(rng.integers(2, 12))
        kind = rng.integers(3)
        if kind == 0:
            scores = rng.normal(0, 3, size=m)
        elif kind == 1:
            scores = rng.integers(0, 6, size=m).astype(float)  # ties
        else:
            scores = rng.uniform(-1e6, 1e6, size=m)  # huge scores
        yield SelectionProblem(scores, global_sensitivity=float(rng.uniform(0.5, 3)), monotone=monotone)


@pytest.mark.parametrize("monotone", [False, True])
def test_em_equals_gumbel_noisy_max_and_pf_equals_exponential(monotone):
    rng = np.random.default_rng(0)
    for pr in _random_problems(40, 1, monotone):
        eps = float(rng.uniform(0.05, 5))
        p_em = ExponentialMechanism(eps).probabilities(pr)
        p_g = ReportNoisyMax(eps, "gumbel").probabilities(pr)
        np.testing.assert_allclose(p_g, p_em, atol=1e-9, rtol=0)
        p_pf = PermuteAndFlip(eps).probabilities(pr)
        p_e = ReportNoisyMax(eps, "exponential").probabilities(pr)
        np.testing.assert_allclose(p_e, p_pf, atol=1e-9, rtol=0)
        for p in (p_em, p_pf, p_g, p_e):
            assert abs(p.sum() - 1) < 1e-9


def test_em_closed_form_is_softmax():
    pr = SelectionProblem([3.0, 1.0, 0.0], global_sensitivity=2.0)
    w = np.exp(0.7 * np.array([3.0, 1.0, 0.0]) / 4.0)
    np.testing.assert_allclose(ExponentialMechanism(0.7).probabilities(pr), w / w.sum(), rtol=1e-14)
    mono = SelectionProblem([3.0, 1.0, 0.0], global_sensitivity=2.0, monotone=True)
    w = np.exp(0.7 * np.array([3.0, 1.0, 0.0]) / 2.0)
    np.testing.assert_allclose(ExponentialMechanism(0.7).probabilities(mono), w / w.sum(), rtol=1e-14)


def _pf_by_permutations(scores, eps, gs):
    """Permute-and-flip by enumerating every permutation (independent of the library)."""
    m = len(scores)
    p = np.exp(eps * (np.asarray(scores) - max(scores)) / (2 * gs))
    out = np.zeros(m)
    perms = list(itertools.permutations(range(m)))
    for perm in perms:
        reach = 1.0
        for _ in range(200):  # loop over passes until the mass is exhausted
            for r in perm:
                out[r] += reach * p[r]
                reach *= 1 - p[r]
            if reach < 1e-300:
                break
    return out / len(perms)


def test_pf_closed_form_matches_permutation_enumeration():
    rng = np.random.default_rng(3)
    for _ in range(20):
        m = int(rng.integers(2, 6))
        scores = rng.integers(0, 4, size=m).astype(float)
        eps = float(rng.uniform(0.1, 3))
        exact = _pf_by_permutations(list(scores), eps, 1.0)
        np.testing.assert_allclose(PermuteAndFlip(eps).probabilities(SelectionProblem(scores)), exact, atol=1e-12)


def test_laplace_rnm_matches_direct_quadrature():
    scores = np.array([2.0, 1.0, 1.0, -3.0])
    pr = SelectionProblem(scores)
    eps = 0.8
    b = 2.0 / eps
    lap = stats.laplace(scale=b)
    exact = []
    for r in range(4):
        others = [s for i, s in enumerate(scores) if i != r]
        f = lambda y, r=r, o=others: lap.pdf(y - scores[r]) * np.prod([lap.cdf(y - s) for s in o])
        exact.append(integrate.quad(f, -60, 60, points=list(scores), limit=400, epsabs=1e-13)[0])
    np.testing.assert_allclose(ReportNoisyMax(eps, "laplace").probabilities(pr), exact, atol=1e-10)


@pytest.mark.parametrize(
    "mech",
    [
        ExponentialMechanism(1.0),
        PermuteAndFlip(1.0),
        ReportNoisyMax(1.0, "laplace"),
        ReportNoisyMax(0.5, "gumbel"),
        ReportNoisyMax(2.0, "exponential"),
    ],
    ids=lambda m: f"{type(m).__name__}-{getattr(m, 'noise', '')}",
)
def test_batched_sampling_matches_exact_probabilities(mech):
    pr = SelectionProblem([3.0, 2.5, 2.5, 0.0, -1.0, 1.0], global_sensitivity=1.0)
    draws = mech.select(pr, size=100_000, rng=np.random.default_rng(11))
    assert draws.shape == (100_000,) and draws.dtype.kind == "i"
    assert_frequencies_match(draws, mech.probabilities(pr))


def test_select_reproducible_and_scalar():
    pr = SelectionProblem(np.arange(10.0))
    mech = PermuteAndFlip(0.3)
    a = mech.select(pr, size=50, rng=5)
    b = mech.select(pr, size=50, rng=np.random.default_rng(5))
    assert (a == b).all()
    one = mech.select(pr, rng=1)
    assert isinstance(one, int) and 0 <= one < 10


def test_huge_scores_and_tiny_epsilon_are_stable():
    pr = SelectionProblem([1e300, -1e300, 0.0])
    for mech in (ExponentialMechanism(1.0), PermuteAndFlip(1.0), ReportNoisyMax(1.0, "laplace")):
        p = mech.probabilities(pr)
        assert np.isfinite(p).all() and p[0] == pytest.approx(1.0)
        assert mech.select(pr, rng=0) == 0
    tiny = SelectionProblem([1.0, 0.0, 0.0])
    for mech in (ExponentialMechanism(1e-12), PermuteAndFlip(1e-12), ReportNoisyMax(1e-12, "laplace")):
        np.testing.assert_allclose(mech.probabilities(tiny), [1 / 3] * 3, atol=1e-9)


def test_accuracy_and_expected_error():
    pr = SelectionProblem([2.0, 2.0, 0.0])
    mech = ExponentialMechanism(1.0)
    p = output_distribution(mech, pr)
    assert accuracy(mech, pr) == pytest.approx(p[0] + p[1])
    assert expected_error(mech, pr) == pytest.approx(2.0 * p[2])
    assert expected_error(mech, pr, loss=lambda s: (s == s.max()).astype(float)) == pytest.approx(p[0] + p[1])


def _count_neighbours(counts):
    """All add/remove neighbours of a count vector (one record of one class added or removed)."""
    for i in range(len(counts)):
        for d in (1, -1):
            y = counts.copy()
            y[i] += d
            if y[i] >= 0:
                yield y


@pytest.mark.parametrize("monotone", [False, True])
def test_audit_classic_mechanisms_on_all_neighbours(monotone):
    rng = np.random.default_rng(7)
    pairs = []
    for _ in range(30):
        counts = rng.integers(0, 8, size=int(rng.integers(2, 6)))
        for y in _count_neighbours(counts):
            pairs.append(
                (
                    SelectionProblem(counts.astype(float), monotone=monotone),
                    SelectionProblem(y.astype(float), monotone=monotone),
                )
            )
    for mech in (ExponentialMechanism(0.7), PermuteAndFlip(0.7), ReportNoisyMax(0.7, "laplace")):
        rep = audit(mech, pairs)
        assert not rep.violates, str(rep)
        assert rep.max_loss <= 0.7 + 1e-9
        assert rep.max_loss > 0.3  # the audit is not vacuous: the bound is nearly attained
        assert rep.delta_at_claimed <= 1e-12


def test_audit_flags_em_with_smooth_sensitivity():
    """Seed 004 Thm 7.2: EM scaled by the smooth instead of the global sensitivity is not DP."""
    eps = 0.5
    x = np.array([22, 8, 17, 4, 0])
    y = np.array([22, 8, 18, 4, 0])

    def em_with_smooth(counts):
        s = np.sort(counts)[::-1]
        j = s[0] - s[1]
        ind = (counts == counts.max()).astype(float)
        return SelectionProblem(ind, global_sensitivity=math.exp(-j * eps))

    mech = ExponentialMechanism(eps)
    px, py = mech.probabilities(em_with_smooth(x)), mech.probabilities(em_with_smooth(y))
    assert px[1] == pytest.approx(0.04, abs=0.005) and py[1] == pytest.approx(0.10, abs=0.005)
    rep = audit(mech, [(em_with_smooth(x), em_with_smooth(y))], claimed=Privacy(eps))
    assert rep.violates and rep.max_loss > eps


def test_bad_inputs_raise_before_randomness():
    pr = SelectionProblem([1.0, 0.0])
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    for bad in (0, -1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="epsilon"):
            ExponentialMechanism(bad)
    with pytest.raises(ValueError, match="noise"):
        ReportNoisyMax(1.0, noise="cauchy")
    with pytest.raises(ValueError, match="size"):
        PermuteAndFlip(1.0).select(pr, size=0, rng=gen)
    with pytest.raises(TypeError, match="size"):
        PermuteAndFlip(1.0).select(pr, size=2.5, rng=gen)
    with pytest.raises(TypeError, match="problem"):
        PermuteAndFlip(1.0).select([1.0, 2.0], rng=gen)
    assert gen.bit_generator.state == state


def test_subnormal_scale_is_the_argmax_limit():
    from dpselect._engine import _noisy_max as noisy_max
    from dpselect.noise import Laplace

    scores = np.array([1.0, 0.0, 1.0])
    lp = noisy_max.log_probabilities(scores, 5e-324, Laplace())
    np.testing.assert_allclose(np.exp(lp), [0.5, 0.0, 0.5], atol=1e-12)
    draws = noisy_max.sample_argmax(scores, 5e-324, Laplace(), size=200, rng=0)
    assert set(np.unique(draws)) == {0, 2}


# ----------------------------------------------------------------------------- PF's O(m) exact law (issue #11 item 5)
def _pf_cases(seed):
    rng = np.random.default_rng(seed)
    for trial in range(40):
        m = int(rng.integers(65, 4097)) if trial % 2 else int(rng.integers(2, 65))
        kind = trial % 5
        if kind == 0:
            s = rng.normal(size=m) * rng.choice([0.01, 1.0, 10.0, 100.0])
        elif kind == 1:
            s = rng.integers(0, 5, size=m).astype(float)  # heavy ties
        elif kind == 2:
            s = -rng.exponential(size=m) * rng.choice([1e-6, 1e-3, 1.0, 1e3])
        elif kind == 3:
            s = np.r_[0.0, -rng.uniform(0, 1e-9, size=m - 1)]  # every p within 1e-9 of 1
        else:
            s = rng.uniform(-1e6, 1e6, size=m)
        yield s, float(rng.choice([0.1, 1.0, 2.0, 50.0]))


def test_pf_power_sum_law_equals_the_polynomial_closed_form():
    from dpselect.mechanisms._pf_law import pf_fast_log_probabilities as _pf_fast_log_probabilities
    from dpselect.mechanisms._pf_law import pf_log_probabilities as _pf_log_probabilities

    for scores, scale in _pf_cases(7):
        exact = _pf_log_probabilities(scores, scale)  # Gauss-Legendre, exact for the degree-(m-1) polynomial
        fast = _pf_fast_log_probabilities(scores, scale)
        fin = np.isfinite(exact)
        np.testing.assert_array_equal(fin, np.isfinite(fast))
        assert np.all(np.abs(fast[fin] - exact[fin]) <= 1e-9 * np.maximum(1.0, np.abs(exact[fin])))


def test_pf_large_m_equals_exponential_noisy_max():
    rng = np.random.default_rng(3)
    for scores in (rng.normal(size=5000) * 3, np.r_[np.zeros(3000), -rng.exponential(size=2500)]):
        pr = SelectionProblem(scores)
        p_pf = PermuteAndFlip(1.0).probabilities(pr)
        p_rnm = ReportNoisyMax(1.0, "exponential").probabilities(pr)
        np.testing.assert_allclose(p_pf, p_rnm, rtol=1e-9, atol=1e-15)
        assert abs(p_pf.sum() - 1) < 1e-12


def test_pf_tiny_epsilon_is_a_clear_error():
    pr = SelectionProblem([1.0, 0.0])
    for mech in (PermuteAndFlip, ExponentialMechanism, lambda e: ReportNoisyMax(e, "laplace")):
        with pytest.raises(ValueError, match=r"epsilon .*1e-320"):  # named, with the offending value
            mech(1e-320).probabilities(pr)
        with pytest.raises(ValueError, match="epsilon"):
            mech(1e-320).select(pr, rng=0)
    # just above the limit the law is the near-uniform one, exactly
    p = PermuteAndFlip(4.0 / 1.7e308).probabilities(pr)
    np.testing.assert_allclose(p, [0.5, 0.5], rtol=1e-12)


# ---------------------------------------------------------------------------
# one law type, declared parameters, typed draws (every mechanism of the registry)


def _every_mechanism():
    from dpselect.mechanisms import APPROXIMATE_NAMES, MECHANISM_NAMES, make_mechanism

    return [make_mechanism(name, 1.0, 1e-6 if name in APPROXIMATE_NAMES else 0.0) for name in MECHANISM_NAMES]


def test_every_probabilities_is_a_read_only_output_law_over_the_indices():
    from dpselect import OutputLaw

    pr = SelectionProblem([3.0, 1.0, 0.0, 2.5], local_sensitivity=0.5)
    for mech in _every_mechanism():
        p = mech.probabilities(pr)
        assert isinstance(p, OutputLaw), type(mech).__name__
        assert p.support.tolist() == [0, 1, 2, 3]
        np.testing.assert_allclose(p, np.exp(mech.log_probabilities(pr)), rtol=1e-12, atol=0)
        assert math.isclose(float(p.sum()), 1.0, rel_tol=1e-9)
        with pytest.raises(ValueError, match="read-only"):
            p[0] = 0.5
        law = output_distribution(mech, pr)  # the analysis face hands out the same law type
        assert isinstance(law, OutputLaw) and law.support.tolist() == [0, 1, 2, 3]
        assert type(law + 0.0) is np.ndarray  # arithmetic on a law gives a plain array


def test_select_returns_an_int_or_an_int64_array_for_every_mechanism():
    pr = SelectionProblem([3.0, 1.0, 0.0, 2.5], local_sensitivity=0.5)
    for mech in _every_mechanism():
        one = mech.select(pr, rng=1)
        many = mech.select(pr, size=5, rng=1)
        assert type(one) is int and 0 <= one < 4, type(mech).__name__
        assert many.dtype == np.int64 and many.shape == (5,) and ((many >= 0) & (many < 4)).all()
        assert one == mech.select(pr, rng=1)  # a seed reproduces the draw


def test_every_mechanism_declares_exactly_its_constructor_parameters():
    import dataclasses

    for mech in _every_mechanism():
        names = {f.name for f in dataclasses.fields(mech) if f.init}
        assert set(type(mech)._parameter_constraints) == names, type(mech).__name__
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        ExponentialMechanism(-1.0)
    with pytest.raises(ValueError, match=r"noise must be one of \('gumbel', 'exponential', 'laplace'\), got 'x'"):
        ReportNoisyMax(1.0, noise="x")
