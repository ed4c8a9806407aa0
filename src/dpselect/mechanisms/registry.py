"""Mechanisms by name: one resolver for the apps, estimators and the CLI.

Names: "em" (ExponentialMechanism), "pf" (PermuteAndFlip), "rnm_laplace",
"rnm_gumbel", "rnm_exponential" (ReportNoisyMax), "snm_laplace", "snm_t",
"snm_lln" (SmoothNoisyMax, proven calibration), "sps"
(SmoothPrivateSelection), "ld" (LocalDampening), "psb_pf", "psb_em"
(PrivateSensitivityBound with PF / EM; epsilon1 = epsilon/3 for the bound,
epsilon2 = 2 epsilon/3 for the selection, as in mathematics §9.2's check).

``delta`` is used only by the approximate-DP mechanisms (``APPROXIMATE_NAMES``:
"snm_laplace", "snm_lln", "psb_pf", "psb_em"), which need delta > 0.  Every
other mechanism is pure epsilon-DP (its guarantee (eps, 0) meets any delta):
a delta > 0 given with a pure name is not used, and a ``UserWarning`` says
so (it is never silently dropped).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

from .._params import DELTA, EPSILON, Rule, validate_params
from .._validation import check_epsilon
from .base import Mechanism
from .classic import ExponentialMechanism, PermuteAndFlip, ReportNoisyMax
from .dampening import LocalDampening
from .sensitivity_bound import PrivateSensitivityBound
from .snm import SmoothNoisyMax
from .sps import SmoothPrivateSelection

__all__ = ["APPROXIMATE_NAMES", "MECHANISM_NAMES", "make_mechanism", "resolve_mechanism"]

# name -> (class, fixed keyword arguments, takes delta)
_REGISTRY: dict[str, tuple[type[Mechanism], dict[str, object], bool]] = {
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
    "psb_pf": (PrivateSensitivityBound, {"selector": "pf"}, True),
    "psb_em": (PrivateSensitivityBound, {"selector": "em"}, True),
}

#: Share of epsilon spent on the private sensitivity bound by the "psb_*" names (mathematics §9.2's check: 0.5 of 1.5).
PSB_BOUND_SHARE = 1.0 / 3.0

MECHANISM_NAMES: tuple[str, ...] = tuple(_REGISTRY)

#: The names of the (epsilon, delta)-DP mechanisms, the only ones that use ``delta``.
APPROXIMATE_NAMES: tuple[str, ...] = tuple(name for name, (_, _, takes) in _REGISTRY.items() if takes)


def _check_name(value: object, name: str) -> str:
    """A name of :data:`MECHANISM_NAMES` (the message calls it the mechanism)."""
    if value not in _REGISTRY:
        raise ValueError(f"{name} must be one of {MECHANISM_NAMES}, got {value!r}")
    return str(value)


@validate_params({"name": Rule(f"one of {MECHANISM_NAMES}", check=_check_name), "epsilon": EPSILON, "delta": DELTA})
def make_mechanism(name: str, epsilon: float, delta: float = 0.0, **kwargs: object) -> Mechanism:
    """The mechanism called ``name`` with budget ``epsilon`` (and ``delta`` where it applies).

    The guarantee holds under the neighbour relation of the problem the
    mechanism runs on (add/remove or replace): mathematics §2.6 (EM, PF, RNM),
    §3.1-§3.3 (SNM, SPS), §5.1 (LD) and §9.2 (PSB).

    Parameters
    ----------
    name : str
        One of :data:`MECHANISM_NAMES` (module docstring).
    epsilon : float
        The total privacy budget (> 0).  The "psb_*" names spend a third of
        it on the sensitivity bound and the rest on the selection.
    delta : float, default=0.0
        Used by the approximate mechanisms (:data:`APPROXIMATE_NAMES`), which
        need delta > 0; a delta > 0 with a pure mechanism is not used and
        triggers a ``UserWarning``.
    **kwargs
        Passed to the mechanism's constructor (e.g. ``kappa=0.3`` for the
        smooth ones).

    Returns
    -------
    Mechanism
        The configured mechanism.

    See Also
    --------
    ExponentialMechanism : Exponential mechanism, P[r] ∝ exp(eps u_r / (2 Delta u)); sampled as Gumbel noisy max
    Mechanism : Abstract selection mechanism (see module docstring)
    NoisyMaxMechanism : Report noisy max for a calibration (b, h) chosen by the subclass

    Examples
    --------
    >>> from dpselect import make_mechanism
    >>> make_mechanism("pf", 1.0)
    PermuteAndFlip(epsilon=1.0, sampler='float')
    >>> make_mechanism("psb_pf", 1.5, 1e-6).epsilon1
    0.5
    """
    return _make(name, epsilon, delta, 4, kwargs)  # caller -> validate_params wrapper -> here -> _make


def _make(name: str, epsilon: object, delta: float, stacklevel: int, kwargs: dict[str, object]) -> Mechanism:
    """make_mechanism's body; ``stacklevel`` points the delta warning at the caller's code."""
    name = _check_name(name, "mechanism")
    epsilon = check_epsilon(epsilon)
    cls, fixed, takes_delta = _REGISTRY[name]
    factory: Callable[..., Mechanism] = cls
    if not takes_delta:
        if delta > 0.0:
            warnings.warn(
                f"delta={delta!r} is not used: {name!r} is pure epsilon-DP (its guarantee ({epsilon:g}, 0) meets "
                f"any delta); the approximate mechanisms are {APPROXIMATE_NAMES}",
                UserWarning,
                stacklevel=stacklevel,
            )
        return factory(epsilon, **fixed, **kwargs)
    if cls is PrivateSensitivityBound:
        e1 = PSB_BOUND_SHARE * epsilon
        return factory(e1, epsilon - e1, delta=delta, **fixed, **kwargs)
    return factory(epsilon, delta, **fixed, **kwargs)


def resolve_mechanism(
    mechanism: str | Mechanism, epsilon: float | None = None, delta: float = 0.0, **kwargs: object
) -> Mechanism:
    """A mechanism from a name (built by :func:`~dpselect.make_mechanism`) or an instance.

    The guarantee holds under the neighbour relation of the problem the
    mechanism runs on (add/remove or replace): mathematics §2.6 (EM, PF, RNM),
    §3.1-§3.3 (SNM, SPS), §5.1 (LD) and §9.2 (PSB).

    Parameters
    ----------
    mechanism : str or Mechanism
        A name of :data:`MECHANISM_NAMES`, or an instance: any
        object with ``select`` and ``privacy`` methods, returned as is.
    epsilon : float, default=None
        The budget for a name (required then); for an instance, if given, it
        must agree with the instance's own ``epsilon``.
    delta : float, default=0.0
        As in :func:`~dpselect.make_mechanism` (names only).
    **kwargs
        Constructor arguments for a name; refused with an instance.

    Returns
    -------
    Mechanism
        The mechanism built or given.
    """
    if isinstance(mechanism, str):
        return _make(mechanism, epsilon, delta, 3, kwargs)
    if not (callable(getattr(mechanism, "select", None)) and callable(getattr(mechanism, "privacy", None))):
        raise TypeError(
            f"mechanism must be one of {MECHANISM_NAMES} or an object with select() and privacy(), "
            f"got {type(mechanism).__name__}"
        )
    if kwargs:
        raise TypeError(f"mechanism keyword arguments {sorted(kwargs)} are only accepted with a mechanism name")
    if epsilon is not None:
        own = getattr(mechanism, "epsilon", None)
        if own is not None and not math.isclose(float(own), float(epsilon), rel_tol=1e-12):
            raise ValueError(f"epsilon={epsilon!r} disagrees with the mechanism's own epsilon={own!r}")
    return mechanism
