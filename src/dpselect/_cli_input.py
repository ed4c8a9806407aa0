"""Input handling of the command line (files, columns, options): every error names its argument.

Kept apart from :mod:`dpselect.cli` (the typer commands) so that the checks
can be tested without typer and the command module stays small.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np

from ._optional import require
from .problem import SelectionProblem

__all__ = [
    "DEFAULT_DELTA",
    "DEFAULT_MECHANISM",
    "CLIError",
    "Utility",
    "build_mechanism",
    "check_delta",
    "check_eps",
    "check_seed",
    "column_values",
    "read_table",
    "select_problem",
]

#: ``dpselect select``'s default mechanism: permute-and-flip, the most accurate sound choice on counts and
#: scores (P[best] = 0.997 on counts [22, 8, 17, 4, 0] at eps = 1 vs 0.29 for EM on the argmax indicator).
DEFAULT_MECHANISM = "pf"

#: delta used for the approximate-DP mechanisms (snm_laplace, snm_lln) when --delta is not given; printed.
DEFAULT_DELTA = 1e-6

#: Largest count accepted: integers up to 2**53 are exact in float64.
MAX_COUNT = 2**53


class CLIError(Exception):
    """A user error: printed as one line, exit status 2."""


class Utility(str, Enum):
    """--utility of ``dpselect select``."""

    majority = "majority"
    indicator = "indicator"
    scores = "scores"
    votes = "votes"


def check_eps(value: float | None, name: str = "--epsilon") -> float:
    if value is None or not np.isfinite(value) or value <= 0:
        raise CLIError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def check_delta(value: float, name: str = "--delta") -> float:
    if not np.isfinite(value) or not 0 <= value < 1:
        raise CLIError(f"{name} must be in [0, 1), got {value!r}")
    return float(value)


def check_seed(value: int | None, name: str = "--seed") -> int | None:
    if value is not None and value < 0:
        raise CLIError(f"{name} must be a non-negative integer, got {value}")
    return value


def check_out_dir(out: Path, name: str = "--out") -> Path:
    """``--out`` as a writable directory, created if missing (before any work, so a bad path fails at once)."""
    import tempfile

    path = Path(out)
    if path.exists() and not path.is_dir():
        raise CLIError(f"{name} {str(out)!r} is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise CLIError(f"{name} {str(out)!r} is not a writable directory ({exc.strerror or type(exc).__name__})") \
            from None
    return path


def read_table(file: Path) -> Any:
    """The CSV / Parquet file ``FILE`` as a pandas DataFrame (CLIError naming FILE otherwise)."""
    pd = require("pandas", "cli", purpose="dpselect select (CSV / Parquet input)")

    path = Path(file)
    if path.is_dir():
        raise CLIError(f"FILE {str(file)!r} is a directory, not a CSV or Parquet file")
    if not path.is_file():
        raise CLIError(f"FILE {str(file)!r}: file not found")
    try:
        if path.suffix.lower() in (".parquet", ".pq"):
            return pd.read_parquet(path)
        return pd.read_csv(path)
    except Exception as exc:  # parser errors of any kind: one line
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CLIError(f"FILE {str(file)!r} cannot be read: {first}") from None


def column_values(df: Any, file: Path, column: str, label_column: str | None) -> tuple[np.ndarray, list[str]]:
    """(finite float values of --column, candidate labels) of a table."""
    if column not in df.columns:
        raise CLIError(f"--column {column!r} not in {file} (columns: {', '.join(map(str, df.columns))})")
    if label_column is not None and label_column not in df.columns:
        raise CLIError(f"--label-column {label_column!r} not in {file}")
    raw = df[column].to_numpy()
    if len(raw) == 0:
        raise CLIError(f"FILE {str(file)!r} has no rows")
    try:
        values = raw.astype(float)
    except (TypeError, ValueError, OverflowError):
        raise CLIError(f"--column {column!r} must be numeric") from None
    if not np.isfinite(values).all():
        raise CLIError(f"--column {column!r} has missing or non-finite values")
    if label_column is not None:
        labels = df[label_column].astype(str).tolist()
    else:
        labels = [str(i) for i in range(len(values))]
    return values, labels


def is_label_column(df: Any, column: str) -> bool:
    """Whether --column holds labels (strings, categories, booleans) rather than numbers."""
    import pandas as pd

    if column not in df.columns:
        return False
    dtype = df[column].dtype
    return not (pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype))


def vote_labels(df: Any, file: Path, column: str, candidates: str | None) -> tuple[np.ndarray, list[str] | None]:
    """(one label per record, the public candidates or None) for ``--utility votes``."""
    if column not in df.columns:
        raise CLIError(f"--column {column!r} not in {file} (columns: {', '.join(map(str, df.columns))})")
    col = df[column]
    if col.isna().any():
        raise CLIError(f"--column {column!r} has missing values (one label per record is needed)")
    cands = None
    if candidates is not None:
        cands = [c.strip() for c in candidates.split(",")]
        if not all(cands):
            raise CLIError(f"--candidates must be a comma-separated list of labels, got {candidates!r}")
        if len(set(cands)) != len(cands):
            raise CLIError("--candidates must be distinct")
    return col.astype(str).to_numpy(dtype=object), cands


def select_problem(values: np.ndarray, labels: Sequence[str], utility: Utility, sensitivity: float,
                   column: str) -> tuple[SelectionProblem, str]:
    """The selection problem of ``dpselect select`` and a description of its utility."""
    if utility is Utility.scores:
        if not np.isfinite(sensitivity) or sensitivity <= 0:
            raise CLIError(f"--sensitivity must be a finite number > 0, got {sensitivity!r}")
        prob = SelectionProblem(values, labels=labels, global_sensitivity=float(sensitivity))
        return prob, f"scores with global sensitivity {sensitivity:g}"
    if (values < 0).any() or (values != np.round(values)).any():
        raise CLIError(f"--utility {utility.value} needs non-negative integer counts in --column {column!r}")
    if (values > MAX_COUNT).any():
        raise CLIError(f"--column {column!r} has counts above 2**53, which float64 cannot represent exactly")
    if utility is Utility.majority:
        # add/remove one record moves one count by 1: sensitivity 1, and adding can only raise scores
        prob = SelectionProblem(values, labels=labels, global_sensitivity=1.0, monotone=True, relation="add_remove")
        return prob, "counts as the utility (monotone, global sensitivity 1)"
    from .apps.counts import majority_problem

    prob = majority_problem(values.astype(np.int64), labels=labels)
    return prob, "argmax-indicator utility of the counts, global sensitivity 1"


def build_mechanism(name: str, epsilon: float, delta: float | None, option: str = "--mechanism") -> tuple[Any, str]:
    """(mechanism, note on its delta) for ``--mechanism NAME --epsilon E [--delta D]``.

    Without --delta a mechanism is built with its defaults; if it needs
    delta > 0 (approximate DP), :data:`DEFAULT_DELTA` is used and the note
    says so.  The guarantee the caller prints carries the delta actually used.
    """
    from .mechanisms.registry import make_mechanism

    def make(**kw: Any) -> Any:
        try:
            return make_mechanism(name, epsilon=epsilon, **kw)
        except (ValueError, TypeError) as exc:
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if kw and "delta" in msg:
                raise CLIError(f"--delta {kw['delta']:g} does not apply to {option} {name!r}: {msg}") from None
            raise CLIError(f"{option} {name!r}: {msg}") from None

    if delta is not None:
        return make(delta=delta), " (from --delta)"
    try:
        return make_mechanism(name, epsilon=epsilon), ""
    except (ValueError, TypeError) as exc:
        needs_delta = "delta" in str(exc)
    if not needs_delta:
        make()  # raises the CLIError naming the option
    return make(delta=DEFAULT_DELTA), f" (default for {name}, which needs delta > 0; choose it with --delta)"
