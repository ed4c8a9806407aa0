"""Trio genotype files -> TDT transmission counts, counted on the packed ``.bed`` bytes in SNP chunks on Dask.

Input: PLINK 1 binary filesets (``.bed/.bim/.fam``), or PLINK 2 ``.pgen/.pvar/.psam``
decoded by pgenlib and packed into the same 2-bit codes (module ``_pgen``).  Each Dask task reads
its SNP chunk of the SNP-major ``.bed`` (positioned reads of ~1 MiB of
packed bytes) and counts the trios with table lookups on the 2-bit codes (no
decoded genotype matrix; see the packed kernel's module), so a task holds a
few MiB whatever the chunk size; on threads the tasks write their counts
straight into the result.  The ``.bim`` annotations are kept as bytes (one
byte a character) and decoded to ``str`` only when asked for.
The ``.fam`` father / mother columns define the trios (both parents and the
child present in the file; the child affected, phenotype 2, unless
``affected_only=False``); one trio is kept per parent pair (the first such
child in file order), and a pedigree where an individual is in two trios
(half-siblings, three generations) is refused: every family is one privacy
unit and moves each SNP's table by at most one table-level move (the
neighbour relation of :mod:`dpselect.apps.genomics`).

Counts (standard TDT, as PLINK 1.9's ``--tdt --keep-allele-order``): with
g = copies of the ``.bim`` allele 1 (A1, column 5), a heterozygous parent
transmits A1 or A2; at a SNP the number of A1 alleles the heterozygous
parents transmitted is ``x = g_child - [g_father = 2] - [g_mother = 2]`` and
``b += x``, ``c += (#heterozygous parents) - x`` (PLINK's T and U).  A trio
with a missing call at the SNP contributes nothing there; a trio whose child
genotype is impossible given the parents is a Mendelian error, contributes
nothing and is counted in ``mendel_errors``.  Chromosome X (``X`` / 23):
sex from the ``.fam`` (column 5, 1 = male); a male child receives only his
mother's X, so only her transmission counts (PLINK 1.9's rule, including its
treatment of heterozygous haploid calls); female children count as on an
autosome.  Children of unknown sex (``.fam`` column 5 not 1 or 2): PLINK 1.9
ignores the phenotype of an ambiguous-sex individual, so by default their
trios are dropped as ``plink1.9 --tdt`` drops them; ``allow_no_sex=True``
(PLINK's ``--allow-no-sex``) counts them, as daughters on X.  ``XY`` / 25 is
pseudo-autosomal and counted as an autosome.  Y / 24 and MT / 26 are skipped
(one ``UserWarning`` says how many and why), as PLINK's ``--tdt`` skips them.

The chunks are Dask tasks: the default threaded scheduler runs them on all
cores (the kernel's NumPy calls release the GIL), and
``scheduler="tcp://..."`` runs the same graph on a ``dask.distributed``
cluster.  VCF/BCF input (with a pedigree file; allele 1 = ALT) is read by
the VCF reader into the same tables.
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING

import numpy as np

from ...._optional import require
from ...._params import BOOLEAN, validate_params
from .._counts import TransmissionCounts
from .._rules import CHUNK_SNPS, PATH, SCHEDULER
from ._chromosomes import SKIPPED_KINDS
from ._chunks import chromosome_masks, count_chunks
from ._packed import TrioPlan, count_packed
from ._pedigree import trios
from ._pgen import open_fileset
from ._plink import VCF_SUFFIXES
from ._progress import make_progress

if TYPE_CHECKING:
    from distributed import Client

__all__ = ["transmission_counts"]


@validate_params(
    {
        "path": PATH,
        "pedigree": PATH.or_none(),
        "affected_only": BOOLEAN,
        "allow_no_sex": BOOLEAN,
        "chunk_snps": CHUNK_SNPS,
        "scheduler": SCHEDULER,
        "progress": BOOLEAN,
    }
)
def transmission_counts(
    path: str | os.PathLike[str],
    *,
    pedigree: str | os.PathLike[str] | None = None,
    affected_only: bool = True,
    allow_no_sex: bool = False,
    chunk_snps: int = 10_000,
    scheduler: str | Client | None = None,
    progress: bool = False,
) -> TransmissionCounts:
    r"""TDT counts of every SNP of a PLINK 1 fileset or a VCF/BCF (module docstring for the rules).

    Parameters
    ----------
    path : str or path-like
        The fileset prefix (or the ``.bed`` / ``.bim`` / ``.fam`` path), a PLINK 2
        ``.pgen`` / ``.pvar`` / ``.psam`` path (or a prefix with a ``.pgen`` and
        no ``.bed``; read through pgenlib, extra ``gwas``; allele 1 = ALT), or a
        ``.vcf`` / ``.vcf.gz`` / ``.bcf`` file (allele 1 = ALT, as PLINK's VCF import).
    pedigree : str or path-like, default=None
        For VCF/BCF only (required there): a PLINK-style ``.fam`` / ``.ped``
        file whose individual ids are the VCF sample names.
    affected_only : bool, default=True
        Keep trios whose child has phenotype 2 (default) or all trios.
    allow_no_sex : bool, default=False
        Count affected children of unknown sex (``.fam`` sex not 1 or 2), as
        PLINK 1.9's ``--allow-no-sex`` (on X they count as daughters); by
        default their trios are dropped, as ``plink1.9 --tdt`` drops them (it
        ignores the phenotype of an ambiguous-sex individual).
    chunk_snps : int, default=10_000
        SNPs per Dask task (a task reads its ``chunk_snps x ceil(#individuals / 4)``
        bytes of the ``.bed`` ~1 MiB at a time and works in about 3 MiB).
    scheduler : None, str or distributed.Client, default=None
        None (Dask's threaded scheduler), a Dask scheduler name, or a
        ``dask.distributed`` address ("tcp://host:port") or ``Client``.
        VCF/BCF parsing is sequential: only None is accepted there.
    progress : bool, default=False
        Print a progress line on stderr (rewritten in place on a terminal).

    Returns
    -------
    TransmissionCounts
        b, c (PLINK's T and U with ``--keep-allele-order``), N, Mendel errors
        and the public CHR / SNP / BP / A1 / A2 annotations of the SNPs counted
        (Y and MT are skipped).

    Notes
    -----
    Per trio and SNP with ``h`` heterozygous parents,

    .. math::

        x = g_{child} - [g_{father} = 2] - [g_{mother} = 2],\quad
        b \mathrel{+}= x,\quad c \mathrel{+}= h - x \quad (0 \le x \le h),

    Spielman, McGinnis & Ewens (1993), Am. J. Hum. Genet. 52:506-516; PLINK
    1.9 (Chang et al. 2015, GigaScience 4:7) for the chromosome X rule.

    References
    ----------
    Spielman, R. S., McGinnis, R. E. & Ewens, W. J. (1993). Transmission test
    for linkage disequilibrium. Am. J. Hum. Genet. 52, 506-516.

    Examples
    --------
    >>> import tempfile, os
    >>> from dpselect.apps.genomics import simulate_trios, transmission_counts
    >>> d = tempfile.mkdtemp()
    >>> causal = simulate_trios(os.path.join(d, "toy"), 50, 20, causal=[3], effect=0.9, rng=0)
    >>> counts = transmission_counts(os.path.join(d, "toy"))
    >>> counts.n_families, counts.b.shape, counts.annotations([3])
    (50, (20,), [('1', 'rs3', 4, 'A', 'G')])
    """
    if isinstance(path, (str, os.PathLike)) and str(path).lower().endswith(VCF_SUFFIXES):
        require("cyvcf2", "vcf", purpose="transmission_counts of a VCF/BCF path (or convert it with plink --vcf)")
        from ._vcf import vcf_transmission_counts

        return vcf_transmission_counts(
            path,
            pedigree=pedigree,
            affected_only=affected_only,
            allow_no_sex=allow_no_sex,
            chunk_snps=chunk_snps,
            scheduler=scheduler,
            progress=progress,
        )
    if pedigree is not None:
        raise ValueError("pedigree: only for VCF/BCF input; the .fam of a PLINK fileset defines its trios")
    chunk = chunk_snps
    require("dask", "gwas", purpose="dpselect.apps.genomics.transmission_counts (PLINK input)")
    files = open_fileset(path)
    fam, bim = files.fam, files.bim
    rows = trios(fam, affected_only=bool(affected_only), allow_no_sex=bool(allow_no_sex))
    if rows.shape[0] == 0:
        raise ValueError(
            f"path: {str(path)!r} has no complete {'affected ' if affected_only else ''}trio "
            "(child with father and mother in the .fam)"
        )
    keep, is_x = chromosome_masks(bim["chrom"], "a TDT", SKIPPED_KINDS)
    if files.biallelic is not None:
        keep &= files.biallelic
    plan = TrioPlan.from_rows(rows, fam[rows[:, 0], 4] == "1")
    n_snp = bim["snp"].size
    out = count_chunks(
        files.source,
        n_snp,
        functools.partial(_count_trios, plan=plan),
        3,
        2 * plan.n,
        keep,
        is_x,
        chunk,
        scheduler,
        make_progress(progress, n_snp, "counting transmissions"),
    )
    if not keep.all():
        bim = {name: col[keep] for name, col in bim.items()}
    return TransmissionCounts(
        out[0],
        out[1],
        int(rows.shape[0]),
        snp_ids=bim["snp"],
        mendel_errors=out[2],
        chrom=bim["chrom"],
        pos=bim["pos"],
        a1=bim["a1"],
        a2=bim["a2"],
    )


def _count_trios(records: np.ndarray, x_mask: np.ndarray | None, plan: TrioPlan) -> np.ndarray:
    return count_packed(records, plan, x_mask)
