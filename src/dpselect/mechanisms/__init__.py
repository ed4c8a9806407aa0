"""Selection mechanisms: one module per family (see DESIGN.md)."""

from .base import Mechanism, NoisyMaxMechanism
from .classic import ExponentialMechanism, PermuteAndFlip, ReportNoisyMax
from .dampening import LocalDampening
from .release import SmoothSensitivityRelease
from .smooth import SmoothNoisyMax, SmoothPrivateSelection

__all__ = [
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
