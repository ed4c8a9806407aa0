"""``dpselect reproduce | select | audit | demo``: the typer commands (registered by :func:`add_commands`).

Every command checks all its options before it reads a data file, draws a
random number or prints anything; a printed line holds public values only
(the chosen label, the guarantee), never a value computed from the records.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from enum import Enum
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np
import typer

from .. import analysis
from ..mechanisms import ExponentialMechanism, PermuteAndFlip, ReportNoisyMax
from ..problem import SelectionProblem
from ._input import (
    DEFAULT_DELTA,
    DEFAULT_MECHANISM,
    CLIError,
    Utility,
    build_mechanism,
    check_delta,
    check_eps,
    check_out_dir,
    check_seed,
    check_sensitivity,
    column_values,
    is_label_column,
    parse_candidates,
    read_table,
    select_problem,
    vote_labels,
)

__all__ = ["add_commands", "demo_table"]

NON_PRIVATE_FLAG = "--non-private-candidates-from-data"


def demo_table(epsilons: Sequence[float] = (0.1, 0.5, 1.0, 2.0), m: int = 50, seed: int = 0) -> str:
    """A comparison table of mechanisms on a synthetic selection problem.

    Scores are synthetic vote counts (one clear winner, a few close runners-up,
    a long tail) with global sensitivity 1 under add/remove; each row gives the
    exact probability of returning the winner and the exact expected score gap.
    """
    rng = np.random.default_rng(seed)
    counts = np.sort(rng.poisson(20, size=m))[::-1].astype(float)
    counts[0] += 5
    problem = SelectionProblem(counts, global_sensitivity=1.0, monotone=False)
    lines = [
        f"Synthetic selection: m={m} candidates (vote counts, top={counts[0]:.0f}, "
        f"runner-up={counts[1]:.0f}), global sensitivity 1 (add/remove)",
        f"{'mechanism':<28}{'epsilon':>8}{'P[best]':>10}{'E[gap]':>10}  privacy",
    ]
    for eps in epsilons:
        for mech in (ExponentialMechanism(eps), PermuteAndFlip(eps), ReportNoisyMax(eps, noise="laplace")):
            name = type(mech).__name__ + (f"({mech.noise})" if isinstance(mech, ReportNoisyMax) else "")
            acc = analysis.accuracy(mech, problem)
            err = analysis.expected_error(mech, problem)
            lines.append(f"{name:<28}{eps:>8.2f}{acc:>10.4f}{err:>10.3f}  {str(mech.privacy(problem))}")
    return "\n".join(lines)


class App(str, Enum):
    """--app of ``dpselect audit``."""

    majority = "majority"


#: --utility of ``dpselect audit``: the ``utility`` of :func:`dpselect.apps.counts.majority_problem`.
AUDIT_UTILITIES = {
    "count": "u(x, r) = n_r, the count of class r (monotone, sensitivity 1)",
    "indicator": "u(x, r) = 1 if r is a most frequent class else 0 (the smooth mechanisms' seed utility)",
}


def _resolve_utility(utility: Utility | None, candidates: list[str] | None, non_private: bool,
                     sensitivity: float | None, label_column: str | None) -> Utility | None:
    """--utility from the options alone (None: decided by the column's type, which needs the file)."""
    if utility is None:
        if candidates is not None or non_private:
            utility = Utility.votes
        elif sensitivity is not None:
            utility = Utility.scores
        else:
            return None
    if utility is Utility.votes:
        if candidates is not None and non_private:
            raise CLIError(f"give --candidates or {NON_PRIVATE_FLAG}, not both")
        if candidates is None and not non_private:
            raise CLIError("--utility votes needs the public --candidates (comma-separated): labels taken from the "
                           f"data make the output space private; {NON_PRIVATE_FLAG} does that with NO guarantee")
        for name, value in (("--sensitivity", sensitivity), ("--label-column", label_column)):
            if value is not None:
                raise CLIError(f"{name} does not apply to --utility votes (one label per record)")
        return utility
    if candidates is not None or non_private:
        raise CLIError(f"--candidates and {NON_PRIVATE_FLAG} apply to --utility votes (a column of raw labels) only")
    if utility is Utility.scores and sensitivity is None:
        raise CLIError("--utility scores needs --sensitivity S: the most one record of the underlying data can "
                       "change any row's score (public, from how the scores were computed)")
    if utility is not Utility.scores and sensitivity is not None:
        raise CLIError(f"--sensitivity does not apply to --utility {utility.value} (counts have sensitivity 1)")
    return utility


def _guarantee_lines(mechanism: str, mech: Any, prob: SelectionProblem, what: str, delta_note: str) -> None:
    guarantee = mech.privacy(prob)
    typer.echo(f"mechanism: {mechanism} ({type(mech).__name__}), {what}, relation {prob.relation}")
    typer.echo(f"guarantee: {guarantee}" + (f" -- {guarantee.source}" if guarantee.source else ""))
    typer.echo(f"delta: {guarantee.delta:g}{delta_note}")


def add_commands(app: Any) -> None:
    """Register ``reproduce``, ``select``, ``audit`` and ``demo`` on the typer ``app``."""

    @app.command()
    def reproduce(
        name: str = typer.Argument(..., help="percentile | median | tdt | tree | forest | all"),
        quick: bool = typer.Option(False, "--quick", help="reduced grid with embedded data (minutes)"),
        out: Path = typer.Option(Path("out"), "--out", help="output directory (results under OUT/NAME/)"),
        data_dir: Path | None = typer.Option(
            None, "--data-dir", help="root of the real datasets (default: $DPSELECT_DATA; needed without --quick)"),
        scheduler: str | None = typer.Option(
            None, "--scheduler",
            help="dask.distributed scheduler address, e.g. tcp://host:8786 (default: local processes)"),
        seed: int = typer.Option(
            0, "--seed", help="master seed >= 0 (results are identical for a seed whatever the scheduler)"),
        workers: int | None = typer.Option(None, "--workers", help="local worker processes (default: all cores)"),
    ) -> None:
        """Reproduce a paper experiment: results.csv, PNG figures and report.md under OUT/NAME/."""
        from ..experiments import runner

        if name != "all" and name not in runner.EXPERIMENTS:
            raise CLIError(f"unknown experiment {name!r}; choose one of: {', '.join(runner.EXPERIMENTS)}, all")
        if workers is not None and workers < 1:
            raise CLIError(f"--workers must be >= 1, got {workers}")
        local_schedulers = ("processes", "threads", "synchronous")
        if scheduler is not None and "://" not in scheduler and scheduler not in local_schedulers:
            raise CLIError(f"--scheduler must be an address like tcp://host:8786, got {scheduler!r}")
        if data_dir is not None and not Path(data_dir).is_dir():
            raise CLIError(f"--data-dir {str(data_dir)!r} is not a directory")
        check_seed(seed)
        check_out_dir(out)
        kwargs: dict[str, Any] = dict(quick=quick, out=out, data_dir=data_dir, scheduler=scheduler, seed=seed,
                                      workers=workers)

        def report(res: Any) -> None:
            typer.echo(f"{res.name}: {res.n_tasks} tasks in {res.seconds:.1f} s -> {res.out_dir}/ "
                       f"({runner.count_line(res.claims)})")
            typer.echo(runner.claims_text(res.claims))
            typer.echo("")

        if name == "all":
            # validate every experiment's data before running anything
            ddir = runner.resolve_data_dir(data_dir)
            for exp in runner.EXPERIMENTS:
                runner.load_experiment(exp).tasks(quick, ddir)
            runner.reproduce_all(on_done=report, **kwargs)
            typer.echo(f"combined report: {Path(out) / 'report.md'} and {Path(out) / 'report.html'}")
        else:
            report(runner.reproduce(name, **kwargs))

    @app.command()
    def select(
        file: Path = typer.Argument(..., help="CSV or Parquet file: one row per candidate (scores, counts) or "
                                              "one row per record (votes)"),
        column: str = typer.Option(..., "--column", help="column of scores / counts, or of raw labels (votes)"),
        epsilon: float = typer.Option(..., "--epsilon", help="privacy budget (> 0)"),
        utility: Utility | None = typer.Option(
            None, "--utility", show_default="votes with --candidates, scores with --sensitivity, else required",
            help="votes: one row per record, the column holds labels, choose among --candidates; "
                 "scores: the column is u(x, r) of public candidate rows, with a public --sensitivity; "
                 "majority: the column holds counts and the utility is the counts (monotone, sensitivity 1); "
                 "indicator: counts, argmax-indicator utility (the smooth mechanisms' seed utility)"),
        mechanism: str = typer.Option(
            DEFAULT_MECHANISM, "--mechanism",
            help="em | pf | rnm_laplace | rnm_gumbel | rnm_exponential | snm_t | snm_laplace | snm_lln | sps | ld "
                 "(default pf: the most accurate sound choice for counts and scores)"),
        delta: float | None = typer.Option(
            None, "--delta", help=f"delta of the approximate-DP mechanisms (snm_laplace, snm_lln: default "
                                  f"{DEFAULT_DELTA:g}); the delta used is printed"),
        seed: int | None = typer.Option(None, "--seed", help="random seed >= 0 (default: fresh entropy)"),
        sensitivity: float | None = typer.Option(
            None, "--sensitivity", help="--utility scores: the public global sensitivity of the scores (required)"),
        label_column: str | None = typer.Option(None, "--label-column", help="column naming the candidate rows"),
        candidates: str | None = typer.Option(
            None, "--candidates", help="--utility votes: the public labels to choose from, comma-separated"),
        non_private: bool = typer.Option(
            False, NON_PRIVATE_FLAG, help="--utility votes without --candidates: choose among the labels seen in "
                                          "the data; the output can be one record's value: NO privacy guarantee"),
    ) -> None:
        """Privately pick the best row of a column of scores or counts, or the most frequent of a column of raw
        labels among public --candidates (one row per record); print the choice, the guarantee and delta.

        Only the chosen label (or row index) is printed, never a private value or count.
        """
        eps = check_eps(epsilon)
        dlt = None if delta is None else check_delta(delta)
        rng = np.random.default_rng(check_seed(seed))
        mech, delta_note = build_mechanism(mechanism, eps, dlt)
        cands = parse_candidates(candidates)
        sens = None if sensitivity is None else check_sensitivity(sensitivity)
        resolved = _resolve_utility(utility, cands, non_private, sens, label_column)
        df = read_table(file)  # every option is checked: now the data
        if resolved is None:
            if is_label_column(df, column):
                raise CLIError(f"--column {column!r} holds labels: give the public --candidates (comma-separated) "
                               f"to choose the most frequent ({NON_PRIVATE_FLAG} takes them from the data, with NO "
                               "guarantee)")
            column_values(df, file, column, label_column)  # names a missing or non-numeric column
            raise CLIError(f"--column {column!r} is numeric: say what it holds: --utility scores --sensitivity S "
                           "(one row per public candidate; S = the most one record changes a score) or --utility "
                           "majority | indicator (one count per candidate)")
        if resolved is Utility.votes:
            _select_votes(df, file, column, cands, mechanism, mech, delta_note, rng)
            return
        values, labels = column_values(df, file, column, label_column)
        prob, what = select_problem(values, labels, resolved, sens, column)
        idx = int(mech.select(prob, rng=rng))
        # only the choice is released: never the private value of the chosen row
        typer.echo(f"selected: {labels[idx]} (row {idx} of {len(values)})")
        _guarantee_lines(mechanism, mech, prob, what, delta_note)
        typer.echo("assumes: the rows are public candidates (their number and labels do not depend on the data)"
                   + (f" and one record changes any score by at most {sens:g}" if sens is not None else
                      " and the column holds one count of records per candidate"))

    def _select_votes(df: Any, file: Path, column: str, cands: list[str] | None, mechanism: str, mech: Any,
                      delta_note: str, rng: np.random.Generator) -> None:
        """``select`` on a column of raw labels: permute-and-flip (or --mechanism) on the label counts."""
        from ..apps.counts import label_counts

        labels = vote_labels(df, file, column)
        private = cands is not None
        if cands is None:
            cands = sorted(set(labels.tolist()))
        counts = label_counts(labels, cands)
        prob = SelectionProblem(counts, global_sensitivity=1.0, monotone=True, relation="add_remove",
                                private=private)
        choice = cands[int(mech.select(prob, rng=rng))]
        if not private:
            print(f"dpselect: warning: {NON_PRIVATE_FLAG}: the candidates are the labels seen in the data, so "
                  "the printed label can be one record's value: this release is NOT differentially private",
                  file=sys.stderr)
        # only the winning label is released: never a count or the number of records
        typer.echo(f"selected: {choice}" + ("" if private else "  [NOT PRIVATE: candidates taken from the data]"))
        what = (f"majority vote over {len(cands)} public candidate labels" if private
                else "majority vote over the labels seen in the data")
        _guarantee_lines(mechanism, mech, prob, what + ", one row per record", delta_note)

    @app.command()
    def audit(
        mechanism: str = typer.Argument(..., help="mechanism name (em, pf, rnm_laplace, snm_t, sps, ld, ...)"),
        app_name: App = typer.Option(App.majority, "--app", help="application whose neighbours are enumerated "
                                                                 "(majority: class counts)"),
        utility: str = typer.Option(
            "count", "--utility",
            help="count: u = the class count (monotone, sensitivity 1); indicator: u = 1 on the most frequent "
                 "classes (the smooth mechanisms' seed utility; many neighbours leave it unchanged)"),
        m: int = typer.Option(5, "--m", help="number of candidates (classes)"),
        epsilon: float = typer.Option(1.0, "--epsilon", help="privacy budget (> 0)"),
        delta: float | None = typer.Option(
            None, "--delta", help=f"delta of the approximate-DP mechanisms (default {DEFAULT_DELTA:g} for them)"),
        max_count: int = typer.Option(8, "--max-count", help="counts are drawn from 0..max-count"),
        n_vectors: int = typer.Option(20, "--n-vectors", help="number of random count vectors"),
        counts: str | None = typer.Option(
            None, "--counts", help="audit this count vector (comma-separated, e.g. 22,8,17,4,0), not random ones"),
        relation: str = typer.Option("add_remove", "--relation", help="add_remove | replace"),
        seed: int = typer.Option(0, "--seed", help="seed of the random count vectors"),
    ) -> None:
        """Exact privacy audit of a mechanism over all neighbours of small count vectors of an application."""
        from ..analysis import audit as run_audit
        from ..apps.counts import majority_neighbours, majority_problem

        eps = check_eps(epsilon)
        dlt = None if delta is None else check_delta(delta)
        if m < 2:
            raise CLIError(f"--m must be >= 2, got {m}")
        if max_count < 1 or n_vectors < 1:
            raise CLIError("--max-count and --n-vectors must be >= 1")
        if relation not in ("add_remove", "replace"):
            raise CLIError(f"--relation must be add_remove or replace, got {relation!r}")
        if utility not in AUDIT_UTILITIES:
            raise CLIError(f"--utility must be one of: {', '.join(AUDIT_UTILITIES)}, got {utility!r}")
        check_seed(seed)
        mech, delta_note = build_mechanism(mechanism, eps, dlt, option="MECHANISM")
        if counts is not None:
            try:
                vectors = np.array([[int(v) for v in counts.split(",")]], dtype=np.int64)
            except ValueError:
                raise CLIError(f"--counts must be comma-separated integers, got {counts!r}") from None
            if vectors.shape[1] < 2 or (vectors < 0).any():
                raise CLIError("--counts must hold at least 2 non-negative integers")
            what = f"the counts {counts}"
        else:
            vectors = np.random.default_rng(seed).integers(0, max_count + 1, size=(n_vectors, m))
            what = f"m = {m}, {n_vectors} random count vectors in 0..{max_count}"
        kind = cast(Literal["count", "indicator"], utility)
        pairs = []
        for x in vectors:
            px = majority_problem(x, relation=relation, utility=kind)
            for y in majority_neighbours(x, relation=relation):
                pairs.append((px, majority_problem(y, relation=relation, utility=kind)))
        report = run_audit(mech, pairs)
        typer.echo(f"{mechanism} ({type(mech).__name__}) on the {app_name.value} app, utility {utility}: "
                   f"{AUDIT_UTILITIES[utility]}")
        typer.echo(f"{what}, all {relation} neighbours")
        typer.echo(str(report))
        typer.echo(f"delta: {report.claimed.delta:g}{delta_note}")
        if report.max_loss == 0:
            typer.echo("note: no neighbour changed the output law (loss 0): this audit is vacuous; try --utility "
                       "count or other --counts")
        typer.echo(f"max privacy loss {report.max_loss:.6g} vs claimed epsilon {report.claimed.epsilon:.6g}: "
                   + ("VIOLATION" if report.violates else "ok"))

    @app.command()
    def demo(
        epsilon: list[float] | None = typer.Option(None, "--epsilon", help="epsilon values (repeat the option)"),
        m: int = typer.Option(50, "--m", help="number of candidates"),
        seed: int = typer.Option(0, "--seed"),
    ) -> None:
        """Print a comparison table of mechanisms on a synthetic problem."""
        eps = [check_eps(e) for e in (epsilon or [0.1, 0.5, 1.0, 2.0])]
        check_seed(seed)
        if m < 2:
            raise CLIError("--m must be >= 2")
        typer.echo(demo_table(eps, m, seed))
