"""The genomics selections, one form each: ``(counts, epsilon, k, *, ...)``, dispatched on the counts' type.

A :class:`TransmissionCounts` runs the TDT (neighbour relation: one family replaced,
mathematics §4.4, §9.1); a :class:`CaseControlCounts` runs an association test
(one individual's genotypes replaced, status kept, or one individual added or
removed; mathematics §14).  This module is the one place that looks at the type.
"""

from __future__ import annotations

from typing import Any

from ..._params import EPSILON, SEED, instance_of, int_at_least, options, validate_params
from ..._validation import check_random_state
from ...accounting import Accountant
from ...mechanisms import Mechanism
from ...typing import Relation, SeedLike
from ._casecontrol import TEST, association_top_snp, select_association_snps
from ._counts import CaseControlCounts, TransmissionCounts
from ._rules import ACCOUNTANT, BOUND, MECHANISM, THRESHOLD
from ._tdt import UTILITIES, tdt_top_snp, tdt_top_snps
from ._top_snps import TOP_K_METHODS, TopSNPs

__all__ = ["COUNTS_OBJECT", "check_design", "select_top_snp", "select_top_snps"]

#: The data of every genomics selection: a counts object (its type picks the design).
COUNTS_OBJECT = instance_of(TransmissionCounts, CaseControlCounts)
_RELATION = options("replace", "add_remove", none=True)
_UTILITY = options(*UTILITIES)


def check_design(counts: object, test: str | None, relation: str | None) -> tuple[str, Relation]:
    """(test, relation) of the counts' design: the TDT takes neither (its relation is one family replaced)."""
    if isinstance(counts, TransmissionCounts):
        if test is not None:
            raise ValueError("test: applies to CaseControlCounts only (the TDT has one statistic)")
        if relation not in (None, "replace"):
            raise ValueError("relation: the TDT's neighbour relation is one family replaced ('replace')")
        return "tdt", "replace"
    return ("allelic" if test is None else test), ("replace" if relation is None else relation)  # type: ignore[return-value]


_RULES = {
    "counts": COUNTS_OBJECT,
    "epsilon": EPSILON.or_none(),
    "test": TEST.or_none(),
    "relation": _RELATION,
    "mechanism": MECHANISM,
    "utility": _UTILITY,
    "rng": SEED,
    "accountant": ACCOUNTANT,
    "bound": BOUND,
    "threshold": THRESHOLD,
}


@validate_params(_RULES)
def select_top_snp(
    counts: TransmissionCounts | CaseControlCounts,
    epsilon: float | None,
    *,
    test: str | None = None,
    relation: Relation | None = None,
    mechanism: str | Mechanism = "pf",
    utility: str = "distance",
    rng: SeedLike = None,
    accountant: Accountant | None = None,
    bound: str = "thm5",
    threshold: float = 6,
    **mechanism_kwargs: Any,
) -> int:
    r"""Privately select the SNP with (approximately) the largest TDT or association statistic.

    Parameters
    ----------
    counts : TransmissionCounts or CaseControlCounts
        Trio transmissions (the TDT) or case-control genotype counts.
    epsilon : float or None
        Budget (None when ``mechanism`` is an instance).
    test : str, default=None
        Case-control counts only: one of :data:`ASSOCIATION_TESTS` (None: "allelic").
    relation : {"replace", "add_remove"}, default=None
        Case-control counts only: one individual's genotypes replaced (None, "replace")
        or one individual added or removed.  The TDT's relation is one family replaced.
    mechanism : str or Mechanism, default="pf"
        A registry name ("pf", "em", "sps", "ld", ...) or an instance.
    utility : {"distance", "chi2"}, default="distance"
        "distance": u_r = -d_r, the neighbour distance (Delta u = 1);
        "chi2": the statistics with their sensitivities (the seeds'
        mechanisms, e.g. Smooth Private Selection, need it).
    rng : None, int or numpy.random.Generator, default=None
        Randomness; a seed reproduces.
    accountant : Accountant, default=None
        Charged with the guarantee before any randomness is drawn.
    bound : {"thm4", "thm5"}, default="thm5"
        The TDT's SPS smooth bound (chi2 utility only).
    threshold : float, default=6
        Theorem 5's T (TDT, chi2 utility only).
    **mechanism_kwargs : object
        Passed to the named mechanism (e.g. ``gamma=`` for SPS).

    Returns
    -------
    int
        The index of the selected SNP (``counts.snp_ids[index]`` names it).
        Guarantee ``mech.privacy(problem)``: epsilon-DP under the counts'
        relation (mathematics §4.4, §9.1, §14).

    Notes
    -----
    With the default, permute-and-flip (McKenna & Sheldon 2020) on

    .. math::

        u_r = -d_r,\qquad d_r = \min\{j : \text{SNP } r \text{ has a largest statistic}
        \text{ after } j \text{ neighbour steps}\},

    which has sensitivity 1 (Johnson & Shmatikov 2013).

    References
    ----------
    Yamamoto & Shibuya (2024), IPCCC, §V (the TDT sensitivities, SPS);
    Johnson & Shmatikov (2013), KDD (the neighbour-distance utility);
    McKenna & Sheldon (2020), NeurIPS (permute-and-flip).

    Examples
    --------
    >>> from dpselect.apps.genomics import TransmissionCounts, select_top_snp
    >>> select_top_snp(TransmissionCounts([90, 52, 50], [20, 48, 50], 150), 3.0, rng=1)
    0
    """
    test, relation = check_design(counts, test, relation)
    gen = check_random_state(rng)
    if isinstance(counts, TransmissionCounts):
        return tdt_top_snp(
            counts,
            epsilon,
            mechanism=mechanism,
            utility=utility,
            bound=bound,
            threshold=threshold,
            accountant=accountant,
            gen=gen,
            mechanism_kwargs=mechanism_kwargs,
        )
    return association_top_snp(
        counts,
        epsilon,
        test=test,
        relation=relation,
        mechanism=mechanism,
        utility=utility,
        accountant=accountant,
        gen=gen,
        mechanism_kwargs=mechanism_kwargs,
    )


