"""BGEN 1.2 (+ ``.sample``) case-control counts through the maintained reader ``cbgen`` (extra ``gwas``).

The file as ``plink2 --export bgen-1.2`` writes it: biallelic variants, unphased diploid
probabilities (hard calls are 0/1), the ``.sample`` file beside it with the phenotype in its
first binary (``B``) column (1 = case, 0 = control, NA = missing) and ``sex`` (1 male, 2 female,
0 unknown).  A1 is the first allele of each variant (``plink2`` writes the ``.bim``'s A1
first), so the counts equal :func:`case_control_counts` on the ``.bed`` the BGEN was exported
from.  A call is hard when its largest probability is at least 0.9 (PLINK 2's
``--hard-call-threshold 0.1``); other calls, non-diploid samples and missing probabilities
count as missing.  Individuals of unknown sex are left out unless ``allow_no_sex`` (PLINK's
rule).  Chromosome X is counted as an autosome here (BGEN stores no sex-specific ploidy in
these files): read X from the ``.bed`` for PLINK's male handling.

``cbgen`` reads one variant at a time (a C call per variant); the counting of a block of
variants is vectorised over variants and individuals.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np

from ...._optional import require
from .._counts import CaseControlCounts

__all__ = ["bgen_case_control_counts", "read_sample"]

#: Variants counted together (probabilities of one block: block x individuals x 3 float32).
_BLOCK = 256


def read_sample(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(case, control, known sex) masks from a ``.sample`` file (its first ``B`` column is the phenotype)."""
    lines = [line.split() for line in path.read_text().splitlines() if line.strip()]
    if len(lines) < 2:
        raise ValueError(f"path: {path.name} is not a .sample file (no header and type lines)")
    header, types, rows = lines[0], lines[1], lines[2:]
    if "B" not in types:
        raise ValueError(f"path: {path.name} has no binary (B) phenotype column")
    col = types.index("B")
    sex_col = header.index("sex") if "sex" in header else None
    if any(len(r) != len(header) for r in rows):
        raise ValueError(f"path: {path.name} has rows of unequal length")
    pheno = np.array([r[col] for r in rows])
    sex = np.array([r[sex_col] for r in rows]) if sex_col is not None else np.full(len(rows), "0")
    return pheno == "1", pheno == "0", np.isin(sex, ["1", "2"])


def _hard_calls(prob: np.ndarray) -> np.ndarray:
    """Copies of the first allele (2, 1, 0) per (variant, individual); -1 where missing or not hard."""
    best = np.nan_to_num(prob, nan=0.0).max(axis=-1)
    calls = 2 - np.argmax(np.nan_to_num(prob, nan=-1.0), axis=-1)
    return np.where(best >= 0.9, calls, -1)


def bgen_case_control_counts(path: str | os.PathLike[str], *, allow_no_sex: bool = False) -> CaseControlCounts:
    """Case-control genotype counts of a BGEN 1.2 file and its ``.sample`` (module docstring for the rules)."""
    require("cbgen", "gwas", purpose="dpselect.apps.genomics.case_control_counts on a .bgen")
    import cbgen

    bgen_path = Path(path)
    sample = bgen_path.with_suffix(".sample")
    if not bgen_path.is_file() or not sample.is_file():
        raise ValueError(f"path: {bgen_path.name} needs the .bgen and its .sample beside it")
    case, control, known = read_sample(sample)
    if not allow_no_sex:
        case, control = case & known, control & known
    with cbgen.bgen_file(bgen_path) as bgen, tempfile.TemporaryDirectory() as tmp:
        if bgen.nsamples != case.size:
            raise ValueError(f"path: {sample.name} lists {case.size} samples, the .bgen {bgen.nsamples}")
        meta_path = Path(tmp) / "bgen.metafile"
        bgen.create_metafile(meta_path, verbose=False)
        with cbgen.bgen_metafile(meta_path) as meta:
            parts = [meta.read_partition(i).variants for i in range(meta.npartitions)]
        offsets = np.concatenate([p.offset for p in parts])
        alleles = np.concatenate([p.allele_ids for p in parts])
        if not (np.concatenate([p.nalleles for p in parts]) == 2).all():
            raise ValueError(f"path: {bgen_path.name} has a variant with more than two alleles")
        counts = np.zeros((offsets.size, 6), dtype=np.int64)
        masks = np.stack([case, control])  # (2, n)
        for start in range(0, offsets.size, _BLOCK):  # blocks of variants; one C read per variant
            block = offsets[start : start + _BLOCK]
            prob = np.stack([bgen.read_probability(int(o), precision=32)[:, :3] for o in block])
            calls = _hard_calls(prob)  # (block, n)
            onehot = calls[:, None, :] == np.array([2, 1, 0])[None, :, None]  # (block, 3, n)
            counts[start : start + block.size] = (
                (onehot.astype(np.int64) @ masks.T.astype(np.int64)).transpose(0, 2, 1).reshape(-1, 6)
            )
    pairs = [a.decode().split(",") for a in alleles]
    return CaseControlCounts(
        counts[:, :3],
        counts[:, 3:],
        n_cases=int(case.sum()),
        n_controls=int(control.sum()),
        snp_ids=np.concatenate([p.rsid for p in parts]),
        chrom=np.concatenate([p.chromosome for p in parts]),
        pos=np.concatenate([p.position for p in parts]).astype(np.int64),
        a1=np.array([p[0] for p in pairs]),
        a2=np.array([p[1] for p in pairs]),
    )
