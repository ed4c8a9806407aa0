"""Selection mechanisms: one module per family (see DESIGN.md)."""

from .base import Mechanism, NoisyMaxMechanism
from .classic import ExponentialMechanism, PermuteAndFlip, ReportNoisyMax
from .dampening import LocalDampening
from .registry import MECHANISM_NAMES, make_mechanism, resolve_mechanism
from .release import SmoothSensitivityRelease
from .snm import SmoothNoisyMax
from .sps import SmoothPrivateSelection

__all__ = [
    "MECHANISM_NAMES",
    "make_mechanism",
    "resolve_mechanism",
    "ExponentialMechanism",
    "LocalDampening",
    "Mechanism",
    "NoisyMaxMechanism",
    "PermuteAndFlip",
    "ReportNoisyMax",
    "SmoothNoisyMax",
    "SmoothPrivateSelection",
    "SmoothSensitivityRelease",
]
