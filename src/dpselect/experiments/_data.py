"""Where the real datasets come from: ``--data-dir`` / ``DPSELECT_DATA``, and which files were read.

Both the runner and the dataset loaders of the experiments import this small
module (it imports nothing from the package), so they do not import each
other.  :func:`require_file` records every file it hands out while a
:func:`recording` block is open: the reports name exactly the files read.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from .._params import instance_of, validate_params

__all__ = ["PATH", "DataNotFoundError", "recording", "require_file", "resolve_data_dir"]

#: A file or directory name: a str or an ``os.PathLike``.
PATH = instance_of(str, os.PathLike, description="a str or os.PathLike path")

_RECORDERS: list[dict[Path, None]] = []


class DataNotFoundError(FileNotFoundError):
    """A real dataset (``--data-dir`` / ``DPSELECT_DATA``) is needed but missing."""


@validate_params({"data_dir": PATH.or_none()})
def resolve_data_dir(data_dir: str | os.PathLike[str] | None) -> Path | None:
    """The directory of the real datasets: ``data_dir``, else ``$DPSELECT_DATA``, else None.

    Parameters
    ----------
    data_dir : str or os.PathLike or None
        The ``--data-dir`` given (None: read the ``DPSELECT_DATA`` environment variable).

    Returns
    -------
    pathlib.Path or None
        The directory (``~`` expanded), or None when neither names one.

    Raises
    ------
    DataNotFoundError
        The directory named does not exist (a ``FileNotFoundError``).

    Examples
    --------
    >>> import tempfile
    >>> resolve_data_dir(tempfile.gettempdir()).is_dir()
    True
    """
    if data_dir is None:
        env = os.environ.get("DPSELECT_DATA")
        if not env:
            return None
        data_dir, origin = env, "DPSELECT_DATA"
    else:
        origin = "--data-dir"
    path = Path(data_dir).expanduser()
    if not path.is_dir():
        raise DataNotFoundError(f"{origin} {str(data_dir)!r} is not a directory")
    return path


def require_file(data_dir: Path | None, *candidates: str, what: str) -> Path:
    """The first existing ``data_dir / candidate`` (DataNotFoundError naming what is missing)."""
    if data_dir is None:
        raise DataNotFoundError(
            f"the full grid needs the real {what} data: pass --data-dir DIR (or set DPSELECT_DATA), "
            "or use --quick for the embedded defaults"
        )
    for c in candidates:
        p = Path(data_dir) / c
        if p.is_file():
            record_read(p)
            return p
    raise DataNotFoundError(f"{what} data not found under {data_dir} (looked for {', '.join(candidates)})")


def record_read(*paths: Path) -> None:
    """Tell every open :func:`recording` block that ``paths`` were read (also a cached read's files)."""
    for files in _RECORDERS:
        for p in paths:
            files.setdefault(p, None)


@contextlib.contextmanager
def recording() -> Iterator[list[Path]]:
    """Collect the files :func:`require_file` returns inside the block (in first-use order).

    The list yielded is filled when the block ends.
    """
    files: dict[Path, None] = {}
    out: list[Path] = []
    _RECORDERS.append(files)
    try:
        yield out
    finally:
        _RECORDERS.remove(files)
        out.extend(files)
