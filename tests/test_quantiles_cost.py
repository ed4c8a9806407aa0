"""The single quantile's work follows n and the public parameters, not the data (publishing.md: run time).

Every record is its own piece: the arrays the scores and the samplers work on have 2 n + 1 entries
whatever the ties, the grid or the dtype, and the padding leaves the law unchanged.  No wall time is
asserted: the work units (pieces handed to the samplers) are counted.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpselect.apps import quantiles as Q
from dpselect.apps.quantiles._exponential import mechanism as M
from dpselect.apps.quantiles._exponential import quantile_pieces as QL

N = 257


def _columns(integer: bool) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(11)
    cols = {
        "distinct": rng.permutation(N).astype(float) / N,
        "ties": np.full(N, 0.5),
        "two atoms": np.r_[np.zeros(N // 2), np.ones(N - N // 2)],
        "mixed": np.r_[np.zeros(100), rng.random(N - 100)],
        "outside bounds": np.r_[np.full(N - 3, 7.0), -5.0, 0.25, 0.75],  # clamped
    }
    if integer:
        return {k: np.round(v * 10).astype(np.int64) for k, v in cols.items()}
    return cols


@pytest.mark.parametrize(("integer", "lam"), [(False, None), (True, None), (True, 0.0)])
def test_pieces_are_two_n_plus_one_whatever_the_data(integer, lam):
    sizes = set()
    for x in _columns(integer).values():
        s = QL.check_sample(x, (0, 10) if integer else (0, 1), integer)
        grid = 0.0 if integer else M.output_grid(lam, s)
        pc = M.padded_pieces(s, grid)
        sizes.add(pc.lo.size)
        # the padding holds no point: the non-empty pieces are those of the unpadded law
        ref = QL.pieces(s, grid, atoms=True)
        assert (pc.count()[ref.lo.size :] == 0).all()
        assert np.isneginf(pc.logsize[ref.lo.size :]).all()
        np.testing.assert_array_equal(pc.lo[: ref.lo.size], ref.lo)
    assert sizes == {2 * N + 1}


@pytest.mark.parametrize("sampler", ["exact", "float"])
@pytest.mark.parametrize("integer", [False, True])
def test_samplers_receive_the_same_work_whatever_the_data(monkeypatch, sampler, integer):
    seen: list[int] = []
    exact, categorical = M.sample_grid_exact, M._sample_categorical

    def spy_exact(first, cnt, *args, **kwargs):
        assert kwargs == {"keep_empty": True}  # empty pieces stay in the sampler
        seen.append(len(cnt))
        return exact(first, cnt, *args, **kwargs)

    def spy_categorical(count, gen, method, logw):
        seen.append(len(logw))
        return categorical(count, gen, method, logw=logw)

    monkeypatch.setattr(M, "sample_grid_exact", spy_exact)
    monkeypatch.setattr(M, "_sample_categorical", spy_categorical)
    bounds = (0, 10) if integer else (0, 1)
    for x in _columns(integer).values():
        for q in (0.1, 0.5, 0.99):
            Q.private_quantile(x, q, 1.0, bounds=bounds, rng=0, sampler=sampler)
    assert seen and set(seen) == {2 * N + 1}


def test_padding_keeps_the_law_and_the_draws():
    x = np.r_[np.full(40, 3.0), np.linspace(4.0, 9.0, 17)]
    assert Q.quantile_law(x, 0.75, 0.8, bounds=(0, 10), granularity=0).lo.size == 19  # the 18 + 1 gaps only
    law = Q.quantile_law(x, 0.75, 0.8, bounds=(0, 10), granularity=2**-6)
    assert law.lo.size < 2 * x.size + 1  # the published law lists the non-empty pieces only
    draws = Q.private_quantile(x, 0.75, 0.8, bounds=(0, 10), granularity=2**-6, rng=3, size=4000)
    inside = (law.lo[:, None] <= draws) & (draws <= law.hi[:, None])
    freq = inside.mean(axis=1)
    se = np.sqrt(law.probabilities * (1 - law.probabilities) / draws.size)
    assert (np.abs(freq - law.probabilities) <= 5 * se + 1e-3).all()


def test_empty_groups_are_never_drawn_and_all_empty_is_refused():
    from dpselect.noise import IntegerSource, exponential_weights_batch

    g, o = exponential_weights_batch(IntegerSource(5), [0, 1, 0, 2, 0], 1, [0, 3, 0, 2, 0], 3000)
    assert set(np.unique(g)) == {1, 3}
    assert (o[g == 1] < 3).all() and (o[g == 3] < 2).all()
    share = (g == 1).mean()  # 3 e^{-1} : 2 e^{-2}
    p = 3 * np.exp(-1) / (3 * np.exp(-1) + 2 * np.exp(-2))
    assert abs(share - p) < 5 * np.sqrt(p * (1 - p) / g.size)
    with pytest.raises(ValueError, match="counts"):
        exponential_weights_batch(IntegerSource(5), [0, 1], 1, [0, 0], 1)
    with pytest.raises(ValueError, match="counts"):
        exponential_weights_batch(IntegerSource(5), [0, 1], 1, [1, -1], 1)
