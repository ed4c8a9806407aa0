"""The trio counting kernel and the trio table: genotype codes -> TDT transmission counts.

Shared by the PLINK and the VCF readers (neither imports the other).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["TransmissionCounts", "count_trios", "trios"]


@dataclass(frozen=True)
class TransmissionCounts:
    """TDT counts per SNP (private data: never print them next to a private release).

    ``b`` / ``c``: transmissions of ``.bim`` allele 1 / allele 2 by
    heterozygous parents (int64, one per SNP); ``n_families``: number of trios
    used (the public N of :func:`dpselect.apps.tdt.select_top_snps`);
    ``snp_ids``: the ``.bim`` SNP ids; ``mendel_errors``: trios with a
    Mendelian-inconsistent call per SNP.
    """

    b: np.ndarray
    c: np.ndarray
    n_families: int
    snp_ids: np.ndarray
    mendel_errors: np.ndarray


def trios(fam: np.ndarray, *, affected_only: bool = True) -> np.ndarray:
    """(child, father, mother) row indices of the complete trios of a .fam table (one per parent pair)."""
    key = {(f, i): r for r, (f, i) in enumerate(zip(fam[:, 0], fam[:, 1]))}
    seen: set[tuple[int, int]] = set()
    out = []
    for r, row in enumerate(fam):
        fa, mo = key.get((row[0], row[2])), key.get((row[0], row[3]))
        if fa is None or mo is None or (affected_only and row[5] != "2") or (fa, mo) in seen:
            continue
        seen.add((fa, mo))
        out.append((r, fa, mo))
    return np.array(out, dtype=np.int64).reshape(-1, 3)


def count_trios(g: np.ndarray) -> np.ndarray:
    """Counting kernel: (3, n_trios, k) int8 allele-1 copies (child, father, mother; < 0 = missing) -> (3, k)
    int64 rows b, c and Mendel errors (shared by the PLINK and VCF readers)."""
    kid, fa, mo = g
    called = (kid >= 0) & (fa >= 0) & (mo >= 0)
    het = (fa == 1).view(np.int8) + (mo == 1).view(np.int8)
    x = kid - (fa == 2).view(np.int8) - (mo == 2).view(np.int8)
    ok = called & (x >= 0) & (x <= het)
    b = np.where(ok, x, 0).sum(axis=0, dtype=np.int64)
    c = np.where(ok, het - x, 0).sum(axis=0, dtype=np.int64)
    return np.stack([b, c, (called & ~ok).sum(axis=0, dtype=np.int64)])
