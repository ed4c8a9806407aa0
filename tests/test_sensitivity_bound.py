"""PrivateSensitivityBound (SPEC §9.2): exact law, exact audits with negative controls, sampling.

The audit follows ``spec-checks/gptr_exact.py``: a universe of count vectors
(m = 3 classes, every count <= K) with add/remove neighbours inside it, three
utilities of the counts, LS and S*_beta computed by BFS on that graph, and
the exact hockey-stick divergence of the pair (L̂, r) — what the mechanism
could release; the index alone is post-processing of it — at eps1 + eps2,
computed with conditional laws written independently here (EM closed form,
PF by enumerating permutations).
"""

from __future__ import annotations

import itertools
import math
import os

import mpmath as mp
import numpy as np
import pytest

import dpselect
from conftest import CachedMechanism, assert_frequencies_match
from dpselect import Accountant, BudgetExceededError, Privacy, SelectionProblem
from dpselect.accounting import sensitivity_bound_privacy, sensitivity_bound_shift
from dpselect.analysis import audit
from dpselect.mechanisms import ExponentialMechanism, PrivateSensitivityBound, make_mechanism

M = 3
_SLOW = [pytest.mark.slow, pytest.mark.skipif(not os.environ.get("DPSELECT_SLOW"), reason="slow; set DPSELECT_SLOW=1")]


# ---------------------------------------------------------------------------
# the universe (as in spec-checks/gptr_exact.py)
# ---------------------------------------------------------------------------


def _states(k):
    return list(itertools.product(range(k + 1), repeat=M))


def _neighbours(x, k):
    for i in range(M):
        for d in (-1, 1):
            v = x[i] + d
            if 0 <= v <= k:
                y = list(x)
                y[i] = v
                yield tuple(y)


UTILS = {
    "indicator": lambda x: (np.asarray(x, float) == max(x)).astype(float),
    "log1p": lambda x: np.log1p(np.asarray(x, float)),
    "share": lambda x: np.asarray(x, float) / (sum(x) + 1.0),
}


def _universe(util, k, beta):
    """{x: (scores, S*_beta(x))} and GS, by BFS over the bounded universe."""
    states = _states(k)
    ls = {x: max(np.abs(util(x) - util(y)).max() for y in _neighbours(x, k)) for x in states}
    gs = max(ls.values())
    smooth = {}
    for x in states:
        dist, frontier, best = {x: 0}, [x], ls[x]
        while frontier:
            nxt = []
            for z in frontier:
                for w in _neighbours(z, k):
                    if w not in dist:
                        dist[w] = dist[z] + 1
                        nxt.append(w)
                        best = max(best, ls[w] * math.exp(-beta * dist[w]))
            frontier = nxt
        smooth[x] = best
    return {x: (util(x), smooth[x]) for x in states}, gs


def _problem(scores, s, gs):
    return SelectionProblem(scores, global_sensitivity=gs, smooth_bound=lambda _b, _s=s: _s)


# independent conditional laws at a vector of fixed sensitivities s (rows)
def _em_law(u, s, eps2):
    a = eps2 * u[None, :] / (2.0 * s[:, None])
    a -= a.max(axis=1, keepdims=True)
    p = np.exp(a)
    return p / p.sum(axis=1, keepdims=True)


def _pf_law(u, s, eps2):
    q = np.exp(eps2 * (u[None, :] - u.max()) / (2.0 * s[:, None]))
    out = np.zeros((s.size, u.size))
    perms = list(itertools.permutations(range(u.size)))
    for perm in perms:
        reach = np.ones(s.size)
        for r in perm:
            out[:, r] += reach * q[:, r]
            reach = reach * (1.0 - q[:, r])
    return out / len(perms)


LAWS = {"em": _em_law, "pf": _pf_law}
_Z = np.unique(np.concatenate([np.linspace(-60, -20, 401), np.linspace(-20, 10, 6001), np.linspace(10, 60, 201)]))


