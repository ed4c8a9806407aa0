"""The trio table, the counts' container and the reference kernel: genotypes -> TDT transmission counts.

Shared by the PLINK and the VCF readers (neither imports the other; both count
with the packed-code table kernel).

Chromosomes follow PLINK's codes: 1-22 (and any other name) autosomal, X / 23
(male children receive only the mother's allele there, sex from the pedigree),
XY / 25 (pseudo-autosomal: counted as an autosome, as PLINK does), Y / 24 and
MT / 26 (haploid, not transmitted by both parents: no TDT; skipped, as PLINK's
``--tdt`` skips them).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..._validation import check_counts, check_int
from ._annotated import Annotated, default_annotations

__all__ = ["TransmissionCounts", "chromosome_kind", "chromosome_runs", "trios"]

#: Chromosome kinds whose SNPs carry no TDT (skipped with a warning by the readers).
SKIPPED_KINDS = {
    "Y": "chromosome Y is haploid and passed from father to son only",
    "MT": "mitochondrial DNA is passed from the mother only",
}


def _transmissions(x: ArrayLike, name: str) -> np.ndarray:
    try:
        arr = np.asarray(x)
    except ValueError:
        raise ValueError(f"{name} must be a 1-D array of counts") from None
    arr = check_counts(arr, name, ndim=1)
    arr.flags.writeable = False
    return arr


class TransmissionCounts(Annotated):
    """TDT counts per SNP (private data: never print them next to a private release).

    ``b`` / ``c``: transmissions of allele 1 / allele 2 by heterozygous
    parents (int64, one per SNP; PLINK's T / U); ``n_families``: number of
    trios (the public N of the TDT's neighbour relation, one family
    replaced); ``mendel_errors``: trios with a Mendelian-inconsistent call
    per SNP (zeros by default).  ``snp_ids``, ``chrom``, ``pos``, ``a1``,
    ``a2``: the public annotations of each SNP (``.bim`` columns 2, 1, 4, 5,
    6; for a VCF ID, CHROM, POS, ALT, REF; defaults ``snp0, snp1, ...``,
    "0", 0, "1", "2").  ``b`` counts transmissions of A1: PLINK 1.9's A1
    *with* ``--keep-allele-order`` (without that flag PLINK re-chooses A1 as
    the minor allele and may swap T and U).

    The text annotations are held as ASCII bytes (a quarter of the memory of
    ``str`` arrays); ``snp_ids``, ``chrom``, ``a1`` and ``a2`` are ``str``
    arrays made on first access (then kept), and :meth:`annotations` decodes
    only the rows asked for.  Instances are immutable (read-only arrays).

    Parameters
    ----------
    b : array-like of int, shape (m,)
        Transmissions of allele 1 per SNP (>= 0).
    c : array-like of int, shape (m,)
        Transmissions of allele 2 per SNP (>= 0, ``b + c <= 2 * n_families``).
    n_families : int
        Number of trios N (>= 1, public).
    snp_ids : array-like of str, default=None
        Public SNP ids.
    mendel_errors : array-like of int, shape (m,), default=None
        Trios with a Mendelian-inconsistent call per SNP (zeros when None).
    chrom : array-like of str, default=None
        Public chromosome codes.
    pos : array-like of int, default=None
        Base-pair positions.
    a1 : array-like of str, default=None
        Allele 1 (the allele ``b`` counts).
    a2 : array-like of str, default=None
        Allele 2.

    Examples
    --------
    >>> from dpselect.apps.genomics import TransmissionCounts
    >>> tc = TransmissionCounts([90, 52, 50], [20, 48, 50], 150)
    >>> tc.b.tolist(), tc.n_families, tc.snp_ids.tolist()
    ([90, 52, 50], 150, ['snp0', 'snp1', 'snp2'])
    """

    __slots__ = ("b", "c", "mendel_errors", "n_families")
    b: np.ndarray
    c: np.ndarray
    n_families: int
    mendel_errors: np.ndarray

    def __init__(
        self,
        b: ArrayLike,
        c: ArrayLike,
        n_families: int,
        *,
        snp_ids: ArrayLike | None = None,
        mendel_errors: ArrayLike | None = None,
        chrom: ArrayLike | None = None,
        pos: ArrayLike | None = None,
        a1: ArrayLike | None = None,
        a2: ArrayLike | None = None,
    ) -> None:
        n = check_int(n_families, "n_families", minimum=1)
        bb, cc = _transmissions(b, "b"), _transmissions(c, "c")
        if bb.shape != cc.shape:
            raise ValueError(f"b and c must have the same shape, got {bb.shape} and {cc.shape}")
        if (bb + cc > 2 * n).any():  # the message quotes no count: they are private
            raise ValueError("b + c must be <= 2 * n_families on every SNP")
        m = bb.size
        errors = (
            np.zeros(m, dtype=np.int64) if mendel_errors is None else _transmissions(mendel_errors, "mendel_errors")
        )
        if errors.shape != (m,):
            raise ValueError(f"mendel_errors must have length {m} (one per SNP), got shape {errors.shape}")
        errors.flags.writeable = False
        init = object.__setattr__
        for name, value in (("b", bb), ("c", cc), ("n_families", n), ("mendel_errors", errors)):
            init(self, name, value)
        self._init_annotations(*default_annotations(m, snp_ids, chrom, pos, a1, a2))

    @property
    def n_snps(self) -> int:
        """Number of SNPs m."""
        return int(self.b.size)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (
            _rebuild,
            (self.b, self.c, self.n_families, {**self._text, "pos": self.pos, "mendel_errors": self.mendel_errors}),
        )

    def __repr__(self) -> str:  # no counts: they are private
        return f"TransmissionCounts({self.b.size} SNPs, {self.n_families} families)"


def _rebuild(b: np.ndarray, c: np.ndarray, n: int, kw: dict[str, Any]) -> TransmissionCounts:
    return TransmissionCounts(b, c, n, **kw)


def chromosome_runs(codes: Any) -> tuple[np.ndarray, np.ndarray]:
    """Kinds ("A", "X", "XY", "Y" or "MT") and lengths of the runs of equal chromosome codes (str or bytes).

    Each run is named once (a ``.bim`` is sorted by chromosome, so there are
    a few dozen runs), for one comparison per SNP in all.
    """
    a = np.asarray(codes)
    if a.dtype.kind not in "SU":
        a = a.astype(str)
    a = a.ravel()
    if a.size == 0:
        return np.empty(0, dtype="<U2"), np.empty(0, dtype=np.int64)
    heads = np.flatnonzero(np.concatenate(([True], a[1:] != a[:-1])))
    uniq, inverse = np.unique(a[heads], return_inverse=True)
    kinds = {
        "X": "X",
        "23": "X",
        "Y": "Y",
        "24": "Y",
        "XY": "XY",
        "25": "XY",
        "PAR1": "XY",
        "PAR2": "XY",
        "MT": "MT",
        "M": "MT",
        "26": "MT",
    }
    texts = [u.decode("utf-8", "replace") if isinstance(u, bytes) else str(u) for u in uniq.tolist()]
    names = [u.upper()[3:] if u.upper().startswith("CHR") else u.upper() for u in texts]
    run_kind = np.array([kinds.get(x, "A") for x in names], dtype="<U2")[np.asarray(inverse).ravel()]
    return run_kind, np.diff(np.append(heads, a.size))


def chromosome_kind(codes: Any) -> np.ndarray:
    """PLINK chromosome codes (``1``, ``chr7``, ``X``, ``23``, ``XY``, ``MT`` ...) -> "A", "X", "XY", "Y" or "MT"."""
    return np.repeat(*chromosome_runs(codes))


def trios(fam: np.ndarray, *, affected_only: bool = True, allow_no_sex: bool = False, what: str = "path") -> np.ndarray:
    """(child, father, mother) row indices of the complete trios of a .fam table (one per parent pair).

    With ``affected_only`` the child must be affected (phenotype 2) and, unless
    ``allow_no_sex``, of known sex (1 or 2): PLINK 1.9 ignores the phenotype
    of an individual of ambiguous sex (its ``--allow-no-sex`` keeps it), so
    ``--tdt`` drops such a child's trio.

    Full siblings (a second child of the same parent pair) are dropped: the
    first child in file order is kept.  A pedigree where one individual is in
    two kept trios (half-siblings: a parent with two partners; or three
    generations: a child who is also a parent) is refused with a ValueError
    naming ``what``: one individual's replacement would then move two trios,
    so a SNP's table by up to two moves, twice the sensitivity every bound
    of :mod:`dpselect.apps.genomics` assumes.
    """
    key = {(f, i): r for r, (f, i) in enumerate(zip(fam[:, 0], fam[:, 1]))}
    seen: set[tuple[int, int]] = set()
    used: dict[int, int] = {}
    out = []
    for r, row in enumerate(fam):
        fa, mo = key.get((row[0], row[2])), key.get((row[0], row[3]))
        affected = row[5] == "2" and (allow_no_sex or row[4] in ("1", "2"))
        if fa is None or mo is None or (affected_only and not affected) or (fa, mo) in seen:
            continue
        for who in (r, fa, mo):
            if who in used:
                raise ValueError(  # rows, not ids: a message names no field of a record
                    f"{what}: the individual of row {who + 1} is in two trios (the children of rows "
                    f"{used[who] + 1} and {r + 1}): half-sibling or multi-generation pedigrees make one "
                    "individual part of two families, which doubles the TDT sensitivity; keep one trio per "
                    "individual (e.g. plink --remove the other children)"
                )
            used[who] = r
        seen.add((fa, mo))
        out.append((r, fa, mo))
    return np.array(out, dtype=np.int64).reshape(-1, 3)
