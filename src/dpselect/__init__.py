"""dpselect: differentially private selection.

Classic global-sensitivity mechanisms (exponential mechanism, permute-and-flip,
report-noisy-max) and instance-based ones (smooth sensitivity, local
dampening, dataset-distance utilities, a private sensitivity bound) behind one
interface, with exact output distributions and privacy audits.
See the documentation: *Architecture* (the contract) and *The mathematics*
(every guarantee, cited as "mathematics §N").

Subpackages ``dpselect.apps`` (applications), ``dpselect.analysis`` (exact
accuracy, error laws, audits), ``dpselect.noise`` and ``dpselect.accounting``
are reachable as attributes after ``import dpselect``; the heavier ones are
imported on first access, so ``import dpselect`` stays cheap.

Examples
--------
>>> import dpselect
>>> p = dpselect.SelectionProblem([22, 8, 17, 4, 0], monotone=True)
>>> mech = dpselect.PermuteAndFlip(1.0)
>>> round(float(dpselect.analysis.accuracy(mech, p)), 3)
0.997
>>> dpselect.apps.counts.__name__
'dpselect.apps.counts'
"""

from __future__ import annotations

import importlib
from typing import Any

from ._warnings import PrivacyLeakWarning
from .accounting import Accountant, BudgetExceededError
from .mechanisms import (
    MECHANISM_NAMES,
    ExponentialMechanism,
    LocalDampening,
    Mechanism,
    NoisyMaxMechanism,
    PermuteAndFlip,
    PrivateSensitivityBound,
    ReportNoisyMax,
    SmoothNoisyMax,
    SmoothPrivateSelection,
    SmoothSensitivityRelease,  # a numeric release, not a selection mechanism
    make_mechanism,
    select_top_k,
)
from .output_law import OutputLaw
from .privacy import Privacy
from .problem import SelectionProblem
from .sensitivity import StepProfile

__version__ = "0.1.0"

#: Subpackages imported on first attribute access (PEP 562).
_LAZY_SUBMODULES = ("accounting", "analysis", "apps", "experiments", "mechanisms", "noise", "typing")

#: The core objects (Accountant, OutputLaw, Privacy, SelectionProblem, StepProfile, the warning),
#: the selection mechanisms and make_mechanism / select_top_k, and one numeric release
#: (SmoothSensitivityRelease, not a selection mechanism).
__all__ = [
    "MECHANISM_NAMES",
    "Accountant",
    "BudgetExceededError",
    "ExponentialMechanism",
    "LocalDampening",
    "Mechanism",
    "NoisyMaxMechanism",
    "OutputLaw",
    "PermuteAndFlip",
    "Privacy",
    "PrivacyLeakWarning",
    "PrivateSensitivityBound",
    "ReportNoisyMax",
    "SelectionProblem",
    "SmoothNoisyMax",
    "SmoothPrivateSelection",
    "SmoothSensitivityRelease",
    "StepProfile",
    "__version__",
    "make_mechanism",
    "select_top_k",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY_SUBMODULES:
        module = importlib.import_module(f".{name}", __name__)  # dpselect.apps reaches its own modules lazily
        globals()[name] = module
        return module
    raise AttributeError(f"module 'dpselect' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_SUBMODULES))
