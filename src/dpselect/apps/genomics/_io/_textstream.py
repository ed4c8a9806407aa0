"""Text of a plain, gzip or BGZF-compressed file as chunks of whole lines (the VCF text reader's input).

* **BGZF** (what ``bgzip`` and htslib write: a series of gzip members of at
  most 64 KiB, each with its compressed size in a ``BC`` extra field; SAM/BAM
  format specification §4.1): the block boundaries are read from the headers
  and the blocks are inflated in groups on a thread pool (``zlib`` releases
  the GIL while inflating, so two cores inflate while the caller parses the
  previous chunk).  Inflated by Intel ISA-L through python-isal when it is
  installed (extra ``vcf``; ~6 GB/s against zlib's ~1 GB/s on a VCF of many
  samples), else by ``zlib``.  Each block is a complete gzip member, inflated
  with its CRC-32 and length checked.
* **gzip** (one or more members, e.g. Python's ``gzip``): one sequential
  ``zlib`` stream.
* **plain text**: read in large blocks.

A file that ends inside a block or a gzip member, or whose compressed data
is corrupt, raises :class:`StreamError` (a ValueError) naming the path; a
BGZF file without its end-of-file block gets a warning (as from htslib).
"""

from __future__ import annotations

import functools
import struct
import warnings
import zlib
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import BinaryIO, cast

__all__ = ["StreamError", "text_chunks"]


@functools.cache
def _inflater() -> tuple[ModuleType, tuple[type[Exception], ...]]:
    """The inflating module and its errors.

    Intel ISA-L's (python-isal, extra ``vcf``; the same gzip members, ~5x faster than zlib here) when installed,
    else ``zlib``; imported on first use.
    """
    try:
        from isal import isal_zlib
    except ImportError:  # pragma: no cover - isal is in the vcf extra
        return zlib, (zlib.error,)
    return isal_zlib, (zlib.error, cast(type[Exception], isal_zlib.error))


#: Decompressed bytes handed to the caller at once (cut at a line end).
CHUNK_BYTES = 1 << 24
#: Compressed bytes read (and, for BGZF, inflated as one task) at once.
_READ_BYTES = 1 << 21
#: The 28-byte empty block that ends a BGZF file.
BGZF_EOF = bytes.fromhex("1f8b08040000000000ff0600424302001b0003000000000000000000")


class StreamError(ValueError):
    """The compressed stream or the text ends early or is corrupt (the message says where)."""


def _is_bgzf(head: bytes) -> bool:
    return len(head) >= 18 and head[:4] == b"\x1f\x8b\x08\x04" and head[12:14] == b"BC"


def _bgzf_blocks(data: memoryview) -> tuple[list[tuple[int, int]], int, bool]:
    """The complete BGZF blocks at the start of ``data``.

    Their (offset, size), the bytes they span, and whether the bytes after them start with a valid block header
    (or are too short to tell).
    """
    blocks: list[tuple[int, int]] = []
    pos, n = 0, len(data)
    while pos + 18 <= n:
        if not _is_bgzf(bytes(data[pos : pos + 18])):
            return blocks, pos, False
        size = struct.unpack_from("<H", data, pos + 16)[0] + 1
        if pos + size > n:
            break
        blocks.append((pos, size))
        pos += size
    return blocks, pos, True


def _inflate(data: memoryview, blocks: list[tuple[int, int]]) -> list[bytes]:
    inflate = _inflater()[0].decompress
    return [inflate(data[a : a + s], 31) for a, s in blocks]  # joined once, into the caller's chunk


