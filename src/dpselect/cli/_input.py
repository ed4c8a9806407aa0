"""Input handling of the command line (options, files, columns): every error names its argument.

The options are checked by the library's own declarative rules (:mod:`dpselect._params`),
under the option's name: :data:`OPTION_RULES` says once what each option accepts, and
:func:`option` applies it.  A rule that refuses a value raises the library's
``ValueError`` / ``TypeError`` (naming the option, e.g. ``--epsilon must be > 0, got -1.0``),
which :func:`dpselect.cli.main` prints as one line with exit status 2.  Every option is
checked before a data file is read, so a bad call fails before any budget is spent and
before anything is printed.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from enum import Enum
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from .._optional import require
from .._params import DELTA, EPSILON, RELATION, Rule, int_at_least, positive
from ..problem import SelectionProblem

if TYPE_CHECKING:
    import pandas as pd

    from ..mechanisms import Mechanism

__all__ = [
    "DEFAULT_DELTA",
    "DEFAULT_MECHANISM",
    "OPTION_RULES",
    "CLIError",
    "Utility",
    "build_mechanism",
    "check_out_dir",
    "check_out_file",
    "column_values",
    "is_label_column",
    "option",
    "parse_candidates",
    "read_table",
    "select_problem",
    "vote_labels",
    "write_out_file",
]

T = TypeVar("T")

#: ``dpselect select``'s default mechanism: permute-and-flip, the most accurate sound choice on counts and
#: scores (P[best] = 0.997 on counts [22, 8, 17, 4, 0] at eps = 1 vs 0.29 for EM on the argmax indicator).
DEFAULT_MECHANISM = "pf"

#: delta used for the approximate-DP mechanisms (snm_laplace, snm_lln, psb_*) when --delta is not given; printed.
DEFAULT_DELTA = 1e-6

#: Largest count accepted: integers up to 2**53 are exact in float64.
MAX_COUNT = 2**53


class CLIError(Exception):
    """A user error: printed as one line, exit status 2."""


class Utility(str, Enum):
    """--utility of ``dpselect select``."""

    votes = "votes"
    scores = "scores"
    majority = "majority"
    indicator = "indicator"


def _seed(value: int, name: str) -> int:
    """A seed option: an int >= 0 (typer has already made it an int)."""
    if value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value}")
    return value


#: What every numeric or choice option accepts: the library's rules, applied under the option's name.
OPTION_RULES: Mapping[str, Rule] = MappingProxyType(
    {
        "--epsilon": EPSILON,
        "--delta": DELTA.or_none(),
        "--sensitivity": positive(none=True),
        "--seed": Rule("None or an int >= 0", check=_seed, none=True),
        "--relation": RELATION,
        "--k": int_at_least(1),
        "--m": int_at_least(2),
        "--workers": int_at_least(1, none=True),
        "--chunk-snps": int_at_least(1, none=True),
        "--max-count": int_at_least(1),
        "--n-vectors": int_at_least(1),
    }
)


def option(name: str, value: T) -> T:
    """``value`` of the option ``name`` as its rule in :data:`OPTION_RULES` returns it.

    A refused value raises the rule's ``ValueError`` / ``TypeError``, whose message names the
    option; :func:`dpselect.cli.main` prints it as one line and exits with status 2.
    """
    checked: T = OPTION_RULES[name](value, name)
    return checked


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
        raise CLIError(
            f"{name} {str(out)!r} is not a writable directory ({exc.strerror or type(exc).__name__})"
        ) from None
    return path


def check_out_file(out: Path | None, name: str = "--out") -> Path | None:
    """``--out`` as a file that can be written: its folder exists and is writable (checked before any data is read)."""
    if out is None:
        return None
    path = Path(out)
    if path.is_dir():
        raise CLIError(f"{name} {str(out)!r} is a directory; give a file name")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise CLIError(f"{name} {str(out)!r}: the folder {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise CLIError(f"{name} {str(out)!r} is not writable")
    return path


def write_out_file(out: Path, text: str, name: str = "--out") -> None:
    """Write ``text`` to ``out`` completely, before anything is printed (a failure prints nothing).

    A regular file (or a new one) is written to a temporary file beside it and renamed over
    it (atomic: never half a table); a special file (a device, a pipe) is written directly
    and flushed, so that e.g. a full device fails here.  Errors are one line naming ``name``.
    """
    path = Path(out)
    try:
        if path.exists() and not path.is_file():
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
            return
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent if str(path.parent) else ".")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise CLIError(f"{name} {str(out)!r}: cannot write it ({exc.strerror or type(exc).__name__})") from None


def parse_candidates(candidates: str | None) -> list[str] | None:
    """``--candidates a,b,c``: the distinct public labels, or None."""
    if candidates is None:
        return None
    cands = [c.strip() for c in candidates.split(",")]
    if not all(cands):
        raise CLIError(f"--candidates must be a comma-separated list of labels, got {candidates!r}")
    if len(set(cands)) != len(cands):
        raise CLIError("--candidates must be distinct")
    return cands


def read_table(file: Path) -> pd.DataFrame:
    """The CSV / Parquet file ``FILE`` as a pandas DataFrame (CLIError naming FILE otherwise).

    A parser's own message can quote a line of the file, so it is not shown:
    the error names the file and the parser's exception type only.
    """
    pd = require("pandas", "cli", purpose="dpselect select (CSV / Parquet input)")

    path = Path(file)
    if path.is_dir():
        raise CLIError(f"FILE {str(file)!r} is a directory, not a CSV or Parquet file")
    if not path.is_file():
        raise CLIError(f"FILE {str(file)!r}: file not found")
    parquet = path.suffix.lower() in (".parquet", ".pq")
    try:
        return pd.read_parquet(path) if parquet else pd.read_csv(path)
    except Exception as exc:  # parser errors of any kind: one line, without the parser's text
        raise CLIError(
            f"FILE {str(file)!r} cannot be read as a {'Parquet' if parquet else 'CSV'} table ({type(exc).__name__})"
        ) from None


def _column(df: pd.DataFrame, file: Path, column: str) -> pd.Series:
    if column not in df.columns:
        raise CLIError(f"--column {column!r} not in {file} (columns: {', '.join(map(str, df.columns))})")
    return df[column]


def column_values(df: pd.DataFrame, file: Path, column: str, label_column: str | None) -> tuple[np.ndarray, list[str]]:
    """(finite float values of --column, candidate labels) of a table."""
    raw = _column(df, file, column).to_numpy()
    if label_column is not None and label_column not in df.columns:
        raise CLIError(f"--label-column {label_column!r} not in {file}")
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


def is_label_column(df: pd.DataFrame, column: str) -> bool:
    """Whether --column holds labels (strings, categories, booleans) rather than numbers."""
    import pandas as pd

    if column not in df.columns:
        return False
    dtype = df[column].dtype
    return not (pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype))


def vote_labels(df: pd.DataFrame, file: Path, column: str, *, public_candidates: bool = False) -> np.ndarray:
    """One label per record (``--utility votes``), as strings.

    With public candidates a missing label counts for no candidate, as a label outside them
    does (whether a record's vote is missing is private: a refusal would tell); taking the
    candidates from the data, a missing label is refused.
    """
    col = _column(df, file, column)
    missing = col.isna().to_numpy()
    if missing.any() and not public_candidates:
        raise CLIError(f"--column {column!r} has missing values (one label per record is needed)")
    return col.astype(str).to_numpy(dtype=object)[~missing]


def select_problem(
    values: np.ndarray, labels: Sequence[str], utility: Utility, sensitivity: float | None, column: str
) -> tuple[SelectionProblem, str]:
    """The selection problem of ``dpselect select`` and a description of its utility."""
    if utility is Utility.scores:
        if sensitivity is None:  # resolved before reading: kept as a guard
            raise CLIError("--utility scores needs --sensitivity")
        prob = SelectionProblem(values, labels=labels, global_sensitivity=sensitivity)
        return prob, f"scores with global sensitivity {sensitivity:g} (from --sensitivity)"
    if (values < 0).any() or (values != np.round(values)).any():
        raise CLIError(f"--utility {utility.value} needs non-negative integer counts in --column {column!r}")
    if (values > MAX_COUNT).any():
        raise CLIError(f"--column {column!r} has counts above 2**53, which float64 cannot represent exactly")
    if utility is Utility.majority:
        # add/remove one record moves one count by 1: sensitivity 1, and adding can only raise scores
        prob = SelectionProblem(values, labels=labels, global_sensitivity=1.0, monotone=True, relation="add_remove")
        return prob, "counts as the utility (monotone, global sensitivity 1)"
    from ..apps.counts import majority_problem

    prob = majority_problem(values.astype(np.int64), labels=labels)
    return prob, "argmax-indicator utility of the counts, global sensitivity 1"


def build_mechanism(name: str, epsilon: float, delta: float | None, flag: str = "--mechanism") -> tuple[Mechanism, str]:
    """(mechanism, note on its delta) for ``--mechanism NAME --epsilon E [--delta D]``.

    An approximate-DP mechanism (:data:`~dpselect.mechanisms.registry.APPROXIMATE_NAMES`)
    gets --delta, or :data:`DEFAULT_DELTA` when it is not given (the note says
    so); a pure one ignores a --delta > 0 (the note says so).  The guarantee the
    caller prints carries the delta actually used.  Messages name the options.
    """
    from ..mechanisms import APPROXIMATE_NAMES, MECHANISM_NAMES, make_mechanism

    if name not in MECHANISM_NAMES:
        raise CLIError(f"{flag} {name!r} is not a mechanism; choose one of: {', '.join(MECHANISM_NAMES)}")
    note = ""
    if name in APPROXIMATE_NAMES:
        if delta is None:
            delta, note = DEFAULT_DELTA, f" (default for {name}, which needs delta > 0; choose it with --delta)"
        elif delta == 0:
            raise CLIError(
                f"--delta must be > 0 for {flag} {name} (approximate DP); for pure epsilon-DP choose "
                f"{flag} snm_t, pf or em"
            )
        else:
            note = " (from --delta)"
    elif delta:
        note = f" ({flag} {name} is pure epsilon-DP: --delta {delta:g} is not used)"
    try:
        return make_mechanism(name, epsilon=epsilon, delta=delta if delta and name in APPROXIMATE_NAMES else 0.0), note
    except (ValueError, TypeError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if msg.startswith("delta "):
            raise CLIError(f"--delta for {flag} {name}: {msg}") from None
        raise CLIError(f"{flag} {name!r}: {msg}") from None
