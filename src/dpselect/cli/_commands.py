"""``dpselect reproduce | select | audit | demo``: the typer commands (registered by :func:`add_commands`).

Every command checks all its options before it reads a data file, draws a
random number or prints anything; a printed line holds public values only
(the chosen label, the guarantee), never a value computed from the records.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np
import typer

from .. import analysis
from .._params import EPSILON, Rule, int_at_least, validate_params
from ..mechanisms import ExponentialMechanism, PermuteAndFlip, ReportNoisyMax
from ..problem import SelectionProblem
from ._describe import describe
from ._input import DEFAULT_DELTA, CLIError, build_mechanism, check_out_dir, option
from ._select import select

if TYPE_CHECKING:
    from ..experiments import ExperimentResult

__all__ = ["add_commands", "demo_table"]

#: The local schedulers ``dpselect reproduce --scheduler`` accepts besides an address.
LOCAL_SCHEDULERS = ("processes", "threads", "synchronous")

#: --utility of ``dpselect audit``: the ``utility`` of :func:`dpselect.apps.counts.majority_problem`.
AUDIT_UTILITIES = {
    "count": "u(x, r) = n_r, the count of class r (monotone, sensitivity 1)",
    "indicator": "u(x, r) = 1 if r is a most frequent class else 0 (the smooth mechanisms' seed utility)",
}


def _epsilons(value: Sequence[float], name: str) -> list[float]:
    """A non-empty sequence of epsilons, each checked by :data:`dpselect._params.EPSILON`."""
    values = list(value)
    if not values:
        raise ValueError(f"{name} must not be empty")
    return [EPSILON(e, f"{name}[{i}]") for i, e in enumerate(values)]


@validate_params(
    {
        "epsilons": Rule("a non-empty sequence of finite floats > 0", check=_epsilons),
        "m": int_at_least(2),
        "seed": int_at_least(0),
    }
)
def demo_table(epsilons: Sequence[float] = (0.1, 0.5, 1.0, 2.0), m: int = 50, seed: int = 0) -> str:
    """A comparison table of mechanisms on a synthetic selection problem.

    Scores are synthetic vote counts (one clear winner, a few close runners-up,
    a long tail) with global sensitivity 1 under add/remove; each row gives the
    exact probability of returning the winner and the exact expected score gap.

    Parameters
    ----------
    epsilons : sequence of float, default=(0.1, 0.5, 1.0, 2.0)
        The privacy budgets compared (each finite and > 0).
    m : int, default=50
        The number of candidates (>= 2).
    seed : int, default=0
        The seed of the synthetic counts (>= 0).

    Returns
    -------
    str
        The table, one line per mechanism and epsilon, with a header.

    Examples
    --------
    >>> from dpselect.cli import demo_table
    >>> print(demo_table([1.0], m=5).splitlines()[2][:36])
    ExponentialMechanism            1.00
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
            lines.append(f"{name:<28}{eps:>8.2f}{acc:>10.4f}{err:>10.3f}  {mech.privacy(problem)!s}")
    return "\n".join(lines)


def _check_reproduce_options(
    name: str,
    experiments: Sequence[str],
    out: Path,
    data_dir: Path | None,
    scheduler: str | None,
    seed: int,
    workers: int | None,
) -> None:
    """Every option of ``reproduce``, before any work."""
    if name != "all" and name not in experiments:
        raise CLIError(f"unknown experiment {name!r}; choose one of: {', '.join(experiments)}, all")
    option("--workers", workers)
    if scheduler is not None and "://" not in scheduler and scheduler not in LOCAL_SCHEDULERS:
        raise CLIError(f"--scheduler must be an address like tcp://host:8786, got {scheduler!r}")
    if data_dir is not None and not Path(data_dir).is_dir():
        raise CLIError(f"--data-dir {str(data_dir)!r} is not a directory")
    option("--seed", seed)
    check_out_dir(out)


def reproduce(
    name: str = typer.Argument(..., help="percentile | median | tdt | tree | forest | all"),
    quick: bool = typer.Option(False, "--quick", help="reduced grid with embedded data (minutes)"),
    out: Path = typer.Option(Path("out"), "--out", help="output directory (results under OUT/NAME/)"),
    data_dir: Path | None = typer.Option(
        None, "--data-dir", help="root of the real datasets (default: $DPSELECT_DATA; needed without --quick)"
    ),
    scheduler: str | None = typer.Option(
        None, "--scheduler", help="dask.distributed scheduler address, e.g. tcp://host:8786 (default: local processes)"
    ),
    seed: int = typer.Option(
        0, "--seed", help="master seed >= 0 (results are identical for a seed whatever the scheduler)"
    ),
    workers: int | None = typer.Option(None, "--workers", help="local worker processes (default: all cores)"),
) -> None:
    """Reproduce a paper experiment: results.csv, PNG figures and report.md under OUT/NAME/."""
    from ..experiments import EXPERIMENTS, claims_text, count_line, load_experiment, reproduce_all, resolve_data_dir
    from ..experiments import reproduce as run_experiment

    _check_reproduce_options(name, EXPERIMENTS, out, data_dir, scheduler, seed, workers)
    kwargs: dict[str, Any] = dict(
        quick=quick, out=out, data_dir=data_dir, scheduler=scheduler, seed=seed, workers=workers
    )

    def report(res: ExperimentResult) -> None:
        typer.echo(
            f"{res.name}: {res.n_tasks} tasks in {res.seconds:.1f} s -> {res.out_dir}/ ({count_line(res.claims)})"
        )
        typer.echo(claims_text(res.claims))
        typer.echo("")

    if name == "all":
        # validate every experiment's data before running anything
        ddir = resolve_data_dir(data_dir)
        for exp in EXPERIMENTS:
            load_experiment(exp).tasks(quick, ddir)
        reproduce_all(on_done=report, **kwargs)
        typer.echo(f"combined report: {Path(out) / 'report.md'} and {Path(out) / 'report.html'}")
    else:
        report(run_experiment(name, **kwargs))


