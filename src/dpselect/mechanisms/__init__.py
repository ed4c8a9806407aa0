"""Selection mechanisms: one module per family (see DESIGN.md)."""

from .base import Mechanism, NoisyMaxMechanism
from .classic import ExponentialMechanism, PermuteAndFlip, ReportNoisyMax

__all__ = [
    "ExponentialMechanism",
    "Mechanism",
    "NoisyMaxMechanism",
    "PermuteAndFlip",
    "ReportNoisyMax",
]
