"""Genomics: the transmission disequilibrium test (TDT) and private top SNPs from trio data.

- The TDT statistic and its sensitivities under replacement of one family (Yamamoto &
  Shibuya-style smooth bounds): :func:`tdt_statistic`, :func:`local_sensitivity`,
  :func:`beta_max`, :func:`smooth_upper_bound`.
- The neighbour-distance utility (families to change before a SNP's rank changes):
  :func:`neighbour_distances`, :func:`distance_utility_problem`.
- Private selection and release, one form each, counts first (a :class:`TransmissionCounts`
  or a :class:`CaseControlCounts`; the type picks the design): :func:`select_top_snp`,
  :func:`select_top_snps`, :func:`select_and_release`; the TDT's :func:`release_statistic`.
- Case-control genotype and allele counts from PLINK 1 / PLINK 2 files (as ``plink1.9 --model`` /
  ``--assoc``): :func:`case_control_counts`.
- Transmission counts from files: :func:`transmission_counts` (PLINK 1 ``.bed/.bim/.fam``
  counted on the packed bytes, extra ``gwas``; VCF/BCF with a pedigree, extra ``vcf``;
  chromosome X with sex from the pedigree, as PLINK 1.9), :func:`simulate_trios`.
  ``b`` counts transmissions of A1: in PLINK's words, the A1 of ``--tdt --keep-allele-order``
  (the ``.bim`` column 5 allele; ALT for a VCF), so ``b`` / ``c`` are PLINK's T / U.

- Case-control studies: :class:`CaseControlCounts` (genotype counts of cases and controls,
  PLINK ``--model`` order, and ``--assoc`` allele counts), :func:`simulate_case_control`;
  the five tests of ``plink1.9 --model`` (:data:`ASSOCIATION_TESTS`: allelic, trend,
  genotypic, dominant, recessive) :func:`association_statistic`, their neighbour distances
  :func:`association_distances`, :func:`association_problem`, the chi2 baseline's
  :func:`allelic_sensitivity`; :func:`select_top_snps` dispatches on the counts type.

Neighbour relation: replace one family (one trio) for the TDT; for case-control studies one
individual's genotypes replaced (status kept) or one individual added or removed (mathematics §14).

Examples
--------
>>> from dpselect.apps.genomics import TransmissionCounts, select_top_snp
>>> select_top_snp(TransmissionCounts([60, 30, 31], [20, 30, 29], 100), 5.0, rng=0)
0
"""

from __future__ import annotations

from ._casecontrol import (
    ASSOCIATION_TESTS,
    allelic_sensitivity,
    association_distances,
    association_problem,
    association_statistic,
)
from ._counts import CaseControlCounts, TransmissionCounts
from ._io import VCF_NAMES, case_control_counts, filter_snps, transmission_counts
from ._select import select_top_snp, select_top_snps
from ._select_release import TopSNPRelease, select_and_release
from ._simulate import CaseControlSimulation, simulate_case_control, simulate_trios
from ._tdt import (
    MOVES,
    UTILITIES,
    beta_max,
    distance_utility_problem,
    global_sensitivity,
    gs_distance,
    lemma2_region,
    local_sensitivity,
    neighbour_distances,
    release_mechanism,
    release_statistic,
    smooth_upper_bound,
    table_distance,
    tdt_neighbours,
    tdt_problem,
    tdt_statistic,
    unstable_distance,
)
from ._top_snps import TOP_K_METHODS, TopSNPs

__all__ = [
    "ASSOCIATION_TESTS",
    "MOVES",
    "TOP_K_METHODS",
    "UTILITIES",
    "CaseControlCounts",
    "CaseControlSimulation",
    "TopSNPRelease",
    "TopSNPs",
    "TransmissionCounts",
    "allelic_sensitivity",
    "association_distances",
    "association_problem",
    "association_statistic",
    "beta_max",
    "case_control_counts",
    "distance_utility_problem",
    "filter_snps",
    "global_sensitivity",
    "gs_distance",
    "lemma2_region",
    "local_sensitivity",
    "neighbour_distances",
    "read_pedigree",
    "release_mechanism",
    "release_statistic",
    "select_and_release",
    "select_top_snp",
    "select_top_snps",
    "simulate_case_control",
    "simulate_trios",
    "smooth_upper_bound",
    "table_distance",
    "tdt_neighbours",
    "tdt_problem",
    "tdt_statistic",
    "transmission_counts",
    "unstable_distance",
    "vcf_transmission_counts",
]


def __getattr__(name: str) -> object:
    if name in VCF_NAMES:
        from ..._optional import require

        require("cyvcf2", "vcf", purpose=f"dpselect.apps.genomics.{name}")
        from . import _io

        return getattr(_io, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
