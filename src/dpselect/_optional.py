"""Optional dependencies: import a module of a domain extra, or fail naming the extra to install."""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["require"]


def require(module: str, extra: str, *, purpose: str) -> ModuleType:
    """Import ``module``, or raise an ImportError naming the extra that installs it.

    Parameters
    ----------
    module : str
        The importable name (e.g. ``"sklearn"``).
    extra : str
        The dpselect extra that installs it (e.g. ``"ml"``).
    purpose : str
        What needs it, for the message (e.g. ``"dpselect.apps.trees"``).

    Returns
    -------
    types.ModuleType
        The imported module.

    Examples
    --------
    >>> require("numpy", "core", purpose="this example").__name__
    'numpy'
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{purpose} needs {module.split('.')[0]!r}, which is not installed: "
            f'pip install "dpselect[{extra}]"'
        ) from exc
