"""VCF/BCF trio genotypes + a pedigree file -> TDT transmission counts.

Called by :func:`dpselect.apps.genomics.transmission_counts` for a path ending in
``.vcf``, ``.vcf.gz`` or ``.bcf``; the counting rules, the trio rule and the
counting kernel are those of :mod:`dpselect.apps.genomics`.

* **Readers**: VCF text (plain, gzip or BGZF) is decompressed by the text
  stream module (BGZF blocks inflated on two threads) and parsed by the
  vectorised text parser, which reads the common fixed-width ``GT``-only
  lines itself, many lines per NumPy call, and hands every other line to
  htslib; BCF (binary) is read by htslib.  htslib comes through ``cyvcf2``
  (maintained bindings): ``pip install "dpselect[vcf]"`` (``cyvcf2>=0.30``).
  sgkit / bio2zarr first convert the whole file to Zarr, a second copy of the
  cohort on disk: useful for repeated analyses, not for one streaming pass
  (and the conversion parses the same text).
* **Pedigree**: a PLINK-style ``.fam`` / ``.ped`` file (family, individual,
  father, mother, sex, phenotype; further ``.ped`` genotype columns are
  ignored; phenotype 2 = affected).  Individual ids are the VCF sample names:
  they must be unique in the pedigree and every one must be a VCF sample
  (:func:`read_pedigree`, in :mod:`._pedigree`).
* **Alleles**: allele 1 = ALT, allele 2 = REF (PLINK's convention when it
  imports a VCF: ``plink --vcf`` makes ALT the ``.bim`` A1), so ``b`` counts
  transmissions of ALT and the VCF and its PLINK conversion give the same
  counts.  A genotype is the number of ALT alleles of a diploid ``GT`` call
  (phased or not); a call with a missing allele (``.``, ``./.``, ``./1``) or
  another ploidy is missing, except a haploid call on chromosome X (a male's
  ``0`` / ``1``), read as homozygous as PLINK's VCF import does.
* **Chromosomes and sex**: as for PLINK filesets (CHROM ``X`` / ``chrX`` /
  ``23``: male children, sex 1 in the pedigree, receive only the mother's
  allele; Y and MT skipped with a warning).
* **Multi-allelic sites** (more than one ALT) are skipped and their number is
  reported in one ``UserWarning`` (split them first with ``bcftools norm -m-``).
  Sites without an ALT (``.``) are kept (b = c = 0).
* **The site list is the public candidate set** (mathematics §1): the positions and
  REF/ALT alleles of the file must not depend on the cohort, e.g. a genotyping
  array's manifest or a reference panel's sites.  A VCF jointly called from
  the cohort itself has a data-dependent site list (one family can add a site
  or a second ALT); restrict it to a public site list first.
* **Streaming**: the header's sample names are checked against the pedigree
  before any site is parsed.  Sites are parsed in file order, a chunk of
  about 16 MiB of text at a time, into PLINK 2-bit codes of the trio samples
  only, and counted by the packed-code table kernel ``chunk_snps`` sites at a
  time, so memory is bounded by the chunk.  Measured on 2,000 trios x 20,000
  sites (benchmarks/bench_gwas.py vcf): about 2x the CPU of PLINK 1.9's own
  route (``--vcf`` import then ``--tdt``), with identical counts; htslib's
  parsing alone costs about 0.3 ms per site for 6,000 samples, so a file of
  ``GT:AD:DP`` lines (all on htslib's path) is several times slower.
  Parsing is sequential (a compressed stream cannot be split without an
  index), so ``scheduler`` must be None; convert with ``plink --vcf`` once
  for cluster runs.  A truncated or corrupt file raises a one-line
  ValueError naming the path and the last site read, never a field of a
  record (htslib's own log is switched off: its lines can quote one).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ...._optional import require
from ...._params import BOOLEAN, Rule, validate_params
from .._counts import TransmissionCounts
from .._rules import CHUNK_SNPS, PATH
from ._chromosomes import SKIPPED_KINDS, chromosome_kind
from ._packed import count_codes
from ._pedigree import _PEDIGREE, read_pedigree, trios
from ._progress import make_progress
from ._textstream import StreamError, text_chunks
from ._vcftext import ChunkSites, TextParser, allele_codes, parse_header, quiet_htslib

__all__ = ["read_pedigree", "vcf_transmission_counts"]

if TYPE_CHECKING:
    from distributed import Client

VCF = require("cyvcf2", "vcf", purpose="dpselect.apps.genomics (VCF/BCF input)").VCF


#: Only None: VCF/BCF parsing is sequential (the body says so in its message).
def _none_only(value: object, name: str) -> None:
    if value is not None:
        raise ValueError(f"{name} must be None: VCF/BCF input is parsed sequentially")


_NO_SCHEDULER = Rule("None (VCF/BCF input is parsed sequentially)", check=_none_only)


def _open(path: Path, samples: list[str]) -> Any:
    quiet_htslib()
    try:
        vcf = VCF(str(path), lazy=True)
        header = list(vcf.samples)
    except Exception as exc:  # htslib reports unreadable input as OSError / various
        raise ValueError(
            f"path: {str(path)!r} is not a readable VCF/BCF file (htslib cannot read its header: {type(exc).__name__})"
        ) from None
    try:
        _check_samples(path, header, np.asarray(samples))
    except ValueError:
        vcf.close()
        raise
    vcf.set_samples(samples)
    return vcf


@validate_params(
    {
        "path": PATH,
        "pedigree": _PEDIGREE.or_none(),
        "affected_only": BOOLEAN,
        "allow_no_sex": BOOLEAN,
        "chunk_snps": CHUNK_SNPS,
        "scheduler": _NO_SCHEDULER,
        "progress": BOOLEAN,
    }
)
def vcf_transmission_counts(
    path: str | os.PathLike[str],
    *,
    pedigree: str | os.PathLike[str] | None = None,
    affected_only: bool = True,
    allow_no_sex: bool = False,
    chunk_snps: int = 10_000,
    scheduler: str | Client | None = None,
    progress: bool = False,
) -> TransmissionCounts:
    r"""TDT counts of every biallelic site of a VCF/BCF (allele 1 = ALT; module docstring for the rules).

    Use :func:`dpselect.apps.genomics.transmission_counts`, which dispatches here on
    the ``.vcf`` / ``.vcf.gz`` / ``.bcf`` ending.

    Parameters
    ----------
    path : str or path-like
        The VCF / BCF file.
    pedigree : str or path-like
        PLINK-style ``.fam`` / ``.ped`` file (individual ids = sample names; required).
    affected_only : bool, default=True
        Keep trios whose child has phenotype 2 (default) or all trios.
    allow_no_sex : bool, default=False
        Count affected children of unknown sex (pedigree sex not 1 or 2), as
        PLINK 1.9's ``--allow-no-sex``; by default their trios are dropped, as
        PLINK drops them (it ignores the phenotype of an ambiguous-sex individual).
    chunk_snps : int, default=10_000
        Sites counted at once (text is parsed ~16 MiB at a time).
    scheduler : None, default=None
        Parsing is sequential: only None.
    progress : bool, default=False
        Progress line on stderr (sites read; the total is unknown for a stream).

    Returns
    -------
    TransmissionCounts
        b, c, N, Mendel errors and the public annotations of the sites counted.

    Notes
    -----
    Per trio and site, with ``g`` the ALT dosages and ``h`` the number of
    heterozygous parents (the table rule of
    :func:`dpselect.apps.genomics.transmission_counts`),

    .. math::

        x = g_{child} - [g_{father} = 2] - [g_{mother} = 2],\quad
        b \mathrel{+}= x,\quad c \mathrel{+}= h - x \quad (0 \le x \le h).

    References
    ----------
    Spielman, R. S., McGinnis, R. E. & Ewens, W. J. (1993). Transmission test
    for linkage disequilibrium. Am. J. Hum. Genet. 52, 506-516.
    Danecek, P. et al. (2011). The variant call format and VCFtools.
    Bioinformatics 27, 2156-2158.

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> vcf, ped = os.path.join(d, "t.vcf"), os.path.join(d, "t.fam")
    >>> _ = open(ped, "w").write("F fa 0 0 1 1\nF mo 0 0 2 1\nF ch fa mo 1 2\n")
    >>> _ = open(vcf, "w").write("##fileformat=VCFv4.2\n##contig=<ID=1>\n"
    ...     '##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">\n'
    ...     "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tfa\tmo\tch\n"
    ...     "1\t10\trs1\tG\tA\t.\t.\t.\tGT\t0/1\t0/1\t1/1\n")
    >>> from dpselect.apps.genomics import transmission_counts
    >>> counts = transmission_counts(vcf, pedigree=ped)
    >>> counts.b.tolist(), counts.c.tolist(), counts.n_families, counts.annotations()
    ([2], [0], 1, [('1', 'rs1', 10, 'A', 'G')])
    """
    if pedigree is None:
        raise ValueError("pedigree: VCF/BCF input needs a PLINK-style .fam/.ped pedigree file to define the trios")
    if scheduler is not None:
        raise ValueError(
            "scheduler: VCF/BCF input is parsed sequentially and takes scheduler=None; convert "
            "it with plink --vcf to count on a Dask cluster"
        )
    chunk = chunk_snps
    bar = make_progress(progress, 0, "reading VCF", unit="sites")
    fam = read_pedigree(pedigree)
    rows = trios(fam, affected_only=bool(affected_only), allow_no_sex=bool(allow_no_sex), what="pedigree")
    if rows.shape[0] == 0:
        raise ValueError(
            f"pedigree: {str(pedigree)!r} has no complete {'affected ' if affected_only else ''}trio "
            "(child with father and mother in the pedigree)"
        )
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"path: {str(p)!r} is not a file")
    ids = fam[:, 1].astype(str)
    members = ids[rows[:, [1, 2, 0]].T.ravel()]  # fathers, mothers, children
    male = np.where(fam[rows[:, 0], 4] == "1", 64, 0).astype(np.uint8)[:, None]
    sites = None if p.name.lower().endswith(".bcf") else _text_sites(p, ids, members)
    if sites is None:
        sites = _htslib_sites(p, ids, members)
    parts, meta, multi = [], [], 0
    n = rows.shape[0]
    for block in sites:
        multi += block.multiallelic
        on_x = chromosome_kind(block.chrom) == "X"
        for a in range(0, block.codes.shape[0], chunk):
            g = block.codes[a : a + chunk].T
            parts.append(count_codes(g[:n], g[n : 2 * n], g[2 * n :], male, on_x[a : a + chunk]))
        meta.append(block)
        if bar is not None:
            bar.advance(block.codes.shape[0])
    if bar is not None:
        bar.close()
    if multi:
        warnings.warn(
            f"path: skipped {multi} multi-allelic site(s); split them with bcftools norm -m- to count them",
            UserWarning,
            stacklevel=3,
        )
    out = np.concatenate(parts, axis=1) if parts else np.zeros((3, 0), dtype=np.int64)
    col = [
        np.concatenate([getattr(m, name) for m in meta]) if meta else np.zeros(0, dtype=np.int64 if j == 2 else str)
        for j, name in enumerate(("chrom", "sid", "pos", "alt", "ref"))
    ]
    kind = chromosome_kind(col[0])
    keep = ~np.isin(kind, list(SKIPPED_KINDS))
    if not keep.all():
        warnings.warn(
            f"path: skipped {int((~keep).sum())} site(s) on Y / MT (no TDT: " + "; ".join(SKIPPED_KINDS.values()) + ")",
            UserWarning,
            stacklevel=3,
        )
    return TransmissionCounts(
        out[0][keep],
        out[1][keep],
        int(n),
        snp_ids=col[1][keep],
        mendel_errors=out[2][keep],
        chrom=col[0][keep],
        pos=col[2][keep].astype(np.int64),
        a1=col[3][keep],
        a2=col[4][keep],
    )


def _check_samples(path: Path, header: list[str], ids: np.ndarray) -> dict[str, int]:
    missing = sorted(set(ids.tolist()) - set(header))
    if missing:
        raise ValueError(
            f"pedigree: some trio members' individual ids are not sample names of the VCF "
            f"{str(path)!r} (ids are matched to the header's sample names)"
        )
    position = {s: j for j, s in enumerate(header)}
    if len(position) < len(header):  # positions, not names: a message names no field of a record
        second = next(j for j, s in enumerate(header) if header.index(s) != j)
        raise ValueError(
            f"path: the VCF {str(path)!r} header names one sample twice (sample columns "
            f"{header.index(header[second]) + 1} and {second + 1})"
        )
    return position


def _text_sites(path: Path, ids: np.ndarray, members: np.ndarray) -> Iterator[ChunkSites] | None:
    """Sites of a VCF text file, chunk by chunk (None for a BGZF-compressed BCF: htslib reads it)."""
    stream = text_chunks(path)
    head = b""
    try:
        for piece in stream:
            head += piece
            if head.startswith(b"BCF"):
                return None
            found = parse_header(head)
            if found is not None:
                break
        else:
            found = parse_header(head) if head else None
            if found is None:
                raise ValueError("not a VCF: no '#CHROM' header line")
    except StreamError as exc:
        raise ValueError(
            f"path: {str(path)!r} is truncated or corrupt after variant '(none)' ({str(exc).split(': ', 2)[-1]})"
        ) from None
    except UnicodeDecodeError:
        raise ValueError(f"path: {str(path)!r} is not a readable VCF/BCF file (its header is not UTF-8 text)") from None
    except ValueError as exc:  # parse_header's own messages: fixed text
        raise ValueError(f"path: {str(path)!r} is not a readable VCF/BCF file ({exc})") from None
    header, samples, start = found
    position = _check_samples(path, samples, ids)
    cols = np.array([position[s] for s in members], dtype=np.int64)
    parser = TextParser(header, len(samples), cols, str(path))
    return _parse_all(path, parser, head[start:], stream)


def _parse_all(path: Path, parser: TextParser, first: bytes, stream: Iterator[bytes]) -> Iterator[ChunkSites]:
    try:
        if first:
            yield parser.parse(first)
        for text in stream:
            yield parser.parse(text)
    except StreamError as exc:
        raise ValueError(
            f"path: {str(path)!r} is truncated or corrupt after variant {parser.last!r} ({str(exc).split(': ', 2)[-1]})"
        ) from None


def _htslib_sites(path: Path, ids: np.ndarray, members: np.ndarray, block: int = 4096) -> Iterator[ChunkSites]:
    """Sites of a BCF (or any file htslib reads) through cyvcf2, ``block`` sites at a time."""
    vcf = _open(path, [str(x) for x in ids])
    try:
        cols = np.array([_check_samples(path, list(vcf.samples), ids)[s] for s in members], dtype=np.int64)
        yield from _htslib_blocks(path, vcf, cols, block)
    finally:
        vcf.close()


def _htslib_blocks(path: Path, vcf: Any, cols: np.ndarray, block: int) -> Iterator[ChunkSites]:
    a = np.empty((block, cols.size), dtype=np.int16)
    b, poly = a.copy(), np.zeros(a.shape, dtype=bool)
    meta: list[tuple[str, str, int, str, str]] = []
    multi, sid = 0, "(none)"
    it = iter(vcf)
    while True:
        try:
            v = next(it)
        except StopIteration:
            v = None
        except Exception as exc:  # htslib: truncated / corrupt stream (OSError, bare Exception, ...)
            raise ValueError(
                f"path: {str(path)!r} is truncated or corrupt after variant {sid!r} ({type(exc).__name__} from htslib)"
            ) from None
        if v is not None and len(v.ALT) > 1:
            multi += 1
            continue
        if v is not None:
            sid = v.ID if v.ID is not None else f"{v.CHROM}:{v.POS}"
            try:
                gt = v.genotype.array()[cols]
            except Exception as exc:  # cyvcf2 raises a bare Exception without a GT field
                raise ValueError(f"path: variant {sid!r} of {str(path)!r} has no GT (genotype) field") from exc
            j = len(meta)
            a[j] = gt[:, 0]
            b[j] = gt[:, 1] if gt.shape[1] > 2 else -2
            poly[j] = (gt[:, 2:-1] >= 0).any(axis=1) if gt.shape[1] > 3 else False
            meta.append((v.CHROM, sid, int(v.POS), v.ALT[0] if v.ALT else ".", v.REF))
        if meta and (v is None or len(meta) == block):
            k = len(meta)
            chrom, name, pos, alt, ref = (
                np.array([m[i] for m in meta], dtype=np.int64 if i == 2 else str) for i in range(5)
            )
            on_x = (chromosome_kind(chrom) == "X")[:, None]
            yield ChunkSites(allele_codes(a[:k], b[:k], poly[:k], on_x), chrom, name, pos, alt, ref, multi, 0)
            meta, multi = [], 0
        if v is None:
            if multi:
                yield ChunkSites(
                    np.zeros((0, cols.size), dtype=np.uint8),
                    *(np.zeros(0, dtype=str),) * 2,
                    np.zeros(0, dtype=np.int64),
                    *(np.zeros(0, dtype=str),) * 2,
                    multiallelic=multi,
                    fallback=0,
                )
            return
