"""JointExp (Gillenwater, Joseph & Kulesza, ICML 2021): m quantiles in one exponential mechanism.

Outputs are sorted m-tuples ``o_1 <= ... <= o_m`` of ``[a, b]`` (Lebesgue base
measure on the sorted simplex).  With ``q_0 = 0``, ``q_{m+1} = 1``, gaps
``s_i = q_i - q_{i-1}`` and ``g_i`` the number of records in
``[o_{i-1}, o_i)`` (``o_0 = -inf``, ``o_{m+1} = +inf``), the utility is

    u(o) = - sum_{i=1}^{m+1} | g_i - s_i n |.

One record added or removed changes one g_i by 1 and every target s_l n by
s_l, so |Delta u| <= 2 (1 - min_i s_i) under add/remove (2 under replace:
two gaps move by one).  The mechanism has density ∝ exp(epsilon u / (2 Delta)).

Sampling (exact, log space): u depends on o only through the pieces
(intervals between distinct values) holding each o_i; a tuple whose pieces
are ``j_1 <= ... <= j_m`` has volume prod_j lambda_j^{c_j} / c_j! (c_j the
multiplicity).  A forward pass over states (piece of o_i, multiplicity so far)
and a backward draw give the pieces; then the c_j points of piece j are c_j
sorted uniforms.  The sum over earlier pieces j < j' of a kernel
exp(-beta |L_j' - L_j - t|) splits at L_j = L_j' - t into a prefix (a running
log-sum) and a window (dyadic block sums): O(m D log D + m^2 D) time, O(m D)
memory, D distinct values.

**On the output grid** lambda Z (the default of ``private_quantiles`` for real
outputs): the base measure is the counting measure on non-decreasing tuples of
grid points of ``[a, b]``, and ``g_i`` counts the records in ``(o_{i-1}, o_i]``
(each point counts the records at or below it, the right limit of the
continuous utility; one added record still moves exactly one g_i by one, so
Delta is unchanged: docs/mathematics.md §12.2).  The pieces are the grid points
of ``[v_i, v_{i+1})``; c points in a piece of N grid points have
C(N + c - 1, c) non-decreasing placements (in place of lambda^c / c!), and given
the pieces the points of each piece are a uniform multiset (a uniform c-subset
of {0 .. N + c - 2} by Floyd's algorithm, minus 0 .. c - 1), all in integer
arithmetic: the outputs are exact grid points.
"""

from __future__ import annotations

import math

import numpy as np

from ....noise import grid_values
from .._exponential.quantile_pieces import Pieces, Sample, draw_in_pieces, pieces

__all__: list[str] = []


def joint_sensitivity(qs: np.ndarray, relation: str) -> float:
    """Delta u: 2 (1 - min gap) under add/remove, 2 under replace."""
    if relation == "replace":
        return 2.0
    gaps = np.diff(np.concatenate(([0.0], qs, [1.0])))
    return 2.0 * (1.0 - float(gaps.min()))


def _block_tables(v: np.ndarray) -> list[np.ndarray]:
    """T[b][p] = log sum v[p : p + 2**b] (log-domain), for every start p with a full block."""
    tables = [v]
    b = 0
    while (1 << (b + 1)) <= v.size:
        t = tables[-1]
        h = 1 << b
        tables.append(np.logaddexp(t[:-h], t[h:]))
        b += 1
    return tables


def _window_logsum(tables: list[np.ndarray], start: np.ndarray, stop: np.ndarray) -> np.ndarray:
    """Log sum v[start:stop] per query (-inf for empty windows), O(log D) vectorised passes."""
    acc = np.full(start.shape, -np.inf)
    pos = start.copy()
    length = np.maximum(stop - start, 0)
    for b in range(len(tables) - 1, -1, -1):
        take = (length >> b) & 1 == 1
        if take.any():
            acc[take] = np.logaddexp(acc[take], tables[b][pos[take]])
            pos[take] += 1 << b
    return acc


def _cross_logsum(logS: np.ndarray, L: np.ndarray, t: float, beta: float) -> np.ndarray:
    """Log sum_{j < j'} S_j exp(-beta |L_j' - L_j - t|), for every j'."""
    D1 = L.size
    Lf = L.astype(np.float64)
    jp = np.arange(D1)
    # far part: L_j <= L_j' - t  ->  exp(-beta (L_j' - t)) exp(beta L_j)
    far_stop = np.minimum(np.searchsorted(Lf, Lf - t, side="right"), jp)
    pref = np.logaddexp.accumulate(logS + beta * Lf)
    with np.errstate(invalid="ignore"):
        far = np.where(far_stop > 0, pref[np.maximum(far_stop - 1, 0)] - beta * (Lf - t), -np.inf)
    # near part: far_stop <= j < j'  ->  exp(-beta (t - L_j' + L_j))
    tables = _block_tables(logS - beta * Lf)
    near = _window_logsum(tables, far_stop, jp) + beta * (Lf - t)
    return np.logaddexp(far, near)


