"""Select k SNPs privately, then release their statistics: one total guarantee (mathematics §4.4, §14)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..._docstrings import fill_doc
from ..._params import EPSILON, SEED, int_at_least, options, validate_params
from ..._validation import check_random_state
from ...accounting import Accountant, charge
from ...mechanisms import Mechanism
from ...privacy import Privacy
from ...typing import Relation, SeedLike
from ._casecontrol import TEST, association_release, association_release_privacy, released_columns
from ._counts import CaseControlCounts, TransmissionCounts
from ._rules import ACCOUNTANT, MECHANISM, THRESHOLD
from ._select import COUNTS_OBJECT, check_design, select_top_snps
from ._tdt import DF, GAMMA, GRANULARITY, KAPPA, NOISE, UTILITIES, tdt_release, tdt_release_privacy

__all__ = ["TopSNPRelease", "select_and_release"]


@dataclass(frozen=True)
@fill_doc
class TopSNPRelease:
    """Result of :func:`select_and_release`: the selected SNPs, their released statistics and the guarantee.

    %(selected_snps)s
    labels : list
        Their SNP ids.
    statistic : ndarray of float
        The released statistic of each (PLINK's CHISQ; not clipped at 0 for the TDT).
    p_value : ndarray of float
        Its chi2 p-value (post-processing of the released statistic).
    odds_ratio : ndarray of float or None
        Case-control: the allelic odds ratio from the released table (None for the TDT).
    standard_error : ndarray of float or None
        Case-control: the standard error of the log odds ratio (None for the TDT).
    privacy : Privacy
        The total guarantee of the selection and the releases.
    """

    indices: np.ndarray
    labels: list[object]
    statistic: np.ndarray
    p_value: np.ndarray
    odds_ratio: np.ndarray | None
    standard_error: np.ndarray | None
    privacy: Privacy


@validate_params(
    {
        "counts": COUNTS_OBJECT,
        "epsilon_select": EPSILON,
        "epsilon_release": EPSILON,
        "k": int_at_least(1),
        "test": TEST.or_none(),
        "relation": options("replace", "add_remove", none=True),
        "mechanism": MECHANISM,
        "utility": options(*UTILITIES),
        "rng": SEED,
        "accountant": ACCOUNTANT,
        "noise": NOISE,
        "gamma": GAMMA,
        "kappa": KAPPA,
        "df": DF,
        "threshold": THRESHOLD,
        "granularity": GRANULARITY,
    }
)
def select_and_release(
    counts: TransmissionCounts | CaseControlCounts,
    epsilon_select: float,
    epsilon_release: float,
    *,
    k: int = 1,
    test: str | None = None,
    relation: Relation | None = None,
    mechanism: str | Mechanism = "pf",
    utility: str = "distance",
    rng: SeedLike = None,
    accountant: Accountant | None = None,
    noise: str = "polynomial",
    gamma: float = 4,
    kappa: float = 0.5,
    df: float = 3,
    threshold: float = 6,
    granularity: float | None = None,
) -> TopSNPRelease:
    """Privately select the top k SNPs (:func:`select_top_snps`), then release their statistics.

    TDT counts: each chi2 released with its Yamamoto & Shibuya Theorem 5
    smooth bound at epsilon_release / k (:func:`release_statistic`; relation
    one family replaced).  Case-control counts: each selected SNP's table
    released with exact discrete Laplace noise at epsilon_release / k, and
    the ``test`` statistic, its p-value, the allelic odds ratio and the
    standard error of its log computed from the released table.  The total
    is ``epsilon_select + epsilon_release`` (sequential, adaptive composition;
    mathematics §4.4, §14), charged before any randomness is drawn.

    Parameters
    ----------
    counts : TransmissionCounts or CaseControlCounts
        The study's counts.
    epsilon_select : float
        The budget of the selection.
    epsilon_release : float
        The budget of the k releases together.
    k : int, default=1
        Number of SNPs.
    test : str, default=None
        Case-control counts only: one of :data:`ASSOCIATION_TESTS` (None: "allelic").
    relation : {"replace", "add_remove"}, default=None
        Case-control counts only (None: "replace").
    mechanism : str or Mechanism, default="pf"
        The selection mechanism (as :func:`select_top_snps`).
    utility : {"distance", "chi2"}, default="distance"
        The selection utility (as :func:`select_top_snps`).
    rng : None, int or numpy.random.Generator, default=None
        Randomness.
    accountant : Accountant, default=None
        Charged with the total before any randomness is drawn.
    noise : str, default="polynomial"
        TDT only: the release's noise (see :func:`release_mechanism`).
    gamma : float, default=4
        TDT only: the polynomial tail's exponent.
    kappa : float, default=0.5
        TDT only: the release's budget split.
    df : float, default=3
        TDT only: Student's t degrees of freedom.
    threshold : float, default=6
        TDT only: Theorem 5's T.
    granularity : float, default=None
        TDT only: the release's output grid (case-control tables are integers).

    Returns
    -------
    TopSNPRelease
        The selected SNPs, their released columns and the total guarantee.

    Examples
    --------
    >>> from dpselect.apps.genomics import TransmissionCounts, select_and_release
    >>> out = select_and_release(TransmissionCounts([90, 52, 50], [20, 48, 50], 150), 3.0, 1.0, rng=0)
    >>> out.indices.tolist(), out.privacy.epsilon
    ([0], 4.0)
    """
    test, relation = check_design(counts, test, relation)
    if k > counts.n_snps:
        raise ValueError(f"k must be <= the number of SNPs ({counts.n_snps}), got {k}")
    if isinstance(counts, TransmissionCounts):
        rel = tdt_release_privacy(
            counts.n_families, epsilon_release, k, noise=noise, gamma=gamma, kappa=kappa, threshold=threshold
        )
    else:
        rel = association_release_privacy(epsilon_release, relation)
    gen = check_random_state(rng)
    charge(accountant, rel)  # the releases' share first, then the selection's (both before any draw)
    top = select_top_snps(
        counts,
        epsilon_select,
        k,
        test=None if test == "tdt" else test,
        relation=None if test == "tdt" else relation,
        mechanism=mechanism,
        utility=utility,
        rng=gen,
        accountant=accountant,
    )
    total = top.privacy + rel
    if isinstance(counts, TransmissionCounts):
        value = tdt_release(
            counts,
            top.indices,
            epsilon_release,
            noise=noise,
            gamma=gamma,
            kappa=kappa,
            df=df,
            threshold=threshold,
            granularity=granularity,
            gen=gen,
        )
        p = stats.chi2.sf(np.maximum(value, 0.0), 1)
        return TopSNPRelease(top.indices, list(top.labels or []), value, p, None, None, total)
    tables = association_release(counts, top.indices, epsilon_release, test=test, relation=relation, gen=gen)
    cols = released_columns(test, tables)
    return TopSNPRelease(top.indices, list(top.labels or []), cols["CHISQ"], cols["P"], cols["OR"], cols["SE"], total)