def _audit_vectors(counts: str | None, m: int, max_count: int, n_vectors: int, seed: int) -> tuple[np.ndarray, str]:
    """(count vectors to audit, their description): ``--counts`` or random vectors."""
    if counts is None:
        vectors = np.random.default_rng(seed).integers(0, max_count + 1, size=(n_vectors, m))
        return vectors, f"m = {m}, {n_vectors} random count vectors in 0..{max_count}"
    try:
        vectors = np.array([[int(v) for v in counts.split(",")]], dtype=np.int64)
    except ValueError:
        raise CLIError(f"--counts must be comma-separated integers, got {counts!r}") from None
    if vectors.shape[1] < 2 or (vectors < 0).any():
        raise CLIError("--counts must hold at least 2 non-negative integers")
    return vectors, f"the counts {counts}"


def audit(
    mechanism: str = typer.Argument(..., help="mechanism name (em, pf, rnm_laplace, snm_t, sps, ld, ...)"),
    utility: str = typer.Option(
        "count",
        "--utility",
        help="count: u = the class count (monotone, sensitivity 1); indicator: u = 1 on the most frequent "
        "classes (the smooth mechanisms' seed utility; many neighbours leave it unchanged)",
    ),
    m: int = typer.Option(5, "--m", help="number of candidates (classes)"),
    epsilon: float = typer.Option(1.0, "--epsilon", help="privacy budget (> 0)"),
    delta: float | None = typer.Option(
        None, "--delta", help=f"delta of the approximate-DP mechanisms (default {DEFAULT_DELTA:g} for them)"
    ),
    max_count: int = typer.Option(8, "--max-count", help="counts are drawn from 0..max-count"),
    n_vectors: int = typer.Option(20, "--n-vectors", help="number of random count vectors"),
    counts: str | None = typer.Option(
        None, "--counts", help="audit this count vector (comma-separated, e.g. 22,8,17,4,0), not random ones"
    ),
    relation: str = typer.Option("add_remove", "--relation", help="add_remove | replace"),
    seed: int = typer.Option(0, "--seed", help="seed of the random count vectors"),
) -> None:
    """Exact privacy audit of a mechanism over all neighbours of small count vectors (majority counts)."""
    from ..analysis import audit as run_audit
    from ..apps.counts import majority_neighbours, majority_problem

    eps = option("--epsilon", epsilon)
    dlt = option("--delta", delta)
    for flag, value in (
        ("--m", m),
        ("--max-count", max_count),
        ("--n-vectors", n_vectors),
        ("--relation", relation),
        ("--seed", seed),
    ):
        option(flag, value)
    if utility not in AUDIT_UTILITIES:
        raise CLIError(f"--utility must be one of: {', '.join(AUDIT_UTILITIES)}, got {utility!r}")
    mech, delta_note = build_mechanism(mechanism, eps, dlt, flag="MECHANISM")
    vectors, what = _audit_vectors(counts, m, max_count, n_vectors, seed)
    kind = cast(Literal["count", "indicator"], utility)
    rel = cast(Literal["add_remove", "replace"], relation)
    pairs = []
    for x in vectors:
        px = majority_problem(x, relation=rel, utility=kind)
        pairs += [(px, majority_problem(y, relation=rel, utility=kind)) for y in majority_neighbours(x, relation=rel)]
    report = run_audit(mech, pairs)
    typer.echo(
        f"{mechanism} ({type(mech).__name__}) on the majority app, utility {utility}: {AUDIT_UTILITIES[utility]}"
    )
    typer.echo(f"{what}, all {relation} neighbours")
    typer.echo(str(report))
    typer.echo(f"delta: {report.claimed.delta:g}{delta_note}")
    if report.max_loss == 0:
        typer.echo(
            "note: no neighbour changed the output law (loss 0): this audit is vacuous; try --utility "
            "count or other --counts"
        )
    typer.echo(
        f"max privacy loss {report.max_loss:.6g} vs claimed epsilon {report.claimed.epsilon:.6g}: "
        + ("VIOLATION" if report.violates else "ok")
    )


def demo(
    epsilon: list[float] | None = typer.Option(None, "--epsilon", help="epsilon values (repeat the option)"),
    m: int = typer.Option(50, "--m", help="number of candidates"),
    seed: int = typer.Option(0, "--seed"),
) -> None:
    """Print a comparison table of mechanisms on a synthetic problem."""
    eps = [option("--epsilon", e) for e in (epsilon or [0.1, 0.5, 1.0, 2.0])]
    option("--seed", seed)
    option("--m", m)
    typer.echo(demo_table(eps, m, seed))


def add_commands(app: typer.Typer) -> None:
    """Register ``reproduce``, ``select``, ``describe``, ``audit`` and ``demo`` on the typer ``app``."""
    for command in (reproduce, select, describe, audit, demo):
        app.command()(command)
