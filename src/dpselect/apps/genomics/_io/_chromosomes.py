"""PLINK chromosome codes: kinds and runs (shared by the readers and the chunking).

Chromosomes follow PLINK's codes: 1-22 (and any other name) autosomal, X / 23
(male children receive only the mother's allele there, sex from the pedigree),
XY / 25 (pseudo-autosomal: counted as an autosome, as PLINK does), Y / 24 and
MT / 26 (haploid, not transmitted by both parents: no TDT; skipped, as PLINK's
``--tdt`` skips them).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["SKIPPED_KINDS", "chromosome_kind", "chromosome_runs"]

#: Chromosome kinds whose SNPs carry no TDT (skipped with a warning by the readers).
SKIPPED_KINDS = {
    "Y": "chromosome Y is haploid and passed from father to son only",
    "MT": "mitochondrial DNA is passed from the mother only",
}


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
