"""Transmission disequilibrium test (TDT): private top-SNP and top-k selection.

Data and statistic
------------------
A trio study with ``N = n_families`` families (2N parents).  For one SNP,
``b`` (``c``) counts heterozygous parents transmitting the first (second)
allele; ``b, c >= 0``, ``b + c <= 2N``; chi2(b, c) = (b - c)^2 / (b + c)
(0 at b = c = 0).  Counts from PLINK files: :mod:`dpselect.apps.genomics`.

Neighbour relation (mathematics §1, §4.4)
-------------------------------------
One **family** replaced ("replace").  On one SNP's table a replacement is a
table-level move ``(db, dc)``, ``|db|, |dc|, |db + dc| <= 2`` (:data:`MOVES`),
an over-approximation of realisable changes (conservative); one family moves
every SNP's table at once, each SNP its own move.

Selection
---------
* :func:`select_top_snp` / :func:`select_top_snps` default to
  **permute-and-flip on the neighbour-distance utility**
  (``mechanism="pf", utility="distance"``; :func:`distance_utility_problem`):
  the most accurate sound choice measured (20 SNPs, N = 150, eps = 3: exact
  accuracy 0.998 vs 0.30 for YS's sound Smooth Private Selection; the
  Justice et al. 2020 example at eps = 9: 0.97 vs SPS 0.47 and EM 0.43).
  The seeds' mechanisms ("sps", "em", "pf", "ld", ...) run on the chi2
  scores of :func:`tdt_problem` with ``utility="chi2"``.  The older names
  "nd_pf" / "nd_em" (utility in the name) still work and raise a
  DeprecationWarning.
* Sensitivities in closed form (:mod:`._sensitivity`): GS = 8(N-1)/N, LS,
  Lemma 2/3, distances to G = {LS = GS} and U = {LS > T}; the Thm 4/5
  beta_max (exact minimum by branch and bound) and smooth upper bounds
  (:mod:`._beta_max`), at any N.

Sources: Yamamoto & Shibuya, IPCCC 2024, §V and supplement; mathematics §4.4,
§9.1 (which win over the paper).
"""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any

import numpy as np

from ..._validation import check_int, check_random_state
from ...accounting import Accountant, charge
from ...mechanisms import (
    ExponentialMechanism,
    PermuteAndFlip,
    ReportNoisyMax,
    distance_problem,
    is_gumbel_mechanism,
    resolve_mechanism,
    select_top_k,
)
from ...problem import SelectionProblem
from ...typing import Relation
from ._beta_max import beta_max, beta_max_unchecked, smooth_upper_bound
from ._case_control_counts import CaseControlCounts
from ._case_control_select import select_association_snps
from ._counting import TransmissionCounts
from ._distance import PanelDistances, distance_utility_problem, neighbour_distances
from ._sensitivity import (
    MOVES,
    check_bound,
    check_n,
    check_tables,
    check_threshold,
    chi2,
    exact_local_sensitivity,
    global_sensitivity,
    gs_distance,
    hex_distance,
    lemma2_region,
    local_sensitivity,
    table_distance,
    tdt_statistic,
    unstable_distance,
)
from ._top_snps import TOP_K_METHODS, TopSNPs, _forward_top_k, _peel_distances

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
    "tdt_neighbours",
    "neighbour_distances",
    "distance_utility_problem",
    "tdt_problem",
    "select_top_snp",
    "select_top_snps",
    "TopSNPs",
    "DISTANCE_MECHANISMS",
    "TOP_K_METHODS",
    "UTILITIES",
]

#: Deprecated mechanism names that encoded the neighbour-distance utility -> the mechanism name
#: (spell them ``mechanism="pf" | "em", utility="distance"``).
DISTANCE_MECHANISMS = {"nd_pf": "pf", "nd_em": "em"}

UTILITIES = ("distance", "chi2")

