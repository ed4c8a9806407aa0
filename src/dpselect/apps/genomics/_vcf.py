"""VCF/BCF trio genotypes + a pedigree file -> TDT transmission counts (through ``cyvcf2``).

Called by :func:`dpselect.apps.genomics.transmission_counts` for a path ending in
``.vcf``, ``.vcf.gz`` or ``.bcf``; the counting rules, the trio rule and the
counting kernel are those of :mod:`dpselect.apps.genomics`.

* **Reader**: ``cyvcf2`` (htslib bindings, maintained; reads VCF, bgzipped
  VCF and BCF alike and yields per-variant genotype codes as NumPy arrays).
  sgkit / bio2zarr first convert the whole file to Zarr, a second copy of the
  cohort on disk: useful for repeated analyses, not for one streaming pass.
  Install with ``pip install "dpselect[vcf]"`` (``cyvcf2>=0.30``).
* **Pedigree**: a PLINK-style ``.fam`` / ``.ped`` file (family, individual,
  father, mother, sex, phenotype; further ``.ped`` genotype columns are
  ignored; phenotype 2 = affected).  Individual ids are the VCF sample names:
  they must be unique in the pedigree and every one must be a VCF sample.
* **Alleles**: allele 1 = ALT, allele 2 = REF (PLINK's convention when it
  imports a VCF: ``plink --vcf`` makes ALT the ``.bim`` A1), so ``b`` counts
  transmissions of ALT and the VCF and its PLINK conversion give the same
  counts.  A genotype is the number of ALT alleles of a diploid ``GT`` call
  (phased or not); a call with a missing allele (``.``, ``./.``, ``./1``) or
  another ploidy (haploid ``1``) is missing.
* **Multi-allelic sites** (more than one ALT) are skipped and their number is
  reported in one ``UserWarning`` (split them first with ``bcftools norm -m-``).
  Sites without an ALT (``.``) are kept (b = c = 0).
* **The site list is the public candidate set** (SPEC §1): the positions and
  REF/ALT alleles of the file must not depend on the cohort, e.g. a genotyping
  array's manifest or a reference panel's sites.  A VCF jointly called from
  the cohort itself has a data-dependent site list (one family can add a site
  or a second ALT); restrict it to a public site list first.
* **Streaming**: variants are parsed in file order, ``chunk_snps`` at a time,
  into an int8 (chunk_snps x 3 * n_trios) buffer counted by the shared
  vectorised kernel, so memory is bounded by the chunk.  Parsing is
  sequential (a compressed VCF stream cannot be split without an index, and
  the per-variant decoding, not the counting, is the cost), so ``scheduler``
  must be None; convert with ``plink --vcf`` for a Dask cluster run.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ..._optional import require
from ..._validation import check_int
from ._counting import TransmissionCounts, count_trios, trios

__all__ = ["vcf_transmission_counts", "read_pedigree"]

VCF = require("cyvcf2", "vcf", purpose="dpselect.apps.genomics (VCF/BCF input)").VCF



def read_pedigree(pedigree: Any) -> np.ndarray:
    """(n, 6) object array of a PLINK-style .fam/.ped file (extra .ped columns dropped)."""
    if not isinstance(pedigree, (str, os.PathLike)):
        raise TypeError(f"pedigree must be a str or path-like (.fam/.ped file), got {type(pedigree).__name__}")
    p = Path(pedigree)
    if not p.is_file():
        raise FileNotFoundError(f"pedigree: {str(p)!r} is not a file")
    rows = [line.split() for line in p.read_text().splitlines() if line.strip() and not line.startswith("#")]
    if not rows:
        raise ValueError(f"pedigree: {str(p)!r} is empty")
    bad = [i for i, r in enumerate(rows) if len(r) < 6]
    if bad:
        raise ValueError(f"pedigree: {str(p)!r} row {bad[0] + 1} has {len(rows[bad[0]])} columns, expected "
                         "at least 6 (family, individual, father, mother, sex, phenotype)")
    fam = np.array([r[:6] for r in rows], dtype=object)
    ids, counts = np.unique(fam[:, 1].astype(str), return_counts=True)
    if (counts > 1).any():
        raise ValueError(f"pedigree: individual id {str(ids[counts > 1][0])!r} occurs more than once; the "
                         "individual ids are matched to the VCF sample names and must be unique")
    return fam


def _open(path: Path, samples: list[str]) -> Any:
    if not path.is_file():
        raise FileNotFoundError(f"path: {str(path)!r} is not a file")
    try:
        vcf = VCF(str(path), lazy=True)
        header = list(vcf.samples)
    except Exception as exc:  # htslib reports unreadable input as OSError / various
        raise ValueError(f"path: {str(path)!r} is not a readable VCF/BCF file ({exc})") from exc
    missing = sorted(set(samples) - set(header))
    if missing:
        vcf.close()
        raise ValueError(f"pedigree: {len(missing)} individual id(s) are not samples of the VCF {str(path)!r}, "
                         f"e.g. {missing[0]!r}")
    vcf.set_samples(samples)
    return vcf


def vcf_transmission_counts(path: Any, *, pedigree: Any = None, affected_only: bool = True,
                            chunk_snps: int = 10_000, scheduler: Any = None) -> TransmissionCounts:
    """TDT counts of every biallelic site of a VCF/BCF (allele 1 = ALT; module docstring for the rules).

    Use :func:`dpselect.apps.genomics.transmission_counts`, which dispatches here on
    the ``.vcf`` / ``.vcf.gz`` / ``.bcf`` ending.

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> vcf, ped = os.path.join(d, "t.vcf"), os.path.join(d, "t.fam")
    >>> _ = open(ped, "w").write("F fa 0 0 1 1\\nF mo 0 0 2 1\\nF ch fa mo 1 2\\n")
    >>> _ = open(vcf, "w").write("##fileformat=VCFv4.2\\n##contig=<ID=1>\\n"
    ...     '##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">\\n'
    ...     "#CHROM\\tPOS\\tID\\tREF\\tALT\\tQUAL\\tFILTER\\tINFO\\tFORMAT\\tfa\\tmo\\tch\\n"
    ...     "1\\t10\\trs1\\tG\\tA\\t.\\t.\\t.\\tGT\\t0/1\\t0/1\\t1/1\\n")
    >>> from dpselect.apps.genomics import transmission_counts
    >>> counts = transmission_counts(vcf, pedigree=ped)
    >>> counts.b.tolist(), counts.c.tolist(), counts.n_families
    ([2], [0], 1)
    """
    if pedigree is None:
        raise ValueError("pedigree: VCF/BCF input needs a PLINK-style .fam/.ped pedigree file to define the trios")
    if scheduler is not None:
        raise ValueError("scheduler: VCF/BCF input is parsed sequentially and takes scheduler=None; convert "
                         "it with plink --vcf to count on a Dask cluster")
    chunk = check_int(chunk_snps, "chunk_snps", minimum=1)
    fam = read_pedigree(pedigree)
    rows = trios(fam, affected_only=bool(affected_only))
    if rows.shape[0] == 0:
        raise ValueError(f"pedigree: {str(pedigree)!r} has no complete {'affected ' if affected_only else ''}trio "
                         "(child with father and mother in the pedigree)")
    ids = fam[:, 1].astype(str)
    vcf = _open(Path(path), [str(x) for x in ids])
    try:
        position = {s: j for j, s in enumerate(vcf.samples)}
        cols = np.array([position[s] for s in ids[rows.T.ravel()]], dtype=np.int64)  # children, fathers, mothers
        n = rows.shape[0]
        buf = np.empty((chunk, cols.size), dtype=np.int8)
        parts, snp_ids, skipped, filled = [], [], 0, 0
        for v in vcf:
            if len(v.ALT) > 1:
                skipped += 1
                continue
            sid = v.ID if v.ID is not None else f"{v.CHROM}:{v.POS}"
            try:
                gt = v.genotype.array()
            except Exception as exc:  # cyvcf2 raises a bare Exception without a GT field
                raise ValueError(f"path: variant {sid!r} of {str(path)!r} has no GT (genotype) field") from exc
            buf[filled] = _alt_dosage(gt[cols])
            snp_ids.append(sid)
            filled += 1
            if filled == chunk:
                parts.append(_count_chunk(buf, n))
                filled = 0
        parts.append(_count_chunk(buf[:filled], n))
    finally:
        vcf.close()
    if skipped:
        warnings.warn(f"path: skipped {skipped} multi-allelic site(s); split them with bcftools norm -m- "
                      "to count them", UserWarning, stacklevel=3)
    out = np.concatenate(parts, axis=1)
    return TransmissionCounts(out[0], out[1], int(n), np.array(snp_ids, dtype=str), out[2])


def _alt_dosage(gt: np.ndarray) -> np.ndarray:
    """cyvcf2 ``genotype.array()`` rows (allele indices..., phased; -1 missing, -2 vector end) -> ALT copies, -1."""
    diploid = (gt[:, :2] >= 0).all(axis=1)
    if gt.shape[1] > 3:  # polyploid calls in the file: only the diploid ones count
        diploid &= (gt[:, 2:-1] < 0).all(axis=1)
    return np.where(diploid, gt[:, 0] + gt[:, 1], -1)


def _count_chunk(buf: np.ndarray, n: int) -> np.ndarray:
    return count_trios(buf.T.reshape(3, n, buf.shape[0]))
