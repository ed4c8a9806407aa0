"""Integer outputs score the integers as the grid 1: never worse than the real-output mechanism (mathematics §12.1).

The integer lattice uses the real-output rank distance (zero on [x_(k), x_(k+1)]), so a column of
integers with few ties and wide gaps (prices) is not pulled into the wide gap below x_(k) by a unit
score on the gap above it.  Exact expected errors, no sampling.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpselect.apps import quantiles as Q
from dpselect.apps.quantiles._exponential import quantile_pieces as QL


def _prices(seed: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.clip(np.round(np.exp(rng.normal(7.8, 1.0, n))), 326, 18823).astype(np.int64)


@pytest.mark.parametrize("q", [0.5, 0.9, 0.99])
@pytest.mark.parametrize("eps", [1.0, 10.0])
def test_integer_outputs_never_lose_to_real_outputs_on_the_same_data(q, eps):
    for seed in range(12):
        x = _prices(seed, 100)
        e_int = Q.quantile_expected_error(x, q, eps, bounds=(0, 20_000))
        e_real = Q.quantile_expected_error(x.astype(np.float64), q, eps, bounds=(0, 20_000))
        assert e_int <= 1.02 * e_real + 1e-9


def test_the_old_integer_score_lost_on_the_wide_gap():
    """Control: the exact-at-x_(k) integer score (kind="integer") is 1.5x worse on the same cell."""
    worst = 0.0
    for seed in range(12):
        x = _prices(seed, 100)
        s = QL.check_sample(x, (0, 20_000))
        pc = QL.pieces(s, 0.0, atoms=True)
        t = s.order_statistic(QL.target_rank(0.9, s.n))
        psi = QL.rank_distance(pc.L, pc.C, s.n, 0.9, "add_remove", "integer")
        p = QL.normalise(pc.logsize - 5.0 * psi)
        old = float(np.dot(p, QL.abs_dev(pc, t)))
        worst = max(worst, old / Q.quantile_expected_error(x, 0.9, 10.0, bounds=(0, 20_000)))
    assert worst > 1.5


def test_integer_outputs_still_land_on_a_tie():
    x = np.r_[np.full(30, 40), np.arange(41, 71)].astype(np.int64)
    law = Q.quantile_law(x, 0.25, 2.0, bounds=(0, 100))
    assert law.probabilities[(law.lo == 40) & (law.hi == 40)].sum() > 0.99
