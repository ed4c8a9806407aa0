"""The trio study's counts container: TDT transmission counts per SNP (the floor of the genomics rooms).

Built by the readers (:mod:`._io`) or from arrays; every selection and release of the
TDT takes one (:func:`dpselect.apps.genomics.select_top_snps`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ...._validation import check_counts, check_int
from ._annotated import Annotated, default_annotations

__all__ = ["TransmissionCounts"]


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
