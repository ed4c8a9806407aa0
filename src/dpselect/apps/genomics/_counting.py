"""The trio table, the counts' container and the reference kernel: genotypes -> TDT transmission counts.

Shared by the PLINK and the VCF readers (neither imports the other; both count
with the packed-code table kernel).

Chromosomes follow PLINK's codes: 1-22 (and any other name) autosomal, X / 23
(male children receive only the mother's allele there, sex from the pedigree),
XY / 25 (pseudo-autosomal: counted as an autosome, as PLINK does), Y / 24 and
MT / 26 (haploid, not transmitted by both parents: no TDT; skipped, as PLINK's
``--tdt`` skips them).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._annotated import Annotated

__all__ = ["TransmissionCounts", "chromosome_kind", "chromosome_runs", "trios"]

#: Chromosome kinds whose SNPs carry no TDT (skipped with a warning by the readers).
SKIPPED_KINDS = {
    "Y": "chromosome Y is haploid and passed from father to son only",
    "MT": "mitochondrial DNA is passed from the mother only",
}


class TransmissionCounts(Annotated):
    """TDT counts per SNP (private data: never print them next to a private release).

    ``b`` / ``c``: transmissions of ``.bim`` allele 1 / allele 2 by
    heterozygous parents (int64, one per SNP); ``n_families``: number of trios
    used (the public N of :func:`dpselect.apps.tdt.select_top_snps`);
    ``snp_ids``: the ``.bim`` SNP ids; ``mendel_errors``: trios with a
    Mendelian-inconsistent call per SNP.  ``chrom``, ``pos``, ``a1``, ``a2``:
    the public annotations of each SNP (``.bim`` columns 1, 4, 5, 6; for a VCF
    CHROM, POS, ALT, REF).  ``b`` counts transmissions of A1: PLINK 1.9's A1
    *with* ``--keep-allele-order`` (the ``.bim`` column 5 allele; without that
    flag PLINK re-chooses A1 as the minor allele and may swap T and U).

    The text annotations are held as ASCII bytes (a quarter of the memory of
    ``str`` arrays); ``snp_ids``, ``chrom``, ``a1`` and ``a2`` are ``str``
    arrays made on first access (then kept), and :meth:`annotations` decodes
    only the rows asked for.  Instances are immutable.

    Parameters
    ----------
    b : ndarray of int
        Transmissions of allele 1 per SNP.
    c : ndarray of int
        Transmissions of allele 2 per SNP.
    n_families : int
        Number of trios counted.
    snp_ids : array-like of str or bytes
        SNP ids.
    mendel_errors : ndarray of int
        Trios with a Mendelian-inconsistent call per SNP.
    chrom : array-like of str or bytes
        Chromosome codes.
    pos : ndarray of int
        Base-pair positions.
    a1 : array-like of str or bytes
        Allele 1 (the allele ``b`` counts).
    a2 : array-like of str or bytes
        Allele 2.
    """

    __slots__ = ("b", "c", "mendel_errors", "n_families")
    b: np.ndarray
    c: np.ndarray
    n_families: int
    mendel_errors: np.ndarray

    def __init__(
        self,
        b: np.ndarray,
        c: np.ndarray,
        n_families: int,
        snp_ids: ArrayLike,
        mendel_errors: np.ndarray,
        chrom: ArrayLike,
        pos: np.ndarray,
        a1: ArrayLike,
        a2: ArrayLike,
    ) -> None:
        init = object.__setattr__
        for name, value in (("b", b), ("c", c), ("n_families", n_families), ("mendel_errors", mendel_errors)):
            init(self, name, value)
        self._init_annotations(snp_ids, chrom, pos, a1, a2)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        t = self._text
        return (
            type(self),
            (self.b, self.c, self.n_families, t["snp_ids"], self.mendel_errors, t["chrom"], self.pos, t["a1"], t["a2"]),
        )

    def __repr__(self) -> str:  # no counts: they are private
        return f"TransmissionCounts({self.b.size} SNPs, {self.n_families} families)"


def chromosome_runs(codes: Any) -> tuple[np.ndarray, np.ndarray]:
    """Kinds ("A", "X", "XY", "Y" or "MT") and lengths of the runs of equal chromosome codes (str or bytes).

    Each run is named once (a ``.bim`` is sorted by chromosome, so there are
    a few dozen runs), for one comparison per SNP in all.
    """
    a = np.asarray(codes)
    if a.dtype.kind not in "SU":
        a = a.astype(str)
    a = a.ravel()
    if a.size == 0:
        return np.empty(0, dtype="<U2"), np.empty(0, dtype=np.int64)
    heads = np.flatnonzero(np.concatenate(([True], a[1:] != a[:-1])))
    uniq, inverse = np.unique(a[heads], return_inverse=True)
    kinds = {
        "X": "X",
        "23": "X",
        "Y": "Y",
        "24": "Y",
        "XY": "XY",
        "25": "XY",
        "PAR1": "XY",
        "PAR2": "XY",
        "MT": "MT",
        "M": "MT",
        "26": "MT",
    }
    texts = [u.decode("utf-8", "replace") if isinstance(u, bytes) else str(u) for u in uniq.tolist()]
    names = [u.upper()[3:] if u.upper().startswith("CHR") else u.upper() for u in texts]
    run_kind = np.array([kinds.get(x, "A") for x in names], dtype="<U2")[np.asarray(inverse).ravel()]
    return run_kind, np.diff(np.append(heads, a.size))


def chromosome_kind(codes: Any) -> np.ndarray:
    """PLINK chromosome codes (``1``, ``chr7``, ``X``, ``23``, ``XY``, ``MT`` ...) -> "A", "X", "XY", "Y" or "MT"."""
    return np.repeat(*chromosome_runs(codes))


def trios(fam: np.ndarray, *, affected_only: bool = True, allow_no_sex: bool = False, what: str = "path") -> np.ndarray:
    """(child, father, mother) row indices of the complete trios of a .fam table (one per parent pair).

    With ``affected_only`` the child must be affected (phenotype 2) and, unless
    ``allow_no_sex``, of known sex (1 or 2): PLINK 1.9 ignores the phenotype
    of an individual of ambiguous sex (its ``--allow-no-sex`` keeps it), so
    ``--tdt`` drops such a child's trio.

    Full siblings (a second child of the same parent pair) are dropped: the
    first child in file order is kept.  A pedigree where one individual is in
    two kept trios (half-siblings: a parent with two partners; or three
    generations: a child who is also a parent) is refused with a ValueError
    naming ``what``: one individual's replacement would then move two trios,
    so a SNP's table by up to two moves, twice the sensitivity every bound
    of :mod:`dpselect.apps.genomics` assumes.
    """
    key = {(f, i): r for r, (f, i) in enumerate(zip(fam[:, 0], fam[:, 1]))}
    seen: set[tuple[int, int]] = set()
    used: dict[int, int] = {}
    out = []
    for r, row in enumerate(fam):
        fa, mo = key.get((row[0], row[2])), key.get((row[0], row[3]))
        affected = row[5] == "2" and (allow_no_sex or row[4] in ("1", "2"))
        if fa is None or mo is None or (affected_only and not affected) or (fa, mo) in seen:
            continue
        for who in (r, fa, mo):
            if who in used:
                raise ValueError(  # rows, not ids: a message names no field of a record
                    f"{what}: the individual of row {who + 1} is in two trios (the children of rows "
                    f"{used[who] + 1} and {r + 1}): half-sibling or multi-generation pedigrees make one "
                    "individual part of two families, which doubles the TDT sensitivity; keep one trio per "
                    "individual (e.g. plink --remove the other children)"
                )
            used[who] = r
        seen.add((fa, mo))
        out.append((r, fa, mo))
    return np.array(out, dtype=np.int64).reshape(-1, 3)
