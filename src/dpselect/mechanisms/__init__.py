"""Selection mechanisms: one module per family (see the documentation's Architecture page).

Selection mechanisms (``select`` / ``probabilities`` / ``privacy`` on a
:class:`~dpselect.problem.SelectionProblem`): classic (EM, PF, RNM), snm,
sps, dampening, sensitivity_bound; by name through the registry.

Numeric releases (not selection mechanisms): :class:`SmoothSensitivityRelease`
adds noise to one real number (module ``release``).  Sparse vector:
:class:`AboveThreshold` (module ``sparse_vector``) on integer queries.
"""

# An internal helper bound here but not exported (not in __all__): the registry's resolver, which
# the private shared module dpselect._mechanism_lookup hands to the apps.
from .base import Mechanism, NoisyMaxMechanism
from .classic import ExponentialMechanism, PermuteAndFlip, ReportNoisyMax
from .dampening import LocalDampening, dampened_utilities
from .distance import distance_problem, max_utility_change
from .registry import (
    APPROXIMATE_NAMES,
    MECHANISM_NAMES,
    make_mechanism,
    resolve_mechanism,  # noqa: F401
)
from .release import PURE_NOISES, SmoothSensitivityRelease  # a numeric release, not a selection mechanism
from .sensitivity_bound import PrivateSensitivityBound
from .snm import SmoothNoisyMax
from .sparse_vector import AboveThreshold  # sparse vector on integer queries, not a selection mechanism
from .sps import SmoothPrivateSelection
from .top_k import TopK, select_top_k, top_k_privacy

__all__ = [
    "APPROXIMATE_NAMES",
    "MECHANISM_NAMES",
    "PURE_NOISES",
    "AboveThreshold",
    "ExponentialMechanism",
    "LocalDampening",
    "Mechanism",
    "NoisyMaxMechanism",
    "PermuteAndFlip",
    "PrivateSensitivityBound",
    "ReportNoisyMax",
    "SmoothNoisyMax",
    "SmoothPrivateSelection",
    "SmoothSensitivityRelease",
    "TopK",
    "dampened_utilities",
    "distance_problem",
    "make_mechanism",
    "max_utility_change",
    "select_top_k",
    "top_k_privacy",
]
