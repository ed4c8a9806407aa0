"""Propose-test-release and the stable histogram (SPEC.md §6.2–6.3, errata 27–29)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import dpselect
from dpselect import accounting
from dpselect.accounting import BudgetExceededError
from dpselect.apps import counts as P
from dpselect.noise.exact import discrete_laplace_logpmf
from dpselect.noise.grid import dyadic_ceil
from dpselect.privacy import Privacy


def _tail(k, eps, lam=1.0):
    """P[K >= k] for the discrete Laplace K of GridLaplace(1, eps, granularity=lam), from the pmf formula."""
    t = float(dyadic_ceil(Fraction(math.ceil(1 / lam)) / Fraction(eps)))
    q = math.exp(-1 / t)
    k = math.ceil(k)
    return q**k / (1 + q) if k >= 1 else 1 - q ** (1 - k) / (1 + q)


def _T(eps, delta):
    """The integer PTR threshold: the smallest T >= 0 with P[K > T] <= delta/2 (linear search)."""
    T = 0
    while _tail(T + 1, eps) > delta / 2:
        T += 1
    return T


# ---------------------------------------------------------------------------
# generic PTR
# ---------------------------------------------------------------------------


def _pair(privacy):
    assert isinstance(privacy, Privacy)
    return privacy.epsilon, privacy.delta, privacy.relation


def test_ptr_privacy_objects():
    """PTR guarantees are Privacy objects like every other mechanism's (SPEC §6.2, §6.3)."""
    assert _pair(accounting.ptr_privacy(0.5, 1e-6)) == (1.0, 5e-7, None)
    assert _pair(accounting.ptr_privacy(0.5, 1e-6, relation="replace")) == (1.0, 5e-7, "replace")
    assert _pair(accounting.ptr_mode_privacy(0.5, 1e-6)) == (0.5, 5e-7, "add_remove")
    assert _pair(accounting.ptr_mode_privacy(0.5, 1e-6, relation="replace")) == (0.5, 5e-7, "replace")
    assert _pair(accounting.stable_histogram_privacy(0.5, 1e-6)) == (0.5, 5e-7, "add_remove")
    assert _pair(accounting.stable_histogram_privacy(0.5, 1e-6, relation="replace")) == (1.0, 1e-6, "replace")
    assert accounting.ptr_privacy is accounting.ptr_privacy  # one home for the formulas


def laplace_sf(z, scale):
    """P[Lap(scale) > z], vectorised and accurate in both tails (the library's Laplace().logsf)."""
    out = np.exp(dpselect.noise.Laplace().logsf(np.asarray(z, dtype=np.float64) / scale))
    return float(out) if out.ndim == 0 else out


def test_laplace_sf_matches_scipy():
    z = np.linspace(-40, 40, 161)
    for scale in (0.1, 1.0, 7.0):
        np.testing.assert_allclose(laplace_sf(z, scale), stats.laplace.sf(z, scale=scale), rtol=1e-12, atol=1e-300)


@pytest.mark.slow
def test_propose_test_release_behaviour():
    eps, delta = 1.0, 1e-3
    T = math.log(1 / delta) / eps
    Ti = _T(eps, delta)
    rng = np.random.default_rng(0)
    # bound 0 and a huge distance: the exact value is released
    assert P.propose_test_release(3.5, 1e6, bound=0.0, epsilon=eps, delta=delta, rng=rng) == 3.5
    # gamma = inf always passes
    out = P.propose_test_release(3.5, math.inf, bound=2.0, epsilon=eps, delta=delta, rng=rng)
    assert isinstance(out, float) and out != 3.5
    # frequency of ⊥ equals P[gamma + K <= T_int], K discrete Laplace
    for gamma in (0.0, 5.0, T, 10.0):
        gen = np.random.default_rng(1)
        outs = [P.propose_test_release(1.0, gamma, bound=1.0, epsilon=eps, delta=delta, rng=gen) for _ in range(20_000)]
        freq = np.mean([o is np.ma.masked for o in outs])
        p_bot = 1 - _tail(math.floor(Ti - gamma) + 1, eps)
        se = math.sqrt(max(p_bot * (1 - p_bot), 1 / 20_000) / 20_000)
        assert abs(freq - p_bot) < 5 * se
    # released values are value + Lap(bound/eps)
    gen = np.random.default_rng(2)
    vals = np.array(
        [P.propose_test_release(1.0, 100.0, bound=2.0, epsilon=eps, delta=delta, rng=gen) for _ in range(5000)]
    )
    assert stats.kstest(vals - 1.0, stats.laplace(scale=2.0 / eps).cdf).pvalue > 1e-3


