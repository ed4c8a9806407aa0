"""The engine's separated path (:mod:`dpselect._engine_separated`): scores below the lower
cut replaced by Chebyshev points for laws analytic on a sector (one-sided P_gamma and t,
Laplace-log-normal of either sidedness).

References: the engine's direct candidates x nodes sum on the same nodes (isolates the
interpolation), the direct sum on an independent mesh that starts below the scores
(breakpoints and geometric refinement at every score), and a 30-digit mpmath integral
for one-sided P_2 (F(z) = 2 atan(z)/pi).  The criterion is the fast paths' own:
|error in log Pr| <= 1e-13 max(1, |log Pr|).  Sampling frequencies vs the exact law.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

import mpmath as mp
import numpy as np
import pytest

import dpselect
from conftest import assert_frequencies_match
from dpselect._engine import _mesh as mesh
from dpselect._engine import _noisy_max as noisy_max
from dpselect._engine import _separated as sep
from dpselect.noise import LaplaceLogNormal, PolynomialTail, StudentT

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_core import smooth_problem

TOL = 1e-13
slow = pytest.mark.skipif(not os.environ.get("DPSELECT_SLOW"), reason="slow; set DPSELECT_SLOW=1")


def _worst(got, ref):
    return float(np.max(np.abs(got - ref) / np.maximum(1.0, np.abs(ref))))


def _direct(values, counts, law, y_lo=None, r0=0.0):
    anchor, w, logw, far = mesh.nodes(values, counts, law, y_lo, r0)
    return np.logaddexp(noisy_max._node_sums(values, counts, law, anchor, w, logw), far)


def _groups(scores, scale):
    v, c = np.unique(noisy_max.standardised(np.asarray(scores, float), scale), return_counts=True)
    return v, c.astype(float)


LAWS = [
    PolynomialTail(4.0).one_sided(),
    PolynomialTail(1.5).one_sided(),
    PolynomialTail(2.0).one_sided(),
    StudentT(3.0).one_sided(),
    LaplaceLogNormal(0.45),
    LaplaceLogNormal(1.0).one_sided(),
]
rng = np.random.default_rng(11)
SCORES = {
    "normal2000": rng.normal(size=2000) * 10,
    "cluster400": np.r_[0.0, -rng.random(399) * 0.5],
    "rounded2000": np.round(rng.normal(size=2000) * 30),  # ties
    "two-clusters": np.r_[-rng.random(600) * 0.2, -40.0 - rng.random(600)],
}


def test_sectors_are_the_proved_ones():
    assert LaplaceLogNormal(1.0).right_sector == math.pi / 2
    assert LaplaceLogNormal(1.0).one_sided().right_sector == math.pi / 2
    assert PolynomialTail(4.0).one_sided().right_sector == math.pi / 8
    assert StudentT(3.0).one_sided().right_sector == math.pi / 8
    assert StudentT(0.5).one_sided().right_sector == math.pi / 4
    for law in (PolynomialTail(4.0), StudentT(3.0), dpselect.noise.Laplace()):  # two-sided heavy: not declared
        assert law.right_sector == 0.0


@pytest.mark.parametrize("law", LAWS, ids=repr)
@pytest.mark.parametrize(  # two-clusters: 1,200 scores in two far clusters, 10-20 s per law
    "name", [pytest.param(n, marks=pytest.mark.slow) if n == "two-clusters" else n for n in SCORES]
)
@pytest.mark.parametrize("scale", [10.0])
def test_separated_equals_direct_sum_on_the_same_nodes(law, name, scale):
    if name == "normal2000" and law.right_sector == math.pi / 2 and not os.environ.get("DPSELECT_SLOW"):
        pytest.skip("the direct LLN reference over 2000 groups takes ~80 s; set DPSELECT_SLOW=1")
    v, c = _groups(SCORES[name], scale)
    y_lo = mesh.lower_end(v, c, law)
    grid = sep.separated_grid(v, c, law, y_lo)
    if grid is None:
        pytest.skip("path not taken (too few groups per Chebyshev point)")
    if (~grid.proxied).sum() > 40 and not np.isfinite(law.support[0]):
        pytest.skip("cut below many scores: the direct LLN reference would take minutes")
    got = noisy_max._group_log_probabilities(v, c, law)
    ref = _direct(v, c, law, y_lo, grid.r0)
    worst = _worst(got, ref)
    print(f"{law!r} {name} scale {scale}: worst relative error {worst:.2e}")
    assert worst <= TOL


@pytest.mark.parametrize(
    "law",
    [
        PolynomialTail(4.0).one_sided(),
        pytest.param(LaplaceLogNormal(0.45), marks=[slow, pytest.mark.slow]),  # ~200 s: 140 x 1e5 LLN cdfs
        pytest.param(LaplaceLogNormal(1.0).one_sided(), marks=[slow, pytest.mark.slow]),
    ],
    ids=repr,
)
def test_separated_equals_direct_sum_on_a_mesh_through_the_scores(law):
    """An independent node set: the cut forced down to the top score (one-sided) or below
    every score, so the mesh has a breakpoint (and, for LLN, geometric refinement) at each
    of the 140 scores and no refinement above the cut."""
    v = np.sort(-np.random.default_rng(1).random(140) * 0.02)
    v -= v.max()
    c = np.ones(v.size)
    y_lo = mesh.lower_end(v, c, law)
    assert sep.separated_grid(v, c, law, y_lo) is not None
    got = noisy_max._group_log_probabilities(v, c, law)
    below = 0.0 if np.isfinite(law.support[0]) else -0.2  # the support's edge, or below the scores
    ref = _direct(v, c, law, below)
    worst = _worst(got, ref)
    print(f"{law!r}: worst relative error vs the mesh through the scores {worst:.2e}")
    assert worst <= TOL


def _mp_half_cauchy(values, rows):
    """log Pr[group r wins] for one-sided P_2 (density 2/(pi (1 + z^2)), cdf 2 atan(z)/pi on
    z >= 0), 30 digits: int_0^inf f(y - a_r) prod_{s != r} F(y - a_s) dy."""
    with mp.workdps(30):
        a = [mp.mpf(float(x)) for x in values]
        out = []
        for r in rows:

            def integrand(y, r=r):
                p = 2 / (mp.pi * (1 + (y - a[r]) ** 2))
                for s, a_s in enumerate(a):
                    if s != r:
                        p *= 2 * mp.atan(y - a_s) / mp.pi
                return p

            out.append(float(mp.log(mp.quad(integrand, [0, 0.25, 1, 4, 16, 64, 256, 1024, mp.inf]))))
        return np.array(out)


@pytest.mark.slow  # over ~10 s on two loaded cores: run by CI's slow step
def test_separated_against_mpmath_half_cauchy():
    law = PolynomialTail(2.0).one_sided()
    v = np.r_[-np.random.default_rng(2).random(119) * 0.3, 0.0]
    v = np.sort(v)
    c = np.ones(v.size)
    assert sep.separated_grid(v, c, law, mesh.lower_end(v, c, law)) is not None
    got = noisy_max.log_probabilities(v, 1.0, law)
    rows = [0, 60, 119]
    ref = _mp_half_cauchy(v, rows)
    worst = _worst(got[rows], ref)
    print(f"one-sided P_2, 120 scores: worst relative error vs mpmath {worst:.2e}")
    assert worst <= 1e-12


@pytest.mark.parametrize(
    "make,m",
    [
        pytest.param(lambda: dpselect.SmoothPrivateSelection(1.0), 3000, marks=pytest.mark.slow),  # ~13 s
        (lambda: dpselect.SmoothNoisyMax(1.0, 1e-6, noise="lln"), 400),
    ],
    ids=["sps_one_sided", "snm_lln"],
)
def test_sampling_matches_the_separated_law(make, m):
    mech, pr = make(), smooth_problem(m)
    scale, law = mech.calibrate(pr)
    v, c = _groups(pr.scores, scale)
    assert sep.separated_grid(v, c, law, mesh.lower_end(v, c, law)) is not None
    p = mech.probabilities(pr)
    assert abs(p.sum() - 1.0) < 1e-12
    assert_frequencies_match(mech.select(pr, size=20_000, rng=5), p)
