"""dpselect: differentially private selection.

Classic global-sensitivity mechanisms (exponential mechanism, permute-and-flip,
report-noisy-max) and instance-based ones (smooth sensitivity, local
dampening, dataset-distance utilities, propose-test-release) behind one
interface, with exact output distributions and privacy audits.
See DESIGN.md and SPEC.md for the contract and the mathematics.
"""

from .accounting import Accountant, BudgetExceededError
from .mechanisms import (
    ExponentialMechanism,
    LocalDampening,
    Mechanism,
    NoisyMaxMechanism,
    PermuteAndFlip,
    ReportNoisyMax,
    SmoothNoisyMax,
    SmoothPrivateSelection,
    SmoothSensitivityRelease,
)
from .mechanisms.registry import MECHANISM_NAMES, make_mechanism
from .privacy import Privacy
from .problem import SelectionProblem
from .sensitivity import StepProfile

__version__ = "0.1.0"

__all__ = [
    "Accountant",
    "BudgetExceededError",
    "MECHANISM_NAMES",
    "ExponentialMechanism",
    "LocalDampening",
    "SmoothNoisyMax",
    "SmoothPrivateSelection",
    "SmoothSensitivityRelease",
    "make_mechanism",
    "Mechanism",
    "NoisyMaxMechanism",
    "PermuteAndFlip",
    "Privacy",
    "ReportNoisyMax",
    "SelectionProblem",
    "StepProfile",
    "__version__",
]
