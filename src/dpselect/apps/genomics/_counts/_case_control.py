"""Case-control genotype and allele counts per SNP (the data of :func:`select_top_snps` for association tests).

Neighbour relations and what is public (mathematics §14): the SNP
annotations (CHR, SNP, BP, A1, A2) and the study's numbers of cases and
controls ``n_cases``, ``n_controls`` are public; every count is private.
"replace" (the default, as Uhler, Slavkovic & Fienberg 2013 and Simmons &
Berger 2016): one individual's genotypes are replaced, the status kept, so
neighbours have the same sizes; missing calls may appear or disappear.
"add_remove": one individual is added or removed (the sizes move by one).
The distance utilities never use the sizes (their table graph covers both
relations); the chi2-score baselines need the sizes and fully called SNPs.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from ...._params import Rule, int_at_least
from ...._validation import check_counts
from ._annotated import Annotated, default_annotations

__all__ = ["CaseControlCounts"]


def _table(x: ArrayLike, name: str, width: int, m: int | None) -> np.ndarray:
    try:
        arr = np.asarray(x)
    except ValueError:
        raise ValueError(f"{name} must be a rectangular array of counts") from None
    arr = check_counts(arr, name, ndim=2)
    if arr.shape[1] != width:
        raise ValueError(f"{name} must have shape (m, {width}), got {arr.shape}")
    if m is not None and arr.shape[0] != m:
        raise ValueError(f"{name} must have {m} rows (one per SNP), got {arr.shape[0]}")
    arr.flags.writeable = False
    return arr


def _size(n: int | None, name: str, rows: np.ndarray, alleles: np.ndarray) -> int:
    if n is None:  # every SNP fully called: the row sums are the (public) group size
        sums = rows.sum(axis=1)
        if (sums != sums[0]).any():
            raise ValueError(f"{name} is required when the SNPs' genotype counts have different totals (missing calls)")
        v = int(sums[0])
    else:
        v = _GROUP_SIZE(n, name)
    if (rows.sum(axis=1) > v).any() or (alleles.sum(axis=1) > 2 * v).any():
        raise ValueError(f"{name}: some SNP counts more individuals (or alleles) than {name} allows")
    return v


#: A group size: an int >= 0 (None: the genotype row totals).
_GROUP_SIZE = int_at_least(0)


#: Count arrays and annotations: checked in ``__init__`` against each other (shapes, one row per SNP).
def _two_d(value: object, name: str) -> object:
    if value is not None and np.ndim(value) != 2:  # type: ignore[arg-type]
        raise ValueError(f"{name} must be a 2-D array of counts (one row per SNP)")
    return value


def _one_d(value: object, name: str) -> object:
    if value is not None and (isinstance(value, (str, bytes)) or np.ndim(value) != 1):  # type: ignore[arg-type]
        raise ValueError(f"{name} must be None or a 1-D sequence, one entry per SNP")
    return value


_GENOTYPES = Rule("an (m, 3) array-like of counts (ints >= 0)", check=_two_d)
_ALLELES = Rule("None or an (m, 2) array-like of counts (ints >= 0)", check=_two_d)
_TEXT = Rule("None or m strings, one per SNP", check=_one_d)
_POSITIONS = Rule("None or m integers, one per SNP", check=_one_d)


class CaseControlCounts(Annotated):
    """Genotype and allele counts of cases and controls per SNP (private: never print them next to a release).

    ``cases`` / ``controls``: (m, 3) int64 genotype counts with 2, 1, 0
    copies of A1, the order of PLINK 1.9 ``--model``'s AFF / UNAFF
    "a/b/c" (with ``--keep-allele-order``).  ``allele_cases`` /
    ``allele_controls``: (m, 2) int64 counts of A1, A2 as ``--assoc`` counts
    them; by default ``[2a + b, b + 2c]`` from the genotype counts (they
    differ on chromosome X, where ``--model`` counts females only and a
    male's allele counts once in ``--assoc``).  ``n_cases``, ``n_controls``:
    the public numbers of cases and controls in the study (default: the
    genotype row totals, which must then be equal on every SNP).
    ``snp_ids``, ``chrom``, ``pos``, ``a1``, ``a2``: the public annotations
    (defaults: ``snp0, snp1, ...``, chromosome "0", position 0, alleles
    "1" / "2").  Instances are immutable (read-only arrays).

    Parameters
    ----------
    cases : array-like of int, shape (m, 3)
        Genotype counts (2, 1, 0 copies of A1) of the cases.
    controls : array-like of int, shape (m, 3)
        Genotype counts (2, 1, 0 copies of A1) of the controls.
    n_cases : int, default=None
        Public number of cases (>= every row total).
    n_controls : int, default=None
        Public number of controls (>= every row total).
    allele_cases : array-like of int, shape (m, 2), default=None
        A1 and A2 allele counts of the cases.
    allele_controls : array-like of int, shape (m, 2), default=None
        A1 and A2 allele counts of the controls.
    snp_ids : array-like of str, default=None
        Public SNP ids.
    chrom : array-like of str, default=None
        Public chromosome codes.
    pos : array-like of int, default=None
        Base-pair positions.
    a1 : array-like of str, default=None
        Allele 1 (the allele counted by the first genotype column).
    a2 : array-like of str, default=None
        Allele 2.

    Examples
    --------
    >>> from dpselect.apps.genomics import CaseControlCounts
    >>> cc = CaseControlCounts([[30, 50, 20], [10, 40, 50]], [[20, 50, 30], [9, 42, 49]])
    >>> cc.n_cases, cc.allele_cases.tolist()
    (100, [[110, 90], [60, 140]])
    """

    __slots__ = ("allele_cases", "allele_controls", "cases", "controls", "n_cases", "n_controls")
    cases: np.ndarray
    controls: np.ndarray
    allele_cases: np.ndarray
    allele_controls: np.ndarray
    n_cases: int
    n_controls: int

    #: What each constructor argument accepts (the arrays are checked against each other in ``__init__``).
    _parameter_constraints: ClassVar[dict[str, Rule]] = {
        "cases": _GENOTYPES,
        "controls": _GENOTYPES,
        "n_cases": _GROUP_SIZE.or_none(),
        "n_controls": _GROUP_SIZE.or_none(),
        "allele_cases": _ALLELES,
        "allele_controls": _ALLELES,
        "snp_ids": _TEXT,
        "chrom": _TEXT,
        "pos": _POSITIONS,
        "a1": _TEXT,
        "a2": _TEXT,
    }

    def __init__(
        self,
        cases: ArrayLike,
        controls: ArrayLike,
        *,
        n_cases: int | None = None,
        n_controls: int | None = None,
        allele_cases: ArrayLike | None = None,
        allele_controls: ArrayLike | None = None,
        snp_ids: ArrayLike | None = None,
        chrom: ArrayLike | None = None,
        pos: ArrayLike | None = None,
        a1: ArrayLike | None = None,
        a2: ArrayLike | None = None,
    ) -> None:
        g1 = _table(cases, "cases", 3, None)
        m = g1.shape[0]
        g0 = _table(controls, "controls", 3, m)
        alleles = []
        for name, given, g in (("allele_cases", allele_cases, g1), ("allele_controls", allele_controls, g0)):
            if given is None:
                derived = np.stack([2 * g[:, 0] + g[:, 1], g[:, 1] + 2 * g[:, 2]], axis=1)
                derived.flags.writeable = False
                alleles.append(derived)
            else:
                alleles.append(_table(given, name, 2, m))
        n1 = _size(n_cases, "n_cases", g1, alleles[0])
        n0 = _size(n_controls, "n_controls", g0, alleles[1])
        init = object.__setattr__
        for name, value in (
            ("cases", g1),
            ("controls", g0),
            ("allele_cases", alleles[0]),
            ("allele_controls", alleles[1]),
            ("n_cases", n1),
            ("n_controls", n0),
        ):
            init(self, name, value)
        self._init_annotations(*default_annotations(m, snp_ids, chrom, pos, a1, a2))

    @property
    def n_snps(self) -> int:
        """Number of SNPs m."""
        return int(self.cases.shape[0])

    def __reduce__(self) -> tuple[Any, ...]:
        t = self._text
        kw = {
            "n_cases": self.n_cases,
            "n_controls": self.n_controls,
            "allele_cases": self.allele_cases,
            "allele_controls": self.allele_controls,
            "snp_ids": t["snp_ids"],
            "chrom": t["chrom"],
            "pos": self.pos,
            "a1": t["a1"],
            "a2": t["a2"],
        }
        return (_rebuild, (self.cases, self.controls, kw))

    def __repr__(self) -> str:  # no counts: they are private
        return f"CaseControlCounts({self.n_snps} SNPs, {self.n_cases} cases, {self.n_controls} controls)"


def _rebuild(cases: np.ndarray, controls: np.ndarray, kw: dict[str, Any]) -> CaseControlCounts:
    return CaseControlCounts(cases, controls, **kw)
