"""Command-line interface (typer): ``dpselect reproduce | select | audit | demo``.

* ``dpselect reproduce NAME [--quick] [--out DIR] [--data-dir DIR] [--scheduler ADDRESS] [--seed N] [--workers N]``
  runs a paper experiment (:mod:`dpselect.experiments`) on Dask and writes
  ``DIR/NAME/results.csv``, PNG figures and ``report.md`` (``all`` runs every
  experiment and also writes ``DIR/report.md``).
* ``dpselect select FILE --column NAME --epsilon E [...]`` privately picks a
  row of a CSV / Parquet file (scores, or counts with the majority utility).
* ``dpselect audit MECHANISM --app majority --m 5 [...]`` exactly audits a
  mechanism over all neighbours of random small count vectors.
* ``dpselect demo`` prints a comparison table on a synthetic problem.

User errors (unknown experiment, missing data, bad epsilon, unreadable file,
...) print one line ``dpselect: error: ...`` on stderr and exit with status 2,
without a traceback.  ``main(argv)`` returns the exit status.

Needs the ``cli`` extra (``pip install "dpselect[cli]"``): importing this module
without typer raises an ImportError naming the extra, and the ``dpselect``
command (:func:`dpselect.__main__.main`) prints that message as one line.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np

from . import analysis
from ._cli_input import (
    DEFAULT_DELTA,
    DEFAULT_MECHANISM,
    CLIError,
    Utility,
    build_mechanism,
    check_delta,
    check_eps,
    check_out_dir,
    check_seed,
    column_values,
    is_label_column,
    read_table,
    select_problem,
    vote_labels,
)
from ._optional import MissingExtraError, require
from .mechanisms import ExponentialMechanism, PermuteAndFlip, ReportNoisyMax
from .problem import SelectionProblem

require("typer", "cli", purpose="the dpselect command line")

import typer  # noqa: E402

__all__ = ["main", "demo_table", "app"]


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


def _build_app() -> Any:
    app = typer.Typer(
        name="dpselect",
        help="Differentially private selection: reproduce the papers' experiments, select, audit.",
        add_completion=False,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    # ------------------------------------------------------------------ reproduce
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
        from .experiments import runner

        if name != "all" and name not in runner.EXPERIMENTS:
            raise CLIError(f"unknown experiment {name!r}; choose one of: {', '.join(runner.EXPERIMENTS)}, all")
        if workers is not None and workers < 1:
            raise CLIError(f"--workers must be >= 1, got {workers}")
        local_schedulers = ("processes", "threads", "synchronous")
        if scheduler is not None and "://" not in scheduler and scheduler not in local_schedulers:
            raise CLIError(f"--scheduler must be an address like tcp://host:8786, got {scheduler!r}")
        if data_dir is not None and not Path(data_dir).is_dir():
            raise CLIError(f"--data-dir {str(data_dir)!r} is not a directory")
        check_out_dir(out)
        check_seed(seed)
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

    # ------------------------------------------------------------------ select
    @app.command()
    def select(
        file: Path = typer.Argument(..., help="CSV or Parquet file: one row per candidate (scores, counts) or "
                                              "one row per record (votes)"),
        column: str = typer.Option(..., "--column", help="column of scores / counts, or of raw labels (votes)"),
        epsilon: float = typer.Option(..., "--epsilon", help="privacy budget (> 0)"),
        utility: Utility = typer.Option(
            Utility.scores, "--utility",
            help="votes: one row per record, the column holds labels (the default for a non-numeric column); "
                 "scores: the column is u(x, r); majority: the column holds counts and the utility is the counts "
                 "(monotone, sensitivity 1); indicator: counts, argmax-indicator utility (the smooth mechanisms' "
                 "seed utility)"),
        mechanism: str = typer.Option(
            DEFAULT_MECHANISM, "--mechanism",
            help="em | pf | rnm_laplace | rnm_gumbel | rnm_exponential | snm_t | snm_laplace | snm_lln | sps | ld "
                 "(default pf: the most accurate sound choice for counts and scores)"),
        delta: float | None = typer.Option(
            None, "--delta", help=f"delta of the approximate-DP mechanisms (snm_laplace, snm_lln: default "
                                  f"{DEFAULT_DELTA:g}); the delta used is printed"),
        seed: int | None = typer.Option(None, "--seed", help="random seed >= 0 (default: fresh entropy)"),
        sensitivity: float = typer.Option(
            1.0, "--sensitivity", help="global sensitivity of the scores (--utility scores)"),
        label_column: str | None = typer.Option(None, "--label-column", help="column naming the candidates"),
        candidates: str | None = typer.Option(
            None, "--candidates", help="--utility votes: the public labels to choose from, comma-separated "
                                       "(without it the labels seen in the data are used: no guarantee)"),
    ) -> None:
        """Privately pick the best row of a column of scores or counts, or the most frequent label of a column
        of raw labels (one row per record); print the choice, the guarantee and delta.

        Only the chosen label (or row index) is printed, never a private value or count.
        """
        eps = check_eps(epsilon)
        dlt = None if delta is None else check_delta(delta)
        rng = np.random.default_rng(check_seed(seed))
        df = read_table(file)
        if utility is Utility.votes or (utility is Utility.scores and is_label_column(df, column)):
            _select_votes(df, file, column, candidates, mechanism, eps, dlt, rng)
            return
        if candidates is not None:
            raise CLIError("--candidates applies to --utility votes (a column of raw labels) only")
        values, labels = column_values(df, file, column, label_column)
        prob, what = select_problem(values, labels, utility, sensitivity, column)
        mech, delta_note = build_mechanism(mechanism, eps, dlt)
        guarantee = mech.privacy(prob)
        if dlt is not None and guarantee.delta == 0:
            delta_note = f" (--mechanism {mechanism} is pure epsilon-DP: --delta {dlt:g} is not used)"
        idx = int(mech.select(prob, rng=rng))
        # only the choice is released: never the private value of the chosen row
        typer.echo(f"selected: {labels[idx]} (row {idx} of {len(values)})")
        typer.echo(f"mechanism: {mechanism} ({type(mech).__name__}), {what}, relation {prob.relation}")
        typer.echo(f"guarantee: {guarantee}" + (f" -- {guarantee.source}" if guarantee.source else ""))
        typer.echo(f"delta: {guarantee.delta:g}{delta_note}")

    def _select_votes(df: Any, file: Path, column: str, candidates: str | None, mechanism: str, eps: float,
                      dlt: float | None, rng: np.random.Generator) -> None:
        """``select`` on a column of raw labels: permute-and-flip (or --mechanism) on the label counts."""
        from .apps.counts import label_counts

        labels, cands = vote_labels(df, file, column, candidates)
        if cands is None:
            cands = sorted(set(labels.tolist()))
            typer.echo("warning: no --candidates given: the labels seen in the data are the output space, "
                       "which is data-dependent: this release has NO privacy guarantee", err=True)
        counts = label_counts(labels, cands)
        prob = SelectionProblem(counts, global_sensitivity=1.0, monotone=True, relation="add_remove",
                                private=candidates is not None)
        mech, delta_note = build_mechanism(mechanism, eps, dlt)
        guarantee = mech.privacy(prob)
        choice = cands[int(mech.select(prob, rng=rng))]
        # only the winning label is released: never a count or the number of records
        typer.echo(f"selected: {choice}")
        typer.echo(f"mechanism: {mechanism} ({type(mech).__name__}), majority vote over {len(cands)} candidate "
                   f"labels, one row per record, relation {prob.relation}")
        typer.echo(f"guarantee: {guarantee}" + (f" -- {guarantee.source}" if guarantee.source else ""))
        typer.echo(f"delta: {guarantee.delta:g}{delta_note}")

    # ------------------------------------------------------------------ audit
    @app.command()
    def audit(
        mechanism: str = typer.Argument(..., help="mechanism name (em, pf, rnm_laplace, snm_t, sps, ld, ...)"),
        app_name: App = typer.Option(App.majority, "--app", help="application whose neighbours are enumerated"),
        m: int = typer.Option(5, "--m", help="number of candidates (classes)"),
        epsilon: float = typer.Option(1.0, "--epsilon", help="privacy budget (> 0)"),
        delta: float | None = typer.Option(
            None, "--delta", help=f"delta of the approximate-DP mechanisms (default {DEFAULT_DELTA:g} for them)"),
        max_count: int = typer.Option(8, "--max-count", help="counts are drawn from 0..max-count"),
        n_vectors: int = typer.Option(20, "--n-vectors", help="number of random count vectors"),
        relation: str = typer.Option("add_remove", "--relation", help="add_remove | replace"),
        seed: int = typer.Option(0, "--seed", help="seed of the random count vectors"),
    ) -> None:
        """Exact privacy audit over all neighbours of random small count vectors."""
        from .analysis import audit as run_audit
        from .apps.counts import majority_neighbours, majority_problem

        eps = check_eps(epsilon)
        dlt = None if delta is None else check_delta(delta)
        if m < 2:
            raise CLIError(f"--m must be >= 2, got {m}")
        if max_count < 1 or n_vectors < 1:
            raise CLIError("--max-count and --n-vectors must be >= 1")
        if relation not in ("add_remove", "replace"):
            raise CLIError(f"--relation must be add_remove or replace, got {relation!r}")
        check_seed(seed)
        mech, delta_note = build_mechanism(mechanism, eps, dlt, option="MECHANISM")
        rng = np.random.default_rng(seed)
        vectors = rng.integers(0, max_count + 1, size=(n_vectors, m))
        pairs = []
        for x in vectors:
            px = majority_problem(x, relation=relation)
            for y in majority_neighbours(x, relation=relation):
                pairs.append((px, majority_problem(y, relation=relation)))
        report = run_audit(mech, pairs)
        typer.echo(f"{mechanism} ({type(mech).__name__}) on the majority app: m = {m}, {n_vectors} random count "
                   f"vectors in 0..{max_count}, all {relation} neighbours")
        typer.echo(str(report))
        typer.echo(f"delta: {report.claimed.delta:g}{delta_note}")
        typer.echo(f"max privacy loss {report.max_loss:.6g} vs claimed epsilon {report.claimed.epsilon:.6g}: "
                   + ("VIOLATION" if report.violates else "ok"))

    # ------------------------------------------------------------------ demo
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

    return app


app = _build_app()


def _click_exception_types() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """(ClickException classes, Abort classes) of click and of typer's vendored copy (typer >= 0.25)."""
    errors: list[type[BaseException]] = []
    aborts: list[type[BaseException]] = []
    for modname in ("click.exceptions", "typer._click.exceptions"):
        try:
            import importlib

            mod = importlib.import_module(modname)
        except ImportError:
            continue
        if hasattr(mod, "ClickException"):
            errors.append(mod.ClickException)
        if hasattr(mod, "Abort"):
            aborts.append(mod.Abort)
    return tuple(errors), tuple(aborts)


