"""Trio and case-control simulators (PLINK 1 filesets).

Private (an empty ``__all__``: nothing here is public): the face is :mod:`dpselect.apps.genomics`;
the names below are what the other rooms of the package use.
"""

from __future__ import annotations

from ._case_control import CaseControlSimulation as CaseControlSimulation
from ._case_control import simulate_case_control as simulate_case_control
from ._trios import simulate_trios as simulate_trios

#: Private room: nothing public (the genomics face exports what users see).
__all__: list[str] = []
