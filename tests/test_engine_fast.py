"""The engine's fast exact laws against independent computations.

Laplace noise is evaluated through power sums and linear recurrences
(:mod:`dpselect._engine_laplace`); the references are the engine's dense
candidates x nodes quadrature on the same inputs and a 40-digit mpmath
integral of f(y - a_r) prod_{s != r} F(y - a_s) for three candidates.
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

from dpselect._engine import _laplace as _engine_laplace
from dpselect._engine import _noisy_max as noisy_max
from dpselect.noise import Gumbel, Laplace, PolynomialTail, StudentT


def _groups(scores, scale):
    v, c = np.unique(noisy_max.standardised(np.asarray(scores, float), scale), return_counts=True)
    return v, c.astype(float)


rng = np.random.default_rng(7)
CASES = [
    [0.0, -1.0],
    [1.0, 0.0, 0.0, 0.6, -2.0],
    [0.0, -1e-300, -1e-10, -5.0, -1e300],
    list(rng.normal(size=60) * 3),
    list(np.round(rng.normal(size=400) * 10)),
    list(np.arange(300.0)),
    list(np.r_[np.zeros(5), -np.arange(1, 40) * 0.01, -1e5]),
]


@pytest.mark.parametrize("scores", CASES, ids=lambda s: f"m{len(s)}")
@pytest.mark.parametrize("scale", [1.0, 0.01, 3.0, 1e-200])
def test_laplace_closed_form_equals_dense_quadrature(scores, scale):
    if scale == 1e-200 and len(scores) > 100:
        pytest.skip("dense reference too slow at astronomical gaps with many scores")
    v, c = _groups(scores, scale)
    fin = np.isfinite(v)
    v, c = v[fin], c[fin]
    if v.size < 2:
        pytest.skip("a single finite group")
    fast = noisy_max._group_log_probabilities(v, c, Laplace())
    dense = noisy_max._dense_group_log_probabilities(v, c, Laplace())
    assert np.all(np.abs(fast - dense) <= 1e-13 * np.maximum(1.0, np.abs(dense)))


def _mp_laplace(scores):
    """Pr[r wins], scale 1, by 40-digit mpmath quadrature with breakpoints at the scores."""
    with mp.workdps(40):
        a = [mp.mpf(x) for x in scores]

        def F(z):
            return mp.exp(z) / 2 if z <= 0 else 1 - mp.exp(-z) / 2

        def f(z):
            return mp.exp(-abs(z)) / 2

        pts = [-mp.inf, *sorted(set(a)), mp.inf]
        out = []
        for r, ar in enumerate(a):

            def integrand(y, r=r, ar=ar):
                p = f(y - ar)
                for s, as_ in enumerate(a):
                    if s != r:
                        p *= F(y - as_)
                return p

            out.append(float(mp.log(mp.quad(integrand, pts))))
        return np.array(out)


@pytest.mark.parametrize("scores", [[0.0, -0.3, -2.5], [0.0, 0.0, -7.0], [0.0, -40.0, -41.0]])
def test_laplace_closed_form_against_mpmath(scores):
    got = noisy_max.log_probabilities(np.array(scores), 1.0, Laplace())
    ref = _mp_laplace(scores)
    ref -= np.log(np.exp(ref).sum())
    assert np.all(np.abs(got - ref) <= 1e-12 * np.maximum(1.0, np.abs(ref)))


@pytest.mark.parametrize("n", [1, 2, 7, 50, 1000])
def test_scans_against_sequential_recurrence(n):
    alpha, x = rng.random((n, 3)), rng.random((n, 3)) * 5
    y = x.copy()
    for k in range(1, n):
        y[k] += alpha[k] * y[k - 1]
    np.testing.assert_allclose(_engine_laplace.linear_scan(alpha, x), y, rtol=1e-13)
    np.testing.assert_allclose(_engine_laplace.log_linear_scan(np.log(alpha), np.log(x)), np.log(y), rtol=1e-13)


def test_laplace_many_distinct_scores_sum_to_one_and_order():
    scores = np.random.default_rng(3).normal(size=20_000) * 10
    lp = noisy_max.log_probabilities(scores, 2.0, Laplace())
    assert abs(np.exp(lp).sum() - 1.0) < 1e-12
    order = np.argsort(scores)
    assert np.all(np.diff(lp[order]) >= -1e-12 * np.abs(lp[order][1:]))  # monotone in the score


# ----------------------------------------------------------------------------- analytic laws: no breakpoints
def _with_breakpoints(law):
    """The same law declared non-analytic, so the mesh puts a breakpoint at every score."""
    param = law.df if isinstance(law, StudentT) else law.gamma
    return type("WithBreakpoints", (type(law),), {"analytic_strip": 0.0})(param)


def _analytic_cases():
    """(law, scores, scale) cases; 300 distinct scores off scale 1 take 5-20 s each: marked slow."""
    laws = [StudentT(3.0), StudentT(0.5), StudentT(30.0), PolynomialTail(4.0), PolynomialTail(2.0)]
    return [
        pytest.param(
            law,
            scores,
            scale,
            id=f"{scale}-m{len(scores)}-{law!r}",
            marks=[pytest.mark.slow] if len(scores) == 300 and scale != 1.0 else [],
        )
        for scale in (1.0, 0.01, 3.0)
        for scores in CASES[:6]
        for law in laws
    ]


@pytest.mark.parametrize(("law", "scores", "scale"), _analytic_cases())
def test_analytic_laws_need_no_breakpoints_at_the_scores(law, scores, scale):
    v, c = _groups(scores, scale)
    fin = np.isfinite(v)
    v, c = v[fin], c[fin]
    if v.size < 2:
        pytest.skip("a single finite group")
    fast = noisy_max._group_log_probabilities(v, c, law)
    ref = noisy_max._group_log_probabilities(v, c, _with_breakpoints(law))
    assert np.all(np.abs(fast - ref) <= 1e-13 * np.maximum(1.0, np.abs(ref)))


@pytest.mark.parametrize("scores", CASES[:6], ids=lambda s: f"m{len(s)}")
def test_gumbel_engine_is_the_softmax(scores):
    from scipy.special import logsumexp

    a = noisy_max.standardised(np.asarray(scores, float), 0.7)
    got = noisy_max.log_probabilities(np.asarray(scores, float), 0.7, Gumbel())
    ref = a - logsumexp(a)
    assert np.all(np.abs(got - ref) <= 1e-13 * np.maximum(1.0, np.abs(ref)))


@pytest.mark.parametrize("df", [0.1, 0.5, 3.0, 30.0])
def test_student_t_logpdf_against_mpmath(df):
    z = np.r_[-np.logspace(-300, 300, 61), 0.0, np.logspace(-300, 300, 61)]
    got = StudentT(df).logpdf(z)
    with mp.workdps(40):
        d = mp.mpf(df)
        c = mp.loggamma((d + 1) / 2) - mp.loggamma(d / 2) - mp.log(mp.sqrt(d * mp.pi))
        ref = np.array([float(c - (d + 1) / 2 * mp.log(1 + mp.mpf(x) ** 2 / d)) for x in z])
    assert np.all(np.abs(got - ref) <= 1e-14 * np.maximum(1.0, np.abs(ref)))


def _chebyshev_cases():
    """(law, scale) cases: 11,001 scores each (4-26 s); the default run keeps four laws at scale 4."""
    laws = [StudentT(3.0), StudentT(0.5), StudentT(30.0), PolynomialTail(4.0), PolynomialTail(2.0), Gumbel()]
    heavy = (repr(StudentT(30.0)), repr(PolynomialTail(4.0)))
    return [
        pytest.param(
            law, scale, id=f"{scale}-{law!r}", marks=[pytest.mark.slow] if scale == 100.0 or repr(law) in heavy else []
        )
        for scale in (4.0, 100.0)
        for law in laws
    ]


@pytest.mark.parametrize(("law", "scale"), _chebyshev_cases())
def test_chebyshev_candidates_equal_the_direct_sum(law, scale):
    from dpselect._engine import _mesh as mesh

    r = np.random.default_rng(5)
    sc = np.r_[r.normal(size=10000) * 10, r.integers(0, 50, size=1000).astype(float), -1e4]
    v, c = _groups(sc, scale)
    assert noisy_max._chebyshev_grid(v, c, law) is not None
    got = noisy_max._dense_group_log_probabilities(v, c, law)
    anchor, w, logw, far = mesh.nodes(v, c, law)
    ref = np.logaddexp(noisy_max._node_sums(v, c, law, anchor, w, logw), far)
    assert np.all(np.abs(got - ref) <= 1e-13 * np.maximum(1.0, np.abs(ref)))
