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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ..._optional import require
from ..._validation import check_int
from ._chunks import chromosome_masks, count_chunks
from ._counting import SKIPPED_KINDS, TransmissionCounts, trios
from ._packed import TrioPlan, count_packed
from ._progress import make_progress

__all__ = ["BED_MAGIC", "read_bim", "transmission_counts"]

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


def _bim_block(block: bytes, path: Path, columns: int = 6, wanted: Any = (0, 1, 3, 4, 5),
               what: str = ".bim") -> dict[int, np.ndarray] | None:
    """Columns ``wanted`` of whole .bim lines (``columns`` a line) as bytes arrays, tokenised with NumPy (no Python
    object per token).

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
    grouped = start.size % c == 0 and bool((line[0::c] == line[c - 1::c]).all()) and bool(
        (line[c::c] > line[c - 1:-1:c]).all())
    if not grouped:
        raise ValueError(f"path: {what} file {str(path)!r} does not have {c} columns on every line")
    return {j: _token_column(buf, start[j::c], stop[j::c]) for j in wanted}


#: Bytes of .bim text tokenised at once: the transient arrays (~25 bytes per byte of text) stay small (at 10^6
#: SNPs 256 KiB blocks left ~4 MiB of freed heap resident, 64 KiB ~1 MiB, for ~1 % of the counting CPU).
_BIM_BLOCK = 1 << 16


def _blocks(path: Path, skip: int = 0) -> Iterator[bytes]:
    """The file from byte ``skip`` on in blocks of about ``_BIM_BLOCK`` bytes cut after a line end (the last
    block: whatever is left)."""
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


def read_bim(path: Path, *, columns: int = 6, layout: dict[str, int] | None = None, skip: int = 0,
             what: str = ".bim") -> dict[str, np.ndarray]:
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
            text[name][n:n + k] = parts[j]
        try:
            pos[n:n + k] = parts[layout["pos"]].astype(np.int64)
        except (ValueError, OverflowError):
            raise ValueError(f"path: {what} file {str(path)!r} has a non-integer position (column "
                             f"{layout['pos'] + 1})") from None
        n += k
    if n == 0:
        raise ValueError(f"path: {what} file {str(path)!r} is empty")
    return {"chrom": text["chrom"][:n], "snp": text["snp"][:n], "pos": pos[:n], "a1": text["a1"][:n],
            "a2": text["a2"][:n]}


def transmission_counts(path: Any, *, pedigree: Any = None, affected_only: bool = True,
                        allow_no_sex: bool = False, chunk_snps: int = 10_000, scheduler: Any = None,
                        progress: bool = False) -> TransmissionCounts:
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

        return vcf_transmission_counts(path, pedigree=pedigree, affected_only=affected_only,
                                       allow_no_sex=allow_no_sex, chunk_snps=chunk_snps, scheduler=scheduler,
                                       progress=progress)
    if pedigree is not None:
        raise ValueError("pedigree: only for VCF/BCF input; the .fam of a PLINK fileset defines its trios")
    chunk = check_int(chunk_snps, "chunk_snps", minimum=1)
    if not isinstance(progress, bool):
        raise TypeError(f"progress must be a bool, got {type(progress).__name__}")
    require("dask", "gwas", purpose="dpselect.apps.genomics.transmission_counts (PLINK input)")
    from ._pgen import open_fileset

    files = open_fileset(path)
    fam, bim = files.fam, files.bim
    rows = trios(fam, affected_only=bool(affected_only), allow_no_sex=bool(allow_no_sex))
    if rows.shape[0] == 0:
        raise ValueError(f"path: {str(path)!r} has no complete {'affected ' if affected_only else ''}trio "
                         "(child with father and mother in the .fam)")
    keep, is_x = chromosome_masks(bim["chrom"], "a TDT", SKIPPED_KINDS)
    if files.biallelic is not None:
        keep &= files.biallelic
    plan = TrioPlan.from_rows(rows, fam[rows[:, 0], 4] == "1")
    n_snp = bim["snp"].size
    out = count_chunks(files.source, n_snp, functools.partial(_count_trios, plan=plan), 3, 2 * plan.n, keep, is_x,
                       chunk, scheduler, make_progress(progress, n_snp, "counting transmissions"))
    if not keep.all():
        bim = {name: col[keep] for name, col in bim.items()}
    return TransmissionCounts(out[0], out[1], int(rows.shape[0]), bim["snp"], out[2], bim["chrom"], bim["pos"],
                              bim["a1"], bim["a2"])


def _count_trios(records: np.ndarray, x_mask: np.ndarray | None, plan: TrioPlan) -> np.ndarray:
    return count_packed(records, plan, x_mask)
