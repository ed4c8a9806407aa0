"""``describe``: a private count of the rows and private quantiles of each numeric column of a table.

The budget is split in the open (mathematics §12.6): a share for the one noisy count of rows
(discrete Laplace on the integers, sensitivity 1), the rest equally over the columns, whose
quantiles (:func:`private_quantiles`, all levels of a column at once) compose sequentially
because every column belongs to the same rows.  The result prints as a table with the split.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...._params import as_array_1d, real_in, validate_params
from ...._validation import check_random_state
from ....accounting import Accountant, charge
from ....noise import GridLaplace
from ....privacy import Privacy
from ....typing import SeedLike
from .._multi.quantiles import private_quantiles
from .._rules import ACCOUNTANT, ANY, EPSILON, SEED, Rule, check_bounds
from .grouped import LEVEL_OR_LEVELS

__all__ = ["Description", "describe"]

SOURCE = "a noisy row count and each column's quantiles, sequential composition (mathematics §12.6)"


@dataclass(frozen=True)
class Description:
    """The private description of a table: the count of rows and each column's quantiles.

    Parameters
    ----------
    columns : tuple of str
        The columns described, in order.
    q : tuple of float
        The levels.
    count : int
        The noisy count of rows (clamped at 0).
    quantiles : numpy.ndarray
        Shape (len(columns), len(q)).
    epsilon_count : float
        The budget of the count.
    epsilon_column : float
        The budget of each column.
    privacy : Privacy
        The guarantee of the whole description (charged once).
    """

    columns: tuple[str, ...]
    q: tuple[float, ...]
    count: int
    quantiles: np.ndarray
    epsilon_count: float
    epsilon_column: float
    privacy: Privacy

    def __str__(self) -> str:
        """The table, the count and the budget split, as ``dpselect describe`` prints them."""
        width = max([len("column"), *(len(c) for c in self.columns)])
        head = "column".ljust(width) + "".join(f"  {'q=' + format(v, 'g'):>10}" for v in self.q)
        rows = [c.ljust(width) + "".join(f"  {_fmt(v):>10}" for v in r) for c, r in zip(self.columns, self.quantiles)]
        return "\n".join(
            [
                f"rows (noisy count): {self.count}",
                head,
                *rows,
                f"budget: count {self.epsilon_count:g} + {len(self.columns)} column(s) x {self.epsilon_column:g} "
                f"= {self.privacy.epsilon:g}-DP [add_remove], one row = one record",
            ]
        )


def _fmt(value: Any) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else format(float(value), ".4g")


def _numeric(column: Any) -> bool:
    """Whether a column's dtype (public: the schema) is an integer or float one."""
    dtype = getattr(column, "dtype", None)
    if dtype is None:
        return np.asarray(column).dtype.kind in "iuf"
    if hasattr(dtype, "is_numeric"):  # polars
        return bool(dtype.is_numeric())
    return getattr(dtype, "kind", "O") in "iuf"


def _bounds_of(bounds: Any, name: str) -> tuple[float, float] | None:
    return None if bounds is None else check_bounds(bounds)


def _split(epsilon: float, share: float, c: int) -> tuple[float, float, Privacy]:
    """(epsilon of the count, of one column, the total), the total at most ``epsilon`` in floating point."""
    eps_n = share * epsilon
    eps_c = (epsilon - eps_n) / c
    while True:
        total = Privacy(eps_n, 0.0, "add_remove", SOURCE)
        for _ in range(c):
            total = total + Privacy(eps_c, 0.0, "add_remove", SOURCE)
        if total.epsilon <= epsilon:
            return eps_n, eps_c, Privacy(total.epsilon, 0.0, "add_remove", SOURCE)
        eps_c = float(np.nextafter(eps_c, 0.0))


def _table(data: Any, columns: Sequence[str] | None) -> dict[str, Any]:
    """The chosen columns (by their names as text) as numpy arrays."""
    if not hasattr(data, "__getitem__") or isinstance(data, (str, bytes)):
        raise TypeError(f"data must be a DataFrame or a mapping of columns, got {type(data).__name__}")
    names = {str(c): c for c in (data.columns if hasattr(data, "columns") else data.keys())}
    if columns is None:
        chosen = [c for c, orig in names.items() if _numeric(data[orig])]
        if not chosen:
            raise ValueError("data has no numeric column (name the columns to describe)")
    else:
        chosen = [str(c) for c in columns]
        unknown = [c for c in chosen if c not in names]
        if unknown:
            raise ValueError(f"columns must name columns of data, got unknown {unknown}")
        if not chosen:
            raise ValueError("columns must not be empty")
    return {c: as_array_1d(data[names[c]], c) for c in chosen}


