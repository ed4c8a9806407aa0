"""Private top-SNP selection for case-control studies: the allelic test (mathematics §14).

Utilities: ``"distance"`` (default), the neighbour distance d_r of the
allelic statistic (fewest individuals added, removed or replaced, status
kept, before SNP r has a largest statistic; :mod:`._case_control_distance`),
Delta u = 1 under both relations; ``"chi2"``, the allelic chi2 itself with
its global sensitivity at fixed numbers of cases and controls (the baseline
of Uhler, Slavkovic & Fienberg 2013 and Johnson & Shmatikov 2013; "replace"
only, every SNP fully called).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..._params import Rule, instance_of, int_at_least, options, validate_params
from ..._validation import check_int, check_random_state
from ...accounting import Accountant, charge
from ...mechanisms import Mechanism, distance_problem, is_gumbel_mechanism, resolve_mechanism, select_top_k
from ...problem import SelectionProblem
from ...typing import Relation, SeedLike
from ._case_control_counts import CaseControlCounts
from ._case_control_distance import AllelicPanel, allelic_statistic
from ._top_snps import TopSNPs, _forward_top_k, _peel_distances

__all__ = [
    "ASSOCIATION_TESTS",
    "TEST",
    "allelic_sensitivity",
    "association_distances",
    "association_problem",
    "association_statistic",
    "select_association_snps",
]

#: The association tests (only "allelic" has a private selection so far; see mathematics §14).
ASSOCIATION_TESTS = ("allelic",)
_UTILITIES = ("distance", "chi2")
_RELATIONS = ("replace", "add_remove")


def _check_test(test: object, name: str) -> str:
    if test not in ASSOCIATION_TESTS:
        raise ValueError(
            f"{name} must be one of {ASSOCIATION_TESTS}, got {test!r} (the trend and genotypic "
            "tests have no private selection yet)"
        )
    return str(test)


#: The association test of a case-control selection.
TEST = Rule(f"one of {ASSOCIATION_TESTS}", check=_check_test)
_COUNTS = instance_of(CaseControlCounts)
_UTILITY = options(*_UTILITIES)
_RELATION = options(*_RELATIONS)


def _tables(counts: CaseControlCounts) -> np.ndarray:
    return np.concatenate([counts.allele_cases, counts.allele_controls], axis=1)


@validate_params({"counts": _COUNTS, "test": TEST})
def association_statistic(counts: CaseControlCounts, *, test: str = "allelic") -> np.ndarray:
    """Allelic chi2 of every SNP (private: for tests and reference only).

    Pearson's 1-df chi2 of the allele table, PLINK's ``--assoc`` CHISQ:
    ``N (ad - bc)^2 / ((a + b)(c + d)(a + c)(b + d))`` with ``a, b`` the
    cases' A1, A2 counts and ``c, d`` the controls'.

    Parameters
    ----------
    counts : CaseControlCounts
        The study's counts.
    test : {"allelic"}, default="allelic"
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
    return allelic_statistic(*_tables(counts).T)


@validate_params({"counts": _COUNTS, "test": TEST})
def association_distances(counts: CaseControlCounts, *, test: str = "allelic") -> np.ndarray:
    """d_r: fewest individuals added, removed or replaced (status kept) before SNP r has a largest statistic.

    Exact in the row-move metric of mathematics §14 (a 1-Lipschitz lower
    bound of it where a table's reach meets both signs of ``ad - bc``):
    ``d_r = min{k : hi_r(k) >= max_{s != r} lo_s(k)}``, hi / lo the largest /
    smallest allelic chi2 a table reaches in k moves of one individual
    (constant-time corners per split).  Sensitivity 1 under "replace"
    (genotypes, status kept) and "add_remove"; the distances are private.

    Parameters
    ----------
    counts : CaseControlCounts
        The study's counts.
    test : {"allelic"}, default="allelic"
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
    return AllelicPanel(_tables(counts)).distances()


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


@validate_params(
    {
        "counts": _COUNTS,
        "test": TEST,
        "utility": _UTILITY,
        "relation": _RELATION,
        "labels": Rule("None or a sequence of SNP names, one per SNP (checked by the problem)"),
    }
)
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
    test : {"allelic"}, default="allelic"
        The association test.
    utility : {"distance", "chi2"}, default="distance"
        :func:`association_distances` (either relation) or the statistic
        (relation "replace", every SNP fully called on autosomes).
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
    if relation != "replace":
        raise ValueError("utility='chi2' has a sensitivity under relation='replace' only (fixed sizes)")
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


def select_association_snps(
    counts: CaseControlCounts,
    epsilon: float | None,
    k: int | None,
    *,
    test: str = "allelic",
    mechanism: str | Mechanism = "pf",
    utility: str = "distance",
    method: str = "peel",
    relation: Relation = "replace",
    rng: SeedLike = None,
    accountant: Accountant | None = None,
) -> TopSNPs:
    """Case-control branch of :func:`dpselect.apps.genomics.select_top_snps` (its arguments checked there)."""
    k = check_int(k, "k", minimum=1)
    if k > counts.n_snps:
        raise ValueError(f"k must be <= the number of SNPs ({counts.n_snps}), got {k}")
    if utility not in _UTILITIES:
        raise ValueError(f"utility must be one of {_UTILITIES}, got {utility!r}")
    mech = resolve_mechanism(mechanism, None if epsilon is None else epsilon / k)
    panel = None
    if utility == "distance":  # one panel: its distances are round 0's, its updates the later rounds'
        updates = method == "peel" and not is_gumbel_mechanism(mech, _stand_in(1.0, relation, counts.n_snps))
        panel = AllelicPanel(_tables(counts), removals=k - 1 if updates else 0)
        full = distance_problem(panel.distances().astype(np.float64), relation=relation)
    else:
        full = association_problem(counts, test=test, utility=utility, relation=relation)
    gen = check_random_state(rng)
    if method != "peel":
        idx, total = _forward_top_k(mech, full, k, method, accountant, gen)
        rounds, name = [total], method
    else:
        rounds = [mech.privacy(_stand_in(full.global_sensitivity, relation, counts.n_snps - j)) for j in range(k)]
        total = sum(rounds[1:], rounds[0])
        charge(accountant, total)
        if is_gumbel_mechanism(mech, full):  # the law of k-fold peeling on fixed scores (Durfee & Rogers 2019)
            idx, name = np.asarray(select_top_k(mech, full, k, rng=gen), dtype=np.int64), "gumbel_top_k"
        elif panel is not None:
            idx, name = _peel_distances(mech, panel, k, gen, relation=relation), "peeling"
        else:
            idx, name = _peel_scores(mech, full, k, gen), "peeling"
    return TopSNPs(idx, counts.snp_ids[idx].tolist(), total, max(rounds, key=lambda p: (p.epsilon, p.delta)), name)


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