# ---------------------------------------------------------------------------
# PTR mode
# ---------------------------------------------------------------------------


def test_mode_gamma():
    assert P.mode_distance_to_instability([5, 5, 1]) == 0
    assert P.mode_distance_to_instability([6, 5, 1]) == 0
    assert P.mode_distance_to_instability([7, 5, 1]) == 1
    assert P.mode_distance_to_instability([9, 0]) == 8
    assert P.mode_distance_to_instability([9, 0], relation="replace") == 4  # ceil(9/2) - 1
    assert P.mode_distance_to_instability([8, 0], relation="replace") == 3
    assert P.mode_distance_to_instability([2, 0], relation="replace") == 0
    assert P.mode_distance_to_instability([4]) == math.inf


def test_ptr_mode_probabilities_vs_sampling():
    eps, delta = 0.5, 1e-2
    for counts in ([10, 3, 0], [20, 2], [4, 4, 1], [30, 0, 0, 1]):
        law = P.ptr_mode_probabilities(counts, eps, delta=delta)
        assert isinstance(law, dpselect.OutputLaw)
        assert law.support[0] == int(np.argmax(counts)) and law.support[1] is np.ma.masked  # the index, then ⊥
        p_mode, p_bot = law
        assert p_mode + p_bot == pytest.approx(1.0)
        draws = P.ptr_mode(counts, eps, delta=delta, rng=np.random.default_rng(3), size=100_000)
        assert isinstance(draws, np.ma.MaskedArray) and draws.shape == (100_000,)
        bot = np.ma.getmaskarray(draws)
        assert np.all(draws.data[~bot] == int(np.argmax(counts)))
        se = math.sqrt(max(p_mode * (1 - p_mode), 1e-5) / 100_000)
        assert abs(np.mean(~bot) - p_mode) < 5 * se


def test_ptr_mode_one_convention_for_bottom():
    """One draw is exactly element 0 of a batch of one: the index, or np.ma.masked for ⊥ (never -1 or None)."""
    counts, eps, delta = [3, 2, 0], 1.0, 0.5  # gamma = 0: P[⊥] = 1 - P[K > T] >= 1 - delta/2 = 0.75
    singles = [P.ptr_mode(counts, eps, delta=delta, rng=s) for s in range(2000)]
    batches = [P.ptr_mode(counts, eps, delta=delta, rng=s, size=1)[0] for s in range(2000)]
    for one, first in zip(singles, batches):
        assert (one is np.ma.masked and first is np.ma.masked) or (one == first == 0 and type(one) is int)
    n_bot = sum(o is np.ma.masked for o in singles)
    p_bot = P.ptr_mode_probabilities(counts, eps, delta=delta)[1]
    assert p_bot == pytest.approx(1 - _tail(_T(eps, delta) + 1, eps)) and p_bot >= 0.75
    assert abs(n_bot / 2000 - p_bot) < 5 * math.sqrt(p_bot * (1 - p_bot) / 2000)
    with pytest.raises((TypeError, IndexError)):
        [10, 20, 30][np.ma.masked]  # ⊥ cannot be mistaken for an index
    # a clear winner always passes; a single candidate has gamma = inf
    assert [P.ptr_mode([50, 0], 1.0, delta=1e-3, rng=s) for s in range(50)] == [0] * 50
    assert [P.ptr_mode([7], 0.01, delta=1e-9, rng=s) for s in range(50)] == [0] * 50


