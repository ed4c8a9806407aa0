"""PLINK 1 binary filesets (``.bed/.bim/.fam``): paths, the ``.fam`` table, the ``.bim`` columns, ``.bed`` checks.

The ``.bim`` annotations are kept as bytes (one byte a character), tokenised
with NumPy in 64 KiB blocks, and decoded to ``str`` only when asked for; the
same reader takes a PLINK 2 ``.pvar`` (other column layouts, a header to
skip).  The counting readers (:mod:`dpselect.apps.genomics._io._tdt_reader`,
``_case_control_reader``) count the ``.bed`` records in SNP chunks on Dask.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["BED_MAGIC", "VCF_SUFFIXES", "read_bim"]

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
        raise ValueError(
            f"path: {what} file {str(path)!r} line {bad[0] + 1} has {len(rows[bad[0]])} columns, expected {columns}"
        )
    return np.array(rows, dtype=object)


def _check_bed(path: Path, n_ind: int, n_snp: int) -> None:
    with open(path, "rb") as f:
        head = f.read(3)
    if head != BED_MAGIC:
        raise ValueError(
            f"path: {str(path)!r} is not a SNP-major PLINK 1 .bed file (magic bytes {head.hex()!r}, "
            f"expected {BED_MAGIC.hex()!r})"
        )
    expected = 3 + n_snp * ((n_ind + 3) // 4)
    size = path.stat().st_size
    if size != expected:
        raise ValueError(
            f"path: {str(path)!r} has {size} bytes but the .fam ({n_ind} individuals) and .bim "
            f"({n_snp} SNPs) need {expected}: the fileset is mismatched or truncated"
        )


#: ASCII whitespace (what ``bytes.split()`` splits on), by byte value.
_SPACE = np.zeros(256, dtype=bool)
_SPACE[[9, 10, 11, 12, 13, 32]] = True


def _token_column(buf: np.ndarray, start: np.ndarray, stop: np.ndarray) -> np.ndarray:
    """Tokens ``buf[start[i]:stop[i]]`` as one fixed-width bytes (``S``) array: one pass per character position."""
    width = int((stop - start).max())
    out = np.zeros((start.size, width), dtype=np.uint8)
    for j in range(width):
        has = start + j < stop
        out[has, j] = buf[start[has] + j]
    return out.view(f"S{width}").ravel()


def _bim_block(
    block: bytes, path: Path, columns: int = 6, wanted: Any = (0, 1, 3, 4, 5), what: str = ".bim"
) -> dict[int, np.ndarray] | None:
    """Columns ``wanted`` of whole .bim lines (``columns`` a line) as bytes arrays.

    Tokenised with NumPy (no Python object per token).

    None for a block of blank lines; every line must have ``columns`` columns.
    """
    buf = np.frombuffer(block, dtype=np.uint8)
    word = _SPACE[buf]
    np.logical_not(word, out=word)
    edge = np.diff(word.view(np.int8), prepend=np.int8(0), append=np.int8(0))  # +1: a token starts; -1: it ended
    start = np.flatnonzero(edge == 1)
    if start.size == 0:
        return None
    stop = np.flatnonzero(edge == -1)
    line = np.searchsorted(np.flatnonzero((buf == 10) | (buf == 13)), start)  # line of each token
    c = columns
    grouped = (
        start.size % c == 0
        and bool((line[0::c] == line[c - 1 :: c]).all())
        and bool((line[c::c] > line[c - 1 : -1 : c]).all())
    )
    if not grouped:
        raise ValueError(f"path: {what} file {str(path)!r} does not have {c} columns on every line")
    return {j: _token_column(buf, start[j::c], stop[j::c]) for j in wanted}


#: Bytes of .bim text tokenised at once: the transient arrays (~25 bytes per byte of text) stay small (at 10^6
#: SNPs 256 KiB blocks left ~4 MiB of freed heap resident, 64 KiB ~1 MiB, for ~1 % of the counting CPU).
_BIM_BLOCK = 1 << 16


def _blocks(path: Path, skip: int = 0) -> Iterator[bytes]:
    """The file from byte ``skip`` on in blocks of about ``_BIM_BLOCK`` bytes cut after a line end.

    The last block is whatever is left.
    """
    rest = b""
    with open(path, "rb") as f:
        f.seek(skip)
        while True:
            data = f.read(_BIM_BLOCK)
            text = rest + data
            cut = len(text) if not data else text.rfind(b"\n") + 1
            if cut:
                yield text[:cut]
            rest = text[cut:]
            if not data:
                return


_BIM_LAYOUT = {"chrom": 0, "snp": 1, "pos": 3, "a1": 4, "a2": 5}


def read_bim(
    path: Path, *, columns: int = 6, layout: dict[str, int] | None = None, skip: int = 0, what: str = ".bim"
) -> dict[str, np.ndarray]:
    """The .bim columns chrom, snp, pos, a1, a2: text as bytes (``S``) arrays, pos int64; read in 64 KiB blocks.

    ``columns`` / ``layout`` / ``skip``: another whitespace-separated table
    (a ``.pvar``): its number of columns, the column of each of the five
    names, and the bytes of header to skip; ``what`` names it in errors.

    About 1 byte of memory per character of text plus 8 per SNP for the
    position, with no Python object per line or token (a ``str`` array would
    take 4 bytes per character).  The columns are allocated once for an upper
    bound on the number of lines (a first pass counts line ends) and filled
    block by block, so no per-block pieces are joined.  Non-ASCII text stays
    UTF-8 bytes here.
    """
    layout = _BIM_LAYOUT if layout is None else layout
    names = [name for name in layout if name != "pos"]
    bound = 1 + sum(block.count(b"\n") + block.count(b"\r") for block in _blocks(path, skip))
    text = {name: np.zeros(bound, dtype="S1") for name in names}  # widened when a longer token comes
    pos = np.zeros(bound, dtype=np.int64)
    n = 0
    for block in _blocks(path, skip):
        try:
            parts = _bim_block(block, path, columns, sorted(layout.values()), what)
        except ValueError:
            if not skip:
                _read_table(path, columns, what)  # names the first bad line
            raise
        if parts is None:
            continue
        k = parts[layout["chrom"]].size
        for name in names:
            j = layout[name]
            if parts[j].itemsize > text[name].itemsize:
                wider = np.zeros(bound, dtype=parts[j].dtype)
                wider[:n] = text[name][:n]
                text[name] = wider
            text[name][n : n + k] = parts[j]
        try:
            pos[n : n + k] = parts[layout["pos"]].astype(np.int64)
        except (ValueError, OverflowError):
            raise ValueError(
                f"path: {what} file {str(path)!r} has a non-integer position (column {layout['pos'] + 1})"
            ) from None
        n += k
    if n == 0:
        raise ValueError(f"path: {what} file {str(path)!r} is empty")
    return {
        "chrom": text["chrom"][:n],
        "snp": text["snp"][:n],
        "pos": pos[:n],
        "a1": text["a1"][:n],
        "a2": text["a2"][:n],
    }
