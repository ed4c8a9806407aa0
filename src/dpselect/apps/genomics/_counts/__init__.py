"""The count containers every genomics room builds on: TDT transmissions and case-control genotypes.

Private (an empty ``__all__``: nothing here is public): the face is :mod:`dpselect.apps.genomics`;
the names below are what the other rooms of the package use.
"""

from __future__ import annotations

from ._case_control import CaseControlCounts as CaseControlCounts
from ._transmission import TransmissionCounts as TransmissionCounts

#: Private room: nothing public (the genomics face exports what users see).
__all__: list[str] = []
