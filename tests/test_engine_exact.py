"""The noisy-max engine's exact law at any standardised gap (issue #17 items 1-3).

References are independent of the engine: closed forms (Cauchy, Laplace, Gumbel,
exponential), 60-digit mpmath quadrature of P[Z_1 - Z_2 > G] for t_3, P_4 and
P_1.5 (both sidednesses), and for Laplace-log-normal a 2-D Gauss-Legendre
integral over the two log-normal scales of the closed-form tail of a difference
of two Laplace variables.  The criterion is |error in log Pr| <= 1e-9 max(1, |log Pr|).
"""

from __future__ import annotations

import math
import os

import mpmath as mp
import numpy as np
import pytest
from scipy.special import lambertw, logsumexp

import dpselect
from conftest import assert_frequencies_match
from dpselect._engine import _noisy_max as noisy_max
from dpselect.analysis import audit
from dpselect.apps import counts as majority
from dpselect.noise import Exponential, Gumbel, Laplace, LaplaceLogNormal, PolynomialTail, StudentT

slow = pytest.mark.skipif(not os.environ.get("DPSELECT_SLOW"), reason="slow; set DPSELECT_SLOW=1")


def _loser(law, gap):
    """Engine's log Pr[the candidate `gap` noise units behind wins], two candidates."""
    return float(noisy_max.log_probabilities(np.array([0.0, -gap]), 1.0, law)[1])


def _close(value, ref, tol=1e-9):
    assert abs(value - ref) <= tol * max(1.0, abs(ref)), (value, ref, value - ref)


# ----------------------------------------------------------------------------- closed forms
@pytest.mark.parametrize("law", [StudentT(1.0), PolynomialTail(2.0)], ids=repr)
@pytest.mark.parametrize("gap", [1e2, 1e4, 1e6, 1e8, 1e12, 1e20, 1e60, 1e100, 1e200, 1e300])
def test_cauchy_two_candidates_closed_form(law, gap):
    # Z_1 - Z_2 is Cauchy with scale 2: P[> G] = 1/2 - atan(G/2)/pi = atan(2/G)/pi
    _close(_loser(law, gap), math.log(math.atan(2.0 / gap) / math.pi))


@pytest.mark.parametrize("gap", [1.0, 30.0, 1e3, 1e6, 1e100, 1e300])
def test_light_tails_closed_forms_at_any_gap(gap):
    # Laplace: P[L_1 - L_2 > G] = e^-G (2 + G)/4; Gumbel: logistic; exponential (PF): e^-G / 2
    _close(_loser(Laplace(), gap), -gap + math.log(2.0 + gap) - math.log(4.0))
    _close(_loser(Gumbel(), gap), -gap - math.log1p(math.exp(-gap)))
    _close(_loser(Exponential(), gap), -gap - math.log(2.0))


# ----------------------------------------------------------------------------- mpmath references
def _mp_law(kind, param):
    """(pdf, sf) of the symmetric law in mpmath (SPEC §2.3/§2.4 formulas)."""
    p = mp.mpf(param)
    if kind == "t":
        c = mp.gamma((p + 1) / 2) / (mp.sqrt(p * mp.pi) * mp.gamma(p / 2))

        def pdf(z):
            return c * (1 + z * z / p) ** (-(p + 1) / 2)

        def tail(a):  # P[Z > a], a >= 0
            return mp.betainc(p / 2, mp.mpf(1) / 2, 0, p / (p + a * a), regularized=True) / 2
    else:
        c = p * mp.sin(mp.pi / p) / (2 * mp.pi)

        def pdf(z):
            return c / (1 + abs(z) ** p)

        def tail(a):
            return mp.betainc(1 - 1 / p, 1 / p, 0, 1 / (1 + a**p), regularized=True) / 2

    def sf(z):
        return tail(z) if z >= 0 else 1 - tail(-z)

    return pdf, sf


def _mp_loser(kind, param, gap, one_sided):
    """log P[Z_1 - Z_2 > G] by 60-digit quadrature (breakpoints at the scores and geometric beyond)."""
    with mp.workdps(60):
        pdf, sf = _mp_law(kind, param)
        G = mp.mpf(gap)
        far = [G * mp.mpf(10) ** k for k in range(1, 400, 3)] + [mp.inf]
        if one_sided:  # density 2 pdf, cdf 1 - 2 sf on z >= 0
            val = mp.quad(lambda z: 2 * pdf(z) * (1 - 2 * sf(z - G)), [G, G + 1, G + 10, *far])
        else:  # F(z - G) = sf(G - z) by symmetry (no cancellation)
            val = mp.quad(lambda z: pdf(z) * sf(G - z), [-mp.inf, -10, 0, 10, G / 2, G - 10, G, G + 10, *far])
        return float(mp.log(val))


