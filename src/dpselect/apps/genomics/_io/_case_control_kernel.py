"""Case-control genotype and allele counts on packed PLINK 1 ``.bed`` bytes: bit masks and popcounts.

A SNP record holds one 2-bit code per individual (individual ``i`` at bits
``2 (i % 4)`` of byte ``i // 4``): ``00`` two copies of A1, ``10`` one,
``11`` none, ``01`` missing.  Read as little-endian 64-bit words, a word
holds 32 codes; a group of individuals (the cases, say) is a word mask ``M``
with bit ``2j`` set for each member in the word.  With ``w`` a record word,

* ``lo = popcount(w & M)``: members whose code has its low bit set (01, 11),
* ``hi = popcount(w & (M << 1))``: high bit set (10, 11),
* ``both = popcount(w & (w >> 1) & M)``: code 11,

summed over the words, give the group's counts with no decoding:
``#11 = both`` (no copy of A1), ``#10 = hi - both`` (one), ``#01 = lo - both``
(missing) and ``#00 = |M| - lo - hi + both`` (two).  That is three AND,
three popcounts and three additions per group and word of 32 individuals:
a SNP of 2,000 individuals is 63 words (PLINK 1.9 counts the same way, with
its own bit-sliced popcounts).  Every step is a NumPy ufunc over a block of
SNPs (words x SNPs, reduced along the first axis), so the GIL is released
for whole blocks and threads run chunks in parallel.

Chromosome X (PLINK 1.9's ``--model`` / ``--assoc``): the genotype counts
are those of the females only (a male's X is one allele: no genotype); the
allele counts add each male's allele once (a male's ``00`` is one A1, ``11``
one A2; a heterozygous male call is a haploid error, missing).  Individuals
of unknown sex take part only under ``--allow-no-sex`` and then count as
females on X, as PLINK does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ROWS", "CaseControlPlan", "count_case_control"]

#: Rows of the counts :func:`count_case_control` returns, in order.
ROWS = (
    "case_2",
    "case_1",
    "case_0",
    "control_2",
    "control_1",
    "control_0",
    "case_a1",
    "case_a2",
    "control_a1",
    "control_a2",
)

_EVEN = np.uint64(0x5555_5555_5555_5555)
_ONE = np.uint64(1)

#: Words summed in uint16 at once (a word adds at most 64).
_WORDS_U16 = 1023

#: SNP record bytes turned into words at once (the block's work arrays take about 4 times its size; 1 MiB blocks
#: measured as fast as 256 KiB ones on one thread, with a quarter of the NumPy calls, so of the GIL handovers).
_BLOCK_BYTES = 1 << 20


def _word_mask(member: np.ndarray) -> np.ndarray:
    """(n_words,) little-endian uint64 masks with bit ``2 (i % 32)`` of word ``i // 32`` set for each member i."""
    n_words = -(-member.size // 32)
    bits = np.zeros(n_words * 32, dtype=np.uint64)
    bits[: member.size] = member
    shifts = 2 * np.arange(32, dtype=np.uint64)
    return np.bitwise_or.reduce(bits.reshape(n_words, 32) << shifts, axis=1)


@dataclass(frozen=True)
class CaseControlPlan:
    """Word masks of the groups counted: cases and controls; on X their females and males apart."""

    masks: np.ndarray  # (2, n_words, 1) uint64: cases, controls (all sexes counted)
    x_masks: np.ndarray  # (4, n_words, 1): female cases, female controls, male cases, male controls
    sizes: np.ndarray  # (2,) int64 group sizes
    x_sizes: np.ndarray  # (4,)
    n_bytes: int  # bytes per SNP record

    @classmethod
    def from_status(cls, case: np.ndarray, control: np.ndarray, male: np.ndarray) -> CaseControlPlan:
        """``case`` / ``control`` / ``male``: (n,) bool per individual (X: the non-male members are diploid)."""
        case, control, male = (np.asarray(v, dtype=bool) for v in (case, control, male))
        groups = [case, control]
        x_groups = [case & ~male, control & ~male, case & male, control & male]
        return cls(
            np.stack([_word_mask(g) for g in groups])[:, :, None],
            np.stack([_word_mask(g) for g in x_groups])[:, :, None],
            np.array([g.sum() for g in groups], dtype=np.int64),
            np.array([g.sum() for g in x_groups], dtype=np.int64),
            -(-case.size // 4),
        )


def _popcount_sum(x: np.ndarray, mask: np.ndarray, t: np.ndarray, pc: np.ndarray) -> np.ndarray:
    """(s,) int64 sums over the words (axis 0) of ``popcount(x & mask)``; ``t`` / ``pc``: work arrays like x."""
    np.bitwise_and(x, mask, out=t)
    np.bitwise_count(t, out=pc)
    if pc.shape[0] <= _WORDS_U16:  # a uint16 sum (at most 64 a word) is ~5x faster than an int64 one
        return np.add.reduce(pc, axis=0, dtype=np.uint16).astype(np.int64)
    return sum(
        np.add.reduce(pc[a : a + _WORDS_U16], axis=0, dtype=np.uint16).astype(np.int64)
        for a in range(0, pc.shape[0], _WORDS_U16)
    )


def _group_counts(w: np.ndarray, both: np.ndarray, masks: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """(groups, 3, s) int64 counts of 2, 1, 0 copies of A1 from (n_words, s) words and their ``w & w >> 1``."""
    out = np.empty((masks.shape[0], 3, w.shape[1]), dtype=np.int64)
    t = np.empty_like(w)
    pc = np.empty(w.shape, dtype=np.uint8)
    for g in range(masks.shape[0]):
        m = masks[g]
        lo = _popcount_sum(w, m, t, pc)
        hi = _popcount_sum(w, m << _ONE, t, pc)
        hom0 = _popcount_sum(both, m, t, pc)
        out[g, 0] = sizes[g] - lo - hi + hom0
        out[g, 1] = hi - hom0
        out[g, 2] = hom0
    return out


def _alleles(geno: np.ndarray) -> np.ndarray:
    """(groups, 2, s) A1, A2 allele counts of diploid genotype counts (groups, 3, s)."""
    return np.stack([2 * geno[:, 0] + geno[:, 1], geno[:, 1] + 2 * geno[:, 2]], axis=1)


def _words(records: np.ndarray, n_words: int) -> np.ndarray:
    """(n_words, k) little-endian words of k SNP records (zero padding: no group has a bit there)."""
    k, n_bytes = records.shape
    buf = np.zeros((k, 8 * n_words), dtype=np.uint8)
    buf[:, :n_bytes] = records
    return np.ascontiguousarray(buf.view("<u8").T)


def count_case_control(records: np.ndarray, plan: CaseControlPlan, x_mask: np.ndarray | None = None) -> np.ndarray:
    """(10, k) int64 counts (rows :data:`ROWS`) of k SNP records (a (k, bytes per SNP) uint8 array).

    ``x_mask``: (k,) bool, True for the SNPs on chromosome X (genotypes of
    the females, alleles of both sexes, a male's once).  Work memory is
    about four times :data:`_BLOCK_BYTES` whatever k.
    """
    k = records.shape[0]
    n_words = plan.masks.shape[1]
    out = np.empty((10, k), dtype=np.int64)
    step = max(1, _BLOCK_BYTES // (8 * n_words))
    for a in range(0, k, step):
        z = min(a + step, k)
        w = _words(records[a:z], n_words)
        both = w & (w >> _ONE)
        x = np.zeros(z - a, dtype=bool) if x_mask is None else np.asarray(x_mask[a:z], dtype=bool)
        on_x = np.flatnonzero(x)
        if on_x.size == 0:
            geno = _group_counts(w, both, plan.masks, plan.sizes)
            out[:6, a:z] = geno.reshape(6, -1)
            out[6:, a:z] = _alleles(geno).reshape(4, -1)
            continue
        auto = np.flatnonzero(~x)
        if auto.size:
            geno = _group_counts(w[:, auto], both[:, auto], plan.masks, plan.sizes)
            out[:6, a + auto] = geno.reshape(6, -1)
            out[6:, a + auto] = _alleles(geno).reshape(4, -1)
        geno = _group_counts(w[:, on_x], both[:, on_x], plan.x_masks, plan.x_sizes)
        alleles = _alleles(geno[:2])
        alleles[:, 0] += geno[2:, 0]  # a male's 00: one A1
        alleles[:, 1] += geno[2:, 2]  # a male's 11: one A2 (10, heterozygous haploid: missing)
        out[:6, a + on_x] = geno[:2].reshape(6, -1)
        out[6:, a + on_x] = alleles.reshape(4, -1)
    return out
