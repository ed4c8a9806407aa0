"""``dpselect keys``: the keys of a user–key table that may be released (registered by :func:`add_commands`).

Prints the released keys only, one per line on stdout (most frequent first with ``--k``,
sorted otherwise); the guarantee goes to stderr.  No line holds a number computed from the
records; every option is checked before the file is read or a random number drawn.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from .._params import int_at_least
from .._validation import check_delta_positive
from ..apps.counts import PARTITION_METHODS
from ._input import CLIError, option, read_table

__all__ = ["add_commands", "keys"]


def _check(epsilon: float, delta: float, max_contributions: int, k: int | None, method: str, seed: int | None) -> None:
    option("--epsilon", epsilon)
    check_delta_positive(delta, "a key only one user holds is printed with probability <= delta", "--delta")
    int_at_least(1)(max_contributions, "--max-contributions")
    if k is not None:
        option("--k", k)
    if method not in PARTITION_METHODS:
        raise CLIError(f"--method {method!r} is not a method; choose one of: {', '.join(PARTITION_METHODS)}")
    option("--seed", seed)


def keys(
    file: Path = typer.Argument(..., help="CSV or Parquet file, one row per (user, key) pair"),
    user_column: str = typer.Option(..., "--user-column", help="the column identifying the user (privacy unit)"),
    key_column: str = typer.Option(..., "--key-column", help="the column holding the keys"),
    epsilon: float = typer.Option(..., "--epsilon", help="privacy budget (> 0)"),
    delta: float = typer.Option(..., "--delta", help="in (0, 1): the chance a key only one user holds is printed"),
    max_contributions: int = typer.Option(
        1, "--max-contributions", help="keys kept per user (public; extra keys dropped by a seeded rule)"
    ),
    k: int | None = typer.Option(None, "--k", help="print only the k most frequent keys (no counts)"),
    method: str = typer.Option("auto", "--method", help="partition selection method: " + ", ".join(PARTITION_METHODS)),
    seed: int | None = typer.Option(None, "--seed", help="random seed (>= 0; default: fresh entropy)"),
) -> None:
    """Print the keys that may be released ((epsilon, delta)-DP, add/remove one user with all her rows)."""
    from ..apps.counts import select_partitions, select_top_k_keys

    _check(epsilon, delta, max_contributions, k, method, seed)
    df = read_table(file)
    for opt, col in (("--user-column", user_column), ("--key-column", key_column)):
        if col not in df.columns:
            raise CLIError(f"{opt} {col!r} not in {file} (columns: {', '.join(map(str, df.columns))})")
    kw = dict(max_contributions=max_contributions, method=method, user_column=user_column, key_column=key_column)
    if k is None:
        out = select_partitions(df, epsilon, delta, rng=seed, **kw)  # type: ignore[arg-type]
        what = "partition selection"
    else:
        out = list(select_top_k_keys(df, epsilon, delta, k, rng=seed, **kw).keys)  # type: ignore[arg-type]
        what = f"top-{k} keys"
    for key in out:
        typer.echo(str(key))
    print(
        f"dpselect: {what}, ({epsilon:g}, {delta:g})-DP under add/remove of one user "
        f"(at most {max_contributions} keys each, method {method})",
        file=sys.stderr,
    )


def add_commands(app: typer.Typer) -> None:
    """Register ``keys`` on ``app``."""
    app.command("keys")(keys)
