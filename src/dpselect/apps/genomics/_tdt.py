"""Transmission disequilibrium test (TDT): private top-SNP and top-k selection.

Data and statistic
------------------
A trio study with ``N = n_families`` families (2N parents).  For one SNP,
``b`` (``c``) counts heterozygous parents transmitting the first (second)
allele; ``b, c >= 0``, ``b + c <= 2N``; chi2(b, c) = (b - c)^2 / (b + c)
(0 at b = c = 0).  Counts from PLINK files: :mod:`dpselect.apps.genomics`.

Neighbour relation (mathematics §1, §4.4)
-----------------------------------------
One **family** replaced ("replace"); see :mod:`._tdt_problem`.

Selection
---------
* :func:`select_top_snp` / :func:`select_top_snps` default to
  **permute-and-flip on the neighbour-distance utility**
  (``mechanism="pf", utility="distance"``; :func:`distance_utility_problem`):
  the most accurate sound choice measured (20 SNPs, N = 150, eps = 3: exact
  accuracy 0.998 vs 0.30 for YS's sound Smooth Private Selection; the
  Justice et al. 2020 example at eps = 9: 0.97 vs SPS 0.47 and EM 0.43).
  The seeds' mechanisms ("sps", "em", "pf", "ld", ...) run on the chi2
  scores of :func:`tdt_problem` with ``utility="chi2"``.
* Sensitivities in closed form (:mod:`._sensitivity`): GS = 8(N-1)/N, LS,
  Lemma 2/3, distances to G = {LS = GS} and U = {LS > T}; the Thm 4/5
  beta_max (exact minimum by branch and bound) and smooth upper bounds
  (:mod:`._beta_max`), at any N.
* The peeling rounds of :func:`select_top_snps`: :mod:`._tdt_peel`.

Sources: Yamamoto & Shibuya, IPCCC 2024, §V and supplement; mathematics §4.4,
§9.1 (which win over the paper).
"""

from __future__ import annotations

from collections.abc import Sequence

from numpy.typing import ArrayLike

from ..._params import EPSILON, SEED, Rule, options, validate_params
from ..._validation import check_int, check_random_state
from ...accounting import Accountant, charge
from ...mechanisms import Mechanism
from ...typing import Relation, SeedLike
from ._beta_max import beta_max, smooth_upper_bound
from ._case_control_counts import CaseControlCounts
from ._case_control_select import TEST, select_association_snps
from ._counting import TransmissionCounts
from ._distance import distance_utility_problem, neighbour_distances
from ._rules import ACCOUNTANT, BOUND, COUNTS, LABELS, MECHANISM, N_FAMILIES, THRESHOLD
from ._sensitivity import MOVES, global_sensitivity, lemma2_region, local_sensitivity, table_distance, tdt_statistic
from ._set_distance import gs_distance, unstable_distance
from ._tdt_peel import _peel, _stand_in
from ._tdt_problem import UTILITIES, build_tdt_problem, check_panel, resolve_tdt_mechanism, tdt_neighbours, tdt_problem
from ._top_snps import TOP_K_METHODS, TopSNPs, _forward_top_k

__all__ = [
    "MOVES",
    "TOP_K_METHODS",
    "UTILITIES",
    "TopSNPs",
    "beta_max",
    "distance_utility_problem",
    "global_sensitivity",
    "gs_distance",
    "lemma2_region",
    "local_sensitivity",
    "neighbour_distances",
    "select_top_snp",
    "select_top_snps",
    "smooth_upper_bound",
    "table_distance",
    "tdt_neighbours",
    "tdt_problem",
    "tdt_statistic",
    "unstable_distance",
]

_UTILITY = options(*UTILITIES, none=True)