def _panel(b: Any, c: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    b, c = check_tables(b, c, n)
    if b.ndim != 1:
        raise ValueError(f"b and c must be 1-D (one table per SNP), got shape {b.shape}")
    return b, c


def tdt_neighbours(b: Any, c: Any, n_families: int, *, limit: int = 200_000) -> list[tuple[np.ndarray, np.ndarray]]:
    """All one-family-replacement neighbours of a small SNP panel (for audits).

    Every combination of legal per-SNP moves (including (0, 0)) except the
    all-zero one, SNP 0 varying slowest: an over-approximation of the
    realisable family changes, conservative for audits.  ``limit`` caps the
    count (the product grows like 19^m); ValueError if exceeded.
    """
    n = check_n(n_families)
    b, c = _panel(b, c, n)
    limit = check_int(limit, "limit", minimum=1)
    moves = np.array(((0, 0),) + MOVES, dtype=np.int64)
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


def tdt_problem(b: Any, c: Any, n_families: int, *, bound: str | None = "thm5", threshold: float = 6,
            labels: Any = None) -> SelectionProblem:
    """SelectionProblem of top-SNP selection on the chi2 scores (YS §V; the seeds' mechanisms).

    Candidates: the m SNPs (public); relation "replace" (one family).
    scores = chi2 per SNP; ``global_sensitivity`` = 8(N-1)/N;
    ``candidate_smooth_bound(beta)`` = :func:`smooth_upper_bound` (YS Thm 4
    exact smooth sensitivity, or Thm 5 with U = {LS > threshold}, each
    S(., r) beta-smooth for the panel) and ``smooth_bound`` its max over SNPs;
    ``beta_max`` lazily from :func:`beta_max` (larger beta raises);
    ``candidate_local_sensitivity(t)`` the exact per-SNP LS at distance t
    (computed lazily, only local dampening uses it).  ``threshold``:
    6 <= T < GS.  ``bound=None`` leaves the Thm 4/5 bounds out (no beta_max,
    a branch and bound once per N, 0.1 s at N = 10^4; smooth sensitivities
    then come from the exact LS profile): what the global-sensitivity mechanisms get from
    :func:`select_top_snp`.  For the accurate default use
    :func:`distance_utility_problem`.
    """
    n = check_n(n_families)
    b, c = _panel(b, c, n)
    if bound is None:
        return _chi2_problem(b, c, n, labels, None, 0.0)
    bound = check_bound(bound)
    return _chi2_problem(b, c, n, labels, bound, check_threshold(threshold, n) if bound == "thm5" else 0.0)


def _chi2_problem(b: np.ndarray, c: np.ndarray, n: int, labels: Any, bound: str | None,
                  thr: float) -> SelectionProblem:
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


def resolve_tdt_mechanism(mechanism: Any, epsilon: float | None, utility: Any,
                          kwargs: dict[str, Any]) -> tuple[Any, str]:
    """(mechanism instance, utility) from the public spelling; "nd_pf" / "nd_em" warn (deprecated)."""
    if isinstance(mechanism, str) and mechanism in DISTANCE_MECHANISMS:
        new = DISTANCE_MECHANISMS[mechanism]
        warnings.warn(f"mechanism={mechanism!r} is deprecated: spell it mechanism={new!r}, utility='distance'",
                      DeprecationWarning, stacklevel=3)
        if utility not in (None, "distance"):
            raise ValueError(f"mechanism {mechanism!r} runs on utility='distance', got utility={utility!r}")
        return resolve_mechanism(new, epsilon, **kwargs), "distance"
    if utility is None:
        utility = "distance"
    if utility not in UTILITIES:
        raise ValueError(f"utility must be one of {UTILITIES}, got {utility!r}")
    return resolve_mechanism(mechanism, epsilon, **kwargs), str(utility)


def build_tdt_problem(utility: str, b: Any, c: Any, n: int, bound: str, threshold: float, labels: Any,
           mech: Any = None) -> SelectionProblem:
    if utility == "distance":
        return distance_utility_problem(b, c, n, labels=labels)
    if isinstance(mech, (ExponentialMechanism, PermuteAndFlip, ReportNoisyMax)):
        bound_or_none: str | None = None  # global sensitivity only: skip the beta_max scan
    else:
        bound_or_none = bound
    return tdt_problem(b, c, n, bound=bound_or_none, threshold=threshold, labels=labels)


def select_top_snp(b: Any, c: Any, n_families: int, epsilon: float | None, *, mechanism: Any = "pf",
                   utility: str = "distance", rng: Any = None, accountant: Accountant | None = None,
                   bound: str = "thm5", threshold: float = 6, labels: Any = None, **mechanism_kwargs: Any) -> Any:
    r"""Privately select the SNP with (approximately) the largest TDT statistic.

    Parameters
    ----------
    b, c : array-like of int
        1-D transmission counts per SNP (PLINK's T and U).
    n_families : int
        N, the number of trios (public).
    epsilon : float or None
        Budget (None when ``mechanism`` is an instance).
    mechanism : str or mechanism instance, default="pf"
        A registry name ("pf", "em", "sps", "ld", ...) or an instance.
        "nd_pf" / "nd_em" are deprecated spellings of ``"pf"`` / ``"em"`` with
        ``utility="distance"`` (DeprecationWarning).
    utility : {"distance", "chi2"}, default="distance"
        "distance": u_r = -d_r, the neighbour distance (Delta u = 1);
        "chi2": the TDT statistics with their sensitivities (the seeds'
        mechanisms, e.g. Smooth Private Selection, need it).
    rng : None, int or numpy.random.Generator, default=None
        Randomness; a seed reproduces.
    accountant : Accountant, default=None
        Charged with the guarantee before any randomness is drawn.
    bound : {"thm4", "thm5"}, default="thm5"
        The SPS smooth bound (chi2 utility only).
    threshold : float, default=6
        Theorem 5's T (chi2 utility only).
    labels : sequence, default=None
        SNP names; the label is returned instead of the index.
    **mechanism_kwargs
        Passed to the named mechanism (e.g. ``gamma=`` for SPS).

    Returns
    -------
    int or label
        The index (or label) of the selected SNP.  Guarantee
        ``mech.privacy(problem)``: epsilon-DP under family replacement.

    Notes
    -----
    With the default, permute-and-flip (McKenna & Sheldon 2020) on

    .. math::

        u_r = -d_r,\qquad d_r = \min\{k : \text{SNP } r \text{ has a largest } \chi^2
        \text{ after } k \text{ family replacements}\},

    which has sensitivity 1 under one family replaced.

    References
    ----------
    Yamamoto & Shibuya (2024), IPCCC, §V (the TDT sensitivities, SPS);
    Johnson & Shmatikov (2013), KDD (the neighbour-distance utility);
    McKenna & Sheldon (2020), NeurIPS (permute-and-flip).

    Examples
    --------
    >>> from dpselect.apps.genomics import select_top_snp
    >>> select_top_snp([90, 52, 50], [20, 48, 50], 150, 3.0, rng=1)
    0
    """
    n = check_n(n_families)
    mech, util = resolve_tdt_mechanism(mechanism, epsilon, utility, mechanism_kwargs)
    prob = build_tdt_problem(util, b, c, n, bound, threshold, labels, mech)
    charge(accountant, mech.privacy(prob))
    index = int(mech.select(prob, rng=check_random_state(rng)))
    return prob.labels[index] if prob.labels is not None else index


def select_top_snps(b: Any, c: Any = None, n_families: Any = None, epsilon: Any = None, k: Any = None, *,
                    mechanism: Any = "pf", utility: str = "distance", method: str = "peel", rng: Any = None,
                    accountant: Accountant | None = None, bound: str = "thm5", threshold: float = 6,
                    labels: Any = None, test: str | None = None, relation: Relation | None = None) -> TopSNPs:
    r"""Privately select k SNPs with (approximately) the largest TDT or case-control statistics.

    Called as ``select_top_snps(b, c, n_families, epsilon, k, ...)`` on
    transmission counts, or ``select_top_snps(counts, epsilon, k, ...)`` on a
    :class:`TransmissionCounts` (the same) or a :class:`CaseControlCounts`:
    the allelic test (``test="allelic"``; mathematics §14), neighbour
    relation ``relation="replace"`` (one individual's genotypes replaced,
    status kept) or ``"add_remove"`` (one individual added or removed), and
    ``utility="distance"`` (d_r, Delta u = 1 under both) or ``"chi2"`` (the
    allelic chi2 with :func:`allelic_sensitivity`, "replace", fully called
    SNPs: the Uhler, Slavkovic & Fienberg 2013 baseline); ``labels`` are then
    the SNP ids.

    Parameters
    ----------
    b, c : array-like of int
        1-D transmission counts per SNP (or counts, epsilon as above).
    n_families : int
        N (public).
    epsilon : float
        Total budget, split evenly: every round runs at epsilon / k.
    k : int
        Number of SNPs, 1 <= k <= m.
    mechanism : str or mechanism instance, default="pf"
        As :func:`select_top_snp` ("nd_pf" / "nd_em" deprecated).
    utility : {"distance", "chi2"}, default="distance"
        As :func:`select_top_snp`.
    method : {"peel", "joint", "gumbel"}, default="peel"
        "peel": k rounds, round j selects among the SNPs not yet chosen
        (EM-type mechanisms draw the k rounds at once by the Gumbel trick,
        the same law; on the distance utility the distances of round j + 1
        are updated from round j's, see :class:`PanelDistances`).
        "joint" / "gumbel" are forwarded to
        :func:`dpselect.mechanisms.top_k.select_top_k`.
    rng : None, int or numpy.random.Generator, default=None
        Randomness.
    accountant : Accountant, default=None
        Charged with the total before any randomness is drawn.
    bound, threshold : as :func:`select_top_snp` (chi2 utility only).
    labels : sequence, default=None
        SNP names (returned in ``labels``).
    test : {"allelic"}, default=None
        Case-control counts only: the association test ("allelic" when None).
    relation : {"replace", "add_remove"}, default=None
        Case-control counts only: the neighbour relation ("replace" when None).

    Returns
    -------
    TopSNPs
        Indices (most preferred first), labels, the total and per-round guarantees.

    Notes
    -----
    Guarantee of peeling: adaptive sequential composition of the k rounds
    (Dwork & Roth 2014, Thm 3.16),

    .. math::

        arepsilon = \sum_{j=1}^{k} arepsilon_j = k \cdot rac{arepsilon}{k}

    for every pure mechanism here; each round's guarantee depends only on the
    public number of SNPs left, so it is computed on a data-free stand-in
    problem (no rebuilt panel).

    References
    ----------
    Dwork & Roth (2014), The Algorithmic Foundations of DP, Thm 3.16;
    Durfee & Rogers (2019), NeurIPS (one-shot Gumbel top-k).

    Examples
    --------
    >>> from dpselect.apps.genomics import select_top_snps
    >>> out = select_top_snps([90, 80, 52, 50], [20, 20, 48, 50], 150, 6.0, 2, rng=1)
    >>> sorted(out.indices.tolist()), out.privacy.epsilon, out.round_privacy.epsilon
    ([0, 1], 6.0, 3.0)
    >>> from dpselect.apps.genomics import simulate_case_control
    >>> sim = simulate_case_control(500, 500, 200, n_causal=2, odds_ratio=3.0, rng=0)
    >>> sorted(select_top_snps(sim.counts, 2.0, 2, rng=0).indices.tolist()) == sim.causal.tolist()
    True
    """
    if isinstance(b, (TransmissionCounts, CaseControlCounts)):
        if (c is not None and epsilon is not None) or (n_families is not None and k is not None):
            raise TypeError("select_top_snps(counts, epsilon, k, ...): epsilon and k given twice")
        epsilon, k = (c if c is not None else epsilon), (n_families if n_families is not None else k)
        opts = {"mechanism": mechanism, "utility": utility, "method": method, "rng": rng, "accountant": accountant}
        if isinstance(b, CaseControlCounts):
            if labels is not None:
                raise ValueError("labels: CaseControlCounts name their SNPs (snp_ids)")
            return select_association_snps(b, epsilon, k, test="allelic" if test is None else test,
                                           relation="replace" if relation is None else relation, **opts)
        b, c, n_families, labels = b.b, b.c, b.n_families, (b.snp_ids.tolist() if labels is None else labels)
    if test is not None or relation is not None:
        raise ValueError("test and relation apply to CaseControlCounts only (the TDT relation is one family "
                         "replaced)")
    if c is None or n_families is None or k is None:
        raise TypeError("select_top_snps(b, c, n_families, epsilon, k) needs b, c, n_families and k")
    n = check_n(n_families)
    b, c = _panel(b, c, n)
    k = check_int(k, "k", minimum=1)
    if k > b.size:
        raise ValueError(f"k must be <= the number of SNPs ({b.size}), got {k}")
    if labels is not None and len(labels) != b.size:
        raise ValueError(f"labels must have length {b.size} (one per SNP), got {len(labels)}")
    if method not in TOP_K_METHODS:
        raise ValueError(f"method must be one of {TOP_K_METHODS}, got {method!r}")
    mech, util = resolve_tdt_mechanism(mechanism, None if epsilon is None else epsilon / k, utility, {})
    gen = check_random_state(rng)
    if method != "peel":
        idx, total = _forward_top_k(mech, build_tdt_problem(util, b, c, n, bound, threshold, None, mech), k,
                                    method, accountant, gen)
        rounds, name = [total], method
    else:
        rounds = [mech.privacy(_stand_in(util, b.size - j, n, bound, threshold, mech)) for j in range(k)]
        total = sum(rounds[1:], rounds[0])
        charge(accountant, total)
        panel = PanelDistances(b, c, n, removals=k - 1) if util == "distance" else None
        full = (distance_problem(panel.distances().astype(np.float64), relation="replace") if panel is not None
                else build_tdt_problem(util, b, c, n, bound, threshold, None, mech))
        if is_gumbel_mechanism(mech, full):  # the same law as k-fold peeling (Durfee & Rogers 2019)
            idx, name = np.asarray(select_top_k(mech, full, k, rng=gen), dtype=np.int64), "gumbel_top_k"
        elif panel is not None:
            idx, name = _peel_distances(mech, panel, k, gen), "peeling"
        else:
            idx, name = _peel_rebuild(mech, util, b, c, n, k, bound, threshold, gen), "peeling"
    names = None if labels is None else [list(labels)[i] for i in idx]
    return TopSNPs(idx, names, total, max(rounds, key=lambda p: (p.epsilon, p.delta)), name)


def _stand_in(util: str, m: int, n: int, bound: str, threshold: float, mech: Any) -> SelectionProblem:
    """A data-free problem of the round's shape (m SNPs, N families): its guarantee is the round's."""
    zeros = np.zeros(m, dtype=np.int64)
    if util == "distance":
        return distance_problem(np.zeros(m), relation="replace")
    return build_tdt_problem(util, zeros, zeros, n, bound, threshold, None, mech)


def _peel_rebuild(mech: Any, util: str, b: np.ndarray, c: np.ndarray, n: int, k: int, bound: str,
                  threshold: float, gen: np.random.Generator) -> np.ndarray:
    """Peeling on the chi2 utility: round j's problem on the SNPs not yet chosen."""
    remaining = np.arange(b.size)
    chosen = []
    for _ in range(k):
        sub = build_tdt_problem(util, b[remaining], c[remaining], n, bound, threshold, None, mech)
        pick = int(mech.select(sub, rng=gen))
        chosen.append(int(remaining[pick]))
        remaining = np.delete(remaining, pick)
    return np.array(chosen, dtype=np.int64)
