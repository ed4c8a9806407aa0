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
log-sum) and a window (dyadic block sums): O(m D log D + m^2 D), D distinct values.
"""

from __future__ import annotations

import math

import numpy as np

from ._quantile_law import Pieces, Sample, pieces

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
    """log sum v[start:stop] per query (-inf for empty windows), O(log D) vectorised passes."""
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
    """log sum_{j < j'} S_j exp(-beta |L_j' - L_j - t|), for every j'."""
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


def _forward(pc: Pieces, n: int, qs: np.ndarray, beta: float) -> tuple[list[np.ndarray], np.ndarray]:
    """A[i][c, j]: log weight of o_1..o_{i+1} with o_{i+1} in piece j as its (c+1)-th point there."""
    m = qs.size
    L = pc.L
    loglam = pc.logsize
    targets = np.diff(np.concatenate(([0.0], qs, [1.0]))) * n
    Lf = L.astype(np.float64)
    A = [np.full((1, L.size), -np.inf)]
    A[0][0] = loglam - beta * np.abs(Lf - targets[0])
    for i in range(1, m):
        prev = A[-1]
        logS = np.logaddexp.reduce(prev, axis=0)
        cur = np.full((i + 1, L.size), -np.inf)
        cur[0] = loglam + _cross_logsum(logS, L, float(targets[i]), beta)
        same = -beta * abs(targets[i])  # o_{i+1} in the same piece: no record between
        for c in range(1, i + 1):
            cur[c] = prev[c - 1] + loglam - math.log(c + 1) + same
        A.append(cur)
    final = -beta * np.abs(n - Lf - targets[m])
    return A, final


def sample_joint(s: Sample, qs: np.ndarray, epsilon: float, relation: str, gen: np.random.Generator,
                 sensitivity: float | None = None) -> np.ndarray:
    """One draw of JointExp (sorted m values) on a validated continuous sample."""
    pc = pieces(s)
    n = s.n
    delta_u = joint_sensitivity(qs, relation) if sensitivity is None else sensitivity
    beta = epsilon / (2.0 * delta_u)
    A, final = _forward(pc, n, qs, beta)
    m = qs.size
    Lf = pc.L.astype(np.float64)
    targets = np.diff(np.concatenate(([0.0], qs, [1.0]))) * n
    logw = (A[m - 1] + final[None, :]).ravel()
    state = _gumbel_argmax(logw, gen)
    c, j = divmod(state, pc.L.size)
    slots = np.empty(m, dtype=np.int64)
    slots[m - 1] = j
    for i in range(m - 2, -1, -1):
        if c > 0:
            c -= 1
        else:
            prev = A[i][:, :j]
            kern = -beta * np.abs(Lf[j] - Lf[:j] - targets[i + 1])
            logw = (prev + kern[None, :]).ravel()
            c, j = divmod(_gumbel_argmax(logw, gen), j)
        slots[i] = j
    out = pc.lo[slots] + gen.random(m) * (pc.hi[slots] - pc.lo[slots])
    return np.sort(np.minimum(out, pc.hi[slots]))


def joint_log_density(s: Sample, qs: np.ndarray, epsilon: float, relation: str, o: np.ndarray,
                      sensitivity: float | None = None) -> float:
    """Exact log density of JointExp at a sorted tuple ``o`` with no coordinate on a data value."""
    pc = pieces(s)
    n = s.n
    delta_u = joint_sensitivity(qs, relation) if sensitivity is None else sensitivity
    beta = epsilon / (2.0 * delta_u)
    A, final = _forward(pc, n, qs, beta)
    logZ = float(np.logaddexp.reduce((A[-1] + final[None, :]).ravel()))
    below = np.searchsorted(s.values, o, side="left")
    g = np.diff(np.concatenate(([0], np.concatenate(([0], np.cumsum(s.counts)))[below], [n])))
    targets = np.diff(np.concatenate(([0.0], qs, [1.0]))) * n
    return float(-beta * np.abs(g - targets).sum() - logZ)


def _gumbel_argmax(logw: np.ndarray, gen: np.random.Generator) -> int:
    """argmax(logw + Gumbel): a draw from P ∝ exp(logw) (-inf entries never win)."""
    return int(np.argmax(logw - np.log(-np.log(gen.random(logw.size)))))