def _groups(data: memoryview, blocks: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """The blocks in runs of about ``CHUNK_BYTES`` inflated bytes.

    Sized by each block's ISIZE (its last 4 bytes): a highly compressed file (a VCF with many samples inflates
    ~50-fold) still gives pieces of a chunk's size.
    """
    groups: list[list[tuple[int, int]]] = [[]]
    size = 0
    for a, s in blocks:
        if size >= CHUNK_BYTES:
            groups.append([])
            size = 0
        groups[-1].append((a, s))
        size += struct.unpack_from("<I", data, a + s - 4)[0]
    return groups


def _bgzf_pieces(f: BinaryIO, path: Path, pool: ThreadPoolExecutor) -> Iterator[bytes]:
    rest = b""
    pending: list[Future[list[bytes]]] = []
    tail = b""
    while True:
        data = f.read(_READ_BYTES)
        final = not data
        buf = memoryview(rest + data)
        blocks, used, valid = _bgzf_blocks(buf)
        if blocks:
            tail = bytes(buf[used - blocks[-1][1] : used])
            for group in _groups(buf, blocks):
                pending.append(pool.submit(_inflate, buf, group))
        rest = bytes(buf[used:])
        while len(pending) > (0 if final or not valid else 1):  # one group inflates while the caller works
            yield from pending.pop(0).result()
        if not valid:
            raise StreamError(f"path: {str(path)!r} is corrupt: no BGZF block header after the last whole block")
        if final:
            break
    if rest:
        raise StreamError(f"path: {str(path)!r} is truncated: it ends inside a BGZF block")
    if tail != BGZF_EOF:
        warnings.warn(
            f"path: {str(path)!r} has no BGZF end-of-file block; it may be truncated", UserWarning, stacklevel=4
        )


def _gzip_pieces(f: BinaryIO, path: Path) -> Iterator[bytes]:
    d = _inflater()[0].decompressobj(31)
    while True:
        data = f.read(_READ_BYTES)
        if not data:
            break
        while data:
            yield d.decompress(data, CHUNK_BYTES)  # at most a chunk's bytes at once, the rest stays in the tail
            while d.unconsumed_tail:
                yield d.decompress(d.unconsumed_tail, CHUNK_BYTES)
            data = d.unused_data
            if d.eof and data:
                d = _inflater()[0].decompressobj(31)
    if not d.eof:
        raise StreamError(f"path: {str(path)!r} is truncated: the gzip stream ends before its end marker")


def _raw_pieces(f: BinaryIO) -> Iterator[bytes]:
    while data := f.read(_READ_BYTES):
        yield data


def text_chunks(path: Path, chunk_bytes: int | None = None) -> Iterator[bytes]:
    r"""Decompressed text of ``path`` in chunks of about ``chunk_bytes`` (``CHUNK_BYTES``), each ending with ``\n``.

    Raises :class:`StreamError` for a truncated or corrupt compressed stream.
    """
    chunk_bytes = CHUNK_BYTES if chunk_bytes is None else chunk_bytes
    with open(path, "rb") as f, ThreadPoolExecutor(2) as pool:
        head = f.read(18)
        f.seek(0)
        if _is_bgzf(head):
            pieces = _bgzf_pieces(f, path, pool)
        elif head[:2] == b"\x1f\x8b":
            pieces = _gzip_pieces(f, path)
        else:
            pieces = _raw_pieces(f)
        parts: list[bytes | memoryview] = []  # views: the text is copied once, by the join
        size = 0
        caught: tuple[type[Exception], ...] = (*_inflater()[1], StreamError)
        try:
            for piece in pieces:
                parts.append(piece)
                size += len(piece)
                cut = piece.rfind(b"\n") + 1 if size >= chunk_bytes else 0  # (a piece may hold no line end)
                if cut:  # whole lines up to the last line end of this piece
                    view = memoryview(piece)
                    parts[-1] = view[:cut]
                    yield b"".join(parts)
                    parts, size = [view[cut:]], len(piece) - cut
        except caught as exc:  # hand over the whole lines read so far, then fail
            text = b"".join(parts)
            if text.rfind(b"\n") >= 0:
                yield text[: text.rfind(b"\n") + 1]
            if isinstance(exc, StreamError):
                raise
            raise StreamError(f"path: {str(path)!r} is corrupt: {exc}") from None
        text = b"".join(parts)
        if text:
            yield text if text.endswith(b"\n") else text + b"\n"  # a last line without its end, as htslib