HEAVY = [  # P1.5: the 40-digit integral takes 10-13 s
    ("t", 3, StudentT(3)),
    ("p", 4, PolynomialTail(4)),
    pytest.param("p", 1.5, PolynomialTail(1.5), marks=pytest.mark.slow),
]


@pytest.mark.parametrize("kind,param,law", HEAVY, ids=["t3", "P4", "P1.5"])
@pytest.mark.parametrize("one_sided", [False, True])
def test_heavy_tails_against_mpmath_at_gap_1e12(kind, param, law, one_sided):
    noise = law.one_sided() if one_sided else law
    _close(_loser(noise, 1e12), _mp_loser(kind, param, 1e12, one_sided))


@slow
@pytest.mark.slow
@pytest.mark.parametrize("kind,param,law", HEAVY, ids=["t3", "P4", "P1.5"])
@pytest.mark.parametrize("one_sided", [False, True])
@pytest.mark.parametrize("gap", [10.0, 1e3, 1e6])
def test_heavy_tails_against_mpmath(kind, param, law, one_sided, gap):
    noise = law.one_sided() if one_sided else law
    _close(_loser(noise, gap), _mp_loser(kind, param, gap, one_sided))


def _mp_two_tails(kind, param, gap):
    """log 2 P[Z > G] in mpmath: P[Z_1 - Z_2 > G] = 2 P[Z > G] (1 + O(G^-min(2, kappa))) for these
    regularly varying tails (kappa = tail exponent), exact to far below 1e-12 at the gaps used."""
    with mp.workdps(60):
        return float(mp.log(2 * _mp_law(kind, param)[1](mp.mpf(gap))))


@pytest.mark.parametrize("kind,param,law", HEAVY, ids=["t3", "P4", "P1.5"])
@pytest.mark.parametrize("gap", [1e40, 1e100, 1e200, 1e300])
def test_heavy_tails_at_astronomical_gaps(kind, param, law, gap):
    _close(_loser(law, gap), _mp_two_tails(kind, param, gap))


def _lln_loser(sigma, gap, width=0.5, n=20):
    """log P[Z_1 - Z_2 > G], Z iid LLN(sigma): E over Y_1, Y_2 ~ N(0, 1) of the closed-form
    P[s_1 X_1 - s_2 X_2 > G] = (s_1^2 e^{-G/s_1} - s_2^2 e^{-G/s_2}) / (2 (s_1^2 - s_2^2)),
    s_i = e^{sigma Y_i}, by composite 2-D Gauss-Legendre in log space (cancellation-free)."""
    ys = float(lambertw(sigma * sigma * gap).real) / sigma  # the peak of the Y integrand
    edges = np.arange(-12.0, ys + 12.0 + width, width)
    x, w = np.polynomial.legendre.leggauss(n)
    y = (0.5 * (edges[1:] + edges[:-1])[:, None] + 0.5 * width * x).ravel()
    lw = np.tile(np.log(0.5 * width * w), edges.size - 1) - 0.5 * y * y - 0.5 * math.log(2 * math.pi)
    y1, y2 = np.meshgrid(y, y, indexing="ij")
    hi, d = np.maximum(y1, y2), -np.abs(y1 - y2)
    g = gap * np.exp(-sigma * hi)
    with np.errstate(divide="ignore", invalid="ignore"):
        ba = 2 * sigma * d - g * np.expm1(-sigma * d)
        logq = -g - math.log(2.0) + np.log(-np.expm1(ba)) - np.log(-np.expm1(2 * sigma * d))
    diag = d == 0
    logq[diag] = (-g - math.log(2.0) + np.log1p(g / 2))[diag]
    return float(logsumexp(logq + lw[:, None] + lw[None, :]))


@slow
@pytest.mark.slow
@pytest.mark.parametrize("sigma", [0.45, 1.0])
@pytest.mark.parametrize("gap", [10.0, 1e3, 1e6, 1e12])
def test_lln_against_two_dimensional_reference(sigma, gap):
    ref = _lln_loser(sigma, gap)
    assert abs(ref - _lln_loser(sigma, gap, 0.25, 24)) < 1e-12 * max(1.0, abs(ref))  # reference converged
    _close(_loser(LaplaceLogNormal(sigma), gap), ref)


