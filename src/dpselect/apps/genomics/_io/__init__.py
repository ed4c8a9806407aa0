"""PLINK 1 / PLINK 2 / BGEN / VCF readers, chunking and the counting kernels.

Private (an empty ``__all__``: nothing here is public): the face is :mod:`dpselect.apps.genomics`;
the names below are what the other rooms of the package use.  The VCF reader needs the ``vcf`` extra and
is imported on first use of its names.
"""

from __future__ import annotations

from ._case_control_reader import case_control_counts as case_control_counts
from ._filters import filter_snps as filter_snps
from ._plink import BED_MAGIC as BED_MAGIC
from ._progress import make_progress as make_progress
from ._tdt_reader import transmission_counts as transmission_counts

#: Private room: nothing public (the genomics face exports what users see).
__all__: list[str] = []

#: Names served by the VCF reader, imported on first use (it needs the ``vcf`` extra).
VCF_NAMES = ("read_pedigree", "vcf_transmission_counts")


def __getattr__(name: str) -> object:
    if name in VCF_NAMES:
        from . import _vcf

        return getattr(_vcf, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
