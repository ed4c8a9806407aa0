"""The PLINK-style pedigree file of the VCF/BCF reader: :func:`read_pedigree`.

A ``.fam`` / ``.ped`` file (family, individual, father, mother, sex, phenotype; further ``.ped``
genotype columns dropped; ``#`` lines skipped) whose individual ids are matched to the VCF sample
names, so they must be unique.  Read by :func:`dpselect.apps.genomics._io._vcf.vcf_transmission_counts`.
:func:`trios` finds the complete trios of a pedigree table (both TDT readers).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ...._params import validate_params
from .._rules import path_like

__all__ = ["read_pedigree", "trios"]

_PEDIGREE = path_like("a str or path-like (.fam/.ped file)")


@validate_params({"pedigree": _PEDIGREE})
def read_pedigree(pedigree: str | os.PathLike[str]) -> np.ndarray:
    r"""The rows of a PLINK-style .fam/.ped file (extra .ped columns dropped).

    Parameters
    ----------
    pedigree : str or path-like
        The file: family, individual, father, mother, sex and phenotype columns
        (whitespace-separated; ``#`` lines skipped); individual ids unique.

    Returns
    -------
    ndarray of object, shape (n, 6)
        One row per individual, the six columns as text.

    Examples
    --------
    >>> import os, tempfile
    >>> from dpselect.apps.genomics import read_pedigree
    >>> ped = os.path.join(tempfile.mkdtemp(), "t.fam")
    >>> _ = open(ped, "w").write("F fa 0 0 1 1\nF mo 0 0 2 1\nF ch fa mo 1 2\n")
    >>> read_pedigree(ped)[2].tolist()
    ['F', 'ch', 'fa', 'mo', '1', '2']
    """
    p = Path(pedigree)
    if not p.is_file():
        raise FileNotFoundError(f"pedigree: {str(p)!r} is not a file")
    rows = [line.split() for line in p.read_text().splitlines() if line.strip() and not line.startswith("#")]
    if not rows:
        raise ValueError(f"pedigree: {str(p)!r} is empty")
    bad = [i for i, r in enumerate(rows) if len(r) < 6]
    if bad:
        raise ValueError(
            f"pedigree: {str(p)!r} row {bad[0] + 1} has {len(rows[bad[0]])} columns, expected "
            "at least 6 (family, individual, father, mother, sex, phenotype)"
        )
    fam = np.array([r[:6] for r in rows], dtype=object)
    _, first, inverse = np.unique(fam[:, 1].astype(str), return_index=True, return_inverse=True)
    again = np.flatnonzero(first[inverse] != np.arange(len(fam)))
    if again.size:  # rows, not ids: a message names no field of a record
        raise ValueError(
            f"pedigree: {str(p)!r} rows {first[inverse[again[0]]] + 1} and {again[0] + 1} have the "
            "same individual id; the individual ids are matched to the VCF sample names and must be "
            "unique"
        )
    return fam


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
