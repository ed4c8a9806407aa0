"""Fast peeling of select_top_snps: updated neighbour distances equal rebuilt ones; vocabulary of method=."""

from __future__ import annotations

import numpy as np
import pytest

from dpselect.apps import genomics as tdt
from dpselect.apps.genomics import TransmissionCounts
from dpselect.apps.genomics._tdt._distance import TransmissionPanel
from dpselect.mechanisms import PermuteAndFlip
from dpselect.mechanisms.distance import distance_problem


@pytest.mark.parametrize("seed", range(6))
def test_updated_distances_equal_rebuilt_ones_round_after_round(seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        n = int(rng.integers(1, 80))
        m = int(rng.integers(1, 50))
        s = rng.integers(0, 2 * n + 1, size=m)
        b = rng.binomial(s, rng.uniform(0.1, 0.9, size=m))
        c = s - b
        if rng.random() < 0.4:  # repeated tables: a removal leaves other copies
            b[: m // 2], c[: m // 2] = b[0], c[0]
        k = int(rng.integers(1, m + 1))
        panel = TransmissionPanel(b, c, n, removals=int(rng.integers(0, k)))
        left = list(range(m))
        for j in range(k):
            np.testing.assert_array_equal(panel.distances()[left], tdt.neighbour_distances(b[left], c[left], n))
            gone = left[int(np.argmin(panel.distances()[left]))] if j % 2 else left[int(rng.integers(len(left)))]
            left.remove(gone)
            panel.remove(gone)


def test_fast_peeling_draws_equal_rebuilt_peeling():
    rng = np.random.default_rng(4)
    n = 300
    b = rng.integers(100, 200, size=60)
    c = rng.integers(100, 200, size=60)
    for seed in range(5):
        got = tdt.select_top_snps(TransmissionCounts(b, c, n), 5.0, 6, rng=seed)
        gen = np.random.default_rng(seed)
        left, want = np.arange(60), []
        for _ in range(6):  # round j on the sub-panel's own distances, rebuilt from scratch
            sub = distance_problem(tdt.neighbour_distances(b[left], c[left], n).astype(float), relation="replace")
            pick = int(PermuteAndFlip(5.0 / 6).select(sub, rng=gen))
            want.append(int(left[pick]))
            left = np.delete(left, pick)
        assert got.indices.tolist() == want and got.method == "peeling"
        assert got.privacy.epsilon == pytest.approx(5.0)


def test_method_vocabulary():
    b, c = np.array([40, 30, 20, 10]), np.array([10, 20, 20, 10])
    with pytest.raises(ValueError, match=r"method must be one of \('peel', 'joint', 'gumbel'\)"):
        tdt.select_top_snps(TransmissionCounts(b, c, 50), 1.0, 2, method="top")
    with pytest.raises(ValueError, match="mechanism must be one of"):
        tdt.select_top_snps(
            TransmissionCounts(b, c, 50), 1.0, 2, mechanism="nd_pf", rng=3
        )  # the deprecated spelling is gone
    default = tdt.select_top_snps(TransmissionCounts(b, c, 50), 1.0, 2, rng=3)
    assert (
        default.indices.tolist()
        == tdt.select_top_snps(
            TransmissionCounts(b, c, 50), 1.0, 2, mechanism="pf", utility="distance", rng=3
        ).indices.tolist()
    )
