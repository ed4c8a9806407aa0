"""Text of a plain, gzip or BGZF-compressed file as chunks of whole lines (the VCF text reader's input).

* **BGZF** (what ``bgzip`` and htslib write: a series of gzip members of at
  most 64 KiB, each with its compressed size in a ``BC`` extra field; SAM/BAM
  format specification §4.1): the block boundaries are read from the headers
  and the blocks are inflated in groups on a thread pool (``zlib`` releases
  the GIL while inflating, so two cores inflate while the caller parses the
  previous chunk).  Each block is a complete gzip member, inflated with its
  CRC-32 and length checked.
* **gzip** (one or more members, e.g. Python's ``gzip``): one sequential
  ``zlib`` stream.
* **plain text**: read in large blocks.

A file that ends inside a block or a gzip member, or whose compressed data
is corrupt, raises :class:`StreamError` (a ValueError) naming the path; a
BGZF file without its end-of-file block gets a warning (as from htslib).
"""

from __future__ import annotations

import struct
import warnings
import zlib
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import BinaryIO

__all__ = ["StreamError", "text_chunks"]

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
    """(offset, size) of the complete BGZF blocks at the start of ``data``, the bytes they span, and
    whether the bytes after them start with a valid block header (or are too short to tell)."""
    blocks: list[tuple[int, int]] = []
    pos, n = 0, len(data)
    while pos + 18 <= n:
        if not _is_bgzf(bytes(data[pos:pos + 18])):
            return blocks, pos, False
        size = struct.unpack_from("<H", data, pos + 16)[0] + 1
        if pos + size > n:
            break
        blocks.append((pos, size))
        pos += size
    return blocks, pos, True


def _inflate(data: memoryview, blocks: list[tuple[int, int]]) -> bytes:
    return b"".join([zlib.decompress(data[a:a + s], 31) for a, s in blocks])


def _bgzf_pieces(f: BinaryIO, path: Path, pool: ThreadPoolExecutor) -> Iterator[bytes]:
    rest = b""
    pending: list[Future[bytes]] = []
    tail = b""
    while True:
        data = f.read(_READ_BYTES)
        final = not data
        buf = memoryview(rest + data)
        blocks, used, valid = _bgzf_blocks(buf)
        if blocks:
            tail = bytes(buf[used - blocks[-1][1]:used])
            pending.append(pool.submit(_inflate, buf, blocks))
        rest = bytes(buf[used:])
        while len(pending) > (0 if final or not valid else 1):  # one group inflates while the caller works
            yield pending.pop(0).result()
        if not valid:
            raise StreamError(f"path: {str(path)!r} is corrupt: no BGZF block header after the last whole block")
        if final:
            break
    if rest:
        raise StreamError(f"path: {str(path)!r} is truncated: it ends inside a BGZF block")
    if tail != BGZF_EOF:
        warnings.warn(f"path: {str(path)!r} has no BGZF end-of-file block; it may be truncated", UserWarning,
                      stacklevel=4)


def _gzip_pieces(f: BinaryIO, path: Path) -> Iterator[bytes]:
    d = zlib.decompressobj(31)
    while True:
        data = f.read(_READ_BYTES)
        if not data:
            break
        while data:
            yield d.decompress(data)
            data = d.unused_data
            if d.eof and data:
                d = zlib.decompressobj(31)
    if not d.eof:
        raise StreamError(f"path: {str(path)!r} is truncated: the gzip stream ends before its end marker")


def _raw_pieces(f: BinaryIO) -> Iterator[bytes]:
    while data := f.read(_READ_BYTES):
        yield data


def text_chunks(path: Path, chunk_bytes: int | None = None) -> Iterator[bytes]:
    """Decompressed text of ``path`` in chunks of about ``chunk_bytes`` (``CHUNK_BYTES``), each ending with ``\\n``.

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
        parts: list[bytes] = []
        size = 0
        try:
            for piece in pieces:
                parts.append(piece)
                size += len(piece)
                cut = piece.rfind(b"\n") + 1
                if size >= chunk_bytes and cut:  # whole lines up to the last line end of this piece
                    parts[-1] = piece[:cut]
                    yield b"".join(parts)
                    parts, size = [piece[cut:]], len(piece) - cut
        except (zlib.error, StreamError) as exc:  # hand over the whole lines read so far, then fail
            text = b"".join(parts)
            if text.rfind(b"\n") >= 0:
                yield text[:text.rfind(b"\n") + 1]
            if isinstance(exc, StreamError):
                raise
            raise StreamError(f"path: {str(path)!r} is corrupt: {exc}") from None
        text = b"".join(parts)
        if text:
            yield text if text.endswith(b"\n") else text + b"\n"  # a last line without its end, as htslib
