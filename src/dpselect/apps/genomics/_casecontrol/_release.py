"""Private statistics of selected case-control SNPs: noisy tables, then chi2, p-value, odds ratio (mathematics §14).

Each selected SNP's table (the allele table for the allelic test, the 2 x 3
genotype table otherwise) is released with exact discrete Laplace noise
(Canonne, Kamath & Steinke 2020) on every cell.  One individual moves a
SNP's genotype table by L1 <= 2 ("replace": one cell down, one up) or <= 1
("add_remove"), its allele table by L1 <= 4 or <= 2 (two alleles); k SNPs
at epsilon / k each cost epsilon in all (sequential composition), so each
cell's noise scale is ``k * L1 / epsilon``.  Released tables are integers
(on every power-of-two grid); the statistic, its chi2 p-value, the allelic
odds ratio (Haldane's +1/2 on every cell) and the standard error of its
log, ``sqrt(sum 1 / (x + 1/2))``, are computed from the released table only
(post-processing: no further privacy cost).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from scipy import stats

from ....noise import discrete_laplace
from ....privacy import Privacy
from ....typing import Relation
from .._counts import CaseControlCounts
from ._statistics import DEGREES_OF_FREEDOM, allele_tables, model_statistic, pearson_2x2

__all__ = ["association_release", "association_release_privacy", "released_columns"]

#: L1 change of one SNP's released table under one neighbour step: (allele table, genotype table).
_L1 = {"replace": (4, 2), "add_remove": (2, 1)}


def association_release_privacy(epsilon: float, relation: Relation) -> Privacy:
    """The guarantee of the k releases: epsilon in all under ``relation``."""
    return Privacy(epsilon, 0.0, relation, "case-control table releases (discrete Laplace)")


def association_release(
    counts: CaseControlCounts,
    indices: np.ndarray,
    epsilon: float,
    *,
    test: str,
    relation: Relation,
    gen: np.random.Generator,
) -> np.ndarray:
    """Released (k, 4) allele tables ("allelic") or (k, 6) genotype tables, clipped at 0 (already charged)."""
    if test == "allelic":
        tables = np.concatenate([counts.allele_cases[indices], counts.allele_controls[indices]], axis=1)
        l1 = _L1[relation][0]
    else:
        tables = np.concatenate([counts.cases[indices], counts.controls[indices]], axis=1)
        l1 = _L1[relation][1]
    scale = Fraction(l1 * indices.size) / Fraction(epsilon)
    noise = discrete_laplace(scale, size=tables.size, rng=gen).reshape(tables.shape)
    return np.maximum(tables + noise, 0)


def released_columns(test: str, tables: np.ndarray) -> dict[str, np.ndarray]:
    """CHISQ, P, OR and SE (of log OR) computed from released tables (post-processing)."""
    t = tables.astype(np.float64)
    if test == "allelic":
        alleles = t
        chisq = pearson_2x2(*t.T)
    else:
        cases, controls = t[:, :3], t[:, 3:]
        alleles = allele_tables(cases, controls)
        chisq = model_statistic(test, cases, controls)
    h = alleles + 0.5
    odds = (h[:, 0] * h[:, 3]) / (h[:, 1] * h[:, 2])
    se = np.sqrt((1.0 / h).sum(axis=1))
    p = stats.chi2.sf(chisq, DEGREES_OF_FREEDOM[test])
    return {"CHISQ": chisq, "P": p, "OR": odds, "SE": se}
