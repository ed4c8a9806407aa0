"""The TDT selection problems: the chi2 scores with their sensitivities, and the audit neighbours.

Neighbour relation: one **family** replaced ("replace"; mathematics §1, §4.4).  On one SNP's
table a replacement is a table-level move ``(db, dc)``, ``|db|, |dc|, |db + dc| <= 2``
(:data:`MOVES`), an over-approximation of the realisable changes (conservative); one family
moves every SNP's table at once, each SNP its own move.

* :func:`tdt_problem`: the chi2 scores, their global sensitivity 8(N-1)/N, the Yamamoto &
  Shibuya Theorem 4/5 smooth bounds and the exact local-sensitivity profile (the seeds'
  mechanisms run on it).
* :func:`tdt_neighbours`: every one-family-replacement neighbour of a small panel (audits).
* :func:`resolve_tdt_mechanism` / :func:`build_tdt_problem`: the mechanism and the problem a
  selection runs on (the distance utility of :mod:`._distance`, or the chi2 scores).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ...._mechanism_lookup import resolve_mechanism
from ...._params import int_at_least, validate_params
from ....mechanisms import ExponentialMechanism, Mechanism, PermuteAndFlip, ReportNoisyMax
from ....problem import SelectionProblem
from .._rules import BOUND, COUNTS, LABELS, N_FAMILIES, THRESHOLD
from ._beta_max import beta_max_unchecked, smooth_upper_bound
from ._distance import distance_utility_problem
from ._sensitivity import (
    MOVES,
    check_tables,
    check_threshold,
    chi2,
    exact_local_sensitivity,
    global_sensitivity,
    hex_distance,
)

__all__ = ["UTILITIES", "build_tdt_problem", "resolve_tdt_mechanism", "tdt_neighbours", "tdt_problem"]

#: The utilities of the TDT selections: the neighbour distance, or the chi2 statistics.
UTILITIES = ("distance", "chi2")


def check_panel(b: ArrayLike, c: ArrayLike, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Validated 1-D int64 (b, c), one table per SNP, ``b + c <= 2N``."""
    b, c = check_tables(b, c, n)
    if b.ndim != 1:
        raise ValueError(f"b and c must be 1-D (one table per SNP), got shape {b.shape}")
    return b, c


@validate_params({"b": COUNTS, "c": COUNTS, "n_families": N_FAMILIES, "limit": int_at_least(1)})
def tdt_neighbours(
    b: ArrayLike, c: ArrayLike, n_families: int, *, limit: int = 200_000
) -> list[tuple[np.ndarray, np.ndarray]]:
    """All one-family-replacement neighbours of a small SNP panel (for audits).

    Every combination of legal per-SNP moves (including (0, 0)) except the
    all-zero one, SNP 0 varying slowest: an over-approximation of the
    realisable family changes, conservative for audits (relation "replace",
    mathematics §4.4).

    Parameters
    ----------
    b : array-like of int
        1-D transmissions of allele 1 per SNP.
    c : array-like of int
        1-D transmissions of allele 2 per SNP (``b + c <= 2N``).
    n_families : int
        N >= 1, the number of families (public).
    limit : int, default=200_000
        Most neighbours listed (the count grows like 19^m); a ValueError if exceeded.

    Returns
    -------
    list of (ndarray, ndarray)
        The neighbours' ``(b', c')``, one pair per neighbour.

    Examples
    --------
    >>> from dpselect.apps.genomics import tdt_neighbours
    >>> len(tdt_neighbours([3], [1], 4))  # 18 moves, 3 of them take c below 0
    15
    """
    n = n_families
    b, c = check_panel(b, c, n)
    moves = np.array(((0, 0), *MOVES), dtype=np.int64)
    opt_b, opt_c = [], []
    for bj, cj in zip(b, c):
        b2, c2 = bj + moves[:, 0], cj + moves[:, 1]
        ok = (b2 >= 0) & (c2 >= 0) & (b2 + c2 <= 2 * n)
        opt_b.append(b2[ok])
        opt_c.append(c2[ok])
    total = math.prod(len(o) for o in opt_b) - 1
    if total > limit:
        raise ValueError(f"the panel has more than limit = {limit} neighbours; use fewer SNPs or raise limit")
    grids = np.meshgrid(*[np.arange(len(o)) for o in opt_b], indexing="ij")
    combos = np.stack([g.ravel() for g in grids], axis=1)[1:]
    nb = np.stack([opt_b[j][combos[:, j]] for j in range(b.size)], axis=1)
    nc = np.stack([opt_c[j][combos[:, j]] for j in range(b.size)], axis=1)
    return [(nb[i], nc[i]) for i in range(total)]


