r"""Deterministic CSV output of the experiments: ``results.csv`` and ``timings.csv``.

Cells are written by :func:`format_value` (``repr`` of floats, so values
round-trip exactly), columns in first-seen order, ``\n`` line ends: a seed
gives the same bytes whatever the scheduler.  Wall-clock measurements (columns
ending in :data:`TIMING_SUFFIX`) are not deterministic and go to
``timings.csv`` instead of ``results.csv``.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["TIMING_SUFFIX", "ResultFiles", "columns", "format_value", "write_csv", "write_results"]

#: Columns with this suffix are wall-clock times: written to timings.csv, not results.csv.
TIMING_SUFFIX = "_seconds"


def format_value(v: object) -> str:
    """Deterministic text for a CSV cell: repr of floats (round-trips), str of the rest.

    Parameters
    ----------
    v : object
        The cell: None (empty), a bool, an int, a float (NumPy scalars alike) or anything else.

    Returns
    -------
    str
        ``""`` for None, ``"True"`` / ``"False"``, the int, ``repr`` of the float
        (``"nan"``, ``"inf"``, ``"-inf"`` for the non-finite), else ``str(v)``.

    Examples
    --------
    >>> format_value(0.1), format_value(np.float32(0.5)), format_value(None), format_value(np.int64(3))
    ('0.1', '0.5', '', '3')
    """
    if v is None:
        return ""
    if isinstance(v, (bool, np.bool_)):
        return "True" if v else "False"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if math.isnan(f):
            return "nan"
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return repr(f)
    return str(v)


def columns(rows: Sequence[Mapping[str, object]]) -> list[str]:
    """Column names in first-seen order over the rows.

    Parameters
    ----------
    rows : sequence of mapping of str to object
        The rows (column -> value); a row may lack some columns.

    Returns
    -------
    list of str
        Every column once, in the order first seen.

    Examples
    --------
    >>> columns([{"a": 1, "b": 2}, {"c": 3, "a": 4}])
    ['a', 'b', 'c']
    """
    cols: dict[str, None] = {}
    for r in rows:
        for k in r:
            cols.setdefault(k, None)
    return list(cols)


def write_csv(
    rows: Sequence[Mapping[str, object]], path: str | os.PathLike[str], columns: Sequence[str] | None = None
) -> Path:
    r"""Write rows (dicts) as CSV with ``\n`` line ends; cells by :func:`format_value`.

    Parameters
    ----------
    rows : sequence of mapping of str to object
        The rows (column -> value); a missing column is an empty cell.
    path : str or os.PathLike
        The file to write (replaced).
    columns : sequence of str or None, default=None
        The columns, in order (None: every column, in first-seen order).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    path = Path(path)
    cols = list(columns) if columns is not None else _columns(rows)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        w.writerow([format_value(r.get(c)) for c in cols])
    path.write_text(buf.getvalue(), encoding="utf-8")
    return path


_columns = columns


@dataclass(frozen=True)
class ResultFiles:
    """The CSV files of one run.

    Parameters
    ----------
    files : list of pathlib.Path
        ``results.csv``, then ``timings.csv`` if written.
    timed : bool
        Whether the rows had timing columns (then ``timings.csv`` was written).
    """

    files: list[Path]
    timed: bool


def write_results(rows: Sequence[Mapping[str, object]], out_dir: Path) -> ResultFiles:
    """``results.csv`` without the timing columns, and ``timings.csv`` (the timed rows) if any.

    Parameters
    ----------
    rows : sequence of mapping of str to object
        The result rows of an experiment.
    out_dir : pathlib.Path
        The experiment's output directory.

    Returns
    -------
    ResultFiles
        The files written, and whether ``timings.csv`` is one of them.
    """
    cols = columns(rows)
    timing_cols = [c for c in cols if c.endswith(TIMING_SUFFIX)]
    files = [write_csv(rows, out_dir / "results.csv", [c for c in cols if c not in timing_cols])]
    if timing_cols:  # the rows that measured a run time, with all their columns
        timed = [r for r in rows if any(c in r for c in timing_cols)]
        files.append(write_csv(timed, out_dir / "timings.csv"))
    return ResultFiles(files, bool(timing_cols))
