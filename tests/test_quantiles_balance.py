"""The median's balance term at small epsilon: score max(psi, O) (mathematics §12.1).

O(t) = |(1 - q) #{x < t} - q #{x > t}| / w (OpenDP's balance, ties at t excluded) joins the score
at q = 1/2 and epsilon <= 0.1 (a rule on public q and epsilon).  Checked: the library's law equals a
brute force from direct counts, integer and grid outputs; exhaustive audits over every dataset of
<= 4 records and every neighbour, both relations; negative controls (the add/remove normalisation
used under replace, and O doubled) caught; the rule reads q and epsilon only; the gain on a tied
median and the unchanged law elsewhere.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpselect.apps import quantiles as Q
from dpselect.apps.quantiles._exponential import mechanism as M
from dpselect.apps.quantiles._exponential import quantile_pieces as QL
from test_fp_quantiles import LAM, _worst_loss, lib_law
from test_fp_quantiles import datasets as grid_datasets
from test_quantiles import BOUNDS as INT_BOUNDS
from test_quantiles import UNIVERSE as INTS
from test_quantiles import _audit_integer, direct_psi, law_on_integers

EPS = 0.1


def balance(x, t, relation):
    w = 0.5 if relation == "add_remove" else 1.0
    return abs(0.5 * (x < t).sum() - 0.5 * (x > t).sum()) / w


def brute(x, cands, relation, eps=EPS, scale=1.0):
    s = [max(direct_psi(x, t, 0.5, relation, continuous=True), scale * balance(x, t, relation)) for t in cands]
    w = np.exp(-0.5 * eps * (np.array(s) - min(s)))
    return w / w.sum()


def int_law(x, relation, eps=EPS):
    return law_on_integers(*_law_parts(Q.quantile_law(x, 0.5, eps, bounds=INT_BOUNDS, relation=relation)))


def _law_parts(law):
    return law.lo, law.hi, law.probabilities


GRID = np.arange(0, 9) * LAM


@pytest.mark.parametrize("relation", ["add_remove", "replace"])
def test_law_is_the_brute_force(relation):
    for x in grid_datasets(4):
        np.testing.assert_allclose(lib_law(x, 0.5, EPS, relation), brute(x, GRID, relation), rtol=1e-12, atol=1e-15)
    for x in grid_datasets(3):
        xi = np.round(x * 2).astype(np.int64)  # integers 0..4
        np.testing.assert_allclose(int_law(xi, relation), brute(xi, INTS, relation), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("relation", ["add_remove", "replace"])
def test_exhaustive_audit_four_records(relation):
    worst_grid = _worst_loss(lambda x: lib_law(x, 0.5, EPS, relation), relation, 4)
    assert 0.4 * EPS < worst_grid <= EPS * (1 + 1e-9)
    worst_int, delta = _audit_integer(0.5, EPS, relation, lambda x: int_law(x, relation))
    assert 0.4 * EPS < worst_int <= EPS * (1 + 1e-9) and delta <= 1e-12


def test_negative_controls_caught():
    # the add/remove normalisation (w = 1/2) used under replace: one moved record shifts L - G by 2
    def wrong_w(x):
        s = [max(direct_psi(x, t, 0.5, "replace", continuous=True), balance(x, t, "add_remove")) for t in GRID]
        w = np.exp(-0.5 * EPS * np.array(s))
        return w / w.sum()

    assert _worst_loss(wrong_w, "replace", 3) > 1.5 * EPS

    def doubled(x):  # O counted twice: sensitivity 2
        return brute(x, GRID, "add_remove", scale=2.0)

    assert _worst_loss(doubled, "add_remove", 3) > 1.5 * EPS


def test_rule_reads_public_q_and_epsilon_only():
    assert M.uses_balance(0.5, 0.1) and M.uses_balance(0.5, 0.01)
    assert not M.uses_balance(0.5, 0.11) and not M.uses_balance(0.49, 0.1) and not M.uses_balance(0.9, 0.05)
    x = np.array([1, 2, 2, 3])  # above the threshold the law is psi's alone (brute force without O)
    law = int_law(x, "add_remove", eps=0.2)
    psi = np.array([direct_psi(x, t, 0.5, "add_remove", continuous=True) for t in INTS])
    ref = np.exp(-0.1 * (psi - psi.min()))
    np.testing.assert_allclose(law, ref / ref.sum(), rtol=1e-12)


def test_tied_median_gains_at_small_epsilon():
    # ages-like: every integer an atom, the median inside a symmetric run
    x = np.repeat(np.arange(20, 61), np.r_[np.arange(1, 22), np.arange(20, 0, -1)] * 3).astype(np.int64)
    s = QL.check_sample(x, (0, 100))
    pc = M.padded_pieces(s)
    t = s.order_statistic(QL.target_rank(0.5, s.n))
    p_psi = QL.normalise(QL.log_masses(pc, s.n, 0.5, EPS, "add_remove"))
    without = float(np.dot(p_psi, np.where(pc.hi >= pc.lo, QL.abs_dev(pc, t), 0.0)))
    with_o = Q.quantile_expected_error(x, 0.5, EPS, bounds=(0, 100))
    assert with_o < 0.8 * without
    draws = Q.private_median(x, EPS, bounds=(0, 100), rng=4, size=3000)
    assert abs(np.abs(draws - t).mean() - with_o) < 6 * np.abs(draws - t).std() / np.sqrt(draws.size)
