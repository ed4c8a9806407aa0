"""Transmission disequilibrium test (TDT): sensitivity maths for private top-SNP selection.

Data and statistic
------------------
A GWAS trio study with ``N = n_families`` families (2N parents).  For one SNP,
``b`` (``c``) counts heterozygous parents transmitting the first (second)
allele; ``b, c >= 0`` and ``b + c <= 2N``.  The TDT statistic is

    chi2(b, c) = (b - c)^2 / (b + c),        chi2(0, 0) := 0.

Neighbour relation (SPEC.md §1, §4.4)
-------------------------------------
Replace-one at the **family** level ("replace" relation): two datasets are
neighbours if one family is replaced by another.  A family holds two parents,
each contributing at most one transmission, so on one SNP's table a
replacement is a *table-level move* ``(db, dc)`` with ``|db| <= 2``,
``|dc| <= 2``, ``|db + dc| <= 2`` that stays inside ``b, c >= 0``,
``b + c <= 2N`` (:data:`MOVES`, 18 non-zero moves).  This over-approximates
the moves a real family change can realise (it ignores whether the current
table contains a family to remove), which can only enlarge sensitivities and
shrink distances, i.e. it is conservative.  One family change moves **every**
SNP's table by one table-level move simultaneously (each SNP its own move),
so a per-SNP beta-smooth bound S(., r) stays beta-smooth for the whole panel
and ``S(x) = max_r S(x, r)`` is beta-smooth (SPEC.md §1, §4.4).

Results implemented here
------------------------
* :func:`global_sensitivity`: ``GS = 8(N - 1)/N`` (Wang et al., quoted by YS §V)
  for N >= 2; for N = 1 the move relation gives GS = 2 (the formula would give
  0, which is wrong: (0, 0) -> (2, 0) changes chi2 by 2).
* :func:`local_sensitivity`: exact ``LS(b, c) = max_moves |chi2(b,c) - chi2(b',c')|``.
* :func:`lemma2_region`: YS-supp Lemma 2, ``LS > 6`` iff
  ``0 <= c < (b-8)/7 or 2 <= b < (c+8)/7 or 0 <= b < (c-8)/7 or 2 <= c < (b+8)/7``.
* :func:`table_distance`: YS-supp Lemma 3, the path metric of the move graph.
* :func:`gs_distance` / :func:`unstable_distance`: distances to
  ``G = {LS = GS}`` and ``U = {LS > T}`` by a multi-source BFS over the whole
  state space (cached per N / (N, T)).
* :func:`beta_max`: the largest beta admitted by YS Theorem 4 (bound="thm4",
  exact smooth sensitivity ``GS e^{-beta gd}``) or Theorem 5 (bound="thm5",
  smooth upper bound ``GS e^{-beta ud}``), computed from the theorems'
  inequalities over the whole state space
  (:func:`dpselect.sensitivity.thm4_beta_max` / ``thm5_beta_max``).
* :func:`smooth_upper_bound`: ``S(x, r)`` for every SNP.
* :func:`neighbours`: enumerate the neighbours of a small SNP panel (audits).

Private top-SNP selection (YS §V)
---------------------------------
* :func:`problem`: the :class:`~dpselect.problem.SelectionProblem` of a panel
  of m SNPs (scores chi2, GS, per-SNP Thm 4/5 smooth bounds and their
  beta_max, exact LS at distance t; relation "replace").
* :func:`select_top_snp`: one private selection with SPS (default), EM, PF or
  any mechanism instance.
* :func:`accuracy_table`: YS's Fig. 1 experiment (EM, PF, SPS cases I-IV on
  simulated panels), with exact accuracies, under the proven accounting and
  under the paper's one-sided accounting (:func:`paper_one_sided_sps`).

Exactness
---------
Local sensitivities are computed from the exact integer fraction
``|p1 q2 - p2 q1| / (q1 q2)`` of each move (one rounding), and membership of
G and of U (integer thresholds T, which includes the default T = 6) is decided
in exact integer arithmetic, so floating point cannot create spurious states
with LS = 6.0000000001 (SPEC.md §4.4).  For a non-integer T the comparison is
``LS > T + 1e-9``.  The tests check that ``U`` for T = 6 equals
:func:`lemma2_region`.

Sources: Yamamoto & Shibuya, IPCCC 2024, §V; its supplement, Lemmas 2-3 and
the proofs of Theorems 4-5; SPEC.md §4.1 and §4.4 (which win over the paper).
Reference numbers (SPEC.md §4.4): beta_max(Thm 4) = 5.8e-4 (N = 30),
2.0e-5 (N = 150); beta_max(Thm 5, T = 6) = 0.1457 (N = 30), 0.0337 (N = 150).
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import numpy as np

from .._validation import check_counts, check_epsilon, check_int, check_positive, check_random_state
from ..analysis import accuracy
from ..datasets import simulate_tdt
from ..mechanisms.base import Mechanism
from ..mechanisms.registry import resolve_mechanism
from ..mechanisms.classic import ExponentialMechanism, PermuteAndFlip
from ..mechanisms.smooth import SmoothPrivateSelection
from ..noise import PolynomialTail
from ..problem import SelectionProblem
from ..sensitivity import distance_to_instability_bound, thm4_beta_max, thm5_beta_max

__all__ = [
    "MOVES",
    "tdt_statistic",
    "global_sensitivity",
    "local_sensitivity",
    "table_distance",
    "lemma2_region",
    "unstable_distance",
    "gs_distance",
    "beta_max",
    "smooth_upper_bound",
    "neighbours",
    "problem",
    "select_top_snp",
    "SPS_CASES",
    "paper_one_sided_sps",
    "accuracy_table",
]

#: The 18 non-zero table-level moves (db, dc) of one family replacement.
MOVES: tuple[tuple[int, int], ...] = tuple(
    (db, dc)
    for db in range(-2, 3)
    for dc in range(-2, 3)
    if abs(db + dc) <= 2 and (db, dc) != (0, 0)
)

#: Largest N for which the per-state distance tables are built ((2N+1)(2N+2)/2
#: states: about 2 * 10^6 and ~5 s per table set at N = 1000, 8 * 10^6 and
#: ~30 s at N = 2000).
MAX_TABLE_FAMILIES = 2000

#: Up to this N the integer fraction |p1 q2 - p2 q1| / (q1 q2) fits in int64
#: (p q <= 8 N^3); above it local_sensitivity falls back to float chi2 differences.
_EXACT_MAX_FAMILIES = 500_000

_BOUNDS = ("thm4", "thm5")


# ---------------------------------------------------------------------------
# validation helpers
# ---------------------------------------------------------------------------

def _counts(x: Any, name: str) -> np.ndarray:
    """Non-negative integer array of any shape (floats must be integral)."""
    try:
        arr = np.asarray(x)
    except ValueError:
        raise ValueError(f"{name} must be a rectangular array of counts") from None
    return check_counts(arr, name, ndim=arr.ndim)


def _check_n(n_families: Any) -> int:
    return check_int(n_families, "n_families", minimum=1)


def _check_tables(b: Any, c: Any, n_families: int | None = None,
                  names: tuple[str, str] = ("b", "c")) -> tuple[np.ndarray, np.ndarray]:
    b = _counts(b, names[0])
    c = _counts(c, names[1])
    if b.shape != c.shape:
        raise ValueError(
            f"{names[0]} and {names[1]} must have the same shape, got {b.shape} and {c.shape}"
        )
    if n_families is not None:
        total = b + c
        if (total > 2 * n_families).any():
            raise ValueError(
                f"{names[0]} + {names[1]} must be <= 2 * n_families = {2 * n_families}, "
                f"got {int(total.max())}"
            )
    return b, c


def _check_threshold(threshold: Any, n: int) -> float:
    t = check_positive(threshold, "threshold", allow_zero=True)
    gs = global_sensitivity(n)
    if t >= gs:
        raise ValueError(
            f"threshold must be < global_sensitivity(n_families) = {gs!r} (otherwise "
            f"U = {{LS > threshold}} is empty), got {t!r}"
        )
    return t


def _check_bound(bound: Any) -> str:
    if bound not in _BOUNDS:
        raise ValueError(f"bound must be one of {_BOUNDS}, got {bound!r}")
    return bound


def _check_table_n(n: int) -> None:
    if n > MAX_TABLE_FAMILIES:
        raise ValueError(
            f"n_families = {n} exceeds MAX_TABLE_FAMILIES = {MAX_TABLE_FAMILIES}: the "
            "state-space distance tables would need too much memory"
        )


# ---------------------------------------------------------------------------
# statistic and sensitivities
# ---------------------------------------------------------------------------

def _chi2(b: np.ndarray, c: np.ndarray) -> np.ndarray:
    s = b + c
    d = (b - c).astype(np.float64)
    out = np.zeros(s.shape, dtype=np.float64)
    np.divide(d * d, s, out=out, where=s > 0)
    return out


def tdt_statistic(b: Any, c: Any) -> Any:
    """TDT chi-square ``(b - c)^2 / (b + c)`` (0 when ``b = c = 0``), vectorised.

    Parameters
    ----------
    b, c : array_like of non-negative integers, same shape (any shape, e.g.
        one entry per SNP).  Integral floats are accepted.

    Returns
    -------
    float64 ndarray of the input shape (numpy scalar for scalar input).
    """
    b, c = _check_tables(b, c)
    return _chi2(b, c)[()]


def global_sensitivity(n_families: int) -> float:
    """Global sensitivity of the TDT statistic under family replacement.

    ``GS = 8(N - 1)/N`` for N >= 2 (Wang et al., quoted in YS §V; SPEC.md §4.4,
    verified by enumeration).  For N = 1 the move relation allows
    (0, 0) -> (2, 0), so GS = 2 (the formula's 0 would be wrong).
    """
    n = _check_n(n_families)
    return 2.0 if n == 1 else 8.0 * (n - 1) / n


def _gs_fraction(n: int) -> tuple[int, int]:
    return (2, 1) if n == 1 else (8 * (n - 1), n)


def _move_fractions(b: np.ndarray, c: np.ndarray, n: int):
    """Yield (move, valid, num, den) with |chi2(b,c) - chi2(b',c')| = num/den exactly."""
    p1 = (b - c) ** 2
    q1 = np.maximum(b + c, 1)
    for db, dc in MOVES:
        b2 = b + db
        c2 = c + dc
        valid = (b2 >= 0) & (c2 >= 0) & (b2 + c2 <= 2 * n)
        p2 = (b2 - c2) ** 2
        q2 = np.maximum(b2 + c2, 1)
        yield (db, dc), valid, np.abs(p1 * q2 - p2 * q1), q1 * q2


def _local_sensitivity(b: np.ndarray, c: np.ndarray, n: int) -> np.ndarray:
    ls = np.zeros(b.shape, dtype=np.float64)
    if n <= _EXACT_MAX_FAMILIES:
        for _, valid, num, den in _move_fractions(b, c, n):
            np.maximum(ls, np.where(valid, num / den, 0.0), out=ls)
    else:
        chi = _chi2(b, c)
        for db, dc in MOVES:
            b2, c2 = b + db, c + dc
            valid = (b2 >= 0) & (c2 >= 0) & (b2 + c2 <= 2 * n)
            diff = np.abs(chi - _chi2(np.maximum(b2, 0), np.maximum(c2, 0)))
            np.maximum(ls, np.where(valid, diff, 0.0), out=ls)
    return ls


def local_sensitivity(b: Any, c: Any, n_families: int) -> Any:
    """Exact local sensitivity of each table under family replacement.

    ``LS(b, c) = max over legal moves (b', c') of |chi2(b, c) - chi2(b', c')|``
    (module docstring for the moves).  Computed per move from the exact
    integer fraction ``num / den``, which is the correctly rounded exact value
    while ``num < 2**53`` (``n_families`` up to ~10^5) and within a few ulps
    up to ``n_families = 500000``; beyond that from float chi2 differences.

    Parameters
    ----------
    b, c : array_like of non-negative integers, same shape, ``b + c <= 2 N``.
    n_families : int >= 1.
    """
    n = _check_n(n_families)
    b, c = _check_tables(b, c, n)
    return _local_sensitivity(b, c, n)[()]


def table_distance(b1: Any, c1: Any, b2: Any, c2: Any) -> Any:
    """YS-supp Lemma 3: path distance between tables in the move graph.

    ``d = ceil(|(b1+c1) - (b2+c2)| / 2)`` if ``(b1-b2)(c1-c2) >= 0`` else
    ``ceil(max(|b1-b2|, |c1-c2|) / 2)``.  (b1, c1) and (b2, c2) must each have
    matching shapes; the two tables broadcast against each other (e.g. one
    table against many).  Both tables are assumed to lie in the same state
    space ``b + c <= 2N`` (the lemma's setting; SPEC.md §4.4 verified it by BFS).
    """
    b1, c1 = _check_tables(b1, c1, names=("b1", "c1"))
    b2, c2 = _check_tables(b2, c2, names=("b2", "c2"))
    try:
        b1, c1, b2, c2 = np.broadcast_arrays(b1, c1, b2, c2)
    except ValueError:
        raise ValueError(
            f"(b1, c1) with shape {b1.shape} and (b2, c2) with shape {b2.shape} do not broadcast"
        ) from None
    db = b1 - b2
    dc = c1 - c2
    same_sign = np.sign(db) * np.sign(dc) >= 0
    d_same = (np.abs(db + dc) + 1) // 2
    d_opp = (np.maximum(np.abs(db), np.abs(dc)) + 1) // 2
    return np.where(same_sign, d_same, d_opp)[()]


def lemma2_region(b: Any, c: Any) -> Any:
    """YS-supp Lemma 2's characterisation of ``LS > 6``, in exact integer arithmetic.

    True iff ``0 <= c < (b-8)/7`` or ``2 <= b < (c+8)/7`` or ``0 <= b < (c-8)/7``
    or ``2 <= c < (b+8)/7``, evaluated as ``7c < b - 8``, ``b >= 2 and
    7b < c + 8``, ``7b < c - 8``, ``c >= 2 and 7c < b + 8``.  Only the moves
    (-2, +2) / (+2, -2) reach LS > 6, and they never leave the state space,
    so the region does not depend on N (SPEC.md §4.4, verified exactly).
    """
    b, c = _check_tables(b, c)
    out = (
        (7 * c < b - 8)
        | ((b >= 2) & (7 * b < c + 8))
        | (7 * b < c - 8)
        | ((c >= 2) & (7 * c < b + 8))
    )
    return out[()]


# ---------------------------------------------------------------------------
# state-space tables (multi-source BFS), cached
# ---------------------------------------------------------------------------

def _index(n: int, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Position of state (b, c) in the list ordered by b, then c."""
    w = 2 * n + 1
    return b * w - (b * (b - 1)) // 2 + c


class _StateSpace(NamedTuple):
    sb: np.ndarray  # b of each state
    sc: np.ndarray  # c of each state
    ls: np.ndarray  # exact (correctly rounded) LS
    in_gs: np.ndarray  # LS == GS, decided exactly
    gd: np.ndarray  # BFS distance to {LS == GS}


def _readonly(*arrays: np.ndarray) -> None:
    for a in arrays:
        a.setflags(write=False)


def _bfs(n: int, sb: np.ndarray, sc: np.ndarray, sources: np.ndarray) -> np.ndarray:
    """Multi-source BFS distances in the move graph; -1 where unreachable."""
    dist = np.full(sb.size, -1, dtype=np.int64)
    frontier = np.flatnonzero(sources)
    dist[frontier] = 0
    k = 0
    while frontier.size:
        fb = sb[frontier]
        fc = sc[frontier]
        cand = []
        for db, dc in MOVES:
            b2 = fb + db
            c2 = fc + dc
            ok = (b2 >= 0) & (c2 >= 0) & (b2 + c2 <= 2 * n)
            cand.append(_index(n, b2[ok], c2[ok]))
        nxt = np.concatenate(cand)
        nxt = np.unique(nxt[dist[nxt] < 0])
        k += 1
        dist[nxt] = k
        frontier = nxt
    if (dist < 0).any():  # pragma: no cover - the move graph is connected
        raise AssertionError("state space not connected or empty source set")
    dist = dist.astype(np.int32)
    return dist


@functools.lru_cache(maxsize=8)
def _state_space(n: int) -> _StateSpace:
    w = 2 * n + 1
    sb = np.repeat(np.arange(w, dtype=np.int64), w - np.arange(w))
    sc = np.arange(sb.size, dtype=np.int64) - _index(n, sb, np.zeros_like(sb))
    gs_num, gs_den = _gs_fraction(n)
    ls = np.zeros(sb.size, dtype=np.float64)
    in_gs = np.zeros(sb.size, dtype=bool)
    for _, valid, num, den in _move_fractions(sb, sc, n):
        np.maximum(ls, np.where(valid, num / den, 0.0), out=ls)
        in_gs |= valid & (num * gs_den == gs_num * den)
        if (valid & (num * gs_den > gs_num * den)).any():  # pragma: no cover - GS formula check
            raise AssertionError("a move exceeds the global sensitivity")
    if not in_gs.any():  # pragma: no cover - GS is attained for every N
        raise AssertionError("no state attains the global sensitivity")
    gd = _bfs(n, sb, sc, in_gs)
    sb, sc = sb.astype(np.int32), sc.astype(np.int32)
    _readonly(sb, sc, ls, in_gs, gd)
    return _StateSpace(sb, sc, ls, in_gs, gd)


@functools.lru_cache(maxsize=16)
def _unstable_table(n: int, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """(in_u, ud) for U = {LS > threshold}; exact for integer thresholds."""
    st = _state_space(n)
    if threshold == math.floor(threshold):
        t = int(threshold)
        in_u = np.zeros(st.sb.size, dtype=bool)
        sb, sc = st.sb.astype(np.int64), st.sc.astype(np.int64)
        for _, valid, num, den in _move_fractions(sb, sc, n):
            in_u |= valid & (num > t * den)
    else:
        in_u = st.ls > threshold + 1e-9
    ud = _bfs(n, st.sb, st.sc, in_u)
    _readonly(in_u, ud)
    return in_u, ud


def gs_distance(b: Any, c: Any, n_families: int) -> Any:
    """gd: distance (Lemma 3 metric) from each table to ``G = {LS = GS}``.

    Looked up in a per-N table computed once by a multi-source BFS over all
    (2N+1)(2N+2)/2 states (``n_families <= MAX_TABLE_FAMILIES``).  G is
    decided in exact integer arithmetic.  Returns int64 (0 on G).
    """
    n = _check_n(n_families)
    b, c = _check_tables(b, c, n)
    _check_table_n(n)
    return _state_space(n).gd[_index(n, b, c)].astype(np.int64)[()]


def unstable_distance(b: Any, c: Any, n_families: int, threshold: float = 6) -> Any:
    """ud: distance (Lemma 3 metric) from each table to ``U = {LS > threshold}``.

    ``0 <= threshold < global_sensitivity(n_families)`` (U must be non-empty).
    For an integer threshold (default 6) ``LS > threshold`` is decided in exact
    integer arithmetic (for T = 6 this is Lemma 2's region, see
    :func:`lemma2_region`); otherwise as ``LS > threshold + 1e-9``.  The
    per-(N, threshold) table is computed once by a multi-source BFS
    (``n_families <= MAX_TABLE_FAMILIES``).  Returns int64 (0 on U).
    """
    n = _check_n(n_families)
    b, c = _check_tables(b, c, n)
    t = _check_threshold(threshold, n)
    _check_table_n(n)
    return _unstable_table(n, t)[1][_index(n, b, c)].astype(np.int64)[()]


@functools.lru_cache(maxsize=64)
def _beta_max(n: int, bound: str, threshold: float) -> float:
    st = _state_space(n)
    gs = global_sensitivity(n)
    if bound == "thm4":
        ls = np.array(st.ls)
        ls[st.in_gs] = gs  # exact membership; removes any rounding difference
        return thm4_beta_max(gs, ls, st.gd)
    _, ud = _unstable_table(n, threshold)
    return thm5_beta_max(gs, st.ls, ud)


def beta_max(n_families: int, bound: str = "thm5", threshold: float = 6) -> float:
    """Largest beta for which the Theorem 4 / Theorem 5 bound is valid.

    bound="thm4": ``min over states with LS != GS of ln(GS/LS)/gd`` (YS Thm 4;
    then ``GS e^{-beta gd}`` is exactly the beta-smooth sensitivity).
    bound="thm5": ``min over states outside U = {LS > threshold} of
    ln(GS/LS)/ud`` (YS Thm 5; then ``GS e^{-beta ud}`` is a beta-smooth upper
    bound).  ``threshold`` is ignored for "thm4".

    Computed from the inequalities over the whole state space with
    :func:`dpselect.sensitivity.thm4_beta_max` / ``thm5_beta_max`` (not
    hard-coded; cached).  Reference values (SPEC.md §4.4): thm4 5.8e-4 (N=30),
    2.0e-5 (N=150); thm5, T=6: 0.1457 (N=30), 0.0337 (N=150).
    """
    n = _check_n(n_families)
    bound = _check_bound(bound)
    t = _check_threshold(threshold, n) if bound == "thm5" else 0.0
    _check_table_n(n)
    return _beta_max(n, bound, t)


def smooth_upper_bound(b: Any, c: Any, n_families: int, beta: float,
                       bound: str = "thm5", threshold: float = 6) -> Any:
    """beta-smooth upper bound S(x, r) on each SNP's local sensitivity.

    bound="thm4": ``GS exp(-beta gd)`` (exact smooth sensitivity, YS Thm 4);
    bound="thm5": ``GS exp(-beta ud)`` with ``U = {LS > threshold}`` (YS Thm 5).
    Raises ValueError if ``beta > beta_max(n_families, bound, threshold)``.
    Each entry is a function of that SNP's own table; since one family change
    moves every table by one move, each S(., r) and ``max_r S(x, r)`` are
    beta-smooth for the panel (SPEC.md §4.4).
    """
    n = _check_n(n_families)
    b, c = _check_tables(b, c, n)
    bound = _check_bound(bound)
    t = _check_threshold(threshold, n) if bound == "thm5" else 0.0
    beta = check_positive(beta, "beta")
    _check_table_n(n)
    bmax = _beta_max(n, bound, t)
    if beta > bmax:
        raise ValueError(
            f"beta = {beta!r} exceeds beta_max = {bmax!r} for bound={bound!r}, "
            f"n_families={n}" + (f", threshold={t!r}" if bound == "thm5" else "")
        )
    idx = _index(n, b, c)
    dist = _state_space(n).gd[idx] if bound == "thm4" else _unstable_table(n, t)[1][idx]
    return distance_to_instability_bound(global_sensitivity(n), dist, beta)


# ---------------------------------------------------------------------------
# neighbours (audits)
# ---------------------------------------------------------------------------

def neighbours(
    b: Any, c: Any, n_families: int, limit: int = 200_000
) -> list[tuple[np.ndarray, np.ndarray]]:
    """All one-family-replacement neighbours of a small SNP panel.

    A family change applies one table-level move (possibly (0, 0)) to every
    SNP at once, each SNP its own move.  Returned: every combination of legal
    per-SNP moves except the all-zero one, as ``(b', c')`` array pairs (the
    Cartesian product, SNP 0 varying slowest).  This **over-approximates** the
    realisable family changes (not every combination is produced by a real
    family, and the move set itself is an over-approximation), which is
    conservative for audits.

    Parameters
    ----------
    b, c : 1-D arrays of length m (one table per SNP), ``b + c <= 2N``.
    n_families : int >= 1.
    limit : maximum number of neighbours (the product grows like 19^m;
        intended for m <= 4-5).  ValueError if exceeded.
    """
    n = _check_n(n_families)
    b, c = _check_tables(b, c, n)
    if b.ndim != 1:
        raise ValueError(f"b and c must be 1-D (one table per SNP), got shape {b.shape}")
    limit = check_int(limit, "limit", minimum=1)
    moves = np.array(((0, 0),) + MOVES, dtype=np.int64)
    opt_b, opt_c = [], []
    for bj, cj in zip(b, c):
        b2 = bj + moves[:, 0]
        c2 = cj + moves[:, 1]
        ok = (b2 >= 0) & (c2 >= 0) & (b2 + c2 <= 2 * n)
        opt_b.append(b2[ok])  # (0, 0) is always first
        opt_c.append(c2[ok])
    total = math.prod(len(o) for o in opt_b) - 1
    if total > limit:
        raise ValueError(
            f"the panel has {total} neighbours, more than limit = {limit}; "
            "use fewer SNPs or raise limit"
        )
    grids = np.meshgrid(*[np.arange(len(o)) for o in opt_b], indexing="ij")
    combos = np.stack([g.ravel() for g in grids], axis=1)[1:]  # drop all-(0,0)
    nb = np.stack([opt_b[j][combos[:, j]] for j in range(b.size)], axis=1)
    nc = np.stack([opt_c[j][combos[:, j]] for j in range(b.size)], axis=1)
    return [(nb[i], nc[i]) for i in range(total)]


# ---------------------------------------------------------------------------
# selection problem and top-SNP selection (YS §V)
# ---------------------------------------------------------------------------

#: Rows of state-space distances held in memory at once by the exact
#: local-sensitivity-at-distance profile (elements).
_PROFILE_CHUNK_ELEMENTS = 1 << 22


def _panel(b: Any, c: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Validated 1-D (b, c) of an SNP panel (one table per SNP)."""
    b, c = _check_tables(b, c, n)
    if b.ndim != 1:
        raise ValueError(f"b and c must be 1-D (one table per SNP), got shape {b.shape}")
    return b, c


def _ls_profile(b: np.ndarray, c: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact per-table LS at distance t, ``(prof, inverse)``.

    ``prof[t, k] = max{LS(y) : d((b, c)_k, y) <= t}`` for t = 0..n over the K
    distinct tables of the panel (``inverse`` maps SNPs to them), with d the
    Lemma 3 metric (the BFS metric of the move graph) and LS the exact
    per-state local sensitivity.  The state space has diameter n (every
    distance is ceil(k/2) for some k <= 2N), so prof is constant for t >= n.
    Cost O(K (2N)^2 / 2); intended for small panels or few distinct tables.
    """
    _check_table_n(n)
    st = _state_space(n)
    uniq, inverse = np.unique(_index(n, b, c), return_inverse=True)
    ub = st.sb[uniq].astype(np.int64)[:, None]
    uc = st.sc[uniq].astype(np.int64)[:, None]
    sb = st.sb.astype(np.int64)[None, :]
    sc = st.sc.astype(np.int64)[None, :]
    prof = np.empty((uniq.size, n + 1), dtype=np.float64)
    rows = max(1, _PROFILE_CHUNK_ELEMENTS // st.sb.size)
    for start in range(0, uniq.size, rows):
        stop = min(start + rows, uniq.size)
        d = np.asarray(table_distance(ub[start:stop], uc[start:stop], sb, sc))
        if d.max() > n:  # pragma: no cover - the diameter is n
            raise AssertionError("table distance exceeds the state-space diameter")
        buf = np.zeros((stop - start) * (n + 1), dtype=np.float64)
        flat = (np.arange(stop - start)[:, None] * (n + 1) + d).ravel()
        np.maximum.at(buf, flat, np.broadcast_to(st.ls, d.shape).ravel())
        prof[start:stop] = np.maximum.accumulate(buf.reshape(stop - start, n + 1), axis=1)
    prof = prof.T.copy()
    _readonly(prof, inverse)
    return prof, inverse


def problem(
    b: Any,
    c: Any,
    n_families: int,
    bound: str = "thm5",
    threshold: float = 6,
    labels: Any = None,
) -> SelectionProblem:
    """SelectionProblem of private top-SNP selection by the TDT statistic (YS §V).

    Candidates are the m SNPs of the panel (public); neighbours are datasets
    with one **family** replaced (``relation="replace"``, module docstring).

    * ``scores`` = :func:`tdt_statistic` of each SNP's (b, c);
    * ``global_sensitivity`` = :func:`global_sensitivity` (N) = 8(N-1)/N;
    * ``candidate_smooth_bound(beta)`` = :func:`smooth_upper_bound` (b, c, N,
      beta, bound, threshold): YS Thm 4 (``bound="thm4"``, exact smooth
      sensitivity GS e^{-beta gd}) or Thm 5 (``"thm5"``, GS e^{-beta ud} with
      U = {LS > threshold}); each S(., r) is beta-smooth for the panel
      because a family change moves every table by one table-level move;
    * ``smooth_bound(beta)`` = max_r S(x, r) (SPEC.md §1, §4.4);
    * ``beta_max`` = :func:`beta_max` (N, bound, threshold): asking either
      bound for a larger beta raises ValueError (SmoothPrivateSelection
      lowers its l to meet it, SPEC.md §3.2);
    * ``candidate_local_sensitivity(t)`` = the exact per-SNP local sensitivity
      at distance t, max{LS(y_r) : d(x_r, y_r) <= t}, and
      ``local_sensitivity(t)`` its max over SNPs, with ``max_distance = N``
      (the diameter of the state space).  Both are exact for the move relation
      (the family-level ball is the product of the per-SNP balls), computed
      lazily on first use from the Lemma 3 distances to all
      (2N+1)(2N+2)/2 states, once per distinct table: cheap for small panels,
      O(#distinct tables x N^2) in general.  Mechanisms that use the
      bounds above (SPS, SNM) never trigger it;
    * ``monotone=False`` (chi2 is not monotone in the data).

    Parameters
    ----------
    b, c : 1-D arrays of non-negative integer counts, one table per SNP,
        ``b + c <= 2N``.
    n_families : N >= 1 (public); at most :data:`MAX_TABLE_FAMILIES`.
    bound : "thm5" (default, YS's recommended bound) or "thm4".
    threshold : T of Theorem 5 (ignored for "thm4"), 0 <= T < GS.
    labels : optional names of the SNPs (e.g. rsIDs).
    """
    n = _check_n(n_families)
    b, c = _panel(b, c, n)
    bound = _check_bound(bound)
    thr = _check_threshold(threshold, n) if bound == "thm5" else 0.0
    _check_table_n(n)
    b, c = b.copy(), c.copy()
    _readonly(b, c)

    def candidate_smooth_bound(beta: float) -> np.ndarray:
        return smooth_upper_bound(b, c, n, beta, bound, thr)

    @functools.cache
    def profile() -> tuple[np.ndarray, np.ndarray]:
        return _ls_profile(b, c, n)

    def candidate_ls(t: int) -> np.ndarray:
        prof, inverse = profile()
        return prof[min(t, n)][inverse]

    def ls(t: int) -> float:
        return float(profile()[0][min(t, n)].max())

    return SelectionProblem(
        _chi2(b, c),
        labels=labels,
        global_sensitivity=global_sensitivity(n),
        local_sensitivity=ls,
        candidate_local_sensitivity=candidate_ls,
        max_distance=n,
        monotone=False,
        relation="replace",
        smooth_bound=lambda beta: float(candidate_smooth_bound(beta).max()),
        candidate_smooth_bound=candidate_smooth_bound,
        beta_max=_beta_max(n, bound, thr),
    )


def select_top_snp(
    b: Any,
    c: Any,
    n_families: int,
    epsilon: float | None,
    mechanism: Any = "sps",
    rng: Any = None,
    *,
    bound: str = "thm5",
    threshold: float = 6,
    labels: Any = None,
    **mechanism_kwargs: Any,
) -> Any:
    """Privately select the SNP with (approximately) the largest TDT statistic.

    Parameters
    ----------
    b, c, n_families, bound, threshold, labels : see :func:`problem`.
    epsilon : privacy budget (may be None when ``mechanism`` is an instance).
    mechanism : "sps" (:class:`~dpselect.mechanisms.smooth.SmoothPrivateSelection`,
        default one-sided P_4 noise, (k + m l/2) eps = eps), "em", "pf", or a
        Mechanism instance (its epsilon must equal ``epsilon`` if both are given).
    rng : None, int seed or numpy Generator.
    **mechanism_kwargs : passed to the mechanism class with a name (e.g.
        ``gamma=``, ``one_sided=``, ``kappa=``, ``k=``, ``l=`` for SPS).

    Returns the selected SNP's index, or its label when ``labels`` is given.
    The guarantee is ``mech.privacy(problem(...))`` under family replacement.
    """
    prob = problem(b, c, n_families, bound, threshold, labels)
    mech = resolve_mechanism(mechanism, epsilon, **mechanism_kwargs)
    index = int(mech.select(prob, rng=rng))
    return prob.labels[index] if prob.labels is not None else index


# ---------------------------------------------------------------------------
# evaluation: exact accuracy on simulated panels (YS §V-B, Fig. 1)
# ---------------------------------------------------------------------------

#: YS's four SPS cases: case -> (mechanism name, bound, one_sided).
SPS_CASES: dict[str, tuple[str, str, bool]] = {
    "I": ("sps_thm4_two_sided", "thm4", False),
    "II": ("sps_thm4_one_sided", "thm4", True),
    "III": ("sps_thm5_two_sided", "thm5", False),
    "IV": ("sps_thm5_one_sided", "thm5", True),
}

_ACCOUNTINGS = ("proven", "paper")


def paper_one_sided_sps(
    epsilon: float, m: int, beta_max: float, gamma: float = 4.0, kappa: float = 0.5
) -> SmoothPrivateSelection:
    """One-sided SPS with the split of YS Thm 3 as published: k + (m-1) l / 2 = 1.

    l = min(2 (1 - kappa)/(m - 1), beta_max / (beta(1) eps)) (the second term
    keeps beta(l eps) <= beta_max, shrunk by 1e-12 against rounding) and
    k = 1 - (m - 1) l / 2; with kappa = 1/2 and a slack beta_max this is YS's
    k = 1/2, l = 1/(m - 1).  The paper claims eps-DP; the supplement retracts
    that proof (SPEC.md §3.2, errata 2) and the proven guarantee, which
    ``privacy()`` reports, is (k + m l / 2) eps = (1 + l/2) eps.  For
    reproducing the paper's accounting only.
    """
    epsilon = check_epsilon(epsilon)
    m = check_int(m, "m", minimum=2)
    beta_unit = float(PolynomialTail(gamma).admissible(1.0)[1])  # beta(e) = e beta(1)
    l = min(2.0 * (1.0 - kappa) / (m - 1), beta_max / (beta_unit * epsilon) * (1.0 - 1e-12))
    k = 1.0 - (m - 1) * l / 2.0
    return SmoothPrivateSelection(epsilon, gamma=gamma, one_sided=True, k=k, l=l)


def _accuracy_mechanisms(
    epsilon: float, m: int, n: int, accounting: str, gamma: float, kappa: float, threshold: float
) -> list[tuple[str, str, str, Mechanism]]:
    """(name, case, bound whose problem it runs on, mechanism) for one (eps, m)."""
    out: list[tuple[str, str, str, Mechanism]] = [
        ("em", "", "thm5", ExponentialMechanism(epsilon)),
        ("pf", "", "thm5", PermuteAndFlip(epsilon)),
    ]
    for case, (name, bound, one_sided) in SPS_CASES.items():
        if accounting == "paper" and one_sided:
            mech: Mechanism = paper_one_sided_sps(epsilon, m, beta_max(n, bound, threshold), gamma, kappa)
        else:
            mech = SmoothPrivateSelection(epsilon, gamma=gamma, one_sided=one_sided, kappa=kappa)
        out.append((name, case, bound, mech))
    return out


def accuracy_table(
    ms: Any = (5, 10, 15, 20),
    epsilons: Any = (3, 6, 9, 12, 15, 18, 21),
    n_families: int = 150,
    n_reps: int = 40,
    rng: Any = None,
    accounting: str = "proven",
    *,
    gamma: float = 4.0,
    kappa: float = 0.5,
    threshold: float = 6,
) -> list[dict[str, Any]]:
    """Exact top-SNP accuracy of EM, PF and SPS cases (I)-(IV) (YS §V-B, Fig. 1).

    For each m in ``ms``, ``n_reps`` panels of m SNPs are simulated with
    :func:`dpselect.datasets.simulate_tdt` (N = ``n_families``; YS use 40
    runs over simulated datasets).  On each panel the accuracy -- the
    probability of selecting an SNP with the largest statistic (any of them
    on a tie) -- is computed **exactly** from the mechanism's output
    distribution (:func:`dpselect.analysis.accuracy`), not by sampling the
    mechanism, and averaged over the panels.  The same panels serve every
    epsilon and mechanism.

    Mechanisms: "em", "pf" (GS = 8(N-1)/N) and SPS with P_gamma noise in YS's
    four cases (:data:`SPS_CASES`): (I) Thm 4 bound, two-sided;
    (II) Thm 4, one-sided; (III) Thm 5, two-sided; (IV) Thm 5, one-sided.

    accounting:
      * "proven": every mechanism runs at the same proven epsilon.  SPS uses
        k + m l/2 = 1 (k = kappa, l = 2(1 - kappa)/m, l lowered to meet
        beta_max), also for the one-sided cases (SPEC.md §3.2, errata 2).
      * "paper": as YS ran it -- the one-sided cases use the published Thm 3
        split k + (m-1) l/2 = 1 (:func:`paper_one_sided_sps`), whose proven
        guarantee is slightly above epsilon; the other mechanisms as "proven".
      * "both": the two tables, computed on the same panels (shared
        mechanisms are evaluated once).

    Returns a list of dicts with keys m, epsilon, mechanism, case ("I".."IV",
    "" for EM/PF), accuracy (mean exact accuracy), accounting and
    epsilon_proven (the guarantee ``mech.privacy`` proves, equal to epsilon
    except for the paper-accounting one-sided cases), ordered by accounting,
    m, epsilon and mechanism.  ``rng`` seeds the panels (drawn m by m, in the
    order of ``ms``).
    """
    if accounting not in _ACCOUNTINGS + ("both",):
        raise ValueError(f"accounting must be one of {_ACCOUNTINGS + ('both',)}, got {accounting!r}")
    accountings = _ACCOUNTINGS if accounting == "both" else (accounting,)
    n = _check_n(n_families)
    n_reps = check_int(n_reps, "n_reps", minimum=1)
    ms = [check_int(m, "m", minimum=2) for m in np.atleast_1d(ms).tolist()]
    epsilons = [check_epsilon(e) for e in np.atleast_1d(epsilons).tolist()]
    gen = check_random_state(rng)

    rows: dict[str, list[dict[str, Any]]] = {a: [] for a in accountings}
    for m in ms:
        panels = [simulate_tdt(m, n, gen) for _ in range(n_reps)]
        problems = {
            bound: [problem(b, c, n, bound, threshold) for b, c in panels] for bound in ("thm4", "thm5")
        }
        memo: dict[tuple[Mechanism, str], float] = {}
        for eps in epsilons:
            for acc_name in accountings:
                for name, case, bound, mech in _accuracy_mechanisms(eps, m, n, acc_name, gamma, kappa, threshold):
                    key = (mech, bound)
                    if key not in memo:
                        memo[key] = float(np.mean([accuracy(mech, p) for p in problems[bound]]))
                    rows[acc_name].append({
                        "m": m,
                        "epsilon": eps,
                        "mechanism": name,
                        "case": case,
                        "accuracy": memo[key],
                        "accounting": acc_name,
                        "epsilon_proven": mech.privacy(problems[bound][0]).epsilon,
                    })
    return [row for a in accountings for row in rows[a]]