@validate_params(
    {
        "data": ANY,  # a DataFrame or mapping: its columns are converted one by one (by name)
        "epsilon": EPSILON,
        "q": LEVEL_OR_LEVELS,
        "bounds": ANY,  # None, a pair, or a mapping column -> pair / None: checked per column
        "columns": Rule("None or a sequence of column names", none=True),
        "count_share": real_in(0.0, 1.0),
        "rng": SEED,
        "accountant": ACCOUNTANT,
    }
)
def describe(
    data: object,
    epsilon: float,
    *,
    q: float | Sequence[float] = (0.25, 0.5, 0.75),
    bounds: tuple[float, float] | Mapping[str, tuple[float, float] | None] | None = None,
    columns: Sequence[str] | None = None,
    count_share: float = 0.1,
    rng: SeedLike = None,
    accountant: Accountant | None = None,
) -> Description:
    r"""A private count of the rows and the private quantiles of each numeric column: epsilon in all.

    .. math:: \varepsilon = \varepsilon_n + c\,\varepsilon_c, \qquad
              \varepsilon_n = s\,\varepsilon, \quad
              \varepsilon_c = (\varepsilon - \varepsilon_n)/c

    (s = ``count_share``, c columns) under add/remove of one row (sequential composition,
    mathematics §12.6): the count is n + K, K exact discrete Laplace of scale 1/epsilon_n (an
    integer; mathematics §11.1), each column's levels come from :func:`private_quantiles` at
    epsilon_c.

    Parameters
    ----------
    data : DataFrame or mapping
        A pandas or polars DataFrame, or a mapping of column name to column; one row per record.
        A missing value is a ValueError naming its column.
    epsilon : float
        The total budget (> 0).
    q : float or sequence of float, default=(0.25, 0.5, 0.75)
        The levels of every column.
    bounds : pair, mapping or None, default=None
        Public ``(a, b)`` of every column, a mapping of column to pair (or None), or None: each
        column releases its own bounds (mathematics §15.2).
    columns : sequence of str or None, default=None
        The columns to describe; None: every column of a numeric dtype (the schema is public).
    count_share : float, default=0.1
        The share of epsilon spent on the count of rows (at epsilon 1: a standard deviation of
        about 14 rows).
    rng : SeedLike, default=None
        The randomness; a seed reproduces.
    accountant : Accountant, default=None
        Charged the whole description once, before any randomness is drawn.

    Returns
    -------
    Description
        The count, the quantiles and the budget split (``print`` shows them as a table).

    Examples
    --------
    >>> import numpy as np
    >>> from dpselect.apps.quantiles import describe
    >>> gen = np.random.default_rng(0)
    >>> table = {"age": gen.integers(18, 90, 5000), "hours": gen.integers(1, 80, 5000)}
    >>> d = describe(table, 1.0, bounds=(0, 120), rng=1)
    >>> d.columns, d.epsilon_count, d.privacy.epsilon
    (('age', 'hours'), 0.1, 1.0)
    """
    cols = _table(data, columns)
    per_col = {c: _bounds_of(bounds.get(c) if isinstance(bounds, Mapping) else bounds, "bounds") for c in cols}
    levels = (q,) if isinstance(q, float) else tuple(q)
    n = {x.size for x in cols.values()}
    if len(n) != 1:
        raise ValueError("data's columns must have the same length")
    eps_n, eps_c, privacy = _split(epsilon, count_share, len(cols))
    gen = check_random_state(rng)
    charge(accountant, privacy)
    count = GridLaplace(1.0, eps_n, granularity=1.0).release(float(n.pop()), rng=gen)
    quantiles = [private_quantiles(x, list(levels), eps_c, bounds=per_col[c], rng=gen) for c, x in cols.items()]
    return Description(
        tuple(cols), levels, max(0, int(count)), np.asarray(quantiles, dtype=np.float64), eps_n, eps_c, privacy
    )
