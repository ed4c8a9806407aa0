"""Case-control genotype files -> genotype and allele counts of cases and controls, on the packed bytes.

Input: PLINK 1 binary filesets (``.bed/.bim/.fam``) or PLINK 2 ``.pgen/.pvar/.psam``
(read by :mod:`dpselect.apps.genomics._io._pgen`).  Status from the phenotype
column: 2 = case, 1 = control, 0 / -9 = missing (excluded); any other value
is a quantitative phenotype and refused, as PLINK's ``--model`` refuses it.
As PLINK 1.9, an individual of unknown sex (sex column not 1 or 2) has its
phenotype ignored, so is excluded, unless ``allow_no_sex=True`` (PLINK's
``--allow-no-sex``).

Counts (PLINK 1.9 ``--model --keep-allele-order`` and ``--assoc``): with A1
the ``.bim`` column 5 allele (ALT of a ``.pvar``), per SNP and group the
numbers of individuals with 2, 1 and 0 copies of A1 (``--model``'s AFF /
UNAFF "a/b/c", missing calls left out) and the A1 / A2 allele counts
(``2a + b`` / ``b + 2c``).  Chromosome X (``X`` / 23): the genotype counts
are those of the females (and of the unknown-sex individuals under
``allow_no_sex``, whom PLINK treats as females there) -- ``--model`` counts
no male on X; the allele counts add each male's allele once, a
heterozygous male call being missing (``--assoc``).  ``XY`` / 25 is
pseudo-autosomal and counted as an autosome.  Y / 24 and MT / 26 are skipped
with one warning, as ``--model`` skips them.
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING

import numpy as np

from ...._optional import require
from ...._params import BOOLEAN, validate_params
from .._counts import CaseControlCounts
from .._rules import CHUNK_SNPS, PATH, SCHEDULER
from ._case_control_kernel import CaseControlPlan, count_case_control
from ._chunks import auto_chunk, chromosome_masks, count_chunks
from ._pgen import open_fileset
from ._plink import VCF_SUFFIXES
from ._progress import make_progress

if TYPE_CHECKING:
    from distributed import Client

__all__ = ["case_control_counts", "case_control_status"]

#: Chromosome kinds skipped, and why (as ``plink1.9 --model`` skips them).
SKIPPED_CC = {
    "Y": "haploid: no genotype test; plink1.9 --model skips it",
    "MT": "haploid: no genotype test; plink1.9 --model skips it",
}


def case_control_status(fam: np.ndarray, *, allow_no_sex: bool, what: str = "path") -> tuple[np.ndarray, ...]:
    """(case, control, male) bool arrays of a .fam-like table (column 5 sex, column 6 phenotype)."""
    pheno, sex = fam[:, 5].astype(str), fam[:, 4].astype(str)
    if not np.isin(pheno, ["1", "2", "0", "-9"]).all():
        raise ValueError(
            f"{what}: the phenotype column has values other than 1 (control), 2 (case) and 0 / -9 "
            "(missing): a quantitative phenotype has no case-control counts"
        )
    known = np.isin(sex, ["1", "2"]) | bool(allow_no_sex)
    case, control = (pheno == "2") & known, (pheno == "1") & known
    # no refusal on the numbers of cases and controls: under add/remove they are private (an empty
    # group is a neighbour of a group of one); a test whose sensitivity needs them refuses itself
    return case, control, sex == "1"


@validate_params(
    {
        "path": PATH,
        "allow_no_sex": BOOLEAN,
        "chunk_snps": CHUNK_SNPS.or_none(),
        "scheduler": SCHEDULER,
        "progress": BOOLEAN,
    }
)
def case_control_counts(
    path: str | os.PathLike[str],
    *,
    allow_no_sex: bool = False,
    chunk_snps: int | None = None,
    scheduler: str | Client | None = None,
    progress: bool = False,
) -> CaseControlCounts:
    r"""Genotype and allele counts of cases and controls at every SNP of a PLINK 1 or PLINK 2 fileset.

    Counted on the packed 2-bit codes with word masks and popcounts (no
    genotype matrix), in SNP chunks run as Dask tasks.  Module docstring of
    ``_case_control_reader`` for the rules; they equal ``plink1.9 --model
    --keep-allele-order`` (genotype counts) and ``--assoc`` (allele counts).

    Parameters
    ----------
    path : str or path-like
        A PLINK 1 fileset prefix (or its ``.bed`` / ``.bim`` / ``.fam`` path),
        or a PLINK 2 ``.pgen`` path (``.pvar`` and ``.psam`` beside it; extra
        ``gwas``, through pgenlib), or a BGEN 1.2 ``.bgen`` path with its ``.sample``
        beside it (extra ``gwas``, through cbgen; A1 = each variant's first allele, as
        ``plink2 --export bgen-1.2`` writes the ``.bim``'s A1).
    allow_no_sex : bool, default=False
        Count individuals of unknown sex (as PLINK's ``--allow-no-sex``; on
        X they count as females); by default they are excluded as PLINK
        excludes them.
    chunk_snps : int, default=None
        SNPs per Dask task (a task reads ~1 MiB of records at a time); None:
        at least 4 tasks per thread of Dask's threaded scheduler and at most
        8 MiB of records per task.
    scheduler : None, str or distributed.Client, default=None
        None (Dask's threaded scheduler), a Dask scheduler name, or a
        ``dask.distributed`` address or ``Client``.
    progress : bool, default=False
        Print a progress line on stderr.

    Returns
    -------
    CaseControlCounts
        ``cases`` / ``controls`` (m, 3) genotype counts (2, 1, 0 copies of
        A1), ``allele_cases`` / ``allele_controls`` (m, 2) A1 / A2 counts,
        ``n_cases`` / ``n_controls`` and the public CHR / SNP / BP / A1 / A2
        annotations (Y and MT skipped).

    Notes
    -----
    Per group :math:`G` and 64-bit word :math:`w` of a SNP record (32 codes),
    with :math:`M_G` the group's mask on the low bit of each code,

    .. math::

        n_0 = \sum_w |w \wedge (w \gg 1) \wedge M_G|,\quad
        n_1 = \sum_w |w \wedge (M_G \ll 1)| - n_0,\quad
        n_2 = |G| - \sum_w |w \wedge M_G| - \sum_w |w \wedge (M_G \ll 1)| + n_0

    (:math:`|\cdot|` a popcount; :math:`n_k` the members with k copies of A1).
    Chang et al. (2015), GigaScience 4:7 (PLINK 1.9, whose counts these equal).

    References
    ----------
    Purcell, S. et al. (2007). PLINK: a tool set for whole-genome association
    and population-based linkage analyses. Am. J. Hum. Genet. 81, 559-575.

    Examples
    --------
    >>> import os, tempfile
    >>> from dpselect.apps.genomics import case_control_counts, simulate_trios
    >>> d = tempfile.mkdtemp()
    >>> _ = simulate_trios(os.path.join(d, "toy"), 30, 8, causal=0, child_sex="mixed", rng=0)
    >>> fam = os.path.join(d, "toy.fam")  # parents as controls, children as cases
    >>> rows = [line.split() for line in open(fam)]
    >>> _ = open(fam, "w").write("".join(" ".join(r[:5] + ["2" if r[2] != "0" else "1"]) + "\n" for r in rows))
    >>> counts = case_control_counts(os.path.join(d, "toy"))
    >>> counts.n_cases, counts.n_controls, counts.cases.shape, counts.annotations([0])
    (30, 60, (8, 3), [('1', 'rs0', 1, 'A', 'G')])
    """
    chunk = chunk_snps
    require("dask", "gwas", purpose="dpselect.apps.genomics.case_control_counts")
    if isinstance(path, (str, os.PathLike)) and str(path).lower().endswith(VCF_SUFFIXES):
        raise ValueError(
            "path: case_control_counts reads PLINK 1 / PLINK 2 filesets; convert a VCF/BCF with "
            "plink --vcf FILE --make-bed (the phenotype and sex then go in the .fam)"
        )
    if isinstance(path, (str, os.PathLike)) and str(path).lower().endswith(".bgen"):
        from ._bgen import bgen_case_control_counts

        return bgen_case_control_counts(path, allow_no_sex=allow_no_sex)
    files = open_fileset(path)
    fam, bim = files.fam, files.bim
    case, control, male = case_control_status(fam, allow_no_sex=allow_no_sex)
    n_snp = bim["snp"].size
    keep, is_x = chromosome_masks(bim["chrom"], "a case-control genotype test", SKIPPED_CC)
    if files.biallelic is not None:
        keep &= files.biallelic
    plan = CaseControlPlan.from_status(case, control, male)
    if chunk is None:
        chunk = auto_chunk(n_snp, files.source.n_bytes)
    out = count_chunks(
        files.source,
        n_snp,
        functools.partial(_count, plan=plan),
        10,
        2 * fam.shape[0],
        keep,
        is_x,
        chunk,
        scheduler,
        make_progress(progress, n_snp, "counting cases and controls"),
    )
    if not keep.all():
        bim = {name: col[keep] for name, col in bim.items()}
    return CaseControlCounts(
        out[0:3].T,
        out[3:6].T,
        n_cases=int(case.sum()),
        n_controls=int(control.sum()),
        allele_cases=out[6:8].T,
        allele_controls=out[8:10].T,
        snp_ids=bim["snp"],
        chrom=bim["chrom"],
        pos=bim["pos"],
        a1=bim["a1"],
        a2=bim["a2"],
    )


def _count(records: np.ndarray, x_mask: np.ndarray | None, plan: CaseControlPlan) -> np.ndarray:
    return count_case_control(records, plan, x_mask)
