"""The PLINK-style pedigree file of the VCF/BCF reader: :func:`read_pedigree`.

A ``.fam`` / ``.ped`` file (family, individual, father, mother, sex, phenotype; further ``.ped``
genotype columns dropped; ``#`` lines skipped) whose individual ids are matched to the VCF sample
names, so they must be unique.  Read by :func:`dpselect.apps.genomics._vcf.vcf_transmission_counts`.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..._params import validate_params
from ._rules import path_like

__all__ = ["read_pedigree"]

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
