"""PLINK 2-bit codes of VCF genotype calls: the text parser's byte tables and :func:`allele_codes`.

* The byte-class table (allele ``0`` / ``1`` / ``.`` -> 1 / 2 / 3, separator -> 4, tab -> 8, line
  end -> 16, any other byte -> 128) and the code tables that map the allele classes of a
  diploid (or a haploid) ``GT`` field to its PLINK code (``00`` two ALT, ``10`` one, ``11`` none,
  ``01`` missing), with the masks that test a field's class bytes as one ``uint32``: used by the
  vectorised text parser of :mod:`._vcftext`.
* :func:`allele_codes`: the same codes from htslib's allele indices (BCF input and the lines the
  text parser leaves to htslib).
"""

from __future__ import annotations

import numpy as np

__all__ = ["allele_codes"]


def _class_table() -> bytes:
    t = bytearray([128] * 256)
    for ch, c in ((b"0", 1), (b"1", 2), (b".", 3), (b"/", 4), (b"|", 4), (b"\t", 8), (b"\n", 16)):
        t[ch[0]] = c
    return bytes(t)


def _code_table() -> bytes:
    t = bytearray([255] * 256)
    for a in (1, 2, 3):
        for c in (1, 2, 3):
            t[a | c << 2] = 1 if 3 in (a, c) else (3, 2, 0)[(a == 2) + (c == 2)]
    return bytes(t)


_CLASSES = _class_table()
_CODES = _code_table()
#: The classes with the bytes that may end a GT inside a field (``:``, tab, line end) as one class, 8.
_GT_CLASSES = bytes(8 if ch in b":\t\n\r" else c for ch, c in enumerate(_CLASSES))
_GT_FIELD = np.uint32(0x08000400)
_HAPLOID_MASK, _HAPLOID_FIELD = np.uint32(0x0000FFFC), np.uint32(0x00000800)


def _field_codes() -> bytes:
    """Code by field key ``a | b << 2 | haploid << 4 | diploid << 5`` (allele classes a, b).

    A diploid call's PLINK code, 4 + a haploid call's (``0`` -> 11, ``1`` -> 00, ``.`` -> missing), 255 for
    anything else.
    """
    t = bytearray([255] * 256)
    for key in range(64):
        if key & 32 and not key & 16:
            t[key] = _CODES[key & 15]
        elif key & 16 and not key & 32 and key & 3:
            t[key] = 4 + (1, 3, 0, 1)[key & 3]
    return bytes(t)


_FIELD_CODES = _field_codes()
#: A field's class bytes (allele, separator, allele, tab) masked and compared as one little-endian uint32.
_MASK, _FIELD, _LAST = np.uint32(0xFFFCFFFC), np.uint32(0x08000400), np.uint32(0x10000400)
#: PLINK 2-bit code by ALT dosage (0, 1, 2); 1 is missing.
_DOSAGE_CODE = np.array([3, 2, 0], dtype=np.uint8)


def allele_codes(a: np.ndarray, b: np.ndarray, polyploid: np.ndarray, on_x: np.ndarray) -> np.ndarray:
    """PLINK 2-bit codes (uint8) from htslib allele indices of the first two GT slots (same shapes).

    ``a``, ``b``: allele index (-1 missing, -2 vector end: ``b = -2`` is a
    haploid call); ``polyploid``: True where a third allele slot is used;
    ``on_x``: broadcastable, True on chromosome X.  A diploid call counts ALT
    alleles (index > 0); a call with a missing allele, a polyploid call, and a
    haploid call off chromosome X are missing; a haploid call on X (a male's
    ``0`` / ``1``) is homozygous, as PLINK's VCF import reads it.
    """
    dosage = (a > 0).view(np.int8) + (b > 0).view(np.int8)
    haploid = (a >= 0) & (b == -2) & on_x
    dosage[haploid] = 2 * (a[haploid] > 0)
    code = _DOSAGE_CODE[dosage]
    code[((a < 0) | (b < 0) | polyploid) & ~haploid] = 1
    return code