def _output_dist(counts, eps, delta, relation, gamma_fn=None):
    """Exact law over {argmax index, '⊥'}."""
    c = np.asarray(counts)
    if gamma_fn is None:
        p_rel, p_bot = P.ptr_mode_probabilities(c, eps, delta=delta, relation=relation)
    else:
        p_rel = _tail(_T(eps, delta) + 1 - gamma_fn(c), eps)
        p_bot = 1 - p_rel
    return {int(np.argmax(c)): p_rel, "bot": p_bot}


def _hockey(p, q, eps):
    keys = set(p) | set(q)
    return sum(max(0.0, p.get(k, 0.0) - math.exp(eps) * q.get(k, 0.0)) for k in keys)


def _neighbour_pairs(relation, m_max=4, c_max=8):
    for m in range(2, m_max + 1):
        for counts in itertools.product(range(c_max + 1), repeat=m):
            c = list(counts)
            if relation == "add_remove":
                for i in range(m):
                    for d in (-1, 1):
                        if c[i] + d >= 0:
                            yield c, [*c[:i], c[i] + d, *c[i + 1 :]]
            else:
                for i in range(m):
                    for j in range(m):
                        if i != j and c[i] > 0:
                            y = list(c)
                            y[i] -= 1
                            y[j] += 1
                            yield c, y


@pytest.mark.parametrize("relation", ["add_remove", "replace"])
@pytest.mark.parametrize("eps,delta", [(0.5, 1e-2), (1.0, 0.2)])
def test_ptr_mode_exact_audit(relation, eps, delta):
    claim = accounting.ptr_mode_privacy(eps, delta, relation=relation)
    claimed_eps, claimed_delta = claim.epsilon, claim.delta
    worst = 0.0
    n_pairs = 0
    cache = {}

    def dist(c):
        key = tuple(c)
        if key not in cache:
            cache[key] = _output_dist(c, eps, delta, relation)
        return cache[key]

    for x, y in _neighbour_pairs(relation, m_max=4 if relation == "add_remove" else 3):
        px, py = dist(x), dist(y)
        d = max(_hockey(px, py, claimed_eps), _hockey(py, px, claimed_eps))
        assert d <= claimed_delta * (1 + 1e-12), (x, y, d)
        worst = max(worst, d)
        n_pairs += 1
    assert n_pairs > 1000
    # attained: P[K > T] at gamma = 0, the largest discrete tail <= delta/2
    assert worst == pytest.approx(_tail(_T(eps, delta) + 1, eps), rel=1e-9)
    assert _tail(_T(eps, delta), eps) > claimed_delta


@pytest.mark.parametrize("eps,delta", [(0.5, 1e-2), (1.0, 0.2)])
def test_ptr_mode_lecture_notes_gamma_violates(eps, delta):
    # errata 28: gamma = g (LN) instead of max(g - 1, 0) gives delta e^eps / 2 > delta / 2
    claim = accounting.ptr_mode_privacy(eps, delta)
    claimed_eps, claimed_delta = claim.epsilon, claim.delta

    def gap(c):
        s = np.sort(c)
        return float(s[-1] - s[-2])

    worst = 0.0
    for x, y in _neighbour_pairs("add_remove", m_max=3):
        px = _output_dist(x, eps, delta, "add_remove", gamma_fn=gap)
        py = _output_dist(y, eps, delta, "add_remove", gamma_fn=gap)
        worst = max(worst, _hockey(px, py, claimed_eps), _hockey(py, px, claimed_eps))
    assert worst > claimed_delta * 1.01
    assert worst == pytest.approx(_tail(_T(eps, delta), eps), rel=1e-9)  # P[K >= T] > delta/2


def test_ptr_mode_utility_errata_29():
    # discrete form of errata 29: for gamma >= T, P[⊥] = P[K <= T - gamma] = q^(gamma - T) / (1 + q)
    delta, eps = 1e-3, 1.0
    T = _T(eps, delta)
    q = math.exp(-1 / float(dyadic_ceil(Fraction(1) / Fraction(eps))))
    _, p_bot = P.ptr_mode_probabilities([T + 1, 0], eps, delta=delta)  # gamma = T: failure ~ 1/2
    assert p_bot == pytest.approx(1 / (1 + q), rel=1e-9)
    for g in (T + 3, T + 6, 2 * T + 1, 3 * T):
        _, p_bot = P.ptr_mode_probabilities([g, 1], eps, delta=delta)
        assert p_bot == pytest.approx(q ** (g - 2 - T) / (1 + q), rel=1e-9)


