"""Private top-SNP selection for case-control studies: the five tests of ``plink1.9 --model`` (mathematics §14).

Utilities: ``"distance"`` (default), the neighbour distance d_r of the
test's statistic (fewest individuals added, removed or replaced, status
kept, before SNP r has a largest statistic; :mod:`._allelic_distance`
for the 2 x 2 tests, :mod:`._genotype_distance` for trend and genotypic),
Delta u = 1 under both relations; ``"chi2"`` (allelic test only), the allelic chi2 itself with
its global sensitivity at fixed numbers of cases and controls (the baseline
of Uhler, Slavkovic & Fienberg 2013 and Johnson & Shmatikov 2013; "replace"
only, every SNP fully called).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ...._mechanism_lookup import resolve_mechanism
from ...._mechanism_support import is_gumbel_mechanism
from ...._params import Rule, instance_of, int_at_least, options, validate_params
from ....accounting import Accountant, charge
from ....mechanisms import Mechanism, distance_problem, select_top_k
from ....problem import SelectionProblem
from ....typing import Relation
from .._counts import CaseControlCounts
from .._panel import PanelDistances
from .._rules import LABELS
from .._top_snps import TopSNPs, _forward_top_k, _peel_distances
from ._allelic_distance import AllelicPanel, allelic_statistic
from ._genotype_distance import GenotypePanel
from ._statistics import ASSOCIATION_TESTS, collapsed_tables, model_statistic

__all__ = [
    "ASSOCIATION_TESTS",
    "TEST",
    "allelic_sensitivity",
    "association_distances",
    "association_problem",
    "association_statistic",
    "association_top_snp",
    "select_association_snps",
]

_UTILITIES = ("distance", "chi2")
_RELATIONS = ("replace", "add_remove")


def _check_test(test: object, name: str) -> str:
    if test not in ASSOCIATION_TESTS:
        raise ValueError(f"{name} must be one of {ASSOCIATION_TESTS}, got {test!r}")
    return str(test)


#: The association test of a case-control selection.
TEST = Rule(f"one of {ASSOCIATION_TESTS}", check=_check_test)
_COUNTS = instance_of(CaseControlCounts)
_UTILITY = options(*_UTILITIES)
_RELATION = options(*_RELATIONS)


def _tables(counts: CaseControlCounts) -> np.ndarray:
    return np.concatenate([counts.allele_cases, counts.allele_controls], axis=1)


def test_panel(counts: CaseControlCounts, test: str, *, removals: int = 0, rank: int = 1) -> PanelDistances:
    """The distance panel of ``test`` (removals: peeling rounds after the first; rank: the top-k set)."""
    if test == "allelic":
        return AllelicPanel(_tables(counts), removals=removals, rank=rank)
    if test in ("dominant", "recessive"):
        return AllelicPanel(collapsed_tables(test, counts.cases, counts.controls), removals=removals, rank=rank, step=1)
    return GenotypePanel(test, np.concatenate([counts.cases, counts.controls], axis=1), removals=removals, rank=rank)


@validate_params({"counts": _COUNTS, "test": TEST})
def association_statistic(counts: CaseControlCounts, *, test: str = "allelic") -> np.ndarray:
    """The ``test`` statistic of every SNP, PLINK 1.9 ``--model``'s CHISQ (private: for tests and reference only).

    "allelic": Pearson's 1-df chi2 of the allele table (``--assoc``),
    ``N (ad - bc)^2 / ((a + b)(c + d)(a + c)(b + d))`` with ``a, b`` the
    cases' A1, A2 counts and ``c, d`` the controls'; "trend": Cochran–Armitage
    (weights 2, 1, 0); "genotypic": Pearson's 2-df chi2 of the genotype table;
    "dominant" / "recessive": Pearson's chi2 of the A1-carrier / A1A1 table.

    Parameters
    ----------
    counts : CaseControlCounts
        The study's counts.
    test : {"allelic", "trend", "genotypic", "dominant", "recessive"}, default="allelic"
        The association test.

    Returns
    -------
    ndarray of float, shape (m,)
        The statistic of every SNP (0 at a zero margin).

    Examples
    --------
    >>> from dpselect.apps.genomics import CaseControlCounts, association_statistic
    >>> cc = CaseControlCounts([[29, 49, 22]], [[18, 50, 32]])
    >>> round(float(association_statistic(cc)[0]), 3)
    4.415
    """
    if test == "allelic":
        return allelic_statistic(*_tables(counts).T)
    return model_statistic(test, counts.cases, counts.controls)


@validate_params({"counts": _COUNTS, "test": TEST})
def association_distances(counts: CaseControlCounts, *, test: str = "allelic") -> np.ndarray:
    """d_r: fewest individuals added, removed or replaced (status kept) before SNP r has a largest statistic.

    For the allelic, dominant and recessive tests exact in the row-move metric
    of mathematics §14 (a 1-Lipschitz lower bound of it where a table's reach
    meets both signs of ``ad - bc``); for trend and genotypic a 1-Lipschitz
    lower bound through the allelic and one-genotype-against-the-rest reaches (:mod:`._genotype_distance`).
    The allelic case:
    ``d_r = min{k : hi_r(k) >= max_{s != r} lo_s(k)}``, hi / lo the largest /
    smallest allelic chi2 a table reaches in k moves of one individual
    (constant-time corners per split).  Sensitivity 1 under "replace"
    (genotypes, status kept) and "add_remove"; the distances are private.

    Parameters
    ----------
    counts : CaseControlCounts
        The study's counts.
    test : {"allelic", "trend", "genotypic", "dominant", "recessive"}, default="allelic"
        The association test.

    Returns
    -------
    ndarray of int64, shape (m,)
        0 for every SNP with a largest statistic.

    Examples
    --------
    >>> from dpselect.apps.genomics import CaseControlCounts, association_distances
    >>> cc = CaseControlCounts([[40, 40, 20], [25, 50, 25], [22, 50, 28]], [[20, 50, 30]] * 3)
    >>> association_distances(cc).tolist()
    [0, 5, 7]
    """
    return test_panel(counts, test).distances()


@validate_params({"n_cases": int_at_least(1), "n_controls": int_at_least(1)})
def allelic_sensitivity(n_cases: int, n_controls: int) -> float:
    r"""Global sensitivity of the allelic chi2, one individual's genotype replaced, sizes fixed, no missing calls.

    .. math:: \Delta = \frac{2 (n_1 + n_0)^2}{\min\{n_1 (n_0 + 1),\ n_0 (n_1 + 1)\}},

    :math:`8N/(N+2)` for :math:`n_1 = n_0 = N/2` (Uhler, Slavkovic & Fienberg
    2013), attained by a case moving from 0 to 2 copies of A1 in the table
    with cases all A2 and controls all A1 (mathematics §14; checked against
    enumeration of every table, not proven).

    Parameters
    ----------
    n_cases : int
        The public number of cases (>= 1).
    n_controls : int
        The public number of controls (>= 1).

    Returns
    -------
    float
        The sensitivity of the allelic chi2.

    Examples
    --------
    >>> from dpselect.apps.genomics import allelic_sensitivity
    >>> allelic_sensitivity(50, 50)
    7.8431372549019605
    """
    n1, n0 = n_cases, n_controls
    return 2.0 * (n1 + n0) ** 2 / min(n1 * (n0 + 1), n0 * (n1 + 1))


@validate_params({"counts": _COUNTS, "test": TEST, "utility": _UTILITY, "relation": _RELATION, "labels": LABELS})
def association_problem(
    counts: CaseControlCounts,
    *,
    test: str = "allelic",
    utility: str = "distance",
    relation: Relation = "replace",
    labels: Sequence[object] | None = None,
) -> SelectionProblem:
    """SelectionProblem of a case-control test: u_r = -d_r (Delta u = 1) or the chi2 (Delta = allelic_sensitivity).

    Parameters
    ----------
    counts : CaseControlCounts
        The study's counts.
    test : {"allelic", "trend", "genotypic", "dominant", "recessive"}, default="allelic"
        The association test.
    utility : {"distance", "chi2"}, default="distance"
        :func:`association_distances` (either relation) or the allelic
        statistic (test "allelic", relation "replace", every SNP fully called on autosomes).
    relation : {"replace", "add_remove"}, default="replace"
        The neighbour relation recorded on the problem.
    labels : sequence, default=None
        Names of the SNPs.

    Returns
    -------
    SelectionProblem
        Scores, sensitivity and relation.

    Examples
    --------
    >>> from dpselect.apps.genomics import CaseControlCounts, association_problem
    >>> cc = CaseControlCounts([[40, 40, 20], [25, 50, 25]], [[20, 50, 30]] * 2)
    >>> p = association_problem(cc)
    >>> p.scores.tolist(), p.global_sensitivity, p.relation
    ([0.0, -5.0], 1.0, 'replace')
    """
    if utility == "distance":
        return distance_problem(
            association_distances(counts, test=test).astype(np.float64), relation=relation, labels=labels
        )
    if relation != "replace" or test != "allelic":
        raise ValueError("utility='chi2' has a sensitivity for test='allelic' under relation='replace' only")
    sizes = np.array([counts.n_cases, counts.n_controls])
    full = np.stack([counts.cases.sum(axis=1), counts.controls.sum(axis=1)], axis=1) == sizes
    alleles = np.stack([counts.allele_cases.sum(axis=1), counts.allele_controls.sum(axis=1)], axis=1) == 2 * sizes
    if not (full.all() and alleles.all()):
        raise ValueError(
            "counts: utility='chi2' needs every SNP fully called on autosomes (its sensitivity "
            "assumes fixed allele totals); use utility='distance'"
        )
    return SelectionProblem(
        association_statistic(counts, test=test),
        labels=labels,
        relation="replace",
        global_sensitivity=allelic_sensitivity(counts.n_cases, counts.n_controls),
    )


def association_top_snp(
    counts: CaseControlCounts,
    epsilon: float | None,
    *,
    test: str,
    relation: Relation,
    mechanism: str | Mechanism,
    utility: str,
    accountant: Accountant | None,
    gen: np.random.Generator,
    mechanism_kwargs: Mapping[str, object],
) -> int:
    """One SNP (its index) by ``mechanism`` on the association utility; charged before drawing (arguments checked)."""
    mech = resolve_mechanism(mechanism, epsilon, 0.0, **dict(mechanism_kwargs))
    prob = association_problem(counts, test=test, utility=utility, relation=relation)
    charge(accountant, mech.privacy(prob))
    return int(mech.select(prob, rng=gen))


def select_association_snps(
    counts: CaseControlCounts,
    epsilon: float | None,
    k: int,
    *,
    test: str,
    relation: Relation,
    mechanism: str | Mechanism,
    utility: str,
    method: str,
    accountant: Accountant | None,
    gen: np.random.Generator,
) -> TopSNPs:
    """K SNPs on the association utility (arguments checked): peeling at epsilon / k a round, or a one-shot top-k.

    On the distance utility every peeling round runs on the distances of the SNPs left
    (updated from the round before), whatever the mechanism; ``method="joint"`` /
    ``"gumbel"`` run on the distance to the top-k set (mathematics §9.1).
    """
    mech = resolve_mechanism(mechanism, None if epsilon is None else epsilon / k)
    if method != "peel":
        if utility == "distance":
            full = distance_problem(test_panel(counts, test, rank=k).distances().astype(np.float64), relation=relation)
        else:
            full = association_problem(counts, test=test, utility=utility, relation=relation)
        idx, total = _forward_top_k(mech, full, k, method, accountant, gen)
        return TopSNPs(idx, counts.snp_ids[idx].tolist(), total, total, method)
    sens = 1.0 if utility == "distance" else allelic_sensitivity(counts.n_cases, counts.n_controls)
    rounds = [mech.privacy(_stand_in(sens, relation, counts.n_snps - j)) for j in range(k)]
    total = sum(rounds[1:], rounds[0])
    if utility == "distance":
        charge(accountant, total)
        panel = test_panel(counts, test, removals=k - 1)
        idx, name = _peel_distances(mech, panel, k, gen, relation=relation), "peeling"
    else:
        full = association_problem(counts, test=test, utility=utility, relation=relation)
        charge(accountant, total)
        if is_gumbel_mechanism(mech, full):  # fixed scores: the law of k-fold peeling (Durfee & Rogers 2019)
            idx, name = np.asarray(select_top_k(mech, full, k, rng=gen), dtype=np.int64), "gumbel_top_k"
        else:
            idx, name = _peel_scores(mech, full, k, gen), "peeling"
    round_privacy = max(rounds, key=lambda p: (p.epsilon, p.delta))
    return TopSNPs(idx, counts.snp_ids[idx].tolist(), total, round_privacy, name)


def _stand_in(sensitivity: float, relation: Relation, m: int) -> SelectionProblem:
    """A data-free problem of the round's shape: its guarantee is the round's (it depends on m, Delta only)."""
    return SelectionProblem(np.zeros(m), global_sensitivity=sensitivity, relation=relation)


def _peel_scores(mech: Mechanism, full: SelectionProblem, k: int, gen: np.random.Generator) -> np.ndarray:
    """Peeling on fixed scores (the chi2 utility): round j selects among the SNPs not chosen yet."""
    remaining = np.arange(full.n_candidates)
    chosen = []
    for _ in range(k):
        sub = SelectionProblem(
            full.scores[remaining], global_sensitivity=full.global_sensitivity, relation=full.relation
        )
        pick = int(mech.select(sub, rng=gen))
        chosen.append(int(remaining[pick]))
        remaining = np.delete(remaining, pick)
    return np.array(chosen, dtype=np.int64)
