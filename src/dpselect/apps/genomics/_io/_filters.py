"""SNP filters from public lists: ``--extract`` / ``--exclude`` / ``--chr`` and a reference MAF filter.

Every filter decides from public information only (SNP id lists, chromosome codes, allele
frequencies of a public reference panel such as a 1000 Genomes ``.afreq``): a frequency computed
from the private data would itself be a release.  The counts of the SNPs kept are unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TypeVar

import numpy as np

from ...._params import Rule, instance_of, real_in, validate_params
from .._counts import CaseControlCounts, TransmissionCounts
from .._rules import path_like

__all__ = ["filter_snps", "reference_maf"]

C = TypeVar("C", TransmissionCounts, CaseControlCounts)

_IDS = Rule(
    "None, a path to a file of SNP ids (one per line) or an iterable of SNP ids",
    check=lambda v, n: v if v is None or isinstance(v, (str, os.PathLike)) or hasattr(v, "__iter__") else _bad(n),
)


def _bad(name: str) -> None:
    raise TypeError(f"{name} must be None, a path or an iterable of strings")


def _chromosomes(value: object, name: str) -> object:
    if value is not None and (isinstance(value, (str, bytes)) or not hasattr(value, "__iter__")):
        raise TypeError(f"{name} must be None or an iterable of chromosome codes (e.g. ['1', '2'])")
    return value


def _ids(value: str | os.PathLike[str] | Iterable[str]) -> set[str]:
    if isinstance(value, (str, os.PathLike)):
        return {line.split()[0] for line in Path(value).read_text().splitlines() if line.strip()}
    return {str(v) for v in value}


def reference_maf(path: str | os.PathLike[str]) -> dict[str, float]:
    """Minor-allele frequencies by SNP id from a PLINK ``.frq`` (SNP, MAF) or PLINK 2 ``.afreq`` (ID, ALT_FREQS)."""
    lines = [line.split() for line in Path(path).read_text().splitlines() if line.strip()]
    if not lines:
        raise ValueError(f"maf_reference: {Path(path).name} is empty")
    header = [h.lstrip("#") for h in lines[0]]
    id_col = header.index("SNP") if "SNP" in header else header.index("ID") if "ID" in header else None
    freq_col = header.index("MAF") if "MAF" in header else header.index("ALT_FREQS") if "ALT_FREQS" in header else None
    if id_col is None or freq_col is None:
        raise ValueError(f"maf_reference: {Path(path).name} needs SNP/ID and MAF/ALT_FREQS columns")
    out = {}
    for row in lines[1:]:
        try:
            f = float(row[freq_col].split(",")[0])
        except ValueError:
            continue  # NA in the reference: the SNP is not kept by a MAF filter
        out[row[id_col]] = min(f, 1.0 - f)
    return out


@validate_params(
    {
        "counts": instance_of(TransmissionCounts, CaseControlCounts),
        "extract": _IDS,
        "exclude": _IDS,
        "chrom": Rule("None or an iterable of chromosome codes", check=_chromosomes),
        "maf": real_in(0.0, 0.5, closed=True, none=True),
        "maf_reference": path_like().or_none(),
    }
)
def filter_snps(
    counts: C,
    *,
    extract: str | os.PathLike[str] | Iterable[str] | None = None,
    exclude: str | os.PathLike[str] | Iterable[str] | None = None,
    chrom: Iterable[str] | None = None,
    maf: float | None = None,
    maf_reference: str | os.PathLike[str] | None = None,
) -> C:
    """The counts of the SNPs a public filter keeps (PLINK's ``--extract``, ``--exclude``, ``--chr``, ``--maf``).

    Parameters
    ----------
    counts : TransmissionCounts or CaseControlCounts
        The study's counts.
    extract : path or iterable of str, default=None
        Keep only these SNP ids (a file: the first column of each line).
    exclude : path or iterable of str, default=None
        Drop these SNP ids.
    chrom : iterable of str, default=None
        Keep only these chromosome codes.
    maf : float, default=None
        Keep SNPs whose minor-allele frequency in ``maf_reference`` is at least ``maf``
        (SNPs absent from the reference are dropped).
    maf_reference : path, default=None
        A public reference panel's ``.frq`` / ``.afreq`` (required with ``maf``).

    Returns
    -------
    TransmissionCounts or CaseControlCounts
        The same type, restricted to the kept SNPs (order kept).

    Examples
    --------
    >>> from dpselect.apps.genomics import TransmissionCounts, filter_snps
    >>> tc = TransmissionCounts([9, 5, 7], [1, 5, 3], 10, snp_ids=["a", "b", "c"])
    >>> filter_snps(tc, exclude=["b"]).snp_ids.tolist()
    ['a', 'c']
    """
    ids = counts.snp_ids
    keep = np.ones(ids.size, dtype=bool)
    if extract is not None:
        keep &= np.isin(ids, list(_ids(extract)))
    if exclude is not None:
        keep &= ~np.isin(ids, list(_ids(exclude)))
    if chrom is not None:
        keep &= np.isin(counts.chrom, [str(c) for c in chrom])
    if maf is not None:
        if maf_reference is None:
            raise ValueError("maf_reference: a public reference file is required with maf")
        ref = reference_maf(maf_reference)
        ref_ids = np.array(sorted(ref), dtype=str)
        if ref_ids.size == 0:
            keep[:] = False
        else:
            ref_maf = np.array([ref[r] for r in ref_ids.tolist()])
            at = np.clip(np.searchsorted(ref_ids, ids), 0, ref_ids.size - 1)
            keep &= (ref_ids[at] == ids) & (ref_maf[at] >= maf)
    return _subset(counts, keep)


def _subset(counts: C, keep: np.ndarray) -> C:
    text = {"snp_ids": counts.snp_ids[keep], "chrom": counts.chrom[keep], "pos": counts.pos[keep]}
    text |= {"a1": counts.a1[keep], "a2": counts.a2[keep]}
    if isinstance(counts, TransmissionCounts):
        return TransmissionCounts(
            counts.b[keep], counts.c[keep], counts.n_families, mendel_errors=counts.mendel_errors[keep], **text
        )
    return CaseControlCounts(
        counts.cases[keep],
        counts.controls[keep],
        n_cases=counts.n_cases,
        n_controls=counts.n_controls,
        allele_cases=counts.allele_cases[keep],
        allele_controls=counts.allele_controls[keep],
        **text,
    )
