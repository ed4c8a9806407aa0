"""Trio genotype files -> TDT transmission counts, streamed in SNP chunks on Dask.

Input: PLINK 1 binary filesets (``.bed/.bim/.fam``), read with the
maintained ``bed-reader`` package (SNP chunks ``read(index=np.s_[:, a:b])``,
so only one chunk per worker is in memory).  The ``.fam`` father / mother
columns define the trios (both parents and the child present in the file;
the child affected, phenotype 2, unless ``affected_only=False``); one trio is
kept per parent pair (the first such child in file order), so that every
family is one privacy unit and moves each SNP's table by at most one
table-level move (the neighbour relation of :mod:`dpselect.apps.genomics`).

Counts (standard TDT, as PLINK's ``--tdt``): with g = copies of the ``.bim``
allele 1 (A1), a heterozygous parent transmits A1 or A2; at a SNP the number
of A1 alleles the heterozygous parents transmitted is
``x = g_child - [g_father = 2] - [g_mother = 2]`` and
``b += x``, ``c += (#heterozygous parents) - x``.  A trio with a missing
call at the SNP contributes nothing there; a trio whose child genotype is
impossible given the parents (``x`` outside ``[0, #het parents]``) is a
Mendelian error, contributes nothing and is counted in ``mendel_errors``.

The chunks are Dask tasks: the default threaded scheduler streams a cohort
larger than memory, and ``scheduler="tcp://..."`` runs the same graph on a
``dask.distributed`` cluster.  VCF/BCF input (with a pedigree file; allele 1
= ALT) is read sequentially by :mod:`dpselect.apps.genomics` into the same
counting kernel.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from ..._optional import require
from ..._validation import check_int
from ._counting import TransmissionCounts, count_trios, trios

__all__ = ["BED_MAGIC", "transmission_counts"]

BED_MAGIC = bytes((0x6C, 0x1B, 0x01))
_FAM_COLUMNS = 6
#: Path endings read as VCF/BCF (with a pedigree file) by :mod:`dpselect.apps.genomics`.
VCF_SUFFIXES = (".vcf", ".vcf.gz", ".bcf")


def _prefix(path: Any) -> Path:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or path-like, got {type(path).__name__}")
    p = Path(path)
    if p.suffix in (".bed", ".bim", ".fam"):
        p = p.with_suffix("")
    for ext in (".bed", ".bim", ".fam"):
        f = p.with_suffix(ext)
        if f.is_dir():
            raise ValueError(f"path: {str(f)!r} is a directory, not a PLINK {ext} file")
        if not f.is_file():
            raise FileNotFoundError(f"path: PLINK fileset {str(p)!r} has no {ext} file ({str(f)!r} not found)")
    return p


def _read_table(path: Path, columns: int, what: str) -> np.ndarray:
    rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
    if not rows:
        raise ValueError(f"path: {what} file {str(path)!r} is empty")
    bad = [i for i, r in enumerate(rows) if len(r) != columns]
    if bad:
        raise ValueError(f"path: {what} file {str(path)!r} line {bad[0] + 1} has "
                         f"{len(rows[bad[0]])} columns, expected {columns}")
    return np.array(rows, dtype=object)


def _check_bed(path: Path, n_ind: int, n_snp: int) -> None:
    with open(path, "rb") as f:
        head = f.read(3)
    if head != BED_MAGIC:
        raise ValueError(f"path: {str(path)!r} is not a SNP-major PLINK 1 .bed file (magic bytes {head.hex()!r}, "
                         f"expected {BED_MAGIC.hex()!r})")
    expected = 3 + n_snp * ((n_ind + 3) // 4)
    size = path.stat().st_size
    if size != expected:
        raise ValueError(f"path: {str(path)!r} has {size} bytes but the .fam ({n_ind} individuals) and .bim "
                         f"({n_snp} SNPs) need {expected}: the fileset is mismatched or truncated")


def _chunk_counts(bed: str, n_ind: int, n_snp: int, rows: np.ndarray, start: int, stop: int) -> np.ndarray:
    """(3, stop - start) int64: b, c and Mendel errors of SNPs start..stop-1."""
    open_bed = require("bed_reader", "gwas", purpose="dpselect.apps.genomics.transmission_counts").open_bed

    with open_bed(bed, iid_count=n_ind, sid_count=n_snp, count_A1=True) as reader:
        g = reader.read(index=(rows.T.ravel(), np.s_[start:stop]), dtype="int8", order="C", num_threads=1)
    return count_trios(g.reshape(3, rows.shape[0], stop - start))  # int8, missing = -127


def transmission_counts(path: Any, *, pedigree: Any = None, affected_only: bool = True,
                        chunk_snps: int = 10_000, scheduler: Any = None) -> TransmissionCounts:
    """TDT transmission counts of every SNP of a PLINK 1 fileset or a VCF/BCF (module docstring for the rules).

    Parameters
    ----------
    path : the fileset prefix (or the ``.bed`` / ``.bim`` / ``.fam`` path), or a
        ``.vcf`` / ``.vcf.gz`` / ``.bcf`` file (read by :mod:`dpselect.apps.genomics`;
        allele 1 = ALT, as PLINK's VCF import).
    pedigree : for VCF/BCF only (required there): a PLINK-style ``.fam`` / ``.ped``
        file whose individual ids are the VCF sample names.
    affected_only : keep trios whose child has phenotype 2 (default) or all trios.
    chunk_snps : SNPs per Dask task; peak memory is about
        (#individuals x chunk_snps) bytes per concurrent task.
    scheduler : None (Dask's threaded scheduler), a Dask scheduler name, or a
        ``dask.distributed`` address ("tcp://host:port") or ``Client``.
        VCF/BCF parsing is sequential: only None is accepted there.

    Returns
    -------
    TransmissionCounts

    Examples
    --------
    >>> import tempfile, os
    >>> from dpselect.apps.genomics import simulate_trios, transmission_counts
    >>> d = tempfile.mkdtemp()
    >>> causal = simulate_trios(os.path.join(d, "toy"), 50, 20, causal=[3], effect=0.9, rng=0)
    >>> counts = transmission_counts(os.path.join(d, "toy"))
    >>> counts.n_families, counts.b.shape
    (50, (20,))
    """
    if isinstance(path, (str, os.PathLike)) and str(path).lower().endswith(VCF_SUFFIXES):
        require("cyvcf2", "vcf", purpose="transmission_counts of a VCF/BCF path (or convert it with plink --vcf)")
        from ._vcf import vcf_transmission_counts

        return vcf_transmission_counts(path, pedigree=pedigree, affected_only=affected_only,
                                       chunk_snps=chunk_snps, scheduler=scheduler)
    if pedigree is not None:
        raise ValueError("pedigree: only for VCF/BCF input; the .fam of a PLINK fileset defines its trios")
    prefix = _prefix(path)
    chunk = check_int(chunk_snps, "chunk_snps", minimum=1)
    fam = _read_table(prefix.with_suffix(".fam"), _FAM_COLUMNS, ".fam")
    bim = _read_table(prefix.with_suffix(".bim"), 6, ".bim")
    n_ind, n_snp = fam.shape[0], bim.shape[0]
    bed = prefix.with_suffix(".bed")
    _check_bed(bed, n_ind, n_snp)
    purpose = "dpselect.apps.genomics.transmission_counts (PLINK input)"
    dask = require("dask", "gwas", purpose=purpose)
    da = require("dask.array", "gwas", purpose=purpose)
    require("bed_reader", "gwas", purpose=purpose)  # read in the tasks: fail here, before the graph runs
    rows = trios(fam, affected_only=bool(affected_only))
    if rows.shape[0] == 0:
        raise ValueError(f"path: {str(prefix)!r} has no complete {'affected ' if affected_only else ''}trio "
                         "(child with father and mother in the .fam)")
    parts = [
        da.from_delayed(dask.delayed(_chunk_counts)(str(bed), n_ind, n_snp, rows, a, min(a + chunk, n_snp)),
                        shape=(3, min(a + chunk, n_snp) - a), dtype=np.int64)
        for a in range(0, n_snp, chunk)
    ]
    graph = da.concatenate(parts, axis=1)
    out = _compute(graph, scheduler)
    return TransmissionCounts(out[0], out[1], int(rows.shape[0]), bim[:, 1].astype(str), out[2])


def _compute(graph: Any, scheduler: Any) -> np.ndarray:
    if scheduler is None:
        return np.asarray(graph.compute(scheduler="threads"))
    if isinstance(scheduler, str) and "://" in scheduler:
        Client = require("distributed", "gwas", purpose="transmission_counts(scheduler=ADDRESS)").Client

        with Client(scheduler) as client:
            return np.asarray(client.compute(graph).result())
    if hasattr(scheduler, "compute") and hasattr(scheduler, "scheduler_info"):
        return np.asarray(scheduler.compute(graph).result())
    if isinstance(scheduler, str):
        return np.asarray(graph.compute(scheduler=scheduler))
    raise TypeError(f"scheduler must be None, a scheduler name, an address or a Client, got {type(scheduler).__name__}")
