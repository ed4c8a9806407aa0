"""Optional dependencies: import a module of a domain extra, or fail naming the extra to install."""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Sequence
from types import ModuleType

__all__ = ["MissingExtraError", "require", "require_installed"]


class MissingExtraError(ImportError):
    """A dependency of an optional dpselect domain is not installed; the message names the extra.

    A subclass of ImportError, so ``except ImportError`` catches it; the command line
    catches it to print the message as one line.
    """


def _message(module: str, extra: str, purpose: str) -> str:
    return f'{purpose} needs {module.split(".")[0]!r}, which is not installed: pip install "dpselect[{extra}]"'


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

    Raises
    ------
    MissingExtraError
        (an ImportError) when ``module`` cannot be imported; the message names ``extra``.

    Examples
    --------
    >>> require("numpy", "core", purpose="this example").__name__
    'numpy'
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(_message(module, extra, purpose)) from exc


def require_installed(modules: Sequence[str], extra: str, *, purpose: str) -> None:
    """Check that top-level ``modules`` are installed, without importing them (imports stay lazy).

    Parameters
    ----------
    modules : sequence of str
        Top-level importable names (e.g. ``("matplotlib", "dask")``).
    extra : str
        The dpselect extra that installs them.
    purpose : str
        What needs them, for the message.

    Raises
    ------
    MissingExtraError
        (an ImportError) naming the first missing module and ``extra``.

    Examples
    --------
    >>> require_installed(("numpy", "scipy"), "core", purpose="this example")
    >>> try:
    ...     require_installed(("no_such_module_xyz",), "all", purpose="this example")
    ... except ImportError as exc:
    ...     print(exc)
    this example needs 'no_such_module_xyz', which is not installed: pip install "dpselect[all]"
    """
    for module in modules:
        if "." in module:
            raise ValueError(f"modules: top-level names only, got {module!r}")
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a module poisoned in sys.modules (None, or without a spec)
            found = False
        if not found:
            raise MissingExtraError(_message(module, extra, purpose))
