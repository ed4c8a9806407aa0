r"""VCF text -> PLINK 2-bit genotype codes of the trio samples, vectorised over many lines at once.

The VCF reader's parser for ``.vcf`` / ``.vcf.gz`` text (chunks of whole
lines from the text stream module).  Most lines of a genotyping-array or
imputed-and-hard-called VCF have ``FORMAT`` exactly ``GT`` and diploid,
biallelic calls of three bytes (``0/1``, ``1|1``, ``./.``, ``.|0`` ...), so
the sample columns of such a line are ``4 x #samples`` bytes that end at the
line end.  For every line of a chunk at once:

1. The chunk is mapped byte by byte (``bytes.translate``) to classes: allele
   ``0`` / ``1`` / ``.`` -> 1 / 2 / 3, separator ``/`` or ``|`` -> 4, tab -> 8,
   line end -> 16, any other byte -> 128.
2. The ``4 x #samples`` bytes before each line end are copied as one row of a
   (lines, samples) ``uint32`` array (a strided window view indexed by the
   line ends, no per-line Python), and a line is *fixed-width* when every
   field is ``allele, separator, allele, tab`` (the last one ending in a line
   end) -- one mask and one comparison per field -- and the four bytes before
   the samples are ``\tGT\t``.
3. The two allele classes of the trio samples' fields give the PLINK code
   (``00`` two ALT, ``10`` one, ``11`` none, ``01`` missing: any ``.``) by a
   16-entry table (the tables, and :func:`allele_codes`, are in :mod:`._vcfcodes`).
4. The columns before ``FORMAT`` (exactly eight: CHROM ... INFO) of the
   fixed-width lines are gathered into one short buffer and split at once.

Lines left (variable-width fields) whose FORMAT is ``GT`` or starts with
``GT:`` (GATK's ``GT:AD:DP:GQ:PL``) take a second vectorised path: the tabs
of the chunk locate every column (a line must have exactly ``8 + #samples``
of them), and the trio samples' fields are read when each starts with a
3-byte diploid call or a 1-byte haploid one (a male's ``1`` on chromosome
X) followed by ``:``, a tab or the line end.

Every other line (multi-digit allele indices, other ploidies, FORMATs without a leading GT,
malformed lines) is parsed by htslib through ``cyvcf2`` (``Writer.variant_from_string`` with the
file's header) and coded by :func:`allele_codes` -- the same rules as for BCF
input -- so the fast path never guesses: a line it cannot read exactly is
read by htslib.  Multi-allelic sites (an ALT with a comma) are skipped on
both paths.

htslib's own log lines can quote a record (a genotype line it cannot parse),
so :func:`quiet_htslib` switches them off whenever a VCF/BCF is opened; its
errors still raise, and the messages raised here name the file and the last
variant id read, never a field of a record.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ._chromosomes import chromosome_kind
from ._vcfcodes import (
    _CLASSES,
    _CODES,
    _FIELD,
    _FIELD_CODES,
    _GT_CLASSES,
    _GT_FIELD,
    _HAPLOID_FIELD,
    _HAPLOID_MASK,
    _LAST,
    _MASK,
    allele_codes,
)

__all__ = ["ChunkSites", "TextParser", "allele_codes", "parse_header", "quiet_htslib"]


def quiet_htslib() -> None:
    """Switch htslib's log off (cyvcf2's ``set_htslib_log_level(0)``): its stderr lines can quote a record."""
    from cyvcf2 import cyvcf2

    set_level = getattr(cyvcf2, "set_htslib_log_level", None)
    if set_level is not None:
        set_level(0)


_PREFIX_COLUMNS = 8


def parse_header(text: bytes) -> tuple[str, list[str], int] | None:
    """(header text, sample names, offset of the first site) if ``text`` holds the whole header, else None.

    Raises ValueError (``"not a VCF"`` in the message) when the text cannot be a VCF header.
    """
    if not text.startswith(b"#"):
        raise ValueError("not a VCF: the file does not start with a '#' header line")
    pos = 0
    while True:
        end = text.find(b"\n", pos)
        if end < 0:
            return None
        line = text[pos:end]
        if not line.startswith(b"#"):
            raise ValueError("not a VCF: the header has no '#CHROM' line")
        if line.startswith(b"#CHROM"):
            cols = line.rstrip(b"\r").decode("utf-8", "replace").split("\t")
            if cols[:8] != ["#CHROM", "POS", "ID", "REF", "ALT", "QUAL", "FILTER", "INFO"]:
                raise ValueError("not a VCF: the '#CHROM' line does not name the eight VCF columns")
            return text[: end + 1].decode("utf-8", "replace"), cols[9:], end + 1
        pos = end + 1


#: Lines at least this long are found by ``bytes.find`` (memchr, one call a line) rather than a NumPy pass.
_LONG_LINE = 4096


def _line_ends(chunk: bytes, buf: np.ndarray) -> np.ndarray:
    r"""Offsets of the ``\n`` of ``chunk``.

    One ``find`` per line when the first line is long (many samples: faster than comparing every byte), else one
    vectorised pass.
    """
    first = chunk.find(b"\n")
    if first < _LONG_LINE:
        return np.flatnonzero(buf == 10)
    out, find, pos = [], chunk.find, first
    while pos >= 0:
        out.append(pos)
        pos = find(b"\n", pos + 1)
    return np.array(out, dtype=np.int64)


@dataclass
class ChunkSites:
    """Codes and public columns of the sites of one chunk that are counted (multi-allelic ones dropped)."""

    codes: np.ndarray  # (k, 3 n_trios) uint8 PLINK codes: fathers, mothers, children
    chrom: np.ndarray
    sid: np.ndarray
    pos: np.ndarray
    alt: np.ndarray
    ref: np.ndarray
    multiallelic: int
    fallback: int


class TextParser:
    """Parses chunks of VCF body lines for the trio samples at ``cols`` (fathers, mothers, children)."""

    def __init__(self, header: str, n_samples: int, cols: np.ndarray, path: str) -> None:
        self.header = header
        self.n_samples = n_samples
        self.cols = np.asarray(cols, dtype=np.int64)
        self.path = path
        self.last = "(none)"
        self._writer: Any = None

    def parse(self, chunk: bytes) -> ChunkSites:
        """Sites of ``chunk`` (whole lines, ending with a line end) in file order."""
        buf = np.frombuffer(chunk, dtype=np.uint8)
        ends = _line_ends(chunk, buf)
        starts = np.zeros_like(ends)
        starts[1:] = ends[:-1] + 1
        k = ends.size
        chrom = np.empty(k, dtype=object)
        sid, alt, ref, pos = chrom.copy(), chrom.copy(), chrom.copy(), np.zeros(k, dtype=np.int64)
        out = np.empty((k, self.cols.size), dtype=np.uint8)
        multi = np.zeros(k, dtype=bool)
        keep = np.ones(k, dtype=bool)
        slow = np.arange(k)
        for path in (self._fixed_width, self._gt_first):
            if not slow.size:
                break
            fast, codes, columns = path(chunk, buf, starts, ends, slow)
            if fast.size:
                chrom[fast], sid[fast], pos[fast], alt[fast], ref[fast] = columns
                multi[fast] = np.char.find(columns[3].astype(str), ",") >= 0
                out[fast] = codes
                slow = np.setdiff1d(slow, fast, assume_unique=True)
        if slow.size:
            self._fallback(chunk, starts[slow], ends[slow], slow, out, keep, multi, (chrom, sid, pos, alt, ref))
        keep &= ~multi
        if k and sid[k - 1] is not None:
            self.last = str(sid[k - 1])
        return ChunkSites(
            out[keep],
            chrom[keep].astype(str),
            sid[keep].astype(str),
            pos[keep],
            alt[keep].astype(str),
            ref[keep].astype(str),
            int(multi.sum()),
            int(slow.size),
        )

    def _fixed_width(
        self, chunk: bytes, buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, lines: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
        """Those of ``lines`` whose samples are all 3-byte GT fields.

        Returns (line indices, codes, [chrom, id, pos, alt, ref]); ``lines``: every line of the chunk.
        """
        width = 4 * self.n_samples
        first = ends - (width - 1)  # where the samples start if every field has 3 bytes
        cand = np.flatnonzero(first - 4 > starts)
        f = first[cand]
        cand = cand[(buf[f - 1] == 9) & (buf[f - 2] == ord("T")) & (buf[f - 3] == ord("G")) & (buf[f - 4] == 9)]
        if cand.size == 0 or self.n_samples == 0:
            return np.zeros(0, dtype=np.int64), np.zeros((0, self.cols.size), dtype=np.uint8), []
        classes = np.frombuffer(chunk.translate(_CLASSES), dtype=np.uint8)
        rows = sliding_window_view(classes, width)[first[cand]]  # (lines, 4 samples) copy
        fields = rows.view("<u4")
        ok = ((fields[:, :-1] & _MASK) == _FIELD).all(axis=1) & ((fields[:, -1] & _MASK) == _LAST)
        use = np.flatnonzero(ok)
        good, meta = self._prefix(buf, starts[cand[use]], first[cand[use]] - 3)
        use = use[good]
        sel = np.take(fields, self.cols, axis=1)  # the trio samples' fields, (lines, 3 n_trios) uint32
        if use.size < cand.size:  # (rows copied only when some line is left to htslib)
            cand, sel = cand[use], sel[use]
        sel = sel.view(np.uint8)  # (lines, 4 x 3 n_trios) class bytes
        key = sel[:, 0::4] | (sel[:, 2::4] << 2)
        codes = np.frombuffer(key.tobytes().translate(_CODES), dtype=np.uint8).reshape(key.shape)
        return cand, codes, meta

    def _gt_first(
        self, chunk: bytes, buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, lines: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
        """Those of ``lines`` with FORMAT ``GT`` or ``GT:...`` and simple trio GT fields.

        FORMAT as GATK's ``GT:AD:DP:GQ:PL``; the trio samples' fields start with a 3-byte diploid or a 1-byte
        haploid GT: (line indices, codes, [chrom, id, pos, alt,
        ref]).

        The tabs of the chunk locate every column (a line must have exactly
        ``8 + #samples`` of them); only the trio samples' fields are read,
        each ``allele, separator, allele`` or ``allele`` followed by ``:``,
        a tab or the line end.  Codes as :func:`allele_codes` gives them for
        htslib's reading (a haploid call: homozygous on X, a male's; missing
        elsewhere).  Any other line is left to htslib.
        """
        none: tuple[np.ndarray, np.ndarray, list[np.ndarray]] = (
            np.zeros(0, dtype=np.int64),
            np.zeros((0, self.cols.size), dtype=np.uint8),
            [],
        )
        tabs = np.flatnonzero(buf == 9)
        lo = np.searchsorted(tabs, starts[lines])
        n_tabs = np.searchsorted(tabs, ends[lines]) - lo
        whole = n_tabs == _PREFIX_COLUMNS + self.n_samples
        cand, lo = lines[whole], lo[whole]
        if cand.size == 0 or self.n_samples == 0:
            return none
        fmt = tabs[lo + _PREFIX_COLUMNS - 1] + 1  # where FORMAT starts
        after = buf[fmt + 2]
        ok = (buf[fmt] == ord("G")) & (buf[fmt + 1] == ord("T")) & ((after == ord(":")) | (after == 9))
        cand, lo, fmt = cand[ok], lo[ok], fmt[ok]
        # the first 4 bytes after every tab of the chunk, in file order (one unaligned uint32 gather with
        # increasing indices: cache-friendly)
        after = np.ndarray((buf.size - 4,), dtype="<u4", buffer=buf, offset=1, strides=(1,))  # [i]: bytes i+1..
        inside = int(np.searchsorted(tabs, buf.size - 4))  # tabs whose 4 bytes after lie in the chunk
        four = np.empty(tabs.size, dtype="<u4")
        four[:inside] = after[tabs[:inside]]
        for j in range(inside, tabs.size):  # (at most 3) the bytes after the tab, padded with NUL (no class)
            four[j] = int.from_bytes(chunk[tabs[j] + 1 : tabs[j] + 5].ljust(4, b"\0"), "little")
        classes = np.frombuffer(four.tobytes().translate(_GT_CLASSES), dtype="<u4")
        # per tab, one byte: the PLINK code of a diploid GT (allele, separator, allele, then ':' / tab / line
        # end); 4 + the code of a haploid one on X (allele, then the same ends); 255 anything else
        key = ((classes & 3) | ((classes >> 14) & 12)).astype(np.uint8)
        key |= ((classes & _MASK) == _GT_FIELD).view(np.uint8) << 5
        key |= ((classes & _HAPLOID_MASK) == _HAPLOID_FIELD).view(np.uint8) << 4
        code = np.frombuffer(key.tobytes().translate(_FIELD_CODES), dtype=np.uint8)
        width = _PREFIX_COLUMNS + self.n_samples
        if lo.size * width == code.size and (lo == lo[0] + width * np.arange(lo.size)).all():
            # every line of the chunk: the tabs are the lines' rows; take the trio samples' columns
            code_rows = np.take(code.reshape(lo.size, width), _PREFIX_COLUMNS + self.cols, axis=1)
        else:
            code_rows = code[lo[:, None] + _PREFIX_COLUMNS + self.cols[None, :]]  # the tab before each field
        good = (code_rows != 255).all(axis=1)
        good_prefix, meta = self._prefix(buf, starts[cand[good]], fmt[good])
        use = np.flatnonzero(good)[good_prefix]
        codes = code_rows[use]
        haploid = codes >= 4
        if haploid.any():
            codes[haploid] &= 3
            codes[haploid & (chromosome_kind(meta[0]) != "X")[:, None]] = 1  # haploid off X: missing (as htslib)
        return cand[use], codes, meta

    def _prefix(self, buf: np.ndarray, a: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """Mask of the lines whose bytes a..z-1 (up to the tab before FORMAT) are 8 columns with an integer POS.

        Also their CHROM, ID, POS, ALT, REF (decoded, in one split of the gathered bytes).
        """
        good = np.ones(a.size, dtype=bool)
        while True:
            aa, zz = a[good], z[good]
            length = zz - aa
            if length.size == 0:
                return good, [np.zeros(0, dtype=str)] * 2 + [np.zeros(0, dtype=np.int64)] + [np.zeros(0, dtype=str)] * 2
            offset = np.concatenate([[0], np.cumsum(length)[:-1]]).astype(np.int64)
            text = buf[np.repeat(aa - offset, length) + np.arange(int(length.sum()))]
            tabs = np.add.reduceat((text == 9).view(np.int8), offset, dtype=np.int64)
            if (tabs != _PREFIX_COLUMNS).any():
                good[np.flatnonzero(good)[tabs != _PREFIX_COLUMNS]] = False
                continue
            tok = np.array(text.tobytes().split(b"\t")[:-1], dtype=bytes).reshape(-1, _PREFIX_COLUMNS)
            digits = np.char.isdigit(tok[:, 1])
            if not digits.all():  # left to htslib, which reports the bad POS
                good[np.flatnonzero(good)[~digits]] = False
                continue
            break
        chrom = np.char.decode(tok[:, 0], "utf-8", "replace")
        pos = tok[:, 1].astype(np.int64)
        sid = np.char.decode(tok[:, 2], "utf-8", "replace").astype(object)
        unnamed = sid == "."
        if unnamed.any():
            sid[unnamed] = [f"{c}:{p}" for c, p in zip(chrom[unnamed], pos[unnamed])]
        return good, [
            chrom,
            sid,
            pos,
            np.char.decode(tok[:, 4], "utf-8", "replace"),
            np.char.decode(tok[:, 3], "utf-8", "replace"),
        ]

    def _fallback(
        self,
        chunk: bytes,
        starts: np.ndarray,
        ends: np.ndarray,
        lines: np.ndarray,
        out: np.ndarray,
        keep: np.ndarray,
        multi: np.ndarray,
        meta: tuple[np.ndarray, ...],
    ) -> None:
        """Htslib (cyvcf2) parses the lines the fixed-width path left; their codes and columns go to ``out``."""
        if self._writer is None:
            from cyvcf2 import Writer

            quiet_htslib()
            self._writer = Writer.from_string(os.devnull, self.header)
        chrom, sid, pos, alt, ref = meta
        n = lines.size
        a = np.full((n, self.cols.size), -1, dtype=np.int16)
        b, poly = a.copy(), np.zeros(a.shape, dtype=bool)
        for j, (s, e, i) in enumerate(zip(starts.tolist(), ends.tolist(), lines.tolist())):
            text = chunk[s:e].rstrip(b"\r").decode("utf-8", "replace")
            if not text:
                keep[i] = False
                continue
            try:
                v = self._writer.variant_from_string(text)
            except Exception:  # htslib: a line it cannot parse (its message quotes the line: not shown)
                before = str(sid[i - 1]) if i > 0 and sid[i - 1] is not None else self.last
                raise ValueError(
                    f"path: {self.path!r} is truncated or corrupt after variant {before!r} "
                    "(htslib cannot parse the next line)"
                ) from None
            name = v.ID if v.ID is not None else f"{v.CHROM}:{v.POS}"
            chrom[i], sid[i], pos[i], ref[i] = v.CHROM, name, int(v.POS), v.REF
            alt[i] = v.ALT[0] if v.ALT else "."
            if len(v.ALT) > 1:
                multi[i] = True
                continue
            try:
                gt = v.genotype.array()[self.cols]
            except Exception as exc:  # cyvcf2 raises a bare Exception without a GT field
                raise ValueError(f"path: variant {name!r} of {self.path!r} has no GT (genotype) field") from exc
            a[j] = gt[:, 0]
            b[j] = gt[:, 1] if gt.shape[1] > 2 else -2
            if gt.shape[1] > 3:
                poly[j] = (gt[:, 2:-1] >= 0).any(axis=1)
        on_x = (chromosome_kind(chrom[lines].astype(str)) == "X")[:, None]
        out[lines] = allele_codes(a, b, poly, on_x)
