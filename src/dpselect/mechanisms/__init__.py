"""Selection mechanisms: one module per family (see the documentation's Architecture page).

Selection mechanisms (``select`` / ``probabilities`` / ``privacy`` on a
:class:`~dpselect.problem.SelectionProblem`): classic (EM, PF, RNM), snm,
sps, dampening, sensitivity_bound; by name through the registry.

Numeric releases (not selection mechanisms): :class:`SmoothSensitivityRelease`
adds noise to one real number (module ``release``).  Sparse vector:
:class:`AboveThreshold` (module ``sparse_vector``) on integer queries.
"""

from .base import Mechanism, NoisyMaxMechanism
from .classic import ExponentialMechanism, PermuteAndFlip, ReportNoisyMax
from .dampening import LocalDampening
from .registry import MECHANISM_NAMES, make_mechanism, resolve_mechanism
from .release import SmoothSensitivityRelease  # a numeric release, not a selection mechanism
from .sensitivity_bound import PrivateSensitivityBound
from .snm import SmoothNoisyMax
from .sparse_vector import AboveThreshold  # sparse vector on integer queries, not a selection mechanism
from .sps import SmoothPrivateSelection

__all__ = [
    # selection mechanisms
    "MECHANISM_NAMES",
    "make_mechanism",
    "resolve_mechanism",
    "ExponentialMechanism",
    "LocalDampening",
    "Mechanism",
    "NoisyMaxMechanism",
    "PermuteAndFlip",
    "PrivateSensitivityBound",
    "ReportNoisyMax",
    "SmoothNoisyMax",
    "SmoothPrivateSelection",
    # numeric release (not a selection mechanism)
    "SmoothSensitivityRelease",
    # sparse vector (integer queries, not a SelectionProblem)
    "AboveThreshold",
]
