"""Quantile defaults (issue 31 / 30.5 / 33.4): the score, atoms on the grid, the default grid, clamping,
the order of private_quantiles, the jittered real path, and exact audits (mathematics §12.1-12.4).

* exhaustive audit of the single-quantile grid law over every dataset of <= 4 records (values on and
  off the grid, at the bounds) and every neighbour, both relations, with negative controls;
* the recursive method's exact law (root x child, enumerated on the grid) audited over neighbours, with
  the composition over levels dropped as a control;
* atoms: a tie on the grid (0, a bound) is output exactly with the probability its score gives;
* 70 % zeros, epsilon = 10, n = 10^4, 100x loose bounds: deciles within 0.2 (were ~3e4 off);
* out-of-bounds records: clamped, no exception, no warning, the same law as the clamped data;
  on_out_of_bounds="raise" refuses with a message holding only public values;
* private_quantiles follows the order of qs (numpy's convention).
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest

from conftest import on_grid
from dpselect.analysis import privacy_loss
from dpselect.apps import quantiles as Q
from dpselect.apps.quantiles._exponential import piecewise_em as QQ
from dpselect.apps.quantiles._exponential import quantile_pieces as QL
from dpselect.apps.quantiles._multi import quantiles as QM
from test_fp_quantiles import BOUNDS, LAM, _worst_loss, brute_law, datasets, law_on_grid, lib_law, neighbours


def _pieces(law):
    """(lo, hi, p) of a law over pieces."""
    return law.lo, law.hi, law.probabilities


GRID = np.arange(0, 9) * LAM


def _worst(law, relation, max_n=4):
    return _worst_loss(law, relation, max_n)


# ---------------------------------------------------------------------------
# single quantile: exhaustive audit on <= 4 records, both relations, controls
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("relation", ["add_remove", "replace"])
@pytest.mark.parametrize("q", [0.1, 0.5, 0.75, 0.9])
def test_grid_audit_four_records(q, relation):
    eps = 1.0
    worst = _worst(lambda x: lib_law(x, q, eps, relation), relation)
    assert 0.4 * eps < worst <= eps * (1 + 1e-9)


def test_grid_law_is_the_brute_force_on_four_records():
    for x in itertools.islice(datasets(4), 0, None, 5):
        for q in (0.25, 0.9):
            np.testing.assert_allclose(lib_law(x, q, 2.0), brute_law(x, q, 2.0), rtol=1e-12, atol=1e-15)


def test_negative_controls_four_records():
    eps = 1.0

    def doubled(x):  # epsilon doubled in the weights (sensitivity understated)
        s = QL.check_sample(x, BOUNDS)
        pc = QL.pieces(s, LAM, atoms=True)
        return law_on_grid(pc.lo, pc.hi, QL.normalise(QL.log_masses(pc, s.n, 0.75, eps, "add_remove", 0.5)))

    assert _worst(doubled, "add_remove", 3) > 1.5 * eps

    def unnormalised_indexp(x):  # IndExp's term without the 1 / max(q, 1 - q): sensitivity > 1
        s = QL.check_sample(x, BOUNDS)
        pc = QL.pieces(s, LAM, atoms=True)
        q, n = 0.75, s.n
        psi = np.maximum(
            QL.rank_distance(pc.L, pc.C, n, q, "add_remove", "grid"), np.maximum(pc.L - q * n, q * n - pc.C) / (1 - q)
        )
        return law_on_grid(pc.lo, pc.hi, QL.normalise(pc.logsize - 0.5 * eps * psi))

    assert _worst(unnormalised_indexp, "add_remove", 3) > 1.2 * eps


def test_ties_term_is_sensitivity_one_but_not_used():
    """OpenDP's score |(1 - q) L - q (n - C)| / w (a candidate's own ties excluded) is 1-Lipschitz
    (mathematics §12.1), but its zero is not x_(k): on a heavy atom the max with it moves the peak."""
    q, w = 0.5, 0.5
    for x in datasets(4):
        for y in neighbours(x, "add_remove"):
            for t in GRID:
                sx = abs((1 - q) * (x < t).sum() - q * (x > t).sum()) / w
                sy = abs((1 - q) * (y < t).sum() - q * (y > t).sum()) / w
                assert abs(sx - sy) <= 1 + 1e-12
    # 10 % below v, 50 % at v, 40 % above: the median is v, the ties term prefers the gap above it
    x = np.array([0.0] * 10 + [1.0] * 50 + [1.75] * 40)
    L, C = (x < 1.25).sum(), (x <= 1.25).sum()
    atom, gap = abs(0.5 * 10 - 0.5 * 40) / w, abs(0.5 * L - 0.5 * (100 - C)) / w
    assert gap < atom and Q.true_quantile(x, 0.5) == 1.0
    lo, hi, p = _pieces(Q.quantile_law(x, 0.5, 1.0, bounds=BOUNDS, granularity=LAM))
    assert p[(lo == 1.0) & (hi == 1.0)].sum() > 0.99  # the library's score keeps it on the atom


# ---------------------------------------------------------------------------
# atoms on the grid
# ---------------------------------------------------------------------------


def test_atom_at_a_bound_and_at_zero_is_released_exactly():
    rng = np.random.default_rng(0)
    x = np.concatenate((np.zeros(700), rng.gamma(2.0, 50.0, 300)))
    for q in (0.1, 0.5):
        lo, hi, p = _pieces(Q.quantile_law(x, q, 1.0, bounds=(0, 1000)))
        assert p[(lo == 0) & (hi == 0)].sum() > 0.999
        assert Q.private_quantile(x, q, 1.0, bounds=(0, 1000), rng=1) == 0.0
        assert Q.private_quantile(x - 500, q, 1.0, bounds=(-500, 1000), rng=1) == -500.0  # at a bound, off 0
    # the atom's probability is its score's: exp(-eps psi / 2) per grid point, as every other point
    x = np.array([0.0, 0.0, 1.0, 1.1])
    lo, hi, p = _pieces(Q.quantile_law(x, 0.25, 1.3, bounds=BOUNDS, granularity=LAM))
    pmf = law_on_grid(lo, hi, p)
    np.testing.assert_allclose(pmf, brute_law(x, 0.25, 1.3), rtol=1e-12)
    assert pmf[0] == pmf.max()


# ---------------------------------------------------------------------------
# default grid: from the bounds' magnitude; cost stays logarithmic
# ---------------------------------------------------------------------------


def test_default_grid_from_the_bounds_magnitude():
    assert QQ.default_quantile_granularity(0.0, 400.0) == 2.0**-32
    assert QQ.default_quantile_granularity(0.0, 40_000.0) == 2.0**-25
    assert QQ.default_quantile_granularity(-1.0, 1.0) == 2.0**-40
    assert QQ.default_quantile_granularity(1e6, 1e6 + 1) == 2.0**-21  # <= 2^-20 of the width
    lam = QQ.default_quantile_granularity(1e6, 1e6 + 1e-9)
    assert lam <= 1e-9 and 1e6 < 2.0**51 * lam
    assert QQ.default_quantile_granularity(0.0, 1e-320) == 2.0**-1074
    x = np.random.default_rng(2).gamma(2.0, 20.0, size=10_000)
    tight = Q.quantile_expected_error(x, 0.1, 10.0, bounds=(0, 400))
    loose = Q.quantile_expected_error(x, 0.1, 10.0, bounds=(0, 40_000))
    assert loose < 1.05 * tight  # 100x looser bounds cost nothing at epsilon = 10
    y = Q.private_quantile(x, 0.1, 10.0, bounds=(0, 40_000), rng=0)
    assert on_grid(y, 2.0**-25)


# ---------------------------------------------------------------------------
# many quantiles: order, jitter on real data, the recursive method's exact law
# ---------------------------------------------------------------------------


def test_private_quantiles_follow_the_order_asked():
    x = np.random.default_rng(0).normal(size=5000)
    qs = [0.9, 0.1, 0.5, 0.1]
    for method in ("joint", "recursive"):
        out = Q.private_quantiles(x, qs, 1e4, bounds=(-6, 6), method=method, rng=1)
        np.testing.assert_allclose(out, np.quantile(x, qs, method="inverted_cdf"), atol=0.01)
        assert out[0] > out[2] > max(out[1], out[3])
    ints = np.random.default_rng(0).integers(0, 100, size=3000)
    out = Q.private_quantiles(ints, qs, 1e4, bounds=(0, 99), rng=1)
    assert out.dtype == np.int64 and np.array_equal(out, np.quantile(ints, qs, method="inverted_cdf"))


@pytest.mark.parametrize("method", ["auto", "joint", "recursive"])
def test_zero_inflated_deciles_do_not_collapse(method):
    rng = np.random.default_rng(3)
    n = 10_000
    x = np.where(rng.random(n) < 0.7, 0.0, rng.gamma(2.0, 50.0, n))
    qs = np.arange(1, 10) / 10
    truth = np.quantile(x, qs, method="inverted_cdf")
    for bounds in ((0.0, 1000.0), (0.0, 100_000.0)):
        out = Q.private_quantiles(x, qs, 10.0, bounds=bounds, method=method, rng=1)
        assert on_grid(out, QQ.default_quantile_granularity(*bounds))
        assert np.abs(out - truth).mean() < 0.2  # the collapse put the top deciles ~3e4 off
        np.testing.assert_array_equal(out[:6], 0.0)  # the atom at 0, exactly


def test_jitter_floor_keeps_the_grid_and_the_bounds():
    x = np.array([0.0] * 50 + [0.3, 1.0, 2.0] * 5)
    for method in ("joint", "recursive"):
        for seed in range(20):
            o = Q.private_quantiles(x, [0.1, 0.5, 0.99], 2.0, bounds=BOUNDS, granularity=LAM, method=method, rng=seed)
            assert on_grid(o, LAM) and o.min() >= 0.0 and o.max() <= 2.0
    assert QM._fine_grid(LAM, 0.0, 2.25) == LAM * 2.0**-10
    assert QM._fine_grid(1.0, 0.0, 2.0**49) == 2.0**-1  # indices stay below 2^51


def recursive_law(x, q1, q2, eps, lam=LAM, bounds=BOUNDS, levels=2):
    """Exact law of _recursive on qs = (q1, q2) (root: q2; left child: records < o at q1 / q2), on the grid:
    {(o1, o2) grid indices: probability}, written from the algorithm (Kaplan et al. 2022, Alg. 1)."""
    e = eps / levels
    lo, hi, p = _pieces(Q.quantile_law(x, q2, e, bounds=bounds, granularity=lam))
    out = {}
    for a, b, pr in zip(lo, hi, p):
        if b < a or pr == 0:
            continue
        for k2 in range(round(a / lam), round(b / lam) + 1):
            o2 = k2 * lam
            left = x[x < o2]
            if o2 <= bounds[0]:
                out[(k2, k2)] = out.get((k2, k2), 0.0) + pr / (round(b / lam) - round(a / lam) + 1)
                continue
            if left.size == 0:  # no record: the single-quantile law of an empty node is uniform
                pts = np.arange(math.ceil(bounds[0] / lam), k2 + 1)
                probs = np.full(pts.size, 1.0 / pts.size)
            else:
                llo, lhi, lp = _pieces(
                    Q.quantile_law(left, min(1.0, q1 / q2), e, bounds=(bounds[0], o2), granularity=lam)
                )
                pmf = law_on_grid(llo, lhi, lp, lam=lam, bounds=(bounds[0], o2))
                pts = np.arange(math.ceil(bounds[0] / lam), k2 + 1)
                probs = pmf
            w = pr / (round(b / lam) - round(a / lam) + 1)
            for k1, pk in zip(pts, probs):
                key = (int(min(k1, k2)), k2)
                out[key] = out.get(key, 0.0) + w * pk
    return out


def _as_vector(law, keys):
    return np.array([law.get(k, 0.0) for k in keys])


def test_recursive_exact_law_matches_sampling():
    x = np.array([0.3, 1.0, 1.0, 1.75])
    law = recursive_law(x, 0.3, 0.7, 2.0)
    assert sum(law.values()) == pytest.approx(1.0)
    s = QL.check_sample(x, BOUNDS)
    gen = np.random.default_rng(5)
    n = 8000
    draws = [
        tuple(np.round(QM._recursive(s, np.array([0.3, 0.7]), 2.0, "add_remove", gen, LAM) / LAM).astype(int))
        for _ in range(n)
    ]
    keys = sorted(law)
    freq = np.array([sum(1 for d in draws if d == k) for k in keys]) / n
    p = _as_vector(law, keys)
    assert np.all(np.abs(freq - p) <= 5 * np.sqrt(np.maximum(p * (1 - p), 1 / n) / n))


def test_recursive_exact_audit_and_control():
    eps, worst, worst_ctrl = 1.0, 0.0, 0.0
    for x in datasets(3):
        lx = recursive_law(x, 0.3, 0.7, eps)
        cx = recursive_law(x, 0.3, 0.7, eps, levels=1)  # control: each level at the full epsilon
        for y in neighbours(x, "add_remove"):
            ly = recursive_law(y, 0.3, 0.7, eps)
            keys = sorted(set(lx) | set(ly))
            worst = max(worst, privacy_loss(np.log(_as_vector(lx, keys)), np.log(_as_vector(ly, keys))))
            cy = recursive_law(y, 0.3, 0.7, eps, levels=1)
            keys = sorted(set(cx) | set(cy))
            worst_ctrl = max(worst_ctrl, privacy_loss(np.log(_as_vector(cx, keys)), np.log(_as_vector(cy, keys))))
    assert 0.3 * eps < worst <= eps * (1 + 1e-9)
    assert worst_ctrl > 1.1 * eps  # 1.20


# ---------------------------------------------------------------------------
# out-of-bounds records: clamped by default, nothing observable
# ---------------------------------------------------------------------------

CALLS = [
    lambda x, **k: Q.private_quantile(x, 0.3, 1.0, bounds=(0, 2), rng=0, **k),
    lambda x, **k: Q.private_median(x, 1.0, bounds=(0, 2), rng=0, **k),
    lambda x, **k: Q.private_quantiles(x, [0.2, 0.8], 1.0, bounds=(0, 2), rng=0, **k),
    lambda x, **k: Q.private_quantiles(x, [0.2, 0.8], 1.0, bounds=(0, 2), rng=0, method="recursive", **k),
]


@pytest.mark.parametrize("call", CALLS)
def test_out_of_bounds_neighbours_identical_warnings_and_no_exception(call):
    x = np.array([0.3, 1.0, 1.0, 1.75])
    for extra in (-987654.321, 2.5, 123456.75):
        y = np.append(x, extra)
        clamped = np.append(x, min(max(extra, 0.0), 2.0))
        with warnings.catch_warnings(record=True) as wx:
            warnings.simplefilter("always")
            a = call(np.append(x, 1.0))
        with warnings.catch_warnings(record=True) as wy:
            warnings.simplefilter("always")
            b = call(y)
        assert [str(w.message) for w in wx] == [str(w.message) for w in wy] == []
        np.testing.assert_array_equal(b, call(clamped))  # the same draws as the clamped data
        assert np.all(np.asarray(a) >= 0) and np.all(np.asarray(b) <= 2)
    _lo, _hi, p = _pieces(Q.quantile_law(np.append(x, 99.0), 0.3, 1.0, bounds=(0, 2), granularity=LAM))
    _lo2, _hi2, p2 = _pieces(Q.quantile_law(np.append(x, 2.0), 0.3, 1.0, bounds=(0, 2), granularity=LAM))
    np.testing.assert_array_equal(p, p2)


@pytest.mark.parametrize("call", CALLS)
def test_out_of_bounds_raise_is_opt_in_and_names_no_data(call):
    y = np.array([0.3, 1.0, -987654.321])
    with pytest.raises(ValueError, match="on_out_of_bounds") as err:
        call(y, on_out_of_bounds="raise")
    assert "987654" not in str(err.value) and "0.3" not in str(err.value)
    with pytest.raises(ValueError, match="on_out_of_bounds"):
        call(y, on_out_of_bounds="ignore")
    ints = np.array([3, 5, 250], dtype=np.int64)
    assert Q.private_quantile(ints, 0.9, 50.0, bounds=(0, 10), rng=0) == 10  # clamped to the bound