def _error(msg: str) -> int:
    print(f"dpselect: error: {msg}", file=sys.stderr)
    return 2


# ---------------------------------------------------------------------- tdt (GWAS top-k)
@app.command("tdt")
def tdt_command(
    file: Path = typer.Argument(
        ..., help="PLINK 1 fileset (prefix or .bed path) of trios, or a VCF/BCF file (with --pedigree)"
    ),
    epsilon: float = typer.Option(..., "--epsilon", help="total privacy budget (> 0), split over the k rounds"),
    k: int = typer.Option(..., "--k", help="number of SNPs to select (>= 1)"),
    mechanism: str = typer.Option(
        "pf", "--mechanism",
        help="pf (default), em, or another registry name (sps, ld, ... with --utility chi2); "
             "nd_pf / nd_em are deprecated spellings of pf / em with --utility distance"),
    utility: str = typer.Option(
        "distance", "--utility",
        help="distance (default: families to change before a SNP's rank changes, sensitivity 1) or chi2 "
             "(the TDT statistics; what sps and ld need)"),
    out: Path | None = typer.Option(None, "--out", help="also write the selected SNPs (CHR SNP BP A1 A2) as TSV"),
    scheduler: str | None = typer.Option(None, "--scheduler", help="dask.distributed address for the counts"),
    seed: int | None = typer.Option(None, "--seed", help="random seed (>= 0; default: fresh entropy)"),
    chunk_snps: int = typer.Option(10_000, "--chunk-snps",
                                   help="SNPs per Dask task (memory ~ individuals / 4 x this bytes)"),
    pedigree: Path | None = typer.Option(
        None, "--pedigree", help=".fam/.ped pedigree of a VCF/BCF FILE (individual ids = sample names)"
    ),
    quiet: bool = typer.Option(False, "--quiet", help="no progress line on stderr"),
) -> None:
    """Privately select the top-k SNPs of a trio cohort by the TDT (one family replaced).

    Prints a table of the selected SNPs' public annotations (CHR, SNP, BP,
    A1, A2 from the .bim or the VCF) and the guarantee only: the counts
    and statistics (T, U, chi2, OR, P) are private and never printed.
    """
    import warnings

    from .apps.genomics import UTILITIES, select_top_snps, transmission_counts
    from .mechanisms.registry import MECHANISM_NAMES

    if not np.isfinite(epsilon) or epsilon <= 0:
        raise CLIError(f"--epsilon must be a finite number > 0, got {epsilon!r}")
    if k < 1:
        raise CLIError(f"--k must be >= 1, got {k}")
    if seed is not None and seed < 0:
        raise CLIError(f"--seed must be >= 0, got {seed}")
    if chunk_snps < 1:
        raise CLIError(f"--chunk-snps must be >= 1, got {chunk_snps}")
    deprecated = {"nd_pf": "pf", "nd_em": "em"}
    if mechanism not in MECHANISM_NAMES and mechanism not in deprecated:
        raise CLIError(f"--mechanism {mechanism!r} is not a mechanism; choose one of: "
                       + ", ".join(MECHANISM_NAMES))
    if utility not in UTILITIES:
        raise CLIError(f"--utility {utility!r} is not a utility; choose one of: {', '.join(UTILITIES)}")
    if mechanism in deprecated:
        if utility != "distance":
            raise CLIError(f"--mechanism {mechanism} means --mechanism {deprecated[mechanism]} --utility "
                           f"distance; it cannot take --utility {utility}")
        print(f"dpselect: warning: --mechanism {mechanism} is deprecated; use --mechanism "
              f"{deprecated[mechanism]} --utility distance", file=sys.stderr)
        mechanism = deprecated[mechanism]
    if file.is_dir():
        raise CLIError(f"FILE {str(file)!r} is a directory; give the PLINK fileset prefix or its .bed file")
    if pedigree is not None and not pedigree.is_file():
        raise CLIError(f"--pedigree {str(pedigree)!r} is not a file")
    if out is not None and out.is_dir():
        raise CLIError(f"--out {str(out)!r} is a directory; give a file name")
    vcf = str(file).lower().endswith((".vcf", ".vcf.gz", ".bcf"))
    if vcf and pedigree is None:
        raise CLIError(f"FILE {str(file)!r} is a VCF/BCF: give its trios with --pedigree PED")
    if not vcf and pedigree is not None:
        raise CLIError("--pedigree is only for a VCF/BCF FILE; a PLINK fileset's .fam defines its trios")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            counts = transmission_counts(file, pedigree=pedigree, chunk_snps=chunk_snps, scheduler=scheduler,
                                         progress=not quiet)
    except (ValueError, FileNotFoundError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if msg.startswith("path: "):
            msg = "FILE " + msg[len("path: "):]
        elif msg.startswith("pedigree: "):
            msg = "--pedigree " + msg[len("pedigree: "):]
        raise CLIError(msg) from None
    for w in caught:
        text = str(w.message)
        print("dpselect: warning: " + ("FILE " + text[6:] if text.startswith("path: ") else text),
              file=sys.stderr)
    if k > counts.b.size:
        raise CLIError(f"--k must be <= the number of SNPs in FILE ({counts.b.size}), got {k}")
    try:
        top = select_top_snps(counts.b, counts.c, counts.n_families, epsilon, k, mechanism=mechanism,
                              utility=utility, rng=seed)
    except (ValueError, TypeError) as exc:
        raise CLIError(f"--mechanism {mechanism} --utility {utility}: {str(exc).splitlines()[0]}") from None
    rows = counts.annotations(top.indices)
    header = ("RANK", "CHR", "SNP", "BP", "A1", "A2")
    table = [header] + [(str(r),) + tuple(str(v) for v in row) for r, row in enumerate(rows, start=1)]
    widths = [max(len(t[j]) for t in table) for j in range(len(header))]
    for line in table:
        typer.echo("  ".join(v.rjust(w) if j in (0, 3) else v.ljust(w)
                             for j, (v, w) in enumerate(zip(line, widths))).rstrip())
    if out is not None:
        out.write_text("".join("\t".join(line) + "\n" for line in table))
    typer.echo(f"mechanism: {mechanism} on utility {utility} ({top.method}, {k} rounds at epsilon "
               f"{top.round_privacy.epsilon:g} each), {counts.n_families} trios, {counts.b.size} SNPs"
               + (f"; table written to {out}" if out is not None else ""))
    typer.echo(f"guarantee: {top.privacy.epsilon:g}-DP (delta = {top.privacy.delta:g}) under one family "
               "replaced; A1 = the allele whose transmissions were counted (.bim column 5, PLINK's A1 with "
               "--keep-allele-order; ALT for a VCF)")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line on ``argv`` (default ``sys.argv[1:]``); returns the exit status.

    The ``dpselect`` console script calls it through :func:`dpselect.__main__.main`.
    """
    click_errors, aborts = _click_exception_types()

    args = list(sys.argv[1:] if argv is None else argv)
    try:
        command = typer.main.get_command(app)
        result = command.main(args=args, prog_name="dpselect", standalone_mode=False)
    except aborts:
        return _error("aborted")
    except click_errors as exc:  # usage errors: bad option, missing argument, bad value
        if type(exc).__name__ == "NoArgsIsHelpError":  # the help was printed
            return 2
        fmt_message = getattr(exc, "format_message", None)
        message = fmt_message() if callable(fmt_message) else str(exc)
        return _error(str(message).replace("\n", " "))
    except (CLIError, MissingExtraError, ValueError, TypeError, FileNotFoundError, ConnectionError,
            NotImplementedError) as exc:  # FileNotFoundError includes the experiments' DataNotFoundError
        if os.environ.get("DPSELECT_DEBUG"):
            raise
        return _error(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    except KeyboardInterrupt:
        return _error("interrupted")
    except Exception as exc:  # an unexpected failure: still one line (DPSELECT_DEBUG=1 shows the traceback)
        if os.environ.get("DPSELECT_DEBUG"):
            raise
        print(f"dpselect: internal error: {type(exc).__name__}: {exc} (set DPSELECT_DEBUG=1 for the traceback)",
              file=sys.stderr)
        return 1
    return result if isinstance(result, int) else 0
