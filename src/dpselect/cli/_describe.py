"""``dpselect describe FILE``: a private count of rows and private quantiles of each numeric column.

Every option is checked before the file is read or a random number drawn; the printed table holds
the released values only (the noisy count, the private quantiles) and the budget split.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import typer

from .._params import PAIR, real_in
from ._input import CLIError, option, read_table

__all__ = ["describe"]


def _floats(text: str, flag: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",")]
    except ValueError:
        raise CLIError(f"{flag} must be comma-separated numbers, got {text!r}") from None


def _bounds(text: str | None) -> tuple[float, float] | None:
    if text is None:
        return None
    pair = _floats(text, "--bounds")
    if len(pair) != 2:
        raise CLIError(f"--bounds must be LO,HI (two numbers), got {text!r}")
    lo, hi = PAIR(tuple(pair), "--bounds")
    if not lo < hi:
        raise CLIError(f"--bounds must be LO,HI with LO < HI, got {text!r}")
    return lo, hi


def describe(
    file: Path = typer.Argument(..., metavar="FILE", help="CSV or Parquet file, one row per record"),
    epsilon: float = typer.Option(..., "--epsilon", help="privacy budget of the whole description (> 0)"),
    columns: str | None = typer.Option(
        None, "--columns", help="columns to describe, comma-separated (default: every numeric column)"
    ),
    bounds: str | None = typer.Option(
        None,
        "--bounds",
        metavar="LO,HI",
        help="public bounds of every column (default: none; each column releases its own bounds)",
    ),
    q: str = typer.Option("0.25,0.5,0.75", "--q", help="quantile levels in [0, 1], comma-separated"),
    count_share: float = typer.Option(0.1, "--count-share", help="share of --epsilon for the count of rows"),
    seed: int | None = typer.Option(None, "--seed", help="random seed >= 0 (default: fresh entropy)"),
) -> None:
    """Privately describe a table: a noisy count of rows and the quantiles of each numeric column, with the
    budget split (mathematics §12.6).
    """  # noqa: D205
    from ..apps.quantiles import describe as run

    eps = option("--epsilon", epsilon)
    rng = np.random.default_rng(option("--seed", seed))
    levels = [real_in(0.0, 1.0, closed=True)(v, "--q") for v in _floats(q, "--q")]
    share = real_in(0.0, 1.0)(count_share, "--count-share")
    pair = _bounds(bounds)
    names = None if columns is None else [c.strip() for c in columns.split(",")]
    df = read_table(file)  # every option is checked: now the data
    if names is not None:
        unknown = [c for c in names if c not in map(str, df.columns)]
        if unknown:
            raise CLIError(f"--columns {unknown} not in {file} (columns: {', '.join(map(str, df.columns))})")
    result = run(df, eps, q=levels, bounds=pair, columns=names, count_share=share, rng=rng)
    typer.echo(str(result))
