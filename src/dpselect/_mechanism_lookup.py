"""A mechanism from a name or an instance: what the apps, the estimators and the CLI share.

A private module made for sharing (scikit-learn's ``utils._param_validation`` pattern), one
layer above :mod:`dpselect.mechanisms`: the apps import :func:`resolve_mechanism` (the
registry's resolver) and the rule :data:`MECHANISM` from here, and no public face exports them.  The names are those of
:data:`dpselect.mechanisms.MECHANISM_NAMES` (built by :func:`dpselect.make_mechanism`).

Examples
--------
>>> import dpselect
>>> resolve_mechanism("em", 2.0)
ExponentialMechanism(epsilon=2.0, ...)
>>> pf = dpselect.PermuteAndFlip(1.0)
>>> resolve_mechanism(pf, 1.0) is pf
True
>>> MECHANISM(3, "mechanism")
Traceback (most recent call last):
...
TypeError: mechanism must be one of ('em', ...) or an object with select() and privacy(), got int
"""

from __future__ import annotations

from typing import Any

from ._params import Rule
from .mechanisms import MECHANISM_NAMES, resolve_mechanism

__all__ = ["MECHANISM", "resolve_mechanism"]


def _check_mechanism(value: Any, name: str) -> Any:
    """A name of :data:`MECHANISM_NAMES` or an object with ``select`` and ``privacy`` methods."""
    if isinstance(value, str):
        if value not in MECHANISM_NAMES:
            raise ValueError(f"{name} must be one of {MECHANISM_NAMES}, got {value!r}")
        return value
    if not (callable(getattr(value, "select", None)) and callable(getattr(value, "privacy", None))):
        raise TypeError(
            f"{name} must be one of {MECHANISM_NAMES} or an object with select() and privacy(), "
            f"got {type(value).__name__}"
        )
    return value


#: A selection mechanism: a name of :data:`~dpselect.mechanisms.MECHANISM_NAMES` or an instance
#: (checked against ``epsilon`` by :func:`resolve_mechanism`).
MECHANISM = Rule("a mechanism name of dpselect.mechanisms or a mechanism instance", check=_check_mechanism)