def _joint_hockey_stick(mech, table, gs, k, *, shift=True):
    """max over ordered neighbour pairs of ∫ sum_r [f_x q_x - e^eps f_y q_y]_+ dl (trapezoid on a fine grid)."""
    eps = mech.epsilon1 + mech.epsilon2
    law = LAWS[mech.selector]
    worst = 0.0
    for x, (ux, sx) in table.items():
        px = _problem(ux, sx, gs)
        loc_x, b, cap = mech._bound_parameters(px)
        if not shift:
            loc_x -= sensitivity_bound_shift(mech.smoothness, mech.epsilon1, mech.delta)
        for y in _neighbours(x, k):
            uy, sy = table[y]
            loc_y = loc_x + math.log(sy) - math.log(sx)
            grid = np.unique(np.concatenate([loc_x + b * _Z, [loc_y, cap]]))
            s = np.minimum(np.exp(grid), gs)
            fx = np.exp(-np.abs(grid - loc_x) / b) / (2 * b)
            fy = np.exp(-np.abs(grid - loc_y) / b) / (2 * b)
            diff = fx[:, None] * law(ux, s, mech.epsilon2) - math.exp(eps) * fy[:, None] * law(uy, s, mech.epsilon2)
            integrand = np.clip(diff, 0.0, None).sum(axis=1)
            worst = max(worst, float(np.sum(0.5 * (integrand[1:] + integrand[:-1]) * np.diff(grid))) + math.exp(-60))
    return worst


# ---------------------------------------------------------------------------
# exact audits
# ---------------------------------------------------------------------------


_FAST = {("indicator", "pf", 1.0), ("indicator", "em", 3.0), ("log1p", "em", 1.0)}
_AUDIT_CASES = [
    pytest.param(u, sel, b, marks=() if (u, sel, b) in _FAST else _SLOW)
    for u in ("indicator", "log1p", "share")
    for sel in ("pf", "em")
    for b in (0.1, 1.0, 3.0)
]


@pytest.mark.parametrize("util,selector,beta", _AUDIT_CASES)
def test_joint_audit_all_neighbours(util, selector, beta):
    """(eps1 + eps2, delta) holds for the pair (L̂, r) on every ordered neighbour pair; dropping the shift fails."""
    k, delta = 4, 1e-3
    table, gs = _universe(UTILS[util], k, beta)
    mech = PrivateSensitivityBound(0.5, 1.0, delta=delta, beta=beta, selector=selector)
    d = _joint_hockey_stick(mech, table, gs, k)
    assert d <= delta * (1 + 1e-3), (util, selector, beta, d)
    if util == "indicator" and beta >= 1.0:  # the negative control of gptr_exact.py: no ln(1/(2 delta)) shift
        d0 = _joint_hockey_stick(mech, table, gs, k, shift=False)
        assert d0 > 2 * delta, (beta, d0)


def test_marginal_audit_and_plug_in_control():
    """analysis.audit on the released index (all neighbours); EM fed S(x) directly is caught (loss > eps2)."""
    k, beta = 3, 1.0
    table, gs = _universe(UTILS["indicator"], k, beta)
    pairs = [(_problem(*table[x], gs), _problem(*table[y], gs)) for x in table for y in _neighbours(x, k)]
    for selector in ("pf", "em"):
        mech = PrivateSensitivityBound(0.5, 1.0, delta=1e-3, beta=beta, selector=selector)
        cached = CachedMechanism(mech, key=lambda p: (p.scores.tobytes(), p.smooth_sensitivity(beta)))
        rep = audit(cached, pairs)
        assert not rep.violates and rep.claimed == Privacy(1.5, 1e-3, "add_remove", rep.claimed.source)
        assert rep.max_loss > 0.1  # the audit is not vacuous
    plug_pairs = [
        (
            SelectionProblem(table[x][0], global_sensitivity=table[x][1]),
            SelectionProblem(table[y][0], global_sensitivity=table[y][1]),
        )
        for x in table
        for y in _neighbours(x, k)
    ]
    rep = audit(ExponentialMechanism(1.0), plug_pairs)
    assert rep.violates and rep.max_loss > 1.0