@validate_params({**_RULES, "k": int_at_least(1), "method": options(*TOP_K_METHODS)})
def select_top_snps(
    counts: TransmissionCounts | CaseControlCounts,
    epsilon: float | None,
    k: int,
    *,
    test: str | None = None,
    relation: Relation | None = None,
    mechanism: str | Mechanism = "pf",
    utility: str = "distance",
    method: str = "peel",
    rng: SeedLike = None,
    accountant: Accountant | None = None,
    bound: str = "thm5",
    threshold: float = 6,
) -> TopSNPs:
    r"""Privately select k SNPs with (approximately) the largest TDT or association statistics.

    Parameters
    ----------
    counts : TransmissionCounts or CaseControlCounts
        Trio transmissions (the TDT; relation: one family replaced) or
        case-control genotype counts (the ``test``, under ``relation``).
    epsilon : float or None
        Total budget, split evenly: every peeling round runs at epsilon / k
        (None when ``mechanism`` is an instance).
    k : int
        Number of SNPs, 1 <= k <= m.
    test : str, default=None
        Case-control counts only: one of :data:`ASSOCIATION_TESTS` (None: "allelic").
    relation : {"replace", "add_remove"}, default=None
        Case-control counts only: one individual's genotypes replaced (status
        kept; None means "replace") or one individual added or removed.
    mechanism : str or Mechanism, default="pf"
        As :func:`select_top_snp`.
    utility : {"distance", "chi2"}, default="distance"
        As :func:`select_top_snp` ("chi2" on case-control counts: the allelic
        chi2 with :func:`allelic_sensitivity`, "replace", fully called SNPs).
    method : {"peel", "joint", "gumbel"}, default="peel"
        "peel": k rounds, round j selects among the SNPs not yet chosen; on
        the distance utility the distances of round j + 1 are updated from
        round j's for every mechanism (on fixed chi2 scores EM-type
        mechanisms draw the k rounds at once by the Gumbel trick, which has
        the law of peeling there).  "joint" / "gumbel": one-shot top-k of
        :func:`dpselect.mechanisms.select_top_k` on the distance to the top-k
        set (fewest steps before a SNP is among the k largest statistics,
        Delta u = 1).
    rng : None, int or numpy.random.Generator, default=None
        Randomness.
    accountant : Accountant, default=None
        Charged with the total before any randomness is drawn.
    bound : {"thm4", "thm5"}, default="thm5"
        As :func:`select_top_snp` (TDT, chi2 utility only).
    threshold : float, default=6
        As :func:`select_top_snp` (TDT, chi2 utility only).

    Returns
    -------
    TopSNPs
        Indices (most preferred first), their SNP ids, the total and per-round guarantees.

    Notes
    -----
    Guarantee of peeling: adaptive sequential composition of the k rounds
    (Dwork & Roth 2014, Thm 3.16),

    .. math::

        \varepsilon = \sum_{j=1}^{k} \varepsilon_j = k \cdot \frac{\varepsilon}{k}

    for every pure mechanism here; each round's guarantee depends only on the
    public number of SNPs left, so it is computed on a data-free stand-in
    problem.  The distances and their sensitivity: mathematics §9.1 (TDT) and
    §14 (case-control tests).

    References
    ----------
    Dwork & Roth (2014), The Algorithmic Foundations of DP, Thm 3.16;
    Durfee & Rogers (2019), NeurIPS (one-shot Gumbel top-k);
    Johnson & Shmatikov (2013), KDD (distances to the top-k set).

    Examples
    --------
    >>> from dpselect.apps.genomics import TransmissionCounts, select_top_snps
    >>> tc = TransmissionCounts([90, 80, 52, 50], [20, 20, 48, 50], 150)
    >>> out = select_top_snps(tc, 6.0, 2, rng=1)
    >>> sorted(out.indices.tolist()), out.privacy.epsilon, out.round_privacy.epsilon
    ([0, 1], 6.0, 3.0)
    >>> from dpselect.apps.genomics import simulate_case_control
    >>> sim = simulate_case_control(500, 500, 200, n_causal=2, odds_ratio=3.0, rng=0)
    >>> sorted(select_top_snps(sim.counts, 2.0, 2, rng=0).indices.tolist()) == sim.causal.tolist()
    True
    """
    test, relation = check_design(counts, test, relation)
    if k > counts.n_snps:
        raise ValueError(f"k must be <= the number of SNPs ({counts.n_snps}), got {k}")
    gen = check_random_state(rng)
    if isinstance(counts, TransmissionCounts):
        return tdt_top_snps(
            counts,
            epsilon,
            k,
            mechanism=mechanism,
            utility=utility,
            method=method,
            bound=bound,
            threshold=threshold,
            accountant=accountant,
            gen=gen,
        )
    return select_association_snps(
        counts,
        epsilon,
        k,
        test=test,
        relation=relation,
        mechanism=mechanism,
        utility=utility,
        method=method,
        accountant=accountant,
        gen=gen,
    )
