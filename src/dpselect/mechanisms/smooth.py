"""Deprecated location: :mod:`dpselect.mechanisms.snm` and :mod:`dpselect.mechanisms.sps`.

Kept for one release so that ``from dpselect.mechanisms.smooth import ...``
keeps working; import from ``dpselect`` (or the two new modules) instead.
"""

from ..accounting import laplace_selection_log_delta
from .snm import SmoothNoisyMax, SNMParameters
from .sps import SmoothPrivateSelection, SPSParameters

__all__ = [
    "SNMParameters",
    "SPSParameters",
    "SmoothNoisyMax",
    "SmoothPrivateSelection",
    "laplace_selection_log_delta",
]