# ---------------------------------------------------------------------------
# stable histogram
# ---------------------------------------------------------------------------


@pytest.mark.slow
def test_stable_histogram_probabilities_and_sampling():
    eps, delta = 0.7, 1e-3
    counts = np.array([0, 1, 5, 10, 12, 30, 0])
    lam = 2.0**-6
    k = 1
    while _tail(k, eps, lam) > delta / 2:
        k += 1
    thr = 1 + k * lam  # 1 + the smallest grid point with tail <= delta/2
    p = P.stable_histogram_probabilities(counts, eps, delta=delta, granularity=lam)
    want = np.array([_tail((thr - c) / lam, eps, lam) if c > 0 else 0.0 for c in counts])
    np.testing.assert_allclose(p, want, rtol=1e-9)
    assert p[1] <= delta / 2 < _tail(k - 1, eps, lam)  # a count-1 bin survives with probability <= delta/2 (AR)
    assert p[1] == pytest.approx(delta / 2, rel=0.02)  # and the grid loses almost nothing
    rng = np.random.default_rng(4)
    draws = np.array([P.stable_histogram(counts, eps, delta=delta, granularity=lam, rng=rng) for _ in range(20_000)])
    freq = (draws != 0).mean(axis=0)
    se = np.sqrt(np.maximum(p * (1 - p), 1 / 20_000) / 20_000)
    assert np.all(np.abs(freq - p) < 5 * se)
    assert np.all(draws[:, counts == 0] == 0)
    kept = draws[:, 5][draws[:, 5] != 0]
    assert np.all(kept >= thr)
    assert np.all(draws / lam == np.round(draws / lam))  # on the grid


def _bin_hockey(c_from, c_to, eps, delta, lam=2.0**-4, claim=None):
    """Exact hockey-stick divergence D_{e^eps}(law(c_from) || law(c_to)) of one released bin on the grid."""
    scale = dyadic_ceil(Fraction(math.ceil(1 / lam)) / Fraction(eps))
    p0 = 1 - float(P.stable_histogram_probabilities([c_from], eps, delta=delta, granularity=lam)[0])
    q0 = 1 - float(P.stable_histogram_probabilities([c_to], eps, delta=delta, granularity=lam)[0])
    grid = np.arange(0, int((max(c_from, c_to) + 80 / eps) / lam) + 1)  # grid indices of outputs >= 0
    law = {}
    for c in (c_from, c_to):
        pmf = np.exp(discrete_laplace_logpmf(grid - round(c / lam), scale)) if c > 0 else np.zeros(grid.size)
        law[c] = pmf
    x_star = 1
    while _tail(x_star, eps, lam) > delta / 2:
        x_star += 1
    kept = grid >= round(1 / lam) + x_star
    e = math.exp(eps if claim is None else claim)
    cont = float(np.maximum(0.0, law[c_from][kept] - e * law[c_to][kept]).sum())
    return max(0.0, p0 - e * q0) + cont


@pytest.mark.parametrize("eps,delta", [(0.5, 1e-3), (1.0, 0.05)])
def test_stable_histogram_single_bin_audit(eps, delta):
    claim = accounting.stable_histogram_privacy(eps, delta)
    claimed_eps, claimed_delta = claim.epsilon, claim.delta
    worst = 0.0
    for c in range(0, 40):
        d = max(_bin_hockey(c, c + 1, claimed_eps, delta), _bin_hockey(c + 1, c, claimed_eps, delta))
        assert d <= claimed_delta * (1 + 1e-9) + 1e-12, (c, d)
        worst = max(worst, d)
    assert worst == pytest.approx(claimed_delta, rel=0.05)  # attained at 0 -> 1 (up to the grid)
    # negative control: a claimed epsilon 10 % too small is violated
    bad = max(_bin_hockey(c + 1, c, claimed_eps, delta, claim=0.9 * claimed_eps) for c in range(20, 25))
    assert bad > claimed_delta