@validate_params(
    {
        "b": COUNTS,
        "c": COUNTS,
        "n_families": N_FAMILIES,
        "epsilon": EPSILON.or_none(),
        "mechanism": MECHANISM,
        "utility": _UTILITY,
        "rng": SEED,
        "accountant": ACCOUNTANT,
        "bound": BOUND,
        "threshold": THRESHOLD,
        "labels": LABELS,
    }
)
def select_top_snp(
    b: ArrayLike,
    c: ArrayLike,
    n_families: int,
    epsilon: float | None,
    *,
    mechanism: str | Mechanism = "pf",
    utility: str = "distance",
    rng: SeedLike = None,
    accountant: Accountant | None = None,
    bound: str = "thm5",
    threshold: float = 6,
    labels: Sequence[object] | None = None,
    **mechanism_kwargs: object,
) -> object:
    r"""Privately select the SNP with (approximately) the largest TDT statistic.

    Parameters
    ----------
    b : array-like of int
        1-D transmissions of allele 1 per SNP (PLINK's T).
    c : array-like of int
        1-D transmissions of allele 2 per SNP (PLINK's U; ``b + c <= 2N``).
    n_families : int
        N, the number of trios (public).
    epsilon : float or None
        Budget (None when ``mechanism`` is an instance).
    mechanism : str or Mechanism, default="pf"
        A registry name ("pf", "em", "sps", "ld", ...) or an instance.
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
    **mechanism_kwargs : object
        Passed to the named mechanism (e.g. ``gamma=`` for SPS).

    Returns
    -------
    int or label
        The index (or label) of the selected SNP.  Guarantee
        ``mech.privacy(problem)``: epsilon-DP under family replacement
        ("replace" neighbours: one family replaced; mathematics §4.4, §9.1).

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
    n = n_families
    mech, util = resolve_tdt_mechanism(mechanism, epsilon, utility, mechanism_kwargs)
    prob = build_tdt_problem(util, b, c, n, bound, threshold, labels, mech)
    charge(accountant, mech.privacy(prob))
    index = int(mech.select(prob, rng=check_random_state(rng)))
    return prob.labels[index] if prob.labels is not None else index


#: The first positional arguments of :func:`select_top_snps`: (b, c, n_families, epsilon, k) on counts
#: arrays, (counts, epsilon, k) on a counts object; checked by the body once the form is known.
_SHIFTING = Rule(
    "transmission counts, a TransmissionCounts or CaseControlCounts, or (for a counts object) "
    "epsilon and k: checked once the call's form is known"
)


@validate_params(
    {
        "b": _SHIFTING,
        "c": _SHIFTING,
        "n_families": _SHIFTING,
        "epsilon": _SHIFTING,
        "k": _SHIFTING,
        "mechanism": MECHANISM,
        "utility": _UTILITY,
        "method": options(*TOP_K_METHODS),
        "rng": SEED,
        "accountant": ACCOUNTANT,
        "bound": BOUND,
        "threshold": THRESHOLD,
        "labels": LABELS,
        "test": TEST.or_none(),
        "relation": options("replace", "add_remove", none=True),
    }
)
def select_top_snps(
    b: ArrayLike | TransmissionCounts | CaseControlCounts,
    c: ArrayLike | None = None,
    n_families: int | None = None,
    epsilon: float | None = None,
    k: int | None = None,
    *,
    mechanism: str | Mechanism = "pf",
    utility: str = "distance",
    method: str = "peel",
    rng: SeedLike = None,
    accountant: Accountant | None = None,
    bound: str = "thm5",
    threshold: float = 6,
    labels: Sequence[object] | None = None,
    test: str | None = None,
    relation: Relation | None = None,
) -> TopSNPs:
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
    the SNP ids.  On transmission counts the neighbour relation is one family
    replaced ("replace"; mathematics §4.4, §9.1).

    Parameters
    ----------
    b : array-like of int, TransmissionCounts or CaseControlCounts
        1-D transmissions of allele 1 per SNP (PLINK's T), or the counts object.
    c : array-like of int or float
        1-D transmissions of allele 2 per SNP (PLINK's U; ``b + c <= 2N``), or
        epsilon when ``b`` is a counts object.
    n_families : int
        N (public), or k when ``b`` is a counts object.
    epsilon : float
        Total budget, split evenly: every round runs at epsilon / k (None when
        ``mechanism`` is an instance).
    k : int
        Number of SNPs, 1 <= k <= m.
    mechanism : str or Mechanism, default="pf"
        As :func:`select_top_snp`.
    utility : {"distance", "chi2"}, default="distance"
        As :func:`select_top_snp`.
    method : {"peel", "joint", "gumbel"}, default="peel"
        "peel": k rounds, round j selects among the SNPs not yet chosen
        (EM-type mechanisms draw the k rounds at once by the Gumbel trick,
        the same law; on the distance utility the distances of round j + 1
        are updated from round j's).  "joint" / "gumbel" are forwarded to
        :func:`dpselect.mechanisms.select_top_k`.
    rng : None, int or numpy.random.Generator, default=None
        Randomness.
    accountant : Accountant, default=None
        Charged with the total before any randomness is drawn.
    bound : {"thm4", "thm5"}, default="thm5"
        As :func:`select_top_snp` (chi2 utility only).
    threshold : float, default=6
        As :func:`select_top_snp` (chi2 utility only).
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

        \varepsilon = \sum_{j=1}^{k} \varepsilon_j = k \cdot \frac{\varepsilon}{k}

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
        eps: float | None = (
            None if c is None and epsilon is None else EPSILON(c if c is not None else epsilon, "epsilon")
        )
        kk = n_families if n_families is not None else k
        if isinstance(b, CaseControlCounts):
            if labels is not None:
                raise ValueError("labels: CaseControlCounts name their SNPs (snp_ids)")
            return select_association_snps(
                b,
                eps,
                kk,
                test="allelic" if test is None else test,
                relation="replace" if relation is None else relation,
                mechanism=mechanism,
                utility=utility,
                method=method,
                rng=rng,
                accountant=accountant,
            )
        counts = b
        b, c, n_families, epsilon, k = counts.b, counts.c, counts.n_families, eps, kk
        labels = counts.snp_ids.tolist() if labels is None else labels
    elif epsilon is not None:
        epsilon = EPSILON(epsilon, "epsilon")
    if test is not None or relation is not None:
        raise ValueError("test and relation apply to CaseControlCounts only (the TDT relation is one family replaced)")
    if c is None or n_families is None or k is None:
        raise TypeError("select_top_snps(b, c, n_families, epsilon, k) needs b, c, n_families and k")
    n = N_FAMILIES(n_families, "n_families")
    b, c = check_panel(b, c, n)
    k = check_int(k, "k", minimum=1)
    if k > b.size:
        raise ValueError(f"k must be <= the number of SNPs ({b.size}), got {k}")
    if labels is not None and len(labels) != b.size:
        raise ValueError(f"labels must have length {b.size} (one per SNP), got {len(labels)}")
    mech, util = resolve_tdt_mechanism(mechanism, None if epsilon is None else epsilon / k, utility)
    gen = check_random_state(rng)
    if method != "peel":
        idx, total = _forward_top_k(
            mech, build_tdt_problem(util, b, c, n, bound, threshold, None, mech), k, method, accountant, gen
        )
        rounds, name = [total], method
    else:
        rounds = [mech.privacy(_stand_in(util, b.size - j, n, bound, threshold, mech)) for j in range(k)]
        total = sum(rounds[1:], rounds[0])
        charge(accountant, total)
        idx, name = _peel(mech, util, b, c, n, k, bound, threshold, gen)
    names = None if labels is None else [list(labels)[i] for i in idx]
    return TopSNPs(idx, names, total, max(rounds, key=lambda p: (p.epsilon, p.delta)), name)