class _Forward:
    """Forward messages of the DP, O(m D) memory.

    ``B[i][j]``: log weight of o_1..o_{i+1} with o_{i+1} the first of its
    piece j.  The states with o_{i+1} the c-th point of piece j follow from
    ``B[i - c + 1][j]`` (c - 1 more points in the same piece, no record in
    between): :meth:`rows` rebuilds them on demand.
    """

    def __init__(self, pc: Pieces, n: int, qs: np.ndarray, beta: float) -> None:
        self.m = qs.size
        self.Lf = pc.L.astype(np.float64)
        self.loglam = pc.logsize
        # grid pieces: the c-th point of a piece of N grid points multiplies the count by (N + c - 1) / c
        self.grid_n = pc.count().astype(np.float64) if pc.lam > 0 else None
        self.targets = np.diff(np.concatenate(([0.0], qs, [1.0]))) * n
        self.beta = beta
        # cost of staying in a piece for quantile i: -beta t_i; cumulative for chains
        self.stay = np.concatenate(([0.0], np.cumsum(-beta * np.abs(self.targets[1 : self.m]))))
        self.B: list[np.ndarray] = [self.loglam - beta * np.abs(self.Lf - self.targets[0])]
        for i in range(1, self.m):
            logS = np.logaddexp.reduce(self.rows(i - 1), axis=0)
            self.B.append(self.loglam + _cross_logsum(logS, pc.L, float(self.targets[i]), beta))
        self.final = -beta * np.abs(n - self.Lf - self.targets[self.m])

    def rows(self, i: int, cols: slice = slice(None)) -> np.ndarray:
        """A_i(j, c) for c = 1..i+1 (row c - 1) and the pieces ``cols``."""
        out = np.empty((i + 1, self.Lf[cols].size))
        extra = np.zeros(self.Lf[cols].size)
        grid_n = None if self.grid_n is None else self.grid_n[cols]
        for c in range(1, i + 2):
            start = i - c + 1  # index of the first point of the chain
            row = self.B[start][cols] + (self.stay[i] - self.stay[start])
            if c > 1 and grid_n is None:  # (c - 1) log lambda: never 0 * (-inf) for a zero-length piece
                row = row + (c - 1) * self.loglam[cols] - math.lgamma(c + 1)
            elif c > 1 and grid_n is not None:  # log C(N + c - 1, c) - log N = sum_{r < c} log(N + r) - log c!
                extra += np.log(grid_n + (c - 1))
                row = row + extra - math.lgamma(c + 1)
            out[c - 1] = row
        return out

    def log_normaliser(self) -> float:
        return float(np.logaddexp.reduce((self.rows(self.m - 1) + self.final[None, :]).ravel()))


def sample_joint(
    s: Sample,
    qs: np.ndarray,
    epsilon: float,
    relation: str,
    gen: np.random.Generator,
    sensitivity: float | None = None,
    lam: float = 0.0,
) -> np.ndarray:
    """One draw of JointExp (sorted m values) on a validated real sample; ``lam > 0``: on the grid."""
    pc = pieces(s, lam)
    delta_u = joint_sensitivity(qs, relation) if sensitivity is None else sensitivity
    fw = _Forward(pc, s.n, qs, epsilon / (2.0 * delta_u))
    m = qs.size
    D1 = pc.L.size
    state = _gumbel_argmax((fw.rows(m - 1) + fw.final[None, :]).ravel(), gen)
    c, j = divmod(state, D1)
    slots = np.empty(m, dtype=np.int64)
    slots[m - 1] = j
    for i in range(m - 2, -1, -1):
        if c > 0:
            c -= 1
        else:
            kern = -fw.beta * np.abs(fw.Lf[j] - fw.Lf[:j] - fw.targets[i + 1])
            logw = (fw.rows(i, slice(0, j)) + kern[None, :]).ravel()
            c, j = divmod(_gumbel_argmax(logw, gen), j)
        slots[i] = j
    if lam > 0:
        return _draw_grid_tuple(pc, slots, gen)
    return np.sort(draw_in_pieces(pc, slots, gen))


def _draw_grid_tuple(pc: Pieces, slots: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """Uniform non-decreasing grid points, c_j of them in piece j (multiplicities from ``slots``)."""
    first = np.rint(pc.lo / pc.lam).astype(np.int64)
    cnt = pc.count()
    parts = []
    for j, c in zip(*np.unique(slots, return_counts=True)):
        pick = _uniform_subset(int(cnt[j]) + int(c) - 1, int(c), gen)
        parts.append(first[j] + pick - np.arange(c))
    return grid_values(np.concatenate(parts), pc.lam)


def _uniform_subset(M: int, c: int, gen: np.random.Generator) -> np.ndarray:
    """A uniform c-subset of {0, ..., M - 1}, sorted (Floyd's algorithm: c integer draws)."""
    chosen: set[int] = set()
    for j in range(M - c, M):
        t = int(gen.integers(0, j + 1))
        chosen.add(j if t in chosen else t)
    return np.array(sorted(chosen), dtype=np.int64)


def joint_log_density(
    s: Sample,
    qs: np.ndarray,
    epsilon: float,
    relation: str,
    o: np.ndarray,
    sensitivity: float | None = None,
    lam: float = 0.0,
) -> float:
    """Exact log density of JointExp at a sorted tuple ``o`` with no coordinate on a data value.

    ``lam > 0``: the exact log probability of the sorted grid tuple ``o`` (any grid points;
    records at a point count at or below it).
    """
    pc = pieces(s, lam)
    n = s.n
    delta_u = joint_sensitivity(qs, relation) if sensitivity is None else sensitivity
    fw = _Forward(pc, n, qs, epsilon / (2.0 * delta_u))
    below = np.searchsorted(s.values, o, side="right" if lam > 0 else "left")
    g = np.diff(np.concatenate(([0], np.concatenate(([0], np.cumsum(s.counts)))[below], [n])))
    return float(-fw.beta * np.abs(g - fw.targets).sum() - fw.log_normaliser())


def _gumbel_argmax(logw: np.ndarray, gen: np.random.Generator) -> int:
    """argmax(logw + Gumbel): a draw from P ∝ exp(logw) (-inf entries never win)."""
    return int(np.argmax(logw - np.log(-np.log(gen.random(logw.size)))))