# ---------------------------------------------------------------------------
# bad inputs
# ---------------------------------------------------------------------------

GEN = np.random.default_rng(0)

bad_eps = st.sampled_from([0.0, -1.0, float("nan"), float("inf"), "x", None])
bad_delta = st.sampled_from([0.0, 1.0, -0.1, 1.5, float("nan"), "x", None])
bad_counts = st.sampled_from([[], [-1, 2], [1.5, 2], [[1, 2]], ["a"], [float("nan")]])


@settings(max_examples=150, deadline=None)
@given(which=st.integers(0, 5), what=st.integers(0, 2), e=bad_eps, d=bad_delta, c=bad_counts)
def test_bad_inputs_raise_before_randomness(which, what, e, d, c):
    calls = [
        lambda c, e, d: P.ptr_mode(c, e, delta=d, rng=GEN),
        lambda c, e, d: P.ptr_mode_probabilities(c, e, delta=d),
        lambda c, e, d: P.stable_histogram(c, e, delta=d, rng=GEN),
        lambda c, e, d: P.stable_histogram_probabilities(c, e, delta=d),
        lambda c, e, d: P.propose_test_release(
            1.0, float(len(c)) if isinstance(c, list) else 0.0, bound=1.0, epsilon=e, delta=d, rng=GEN
        ),
        lambda c, e, d: accounting.ptr_privacy(e, d),
    ]
    args = [[3, 1], 1.0, 1e-3]
    args[what] = [c, e, d][what]
    if which in (4, 5) and what == 0:
        return  # these do not take counts
    state = GEN.bit_generator.state
    with pytest.raises((ValueError, TypeError)):
        calls[which](*args)
    assert GEN.bit_generator.state == state


@pytest.mark.parametrize(
    "call",
    [
        lambda: P.propose_test_release(float("nan"), 1.0, bound=1.0, epsilon=1.0, delta=0.1),
        lambda: P.propose_test_release(1.0, -1.0, bound=1.0, epsilon=1.0, delta=0.1),
        lambda: P.propose_test_release(1.0, 1.0, bound=-1.0, epsilon=1.0, delta=0.1),
        lambda: P.ptr_mode([1, 2], 1.0, delta=0.1, relation="bounded"),
        lambda: P.ptr_mode([1, 2], 1.0, delta=0.1, size=0),
        lambda: P.ptr_mode([1, 2], 1.0, 0.1),  # delta is keyword-only
        lambda: P.stable_histogram([1, 2], 1.0, 0.1),
        lambda: P.propose_test_release(1.0, 1.0, 1.0, 1.0, 0.1),
    ],
)
def test_more_bad_inputs(call):
    with pytest.raises((ValueError, TypeError)):
        call()


# ---------------------------------------------------------------------------
# budget accountant
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call,claim",
    [
        (lambda acc, g: P.ptr_mode([9, 1], 0.5, delta=1e-3, rng=g, accountant=acc), (0.5, 5e-4)),
        (lambda acc, g: P.ptr_mode([9, 1], 0.5, delta=1e-3, rng=g, size=10, accountant=acc), (5.0, 5e-3)),  # 10 draws
        (lambda acc, g: P.stable_histogram([9, 1], 0.5, delta=1e-3, rng=g, accountant=acc), (0.5, 5e-4)),
        (
            lambda acc, g: P.propose_test_release(1.0, 50.0, bound=1.0, epsilon=0.5, delta=1e-3, rng=g, accountant=acc),
            (1.0, 5e-4),
        ),
    ],
)
def test_accountant_charged_before_randomness(call, claim):
    acc = dpselect.Accountant(10.0, 0.01)
    call(acc, np.random.default_rng(0))
    assert (acc.spent.epsilon, acc.spent.delta) == pytest.approx(claim)
    small = dpselect.Accountant(claim[0], claim[1] / 2)  # delta does not fit
    gen = np.random.default_rng(1)
    state = gen.bit_generator.state
    with pytest.raises(BudgetExceededError):
        call(small, gen)
    assert gen.bit_generator.state == state and small.charges == ()
