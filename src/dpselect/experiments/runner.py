"""Reproduce the papers' experiments: the orchestrator behind ``dpselect reproduce``.

:func:`reproduce` runs one experiment end to end -- its task grid
(:mod:`.tasks`) on Dask (:mod:`.scheduler`, deterministic for a seed), the
CSV files (:mod:`.csvio`), the figures and the claims of the experiment
module, the reports (:mod:`.report`, :mod:`.html`) -- and :func:`reproduce_all`
runs every experiment and writes the combined report.  The names of those
modules are re-exported here.

Outputs (``out/NAME/``): ``results.csv``, ``timings.csv`` (only when the
experiment measures run times), one PNG per figure, ``report.md`` and
``report.html`` (self-contained); ``dpselect reproduce all`` also writes
``out/report.md`` and ``out/report.html`` with every claim.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .._docstrings import fill_doc
from .._params import BOOLEAN, callable_, instance_of, int_at_least, validate_params
from . import html as _html
from . import report as _report
from ._data import PATH, DataNotFoundError, recording, require_file, resolve_data_dir
from .csvio import TIMING_SUFFIX, format_value, write_csv, write_results
from .report import claims_table, claims_text, count_line
from .scheduler import CLIENT, execute, task_seeds
from .tasks import EXPERIMENT, EXPERIMENTS, Claim, ExperimentResult, Task, load_experiment

if TYPE_CHECKING:
    from distributed import Client

__all__ = [
    "EXPERIMENTS",
    "TIMING_SUFFIX",
    "Claim",
    "DataNotFoundError",
    "ExperimentResult",
    "Task",
    "claims_table",
    "claims_text",
    "count_line",
    "execute",
    "format_value",
    "load_experiment",
    "reproduce",
    "reproduce_all",
    "require_file",
    "resolve_data_dir",
    "task_seeds",
    "write_csv",
]


#: The rules of the run options :func:`reproduce` and :func:`reproduce_all` share.
_RUN_RULES = {
    "quick": BOOLEAN,
    "out": PATH,
    "data_dir": PATH.or_none(),
    "scheduler": instance_of(str, description="a str", none=True),
    "client": CLIENT,
    "seed": int_at_least(0),
    "workers": int_at_least(1, none=True),
    "progress": BOOLEAN.or_none(),
}


@validate_params({"name": EXPERIMENT, **_RUN_RULES})
@fill_doc
def reproduce(
    name: str,
    *,
    quick: bool = False,
    out: str | os.PathLike[str] = "out",
    data_dir: str | os.PathLike[str] | None = None,
    scheduler: str | None = None,
    client: Client | None = None,
    seed: int = 0,
    workers: int | None = None,
    progress: bool | None = None,
) -> ExperimentResult:
    """Run one experiment end to end: its grid on Dask, the CSV files, the figures and the reports.

    Writes ``out/NAME/``: ``results.csv``, ``timings.csv`` (when the experiment measures
    run times), one PNG per figure, ``report.md`` and ``report.html``.

    Parameters
    ----------
    name : str
        The experiment, one of :data:`EXPERIMENTS`.
    %(run_options)s

    Returns
    -------
    ExperimentResult
        The rows, the claims with our numbers, the files written and the data files read.

    Raises
    ------
    DataNotFoundError
        The full grid is asked for without the real data (``data_dir``), or a file is missing.

    See Also
    --------
    reproduce_all : Every experiment of :data:`EXPERIMENTS` (:func:`reproduce`), then the combined report
    """
    module = load_experiment(name)
    ddir = resolve_data_dir(data_dir)
    t0 = time.perf_counter()
    with recording() as data_files:
        tasks = module.tasks(quick, ddir)
        rows = execute(name, tasks, seed, scheduler=scheduler, client=client, workers=workers, progress=progress)
    out_dir = Path(out) / name
    out_dir.mkdir(parents=True, exist_ok=True)
    written = write_results(rows, out_dir)
    import matplotlib

    matplotlib.use("Agg", force=True)
    figures = [Path(p) for p in module.plot(rows, out_dir)]
    claims = list(module.claims(rows))
    res = ExperimentResult(
        name,
        rows,
        claims,
        out_dir,
        list(written.files),
        len(tasks),
        time.perf_counter() - t0,
        data_files=list(data_files),
        title=str(getattr(module, "TITLE", name)),
    )
    text = _report.experiment_report(
        module, res, quick=quick, data_dir=ddir, seed=seed, figures=figures, has_timings=written.timed
    )
    md = out_dir / "report.md"
    md.write_text(text, encoding="utf-8")
    page = _html.write_html(out_dir / "report.html", res.title, [(text, out_dir)])
    res.files += [*figures, md, page]
    return res


@validate_params({"on_done": callable_(none=True), **_RUN_RULES})
@fill_doc
def reproduce_all(
    *,
    out: str | os.PathLike[str] = "out",
    on_done: Callable[[ExperimentResult], None] | None = None,
    quick: bool = False,
    data_dir: str | os.PathLike[str] | None = None,
    scheduler: str | None = None,
    client: Client | None = None,
    seed: int = 0,
    workers: int | None = None,
    progress: bool | None = None,
) -> list[ExperimentResult]:
    """Every experiment of :data:`EXPERIMENTS` (:func:`reproduce`), then the combined report.

    Writes ``out/report.md`` and ``out/report.html`` with every claim, next to each
    experiment's ``out/NAME/``.

    Parameters
    ----------
    on_done : callable or None, default=None
        Called with each experiment's result as soon as it is done (e.g. to print it).
    %(run_options)s

    Returns
    -------
    list of ExperimentResult
        One per experiment, in the order of :data:`EXPERIMENTS`.

    See Also
    --------
    reproduce : Run one experiment end to end: its grid on Dask, the CSV files, the figures and the reports
    """
    results = []
    t0 = time.perf_counter()
    for name in EXPERIMENTS:
        res = reproduce(
            name,
            quick=quick,
            out=out,
            data_dir=data_dir,
            scheduler=scheduler,
            client=client,
            seed=seed,
            workers=workers,
            progress=progress,
        )
        results.append(res)
        if on_done is not None:
            on_done(res)
    extra: dict[str, str] = {}
    for name in EXPERIMENTS:
        extra.update(getattr(load_experiment(name), "ABBREVIATIONS", {}) or {})
    reports = [(r.out_dir / "report.md").read_text(encoding="utf-8") for r in results]
    text = _report.combined_report(
        results,
        quick=quick,
        seed=seed,
        seconds=time.perf_counter() - t0,
        data_dir=resolve_data_dir(data_dir),
        extra_abbreviations=extra,
        also_scan=reports,
    )
    root = Path(out)
    (root / "report.md").write_text(text, encoding="utf-8")
    parts = [(text, root)] + [(page, r.out_dir) for page, r in zip(reports, results)]
    _html.write_html(root / "report.html", "dpselect: reproduction report", parts)
    return results
