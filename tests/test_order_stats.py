"""NRS local / smooth sensitivity of order statistics (SPEC.md §4.5), replace-one."""

from __future__ import annotations

import itertools
import math
from collections import deque

import numpy as np
import pytest

from dpselect.apps.quantiles import _order_stats as O

# ---------------------------------------------------------------------------
# NRS smooth sensitivity of the median (replace-one)
# ---------------------------------------------------------------------------


def _lower_median(values):
    s = sorted(values)
    return s[math.ceil(len(s) / 2) - 1]


def smooth_sens_quadratic(x, beta, bounds, index):
    a, b = bounds
    ext = np.concatenate(([a], np.sort(x), [b]))
    n = len(x)
    m = index + 1
    best = 0.0
    for i in range(0, m + 1):
        for j in range(m, n + 2):
            if i < j:
                best = max(best, (ext[j] - ext[i]) * math.exp(-beta * (j - i - 1)))
    return best


def test_smooth_sensitivity_vs_quadratic_bruteforce():
    rng = np.random.default_rng(21)
    for trial in range(200):
        n = int(rng.integers(1, 41))
        kind = trial % 4
        if kind == 0:
            x = rng.integers(0, 6, size=n).astype(float)  # ties, values at the bounds
        elif kind == 1:
            x = rng.uniform(0, 5, size=n)
        elif kind == 2:
            x = np.where(rng.random(n) < 0.4, rng.choice([0.0, 5.0], size=n), rng.uniform(0, 5, size=n))
        else:
            x = np.full(n, float(rng.integers(0, 6)))
        beta = float(rng.choice([0.01, 0.1, 0.5, 2.0, 30.0]))
        got = O.smooth_sensitivity_median(x, beta, bounds=(0.0, 5.0))
        want = smooth_sens_quadratic(x, beta, (0.0, 5.0), (n + 1) // 2 - 1)
        assert got == pytest.approx(want, rel=1e-12, abs=1e-300), (x, beta)
        idx = int(rng.integers(0, n))
        gq = O.smooth_sensitivity_quantile(x, beta, bounds=(0.0, 5.0), index=idx)
        assert gq == pytest.approx(smooth_sens_quadratic(x, beta, (0.0, 5.0), idx), rel=1e-12, abs=1e-300)
        ls = O.local_sensitivity_median(x, bounds=(0.0, 5.0))
        assert O.smooth_sensitivity_median(x, beta, bounds=(0.0, 5.0)) >= ls


def _ls_bruteforce_grid(y, grid):
    """LS of the lower median over replace-one neighbours with values in the grid."""
    med = _lower_median(y)
    best = 0
    for i in range(len(y)):
        for v in grid:
            z = (*y[:i], v, *y[i + 1 :])
            best = max(best, abs(_lower_median(z) - med))
    return best


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_smooth_sensitivity_vs_true_bfs(n):
    grid = range(5)
    states = list(itertools.combinations_with_replacement(grid, n))
    ls = {s: _ls_bruteforce_grid(s, grid) for s in states}
    for s in states:
        assert ls[s] == O.local_sensitivity_median(np.array(s, float), bounds=(0, 4))
    # replace-one graph
    adj = {}
    for s in states:
        nb = set()
        for i in range(n):
            for v in grid:
                nb.add(tuple(sorted((*s[:i], v, *s[i + 1 :]))))
        nb.discard(s)
        adj[s] = nb
    for beta in (0.1, 0.7, 2.0):
        for s in states:
            dist = {s: 0}
            q = deque([s])
            while q:
                c = q.popleft()
                for d in adj[c]:
                    if d not in dist:
                        dist[d] = dist[c] + 1
                        q.append(d)
            true = max(ls[y] * math.exp(-beta * dist[y]) for y in states)
            got = O.smooth_sensitivity_median(np.array(s, float), beta, bounds=(0.0, 4.0))
            assert got == pytest.approx(true, rel=1e-12), (s, beta)


def test_smooth_sensitivity_large_n():
    """A large sample runs through the vectorised scan (its speed: benchmarks/, never asserted here)."""
    x = np.random.default_rng(0).uniform(size=200_000)
    s = O.smooth_sensitivity_median(x, 0.01, bounds=(0.0, 1.0))
    assert s >= O.local_sensitivity_median(x, bounds=(0.0, 1.0))