@pytest.mark.parametrize(
    "law",
    [
        PolynomialTail(1.5),
        PolynomialTail(1.1),
        PolynomialTail(1.5).one_sided(),
        PolynomialTail(1.1).one_sided(),
        StudentT(0.5),
        LaplaceLogNormal(1.2),
    ],
    ids=repr,
)
def test_no_mass_lost_before_renormalisation(law):
    for scale in (0.05, 1.7, 1e-6, 1e-100):
        a = np.array([1.0, 0.0, 0.0, 0.6, -2.0]) / scale
        values, counts = np.unique(a - a.max(), return_counts=True)
        g = noisy_max._group_log_probabilities(values, counts.astype(float), law)
        assert abs(float(np.exp(g) @ counts) - 1.0) < 1e-12


# ----------------------------------------------------------------------------- the audits of issue #17
@pytest.mark.parametrize(
    "mech,eps",
    [(dpselect.SmoothNoisyMax(4, noise="student_t"), 4.0), (dpselect.SmoothPrivateSelection(4, one_sided=False), 4.0)],
    ids=["snm_t", "sps_two_sided"],
)
def test_issue17_audits_report_the_true_loss(mech, eps):
    x, y = majority.majority_problem([300, 0]), majority.majority_problem([301, 0])
    rep = audit(mech, [(x, y)])
    assert not rep.violates and rep.max_loss <= eps
    # and the loser's law is the mpmath one at the calibrated gap/scale
    scale, law = mech.calibrate(x)
    kind, param = ("t", law.df) if isinstance(law, StudentT) else ("p", law.gamma)
    _close(float(mech.log_probabilities(x)[1]), _mp_two_tails(kind, param, 1.0 / scale))


# ----------------------------------------------------------------------------- sampling vs law
FAMILIES = [
    Laplace(),
    Gumbel(),
    Exponential(),
    StudentT(0.5),
    StudentT(0.5).one_sided(),
    PolynomialTail(1.5),
    PolynomialTail(1.5).one_sided(),
    LaplaceLogNormal(1.0),
    LaplaceLogNormal(1.0).one_sided(),
]


@pytest.mark.parametrize("law", FAMILIES, ids=repr)
@pytest.mark.parametrize("scale", [1e-300, 5e-324])
def test_sampling_matches_law_near_overflow(law, scale):
    """Gaps of 1e300 noise units and gaps that overflow: no inf/NaN decides the winner."""
    scores = np.array([1.0, 0.0, 1.0, 1.0 - 1e-300])
    p = np.exp(noisy_max.log_probabilities(scores, scale, law))
    assert np.isfinite(p).all() and abs(p.sum() - 1.0) < 1e-12
    draws = noisy_max.sample_argmax(scores, scale, law, size=20_000, rng=1)
    assert_frequencies_match(draws, p)


@pytest.mark.parametrize("law", FAMILIES, ids=repr)
def test_sampling_matches_law_at_moderate_gaps(law):
    scores = np.array([2.0, 0.0, 1.0, -3.0])
    p = np.exp(noisy_max.log_probabilities(scores, 0.7, law))
    draws = noisy_max.sample_argmax(scores, 0.7, law, size=40_000, rng=2)
    assert_frequencies_match(draws, p)


@pytest.mark.parametrize(
    "make",
    [
        lambda: dpselect.SmoothNoisyMax(0.1, noise="student_t", df=0.5),
        lambda: dpselect.SmoothPrivateSelection(0.1, gamma=1.5, one_sided=False),
    ],
    ids=["snm_t_df0.5", "sps_gamma1.5"],
)
def test_issue17_neighbours_sampling_matches_law(make):
    mech = make()
    for counts in ([28891, 0], [28890, 0]):
        pr = majority.majority_problem(counts)
        p = mech.probabilities(pr)
        assert_frequencies_match(mech.select(pr, size=20_000, rng=3), p)


@pytest.mark.parametrize(
    "make,name",
    [
        (lambda: dpselect.SmoothNoisyMax(0.1, noise="student_t", df=0.01), "df"),
        (lambda: dpselect.SmoothPrivateSelection(0.1, gamma=1.01, one_sided=False), "gamma"),
    ],
)
def test_tails_too_heavy_for_floats_are_rejected(make, name):
    """Tail exponent < 0.1: draws beyond the largest double are not negligible (issue #17 item 2)."""
    pr = majority.majority_problem([28891, 0])
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    with pytest.raises(ValueError, match=name):
        make().probabilities(pr)
    with pytest.raises(ValueError, match=name):
        make().select(pr, rng=gen)
    assert gen.bit_generator.state == state  # raised before any randomness
