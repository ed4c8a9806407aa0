"""Mechanisms by name: one resolver for the apps, estimators and the CLI.

Names: "em" (ExponentialMechanism), "pf" (PermuteAndFlip), "rnm_laplace",
"rnm_gumbel", "rnm_exponential" (ReportNoisyMax), "snm_laplace", "snm_t",
"snm_lln" (SmoothNoisyMax, proven calibration), "sps"
(SmoothPrivateSelection) and "ld" (LocalDampening).  ``delta`` is passed only
to the approximate-DP mechanisms ("snm_laplace", "snm_lln", which need
delta > 0); every other mechanism is pure epsilon-DP and so meets any delta.
"""

from __future__ import annotations

import math
from typing import Any

from .._validation import check_delta, check_epsilon
from .base import Mechanism
from .classic import ExponentialMechanism, PermuteAndFlip, ReportNoisyMax
from .dampening import LocalDampening
from .snm import SmoothNoisyMax
from .sps import SmoothPrivateSelection

__all__ = ["APPROXIMATE_NAMES", "MECHANISM_NAMES", "make_mechanism", "resolve_mechanism"]

# name -> (class, fixed keyword arguments, takes delta)
_REGISTRY: dict[str, tuple[type, dict[str, Any], bool]] = {
    "em": (ExponentialMechanism, {}, False),
    "pf": (PermuteAndFlip, {}, False),
    "rnm_laplace": (ReportNoisyMax, {"noise": "laplace"}, False),
    "rnm_gumbel": (ReportNoisyMax, {"noise": "gumbel"}, False),
    "rnm_exponential": (ReportNoisyMax, {"noise": "exponential"}, False),
    "snm_laplace": (SmoothNoisyMax, {"noise": "laplace"}, True),
    "snm_t": (SmoothNoisyMax, {"noise": "student_t"}, False),
    "snm_lln": (SmoothNoisyMax, {"noise": "lln"}, True),
    "sps": (SmoothPrivateSelection, {}, False),
    "ld": (LocalDampening, {}, False),
}

MECHANISM_NAMES: tuple[str, ...] = tuple(_REGISTRY)

#: The names of the (epsilon, delta)-DP mechanisms, the only ones that use ``delta``.
APPROXIMATE_NAMES: tuple[str, ...] = tuple(name for name, (_, _, takes) in _REGISTRY.items() if takes)


def make_mechanism(name: str, epsilon: float, delta: float = 0.0, **kwargs: Any) -> Mechanism:
    """The mechanism called ``name`` with budget ``epsilon`` (and ``delta`` where it applies).

    Extra keyword arguments go to the mechanism's constructor (e.g.
    ``kappa=0.3`` for the smooth ones).
    """
    if name not in _REGISTRY:
        raise ValueError(f"mechanism must be one of {MECHANISM_NAMES}, got {name!r}")
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    cls, fixed, takes_delta = _REGISTRY[name]
    extra = {"delta": delta} if takes_delta else {}
    return cls(epsilon=epsilon, **fixed, **extra, **kwargs)


def resolve_mechanism(mechanism: Any, epsilon: Any = None, delta: float = 0.0, **kwargs: Any) -> Any:
    """A mechanism from a name (built by :func:`make_mechanism`) or an instance.

    An instance must have ``select`` and ``privacy``; keyword arguments are
    then refused, and if both ``epsilon`` and the instance's own ``epsilon``
    are given they must agree.
    """
    delta = check_delta(delta)
    if isinstance(mechanism, str):
        return make_mechanism(mechanism, epsilon, delta, **kwargs)
    if not (callable(getattr(mechanism, "select", None)) and callable(getattr(mechanism, "privacy", None))):
        raise TypeError(
            f"mechanism must be one of {MECHANISM_NAMES} or an object with select() and privacy(), "
            f"got {type(mechanism).__name__}"
        )
    if kwargs:
        raise TypeError(f"mechanism keyword arguments {sorted(kwargs)} are only accepted with a mechanism name")
    if epsilon is not None:
        epsilon = check_epsilon(epsilon)
        own = getattr(mechanism, "epsilon", None)
        if own is not None and not math.isclose(float(own), epsilon, rel_tol=1e-12):
            raise ValueError(f"epsilon={epsilon!r} disagrees with the mechanism's own epsilon={own!r}")
    return mechanism
