"""Genotype filesets for the counting readers: PLINK 1 ``.bed/.bim/.fam`` or PLINK 2 ``.pgen/.pvar/.psam``.

A PLINK 2 fileset is read through pgenlib (the PLINK 2 authors' Python
reader, extra ``gwas``): each task opens the ``.pgen``, reads its SNPs in
pieces as ALT-allele counts (0, 1, 2; -9 missing) and packs them into the
2-bit codes of a ``.bed`` record, so the same packed kernels count both
formats.  Allele 1 is ALT and allele 2 REF (what ``plink2 --make-pgen``
makes of a ``.bed``'s A1 / A2).  The ``.psam`` gives the family, parents,
sex (1 / 2; anything else unknown) and the first phenotype column (1 / 2;
``NA``, 0 and -9 missing); the ``.pvar`` its ``#CHROM POS ID REF ALT``
columns (or, headerless, the ``.bim`` layout).  Multi-allelic variants (ALT
with a comma) are skipped with one warning.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...._optional import require
from ._chunks import BedSource
from ._plink import _FAM_COLUMNS, _check_bed, _prefix, _read_table, read_bim

__all__ = ["Fileset", "PgenSource", "open_fileset", "read_psam", "read_pvar"]

_PGEN_SUFFIXES = (".pgen", ".pvar", ".psam")

#: PLINK 1 code by ALT count + 9 (index 0: missing -9; 9, 10, 11: 0, 1, 2 copies).
_PACK = np.full(12, 0b01, dtype=np.uint8)
_PACK[9:] = (0b11, 0b10, 0b00)


@dataclass(frozen=True)
class Fileset:
    """An opened fileset: the .fam-like table (n, 6), the .bim-like columns, the record source, kept variants."""

    fam: np.ndarray
    bim: dict[str, np.ndarray]
    source: Any
    biallelic: np.ndarray | None  # None: every variant


class PgenSource:
    """SNP records of a ``.pgen`` decoded by pgenlib and packed as ``.bed`` records (picklable for a cluster)."""

    def __init__(self, pgen: str, n_samples: int) -> None:
        self.pgen, self.n_samples, self.n_bytes = pgen, n_samples, (n_samples + 3) // 4

    def pieces(self, start: int, stop: int, step: int) -> Iterator[tuple[int, np.ndarray]]:
        """(a, records) for consecutive pieces of at most ``step`` SNPs from ``start`` to ``stop``."""
        import pgenlib

        n, pad = self.n_samples, (-self.n_samples) % 4
        reader = pgenlib.PgenReader(self.pgen.encode(), raw_sample_ct=n)
        try:
            g = np.empty((min(step, max(stop - start, 1)), n), dtype=np.int8)
            codes = np.zeros((g.shape[0], n + pad), dtype=np.uint8)  # padding: code 00, outside every group
            for a in range(start, stop, step):
                k = min(a + step, stop) - a
                reader.read_range(a, a + k, g[:k])
                g[:k] += 9
                np.take(_PACK, g[:k].view(np.uint8), out=codes[:k, :n])
                four = codes[:k].reshape(k, -1, 4)
                yield a, four[..., 0] | four[..., 1] << 2 | four[..., 2] << 4 | four[..., 3] << 6
        finally:
            reader.close()


def read_psam(path: Path) -> np.ndarray:
    """(n, 6) .fam-like table (FID, IID, father, mother, sex, phenotype) of a ``.psam`` (or headerless .fam)."""
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    if not lines:
        raise ValueError(f"path: .psam file {str(path)!r} is empty")
    if not lines[0].startswith(("#FID", "#IID")):
        return _read_table(path, _FAM_COLUMNS, ".psam")
    head = lines[0][1:].split()
    rows = [line.split() for line in lines[1:]]
    if not rows or any(len(r) != len(head) for r in rows):
        raise ValueError(f"path: .psam file {str(path)!r} has no samples or a line without {len(head)} columns")
    table = np.array(rows, dtype=object).reshape(len(rows), len(head))
    std = {"FID", "IID", "SID", "PAT", "MAT", "SEX"}
    pheno = [j for j, h in enumerate(head) if h not in std]

    def col(name: str, default: str) -> np.ndarray:
        return table[:, head.index(name)] if name in head else np.full(len(rows), default, dtype=object)

    sex = col("SEX", "0")
    sex = np.where(np.isin(sex.astype(str), ["1", "2"]), sex, "0")
    ph = table[:, pheno[0]] if pheno else np.full(len(rows), "-9", dtype=object)
    ph = np.where(np.isin(ph.astype(str), ["NA", "nan", "0", "-9"]), "-9", ph)
    return np.stack([col("FID", "0"), col("IID", ""), col("PAT", "0"), col("MAT", "0"), sex, ph], axis=1)


def read_pvar(path: Path) -> dict[str, np.ndarray]:
    """The chrom, snp, pos, a1 (ALT), a2 (REF) columns of a ``.pvar`` (header ``#CHROM``; or the .bim layout)."""
    skip, head = 0, None
    with open(path, "rb") as f:
        for line in f:
            if line.startswith(b"##"):
                skip += len(line)
                continue
            if line.startswith(b"#CHROM"):
                skip += len(line)
                head = line[1:].decode("ascii", "replace").split()
            break
    if head is None:
        return read_bim(path, skip=skip, what=".pvar")
    need = {"chrom": "CHROM", "pos": "POS", "snp": "ID", "a1": "ALT", "a2": "REF"}
    missing = [v for v in need.values() if v not in head]
    if missing:
        raise ValueError(f"path: .pvar file {str(path)!r} has no {', '.join(missing)} column")
    return read_bim(
        path, columns=len(head), layout={k: head.index(v) for k, v in need.items()}, skip=skip, what=".pvar"
    )


def open_fileset(path: Any) -> Fileset:
    """A PLINK 1 or PLINK 2 fileset, its files checked against each other.

    PLINK 1: a prefix or a .bed/.bim/.fam path; PLINK 2: a .pgen/.pvar/.psam path, or a prefix with a
    .pgen and no .bed.  The files are checked against each other.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or path-like, got {type(path).__name__}")
    p = Path(path)
    stem = p.with_suffix("") if p.suffix in (*_PGEN_SUFFIXES, ".bed", ".bim", ".fam") else p
    if p.suffix not in _PGEN_SUFFIXES and not (
        stem.with_suffix(".pgen").is_file() and not stem.with_suffix(".bed").is_file()
    ):
        prefix = _prefix(path)
        fam = _read_table(prefix.with_suffix(".fam"), _FAM_COLUMNS, ".fam")
        bim = read_bim(prefix.with_suffix(".bim"))
        _check_bed(prefix.with_suffix(".bed"), fam.shape[0], bim["snp"].size)
        return Fileset(fam, bim, BedSource(str(prefix.with_suffix(".bed")), (fam.shape[0] + 3) // 4), None)
    for ext in _PGEN_SUFFIXES:
        if not stem.with_suffix(ext).is_file():
            raise FileNotFoundError(f"path: PLINK 2 fileset {str(stem)!r} has no {ext} file")
    pgenlib = require("pgenlib", "gwas", purpose="dpselect.apps.genomics counting of a PLINK 2 .pgen fileset")
    fam = read_psam(stem.with_suffix(".psam"))
    bim = read_pvar(stem.with_suffix(".pvar"))
    pgen = str(stem.with_suffix(".pgen"))
    try:
        reader = pgenlib.PgenReader(pgen.encode(), raw_sample_ct=fam.shape[0])
    except Exception as exc:  # pgenlib raises RuntimeError / ValueError on a bad or mismatched file
        raise ValueError(f"path: {pgen!r} is not a .pgen of the .psam's {fam.shape[0]} samples ({exc})") from exc
    n_var = reader.get_variant_ct()
    reader.close()
    if n_var != bim["snp"].size:
        raise ValueError(f"path: {pgen!r} has {n_var} variants but the .pvar {bim['snp'].size}: mismatched files")
    multi = np.char.find(bim["a1"], b",") >= 0
    if multi.any():
        warnings.warn(
            f"path: skipped {int(multi.sum())} multi-allelic variant(s) (ALT with a comma): the counts "
            "are of biallelic SNPs",
            UserWarning,
            stacklevel=3,
        )
    return Fileset(fam, bim, PgenSource(pgen, fam.shape[0]), ~multi if multi.any() else None)
