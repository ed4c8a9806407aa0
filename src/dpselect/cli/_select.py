"""``dpselect select``: privately pick a row of a column of scores or counts, or the most frequent label.

Every option is checked before the data file is read or a random number drawn; the
printed lines hold public values only (the chosen label, the guarantee), never a value
computed from the records.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np
import typer

from ..problem import SelectionProblem
from ._input import (
    DEFAULT_DELTA,
    DEFAULT_MECHANISM,
    CLIError,
    Utility,
    build_mechanism,
    column_values,
    is_label_column,
    option,
    parse_candidates,
    read_table,
    select_problem,
    vote_labels,
)

if TYPE_CHECKING:
    import pandas as pd

    from ..mechanisms import Mechanism

__all__ = ["NON_PRIVATE_FLAG", "guarantee_lines", "select"]

NON_PRIVATE_FLAG = "--non-private-candidates-from-data"


def _resolve_votes(
    candidates: list[str] | None, non_private: bool, sensitivity: float | None, label_column: str | None
) -> Utility:
    """``--utility votes``: exactly one of --candidates and the non-private flag, no per-row option."""
    if candidates is not None and non_private:
        raise CLIError(f"give --candidates or {NON_PRIVATE_FLAG}, not both")
    if candidates is None and not non_private:
        raise CLIError(
            "--utility votes needs the public --candidates (comma-separated): labels taken from the "
            f"data make the output space private; {NON_PRIVATE_FLAG} does that with NO guarantee"
        )
    for name, value in (("--sensitivity", sensitivity), ("--label-column", label_column)):
        if value is not None:
            raise CLIError(f"{name} does not apply to --utility votes (one label per record)")
    return Utility.votes


def resolve_utility(
    utility: Utility | None,
    candidates: list[str] | None,
    non_private: bool,
    sensitivity: float | None,
    label_column: str | None,
) -> Utility | None:
    """--utility from the options alone (None: decided by the column's type, which needs the file)."""
    if utility is None:
        if candidates is not None or non_private:
            utility = Utility.votes
        elif sensitivity is not None:
            utility = Utility.scores
        else:
            return None
    if utility is Utility.votes:
        return _resolve_votes(candidates, non_private, sensitivity, label_column)
    if candidates is not None or non_private:
        raise CLIError(f"--candidates and {NON_PRIVATE_FLAG} apply to --utility votes (a column of raw labels) only")
    if utility is Utility.scores and sensitivity is None:
        raise CLIError(
            "--utility scores needs --sensitivity S: the most one record of the underlying data can "
            "change any row's score (public, from how the scores were computed)"
        )
    if utility is not Utility.scores and sensitivity is not None:
        raise CLIError(f"--sensitivity does not apply to --utility {utility.value} (counts have sensitivity 1)")
    return utility


def guarantee_lines(mechanism: str, mech: Mechanism, prob: SelectionProblem, what: str, delta_note: str) -> None:
    """Print the mechanism, the guarantee it gives on ``prob`` and the delta used."""
    guarantee = mech.privacy(prob)
    typer.echo(f"mechanism: {mechanism} ({type(mech).__name__}), {what}, relation {prob.relation}")
    typer.echo(f"guarantee: {guarantee}" + (f" -- {guarantee.source}" if guarantee.source else ""))
    typer.echo(f"delta: {guarantee.delta:g}{delta_note}")


def top_k_mechanism(name: str, eps: float, dlt: float | None, k: int, prob: SelectionProblem) -> tuple[Mechanism, str]:
    """``--k K``: one round's mechanism at --epsilon / K (and --delta / K), k rounds in all.

    The K rounds (peeling; one-shot Gumbel for em and rnm_gumbel, the same law) compose to the
    sum of the rounds' guarantees (mathematics §10.2); the round's epsilon steps down by ulps
    until that floating-point sum is at most --epsilon.
    """
    from ..mechanisms import TopK

    per_eps, per_dlt = eps / k, None if dlt is None else dlt / k
    while True:
        mech, note = build_mechanism(name, per_eps, per_dlt)
        top = TopK(mech, k)
        if not prob.private or top.privacy(prob).epsilon <= eps:
            return cast("Mechanism", top), note  # TopK selects and states its guarantee as one
        per_eps = float(np.nextafter(per_eps, 0.0))


def _undecided_column(df: pd.DataFrame, file: Path, column: str, label_column: str | None) -> CLIError:
    """The error when no --utility, --candidates or --sensitivity says what the column holds."""
    if is_label_column(df, column):
        return CLIError(
            f"--column {column!r} holds labels: give the public --candidates (comma-separated) to "
            f"choose the most frequent ({NON_PRIVATE_FLAG} takes them from the data, with NO guarantee)"
        )
    column_values(df, file, column, label_column)  # names a missing or non-numeric column
    return CLIError(
        f"--column {column!r} is numeric: say what it holds: --utility scores --sensitivity S "
        "(one row per public candidate; S = the most one record changes a score) or --utility "
        "majority | indicator (one count per candidate)"
    )


def _epsilon_of(mech: Mechanism) -> float:
    return float(mech.epsilon)  # type: ignore[attr-defined]  # every registry mechanism has one


def _rounds(k: int | None) -> str:
    return "" if k is None else f", top {k}: {k} rounds of --epsilon / {k} (mathematics §10.2)"


def _k_within(k: int, m: int) -> int:
    """--k at most the number of candidates (public: the --candidates or the rows)."""
    if k > m:
        raise CLIError(f"--k must be at most the number of candidates ({m}), got {k}")
    return k


def _select_votes(
    df: pd.DataFrame,
    file: Path,
    column: str,
    cands: list[str] | None,
    mechanism: str,
    mech: Mechanism,
    delta_note: str,
    rng: np.random.Generator,
    k: int | None = None,
    dlt: float | None = None,
) -> None:
    """``select`` on a column of raw labels: permute-and-flip (or --mechanism) on the label counts."""
    from ..apps.counts import label_counts

    labels = vote_labels(df, file, column)
    private = cands is not None
    if cands is None:
        cands = sorted(set(labels.tolist()))
    counts = label_counts(labels, cands)
    prob = SelectionProblem(counts, global_sensitivity=1.0, monotone=True, relation="add_remove", private=private)
    if k is not None:
        mech, delta_note = top_k_mechanism(mechanism, _epsilon_of(mech), dlt, _k_within(k, len(cands)), prob)
    choice = ", ".join(cands[int(i)] for i in np.atleast_1d(mech.select(prob, rng=rng)))
    choice += "" if k is None else " (most preferred first)"
    if not private:
        print(
            f"dpselect: warning: {NON_PRIVATE_FLAG}: the candidates are the labels seen in the data, so "
            "the printed label can be one record's value: this release is NOT differentially private",
            file=sys.stderr,
        )
    # only the winning label is released: never a count or the number of records
    typer.echo(f"selected: {choice}" + ("" if private else "  [NOT PRIVATE: candidates taken from the data]"))
    what = (
        f"majority vote over {len(cands)} public candidate labels"
        if private
        else "majority vote over the labels seen in the data"
    )
    guarantee_lines(mechanism, mech, prob, what + ", one row per record" + _rounds(k), delta_note)


def _select_rows(
    df: pd.DataFrame,
    file: Path,
    column: str,
    label_column: str | None,
    utility: Utility,
    sensitivity: float | None,
    mechanism: str,
    mech: Mechanism,
    delta_note: str,
    rng: np.random.Generator,
    k: int | None = None,
    dlt: float | None = None,
) -> None:
    """``select`` on a column of scores or counts, one row per public candidate (``k``: the k best)."""
    values, labels = column_values(df, file, column, label_column)
    prob, what = select_problem(values, labels, utility, sensitivity, column)
    if k is not None:
        mech, delta_note = top_k_mechanism(mechanism, _epsilon_of(mech), dlt, _k_within(k, len(values)), prob)
        chosen = np.asarray(mech.select(prob, rng=rng))
        typer.echo("selected: " + ", ".join(str(labels[int(i)]) for i in chosen) + " (most preferred first)")
    else:
        idx = int(mech.select(prob, rng=rng))
        # only the choice is released: never the private value of the chosen row
        typer.echo(f"selected: {labels[idx]} (row {idx} of {len(values)})")
    guarantee_lines(mechanism, mech, prob, what + _rounds(k), delta_note)
    typer.echo(
        "assumes: the rows are public candidates (their number and labels do not depend on the data)"
        + (
            f" and one record changes any score by at most {sensitivity:g}"
            if sensitivity is not None
            else " and the column holds one count of records per candidate"
        )
    )


def select(
    file: Path = typer.Argument(
        ...,
        metavar="FILE",
        help="CSV or Parquet file: one row per candidate (scores, counts) or one row per record (votes)",
    ),
    column: str = typer.Option(..., "--column", help="column of scores / counts, or of raw labels (votes)"),
    epsilon: float = typer.Option(..., "--epsilon", help="privacy budget (> 0)"),
    utility: Utility | None = typer.Option(
        None,
        "--utility",
        show_default="votes with --candidates, scores with --sensitivity, else required",
        help="votes: one row per record, the column holds labels, choose among --candidates; "
        "scores: the column is u(x, r) of public candidate rows, with a public --sensitivity; "
        "majority: the column holds counts and the utility is the counts (monotone, sensitivity 1); "
        "indicator: counts, argmax-indicator utility (the smooth mechanisms' seed utility)",
    ),
    mechanism: str = typer.Option(
        DEFAULT_MECHANISM,
        "--mechanism",
        help="em | pf | rnm_laplace | rnm_gumbel | rnm_exponential | snm_t | snm_laplace | snm_lln | sps | ld "
        "(default pf: the most accurate sound choice for counts and scores)",
    ),
    delta: float | None = typer.Option(
        None,
        "--delta",
        help=f"delta of the approximate-DP mechanisms (snm_laplace, snm_lln: default "
        f"{DEFAULT_DELTA:g}); the delta used is printed",
    ),
    seed: int | None = typer.Option(None, "--seed", help="random seed >= 0 (default: fresh entropy)"),
    sensitivity: float | None = typer.Option(
        None, "--sensitivity", help="--utility scores: the public global sensitivity of the scores (required)"
    ),
    label_column: str | None = typer.Option(None, "--label-column", help="column naming the candidate rows"),
    candidates: str | None = typer.Option(
        None,
        "--candidates",
        help="--utility votes: the public labels to choose from, comma-separated; a misspelt label is "
        "a candidate no record holds (count 0), never warned about (a warning would tell that no record has it)",
    ),
    k: int | None = typer.Option(
        None,
        "--k",
        help="print the K best labels, most preferred first (labels only); each of the K "
        "rounds gets --epsilon / K, K rounds compose to --epsilon",
    ),
    non_private: bool = typer.Option(
        False,
        NON_PRIVATE_FLAG,
        help="--utility votes without --candidates: choose among the labels seen in "
        "the data; the output can be one record's value: NO privacy guarantee",
    ),
) -> None:
    """Privately pick the best row of a column of scores or counts, or the most frequent of a column of raw
    labels among public --candidates (one row per record); print the choice, the guarantee and delta.

    Only the chosen label (or row index) is printed, never a private value or count.
    """  # noqa: D205
    eps = option("--epsilon", epsilon)
    dlt = option("--delta", delta)
    rng = np.random.default_rng(option("--seed", seed))
    mech, delta_note = build_mechanism(mechanism, eps, dlt)
    cands = parse_candidates(candidates)
    sens = option("--sensitivity", sensitivity)
    top = None if k is None else option("--k", k)
    resolved = resolve_utility(utility, cands, non_private, sens, label_column)
    df = read_table(file)  # every option is checked: now the data
    if resolved is None:
        raise _undecided_column(df, file, column, label_column)
    if resolved is Utility.votes:
        _select_votes(df, file, column, cands, mechanism, mech, delta_note, rng, top, dlt)
    else:
        _select_rows(df, file, column, label_column, resolved, sens, mechanism, mech, delta_note, rng, top, dlt)
