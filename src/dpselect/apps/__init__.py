"""Applications: data -> SelectionProblem builders, convenience functions and estimators.

Every public module (``majority``, ``percentile``, ``duff``, ``tdt``, ``gwas``,
``tree``, ``forest``, ...) is importable explicitly (``from dpselect.apps
import percentile``) or reached as an attribute (``dpselect.apps.percentile``),
which imports it on first access.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

__all__ = sorted(info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_"))


def __getattr__(name: str) -> ModuleType:
    if name in __all__:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