#: Elements of the (distinct tables x states) distance block held at once by the LS profile.
_PROFILE_CHUNK_ELEMENTS = 1 << 22


def _ls_profile(b: np.ndarray, c: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact per-table LS at distance t: ``prof[t, k] = max{LS(y) : d(table k, y) <= t}``, t = 0..N.

    Streams the states (closed-form LS and Lemma 3 distances, no stored
    table); O(#distinct tables x N^2).  Only local dampening asks for it.
    """
    pairs = np.unique(np.stack([b, c], axis=1), axis=0, return_inverse=True)
    uniq, inverse = pairs[0], np.asarray(pairs[1]).ravel()
    w = 2 * n + 1
    sb = np.repeat(np.arange(w, dtype=np.int64), w - np.arange(w))
    lengths = w - np.arange(w)
    sc = np.arange(sb.size, dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    ls = exact_local_sensitivity(sb, sc, n)
    prof = np.empty((uniq.shape[0], n + 1), dtype=np.float64)
    rows = max(1, _PROFILE_CHUNK_ELEMENTS // sb.size)
    for start in range(0, uniq.shape[0], rows):
        stop = min(start + rows, uniq.shape[0])
        d = np.minimum(hex_distance(uniq[start:stop, :1], uniq[start:stop, 1:], sb[None, :], sc[None, :]), n)
        buf = np.zeros((stop - start) * (n + 1), dtype=np.float64)
        flat = (np.arange(stop - start)[:, None] * (n + 1) + d).ravel()
        np.maximum.at(buf, flat, np.broadcast_to(ls, d.shape).ravel())
        prof[start:stop] = np.maximum.accumulate(buf.reshape(stop - start, n + 1), axis=1)
    return prof.T.copy(), inverse


@validate_params(
    {
        "b": COUNTS,
        "c": COUNTS,
        "n_families": N_FAMILIES,
        "bound": BOUND.or_none(),
        "threshold": THRESHOLD,
        "labels": LABELS,
    }
)
def tdt_problem(
    b: ArrayLike,
    c: ArrayLike,
    n_families: int,
    *,
    bound: str | None = "thm5",
    threshold: float = 6,
    labels: Sequence[object] | None = None,
) -> SelectionProblem:
    """SelectionProblem of top-SNP selection on the chi2 scores (YS §V; the seeds' mechanisms).

    Candidates: the m SNPs (public); relation "replace" (one family;
    mathematics §4.4).  scores = chi2 per SNP; ``global_sensitivity`` =
    8(N-1)/N; ``candidate_smooth_bound(beta)`` = :func:`smooth_upper_bound`
    (YS Thm 4 exact smooth sensitivity, or Thm 5 with U = {LS > threshold},
    each S(., r) beta-smooth for the panel) and ``smooth_bound`` its max over
    SNPs; ``beta_max`` lazily from :func:`beta_max` (larger beta raises);
    ``candidate_local_sensitivity(t)`` the exact per-SNP LS at distance t
    (computed lazily, only local dampening uses it).  ``bound=None`` leaves
    the Thm 4/5 bounds out (no beta_max, a branch and bound once per N,
    0.1 s at N = 10^4; smooth sensitivities then come from the exact LS
    profile): what the global-sensitivity mechanisms get from
    :func:`select_top_snp`.  For the accurate default use
    :func:`distance_utility_problem`.

    Parameters
    ----------
    b : array-like of int
        1-D transmissions of allele 1 per SNP (PLINK's T).
    c : array-like of int
        1-D transmissions of allele 2 per SNP (PLINK's U; ``b + c <= 2N``).
    n_families : int
        N >= 1, the number of families (public).
    bound : {"thm5", "thm4"} or None, default="thm5"
        The smooth bound of the candidates (None: none, global and local sensitivities only).
    threshold : float, default=6
        Theorem 5's T, ``6 <= T < global_sensitivity(n_families)``.
    labels : sequence, default=None
        SNP names, one per SNP.

    Returns
    -------
    SelectionProblem
        The chi2 scores with their sensitivities, relation "replace".

    Examples
    --------
    >>> from dpselect.apps.genomics import tdt_problem
    >>> p = tdt_problem([30, 20], [10, 20], 50)
    >>> p.scores.tolist(), p.relation
    ([10.0, 0.0], 'replace')
    """
    n = n_families
    b, c = check_panel(b, c, n)
    if bound is None:
        return _chi2_problem(b, c, n, labels, None, 0.0)
    return _chi2_problem(b, c, n, labels, bound, check_threshold(threshold, n) if bound == "thm5" else 0.0)


def _chi2_problem(
    b: np.ndarray, c: np.ndarray, n: int, labels: Sequence[object] | None, bound: str | None, thr: float
) -> SelectionProblem:
    b, c = b.copy(), c.copy()
    b.setflags(write=False)
    c.setflags(write=False)

    def candidate_smooth_bound(beta: float) -> np.ndarray:
        return np.atleast_1d(smooth_upper_bound(b, c, n, beta, str(bound), thr))

    @functools.cache
    def profile() -> tuple[np.ndarray, np.ndarray]:
        return _ls_profile(b, c, n)

    def candidate_ls(t: int) -> np.ndarray:
        prof, inverse = profile()
        return prof[min(t, n)][inverse]

    return SelectionProblem(
        chi2(b, c),
        labels=labels,
        global_sensitivity=global_sensitivity(n),
        local_sensitivity=lambda t: float(profile()[0][min(t, n)].max()),
        candidate_local_sensitivity=candidate_ls,
        max_distance=n,
        monotone=False,
        relation="replace",
        smooth_bound=None if bound is None else (lambda beta: float(candidate_smooth_bound(beta).max())),
        candidate_smooth_bound=None if bound is None else candidate_smooth_bound,
        beta_max=math.inf if bound is None else beta_max_unchecked(n, bound, thr),
    )


def resolve_tdt_mechanism(
    mechanism: str | Mechanism, epsilon: float | None, utility: str | None, kwargs: Mapping[str, Any] | None = None
) -> tuple[Mechanism, str]:
    """(mechanism instance, utility) from the public spelling (utility None: "distance")."""
    if utility is None:
        utility = "distance"
    if utility not in UTILITIES:
        raise ValueError(f"utility must be one of {UTILITIES}, got {utility!r}")
    return resolve_mechanism(mechanism, epsilon, **dict(kwargs or {})), str(utility)


def build_tdt_problem(
    utility: str,
    b: ArrayLike,
    c: ArrayLike,
    n: int,
    bound: str,
    threshold: float,
    labels: Sequence[object] | None,
    mech: Mechanism | None = None,
) -> SelectionProblem:
    """The problem ``mech`` runs on: the distance utility, or the chi2 scores (bounds only where used)."""
    if utility == "distance":
        return distance_utility_problem(b, c, n, labels=labels)
    if isinstance(mech, (ExponentialMechanism, PermuteAndFlip, ReportNoisyMax)):
        bound_or_none: str | None = None  # global sensitivity only: skip the beta_max scan
    else:
        bound_or_none = bound
    return tdt_problem(b, c, n, bound=bound_or_none, threshold=threshold, labels=labels)
