"""TDT counting on packed PLINK 1 ``.bed`` bytes: table lookups on the 2-bit codes, no genotype matrix.

A SNP-major ``.bed`` record holds one 2-bit code per individual, four to a
byte (individual ``i`` in byte ``i // 4`` at bits ``2 (i % 4)``):
``00`` two copies of A1, ``10`` one, ``11`` none, ``01`` missing.  For one
trio the three raw codes (father, mother, child) form a 6-bit index
``f | m << 2 | c << 4``; a 64-entry table maps it to the trio's contribution
``(b, c, Mendel error)`` packed in one ``uint32`` (10 + 10 + 12 bits), so a
SNP's counts are sums of table entries over trios.  On chromosome X the
index gets a 7th bit for a male child and a second table applies
(:func:`trio_contribution`, PLINK 1.9's rule).  The packed sums are taken over
blocks of at most 511 trios (at most 1022 per field, no carry between
fields) and unpacked into the caller's counts (any integer dtype holding
twice the number of trios).

Per SNP block the record bytes are transposed once (individual bytes
become rows, so gathering the trios' bytes copies whole rows), shifted and
masked in place: O(#trios) byte operations per SNP, all NumPy ufuncs and
``take`` that release the GIL, so Dask's threads run chunks in parallel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["PACKED_TABLE", "TrioPlan", "count_codes", "count_packed", "trio_contribution"]

#: Copies of allele 1 by raw 2-bit PLINK code (3 = missing).
CODE_COPIES = (2, 3, 1, 0)

#: Largest number of trios whose packed table entries are summed in one uint32 (fields of 10 bits).
_SUM_BLOCK = 511

#: Gathered bytes (3 x trios x SNPs) held at once by :func:`count_packed` (1 MiB: measured as fast as 4 MiB,
#: the work set stays in cache, and it is a quarter of the memory per thread).
_BLOCK_BYTES = 1 << 20


def trio_contribution(father: int, mother: int, child: int, male_x: bool = False) -> tuple[int, int, int]:
    """(b, c, Mendel error) of one trio at one SNP; genotypes as copies of A1 (0, 1, 2; 3 = missing).

    Autosomes (and X with a female or unknown-sex child, and the pseudo-autosomal
    XY): with ``x = child - [father = 2] - [mother = 2]`` and ``h`` the number
    of heterozygous parents, a consistent trio (``0 <= x <= h``) adds
    ``b += x``, ``c += h - x``; otherwise it is a Mendel error.  On X with a
    male child (``male_x``) PLINK 1.9's ``--tdt`` additionally accepts a
    homozygous child that only the mother explains (the son's X is his
    mother's): it adds the mother's transmission if she is heterozygous and
    nothing for the father (checked against ``plink1.9 --tdt`` on all 64
    code combinations).  A missing call adds nothing.
    """
    if 3 in (father, mother, child):
        return 0, 0, 0
    het = int(father == 1) + int(mother == 1)
    x = child - int(father == 2) - int(mother == 2)
    if 0 <= x <= het:
        return x, het - x, 0
    if male_x and ((child == 0 and mother < 2) or (child == 2 and mother > 0)):
        return int(mother == 1 and child == 2), int(mother == 1 and child == 0), 0
    return 0, 0, 1


def _table() -> np.ndarray:
    out = np.zeros(128, dtype=np.uint32)
    for idx in range(128):
        f, m, c = (CODE_COPIES[(idx >> s) & 3] for s in (0, 2, 4))
        b, u, e = trio_contribution(f, m, c, male_x=bool(idx & 64))
        out[idx] = b | u << 10 | e << 20
    return out


#: uint32 contributions indexed by ``father | mother << 2 | child << 4 | male-child-on-X << 6`` (raw codes).
PACKED_TABLE = _table()


@dataclass(frozen=True)
class TrioPlan:
    """Where each trio's codes sit in a SNP record: byte offsets, bit shifts, male-child flags."""

    byte: np.ndarray  # (3n,) int64: fathers, then mothers, then children
    shift: np.ndarray  # (3n, 1) uint8
    male: np.ndarray  # (n, 1) uint8: 64 for a male child, else 0
    n: int

    @classmethod
    def from_rows(cls, rows: np.ndarray, male_child: np.ndarray) -> TrioPlan:
        """``rows``: (n, 3) (child, father, mother) individual indices; ``male_child``: (n,) bool."""
        cols = np.ascontiguousarray(rows[:, [1, 2, 0]].T).ravel().astype(np.int64)
        return cls(
            cols // 4,
            (2 * (cols % 4)).astype(np.uint8)[:, None],
            np.where(np.asarray(male_child, dtype=bool), 64, 0).astype(np.uint8)[:, None],
            int(rows.shape[0]),
        )


def count_packed(
    records: np.ndarray, plan: TrioPlan, x_mask: np.ndarray | None = None, out: np.ndarray | None = None
) -> np.ndarray:
    """(3, k) rows b, c, Mendel errors of k SNP records (a (k, bytes per SNP) uint8 array, e.g. a memmap).

    ``x_mask``: (k,) bool, True for the SNPs on chromosome X (male children use
    the X table there).  ``out``: a (3, k) integer array the counts are added
    to (default: new int64 zeros); each count is at most ``2 * plan.n`` (a
    trio adds at most 2 to b or c and 1 to the Mendel errors), so any dtype
    holding that is exact.  Work memory is bounded by about ``3 * _BLOCK_BYTES``
    whatever k.
    """
    k = records.shape[0]
    n = plan.n
    if out is None:
        out = np.zeros((3, k), dtype=np.int64)
    step = max(1, _BLOCK_BYTES // max(1, 3 * n))
    for a in range(0, k, step):
        z = min(a + step, k)
        g = np.take(np.ascontiguousarray(records[a:z].T), plan.byte, axis=0)  # (3n, s) bytes
        g >>= plan.shift
        g &= 3
        count_codes(
            g[:n], g[n : 2 * n], g[2 * n :], plan.male, None if x_mask is None else x_mask[a:z], out=out[:, a:z]
        )
    return out


def count_codes(
    father: np.ndarray,
    mother: np.ndarray,
    child: np.ndarray,
    male: np.ndarray,
    x_mask: np.ndarray | None = None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """(3, s) rows b, c, Mendel errors from raw 2-bit codes: three (n_trios, s) uint8 arrays (any strides).

    ``male``: (n_trios, 1) uint8, 64 for a male child (:class:`TrioPlan`);
    ``x_mask``: (s,) bool, True for the SNPs on chromosome X; ``out``: a (3, s)
    integer array the counts are added to (default: new int64 zeros).  The
    code arrays may be overwritten when writeable (``father`` holds the table
    index; no full-size temporary is made).
    """
    n, s = father.shape
    if out is None:
        out = np.zeros((3, s), dtype=np.int64)
    idx = father if father.flags.writeable else father.copy()
    mother = mother if mother.flags.writeable else mother.copy()
    child = child if child.flags.writeable else child.copy()
    mother <<= 2
    child <<= 4
    idx |= mother
    idx |= child
    if x_mask is not None and x_mask.any():
        np.bitwise_or(idx, male, out=idx, where=x_mask[None, :])
    for t in range(0, n, _SUM_BLOCK):
        v = np.take(PACKED_TABLE, idx[t : t + _SUM_BLOCK]).sum(axis=0, dtype=np.uint32)
        out[0] += v & 1023
        out[1] += (v >> 10) & 1023
        out[2] += v >> 20
    return out