# ---------------------------------------------------------------------------
# the exact law
# ---------------------------------------------------------------------------


def _reference_log_probs(mech, problem, law):
    """log P[r] = log ∫ f(l) q_r(min(e^l, GS)) dl by mpmath quadrature with the independent laws."""
    loc, b, cap = mech._bound_parameters(problem)
    u = problem.scores
    gs = problem.global_sensitivity

    def q(l, r):
        s = np.array([min(math.exp(float(l)), gs)])
        return law(u, s, mech.epsilon2)[0, r]

    mp.mp.dps = 20
    pts = sorted({loc - 45 * b, loc, min(cap, loc + 45 * b), loc + 45 * b})
    pts = [p for p in pts if loc - 45 * b <= p <= loc + 45 * b]
    out = []
    for r in range(u.size):
        val = mp.quad(lambda l, r=r: mp.e ** (-abs(l - loc) / b) / (2 * b) * q(l, r), pts)
        out.append(float(mp.log(val)))
    return np.array(out)


@pytest.mark.parametrize(
    "scores,ls,gs,beta,selector",
    [
        ([2.0, 1.5, 0.0], 0.3, 1.0, 1.0, "em"),
        ([3.0, 1.0, 0.0], 0.2, 1.0, 0.2, "pf"),
        ([5.0, 4.0, 0.0], 0.5, 2.0, 3.0, "pf"),
    ],
)
def test_exact_law_against_quadrature(scores, ls, gs, beta, selector):
    p = SelectionProblem(scores, global_sensitivity=gs, local_sensitivity=ls)
    mech = PrivateSensitivityBound(0.5, 1.0, delta=1e-3, beta=beta, selector=selector)
    got = mech.log_probabilities(p)
    ref = _reference_log_probs(mech, p, LAWS[selector])
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-9)


def test_bound_distribution_formula_and_cap():
    p = SelectionProblem([1.0, 0.0], global_sensitivity=2.0, local_sensitivity=0.25)
    mech = PrivateSensitivityBound(0.5, 1.0, delta=1e-4, beta=0.2)
    loc, scale, cap = mech._bound_parameters(p)
    assert scale == pytest.approx(0.4)
    assert loc == pytest.approx(math.log(0.25) + 0.4 * math.log(1 / 2e-4))
    assert cap == pytest.approx(math.log(2.0))
    # P[L̂ < ln S(x)] = delta exactly (SPEC §9.2)
    assert 0.5 * math.exp(-(loc - math.log(0.25)) / scale) == pytest.approx(1e-4)
    # default beta: eps1 / ln(1/(2 delta)), a shift of exactly one unit
    d = PrivateSensitivityBound(0.5, 1.0, delta=1e-4)
    assert d.smoothness == pytest.approx(0.5 / math.log(5000))
    assert sensitivity_bound_shift(d.smoothness, 0.5, 1e-4) == pytest.approx(1.0)


def test_zero_sensitivity_and_ties():
    p = SelectionProblem([1.0, 1.0, 0.0], local_sensitivity=0.0)
    mech = PrivateSensitivityBound(0.5, 1.0)
    np.testing.assert_allclose(mech.probabilities(p), [0.5, 0.5, 0.0])
    draws = mech.select(p, size=2000, rng=1)
    assert set(np.unique(draws)) <= {0, 1}
    flat = SelectionProblem([2.0, 2.0])
    np.testing.assert_allclose(mech.probabilities(flat), [0.5, 0.5])


@pytest.mark.parametrize("selector", ["pf", "em", "rnm_laplace"])
def test_sampling_matches_law(selector):
    p = SelectionProblem([2.0, 1.5, 0.0, 1.0], global_sensitivity=1.0, local_sensitivity=0.3)
    mech = PrivateSensitivityBound(0.5, 1.0, delta=1e-3, beta=1.0, selector=selector)
    probs = mech.probabilities(p)
    assert probs.sum() == pytest.approx(1.0, abs=1e-12)
    draws = mech.select(p, size=6_000, rng=np.random.default_rng(5))
    assert_frequencies_match(draws, probs)
    assert isinstance(mech.select(p, rng=3), int)
    assert mech.select(p, rng=3) == mech.select(p, rng=3)


