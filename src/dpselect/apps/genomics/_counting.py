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

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["TransmissionCounts", "chromosome_kind", "count_trios", "trios"]

#: Chromosome kinds whose SNPs carry no TDT (skipped with a warning by the readers).
SKIPPED_KINDS = {"Y": "chromosome Y is haploid and passed from father to son only",
                 "MT": "mitochondrial DNA is passed from the mother only"}


@dataclass(frozen=True)
class TransmissionCounts:
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
    """

    b: np.ndarray
    c: np.ndarray
    n_families: int
    snp_ids: np.ndarray
    mendel_errors: np.ndarray
    chrom: np.ndarray
    pos: np.ndarray
    a1: np.ndarray
    a2: np.ndarray

    def annotations(self, indices: Any = None) -> list[tuple[str, str, int, str, str]]:
        """(CHR, SNP, BP, A1, A2) rows of the SNPs at ``indices`` (all by default): public columns only."""
        idx = np.arange(self.b.size) if indices is None else np.asarray(indices, dtype=np.int64).ravel()
        return [(str(self.chrom[i]), str(self.snp_ids[i]), int(self.pos[i]), str(self.a1[i]), str(self.a2[i]))
                for i in idx]


def chromosome_kind(codes: Any) -> np.ndarray:
    """PLINK chromosome codes (``1``, ``chr7``, ``X``, ``23``, ``XY``, ``MT`` ...) -> "A", "X", "XY", "Y" or "MT"."""
    uniq, inverse = np.unique(np.asarray(codes, dtype=str), return_inverse=True)
    kinds = {"X": "X", "23": "X", "Y": "Y", "24": "Y", "XY": "XY", "25": "XY", "PAR1": "XY", "PAR2": "XY",
             "MT": "MT", "M": "MT", "26": "MT"}
    names = [u.upper()[3:] if u.upper().startswith("CHR") else u.upper() for u in uniq.tolist()]
    return np.array([kinds.get(x, "A") for x in names], dtype="<U2")[np.asarray(inverse).ravel()]


def trios(fam: np.ndarray, *, affected_only: bool = True, what: str = "path") -> np.ndarray:
    """(child, father, mother) row indices of the complete trios of a .fam table (one per parent pair).

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
        if fa is None or mo is None or (affected_only and row[5] != "2") or (fa, mo) in seen:
            continue
        for who in (r, fa, mo):
            if who in used:
                other = fam[used[who]]
                raise ValueError(
                    f"{what}: individual {fam[who, 1]!r} of family {fam[who, 0]!r} is in two trios (children "
                    f"{other[1]!r} and {row[1]!r}): half-sibling or multi-generation pedigrees make one "
                    "individual part of two families, which doubles the TDT sensitivity; keep one trio per "
                    "individual (e.g. plink --remove the other children)")
            used[who] = r
        seen.add((fa, mo))
        out.append((r, fa, mo))
    return np.array(out, dtype=np.int64).reshape(-1, 3)


def count_trios(g: np.ndarray) -> np.ndarray:
    """Decode-based autosomal kernel: (3, n_trios, k) int8 allele-1 copies (child, father, mother; < 0 =
    missing) -> (3, k) int64 rows b, c and Mendel errors (the reference the table kernels are tested against)."""
    kid, fa, mo = g
    called = (kid >= 0) & (fa >= 0) & (mo >= 0)
    het = (fa == 1).view(np.int8) + (mo == 1).view(np.int8)
    x = kid - (fa == 2).view(np.int8) - (mo == 2).view(np.int8)
    ok = called & (x >= 0) & (x <= het)
    b = np.where(ok, x, 0).sum(axis=0, dtype=np.int64)
    c = np.where(ok, het - x, 0).sum(axis=0, dtype=np.int64)
    return np.stack([b, c, (called & ~ok).sum(axis=0, dtype=np.int64)])