# ---------------------------------------------------------------------------
# privacy, accounting, registry, validation
# ---------------------------------------------------------------------------


def test_privacy_and_accountant():
    p = SelectionProblem([1.0, 0.0], relation="replace")
    mech = PrivateSensitivityBound(0.4, 0.6, delta=1e-5)
    assert mech.privacy(p) == sensitivity_bound_privacy(0.4, 0.6, 1e-5, relation="replace")
    assert (mech.privacy(p).epsilon, mech.privacy(p).delta, mech.privacy(p).relation) == (1.0, 1e-5, "replace")
    acc = Accountant(1.5, 1e-5)
    acc.spend(mech.privacy(p))
    with pytest.raises(BudgetExceededError):
        acc.spend(mech.privacy(p))
    assert len(acc.charges) == 1


def test_registry_names():
    mech = make_mechanism("psb_pf", 1.5, 1e-6)
    assert isinstance(mech, PrivateSensitivityBound) and mech.selector == "pf"
    assert (mech.epsilon1, mech.epsilon2, mech.delta) == (0.5, 1.0, 1e-6)
    assert make_mechanism("psb_em", 3.0, 1e-6).selector == "em"
    with pytest.raises(ValueError, match="delta"):
        make_mechanism("psb_pf", 1.0)  # approximate DP: delta must be given
    assert dpselect.PrivateSensitivityBound is PrivateSensitivityBound


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(epsilon1=0.0, epsilon2=1.0), "epsilon1"),
        (dict(epsilon1=1.0, epsilon2=math.nan), "epsilon2"),
        (dict(epsilon1=1.0, epsilon2=1.0, delta=0.0), "delta"),
        (dict(epsilon1=1.0, epsilon2=1.0, delta=0.5), "delta"),
        (dict(epsilon1=1.0, epsilon2=1.0, beta=-1.0), "beta"),
        (dict(epsilon1=1.0, epsilon2=1.0, selector="ld"), "selector"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        PrivateSensitivityBound(**kwargs)


def test_checks_before_randomness():
    mech = PrivateSensitivityBound(0.5, 1.0)
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    with pytest.raises(TypeError, match="problem"):
        mech.select([1.0, 2.0], rng=gen)
    with pytest.raises(ValueError, match="size"):
        mech.select(SelectionProblem([1.0, 0.0]), size=0, rng=gen)
    assert gen.bit_generator.state == state


def test_far_losers_keep_their_log_probability():
    """A loser with standardised gap 2500 even at Ŝ = GS: log P = log P[L̂ >= ln GS] - 2500 (to 1e-9).

    The law must not round it to the noiseless argmax (-inf): the exact cap term carries it.
    """
    p = SelectionProblem([1000.0, 0.0], global_sensitivity=1.0, local_sensitivity=1.0)
    mech = PrivateSensitivityBound(0.2, 5.0, delta=1e-9, beta=1.0, selector="em")
    loc, scale, cap = mech._bound_parameters(p)
    log_above = math.log1p(-0.5 * math.exp(-(loc - cap) / scale))  # loc > cap here
    got = mech.log_probabilities(p)
    assert got[1] == pytest.approx(log_above - 2500.0, abs=1e-9)
    assert got[0] == pytest.approx(0.0, abs=1e-12)


def test_bound_distribution_is_a_named_triple():
    from dpselect.mechanisms.sensitivity_bound import _BoundParameters

    p = SelectionProblem([1.0, 0.0], local_sensitivity=0.5)
    bound = PrivateSensitivityBound(1.0, 1.0, delta=0.05)._bound_parameters(p)
    assert isinstance(bound, _BoundParameters)
    assert (bound.loc, bound.scale, bound.cap) == tuple(bound)
    with pytest.raises(ValueError, match=r"delta must be in \(0, 1/2\)"):
        PrivateSensitivityBound(1.0, 1.0, delta=0.6)
