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
from typing import Any

from . import html as _html
from . import report as _report
from ._data import DataNotFoundError, recording, require_file, resolve_data_dir
from .csvio import TIMING_SUFFIX, format_value, write_csv, write_results
from .report import claims_table, claims_text, count_line
from .scheduler import execute, task_seeds
from .tasks import EXPERIMENTS, Claim, ExperimentResult, Task, load_experiment

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


def reproduce(
    name: str,
    *,
    quick: bool = False,
    out: str | os.PathLike[str] = "out",
    data_dir: str | os.PathLike[str] | None = None,
    scheduler: str | None = None,
    client: Any = None,
    seed: int = 0,
    workers: int | None = None,
    progress: bool | None = None,
) -> ExperimentResult:
    """Run one experiment end to end; write ``out/NAME/{results.csv, *.png, report.md, report.html}``."""
    module = load_experiment(name)
    ddir = resolve_data_dir(data_dir)
    t0 = time.perf_counter()
    with recording() as data_files:
        tasks = module.tasks(quick, ddir)
        rows = execute(name, tasks, seed, scheduler=scheduler, client=client, workers=workers, progress=progress)
    out_dir = Path(out) / name
    out_dir.mkdir(parents=True, exist_ok=True)
    files, has_timings = write_results(rows, out_dir)
    import matplotlib

    matplotlib.use("Agg", force=True)
    figures = [Path(p) for p in module.plot(rows, out_dir)]
    claims = list(module.claims(rows))
    res = ExperimentResult(name, rows, claims, out_dir, files, len(tasks), time.perf_counter() - t0,
                           data_files=list(data_files), title=str(getattr(module, "TITLE", name)))
    text = _report.experiment_report(module, res, quick=quick, data_dir=ddir, seed=seed, figures=figures,
                                     has_timings=has_timings)
    md = out_dir / "report.md"
    md.write_text(text, encoding="utf-8")
    page = _html.write_html(out_dir / "report.html", res.title, [(text, out_dir)])
    res.files += figures + [md, page]
    return res


def reproduce_all(
    *, out: str | os.PathLike[str] = "out", on_done: Callable[[ExperimentResult], None] | None = None, **kwargs: Any
) -> list[ExperimentResult]:
    """Every experiment in :data:`EXPERIMENTS`, then ``out/report.md`` and ``out/report.html`` with every claim."""
    results = []
    t0 = time.perf_counter()
    for name in EXPERIMENTS:
        res = reproduce(name, out=out, **kwargs)
        results.append(res)
        if on_done is not None:
            on_done(res)
    extra: dict[str, str] = {}
    for name in EXPERIMENTS:
        extra.update(getattr(load_experiment(name), "ABBREVIATIONS", {}) or {})
    reports = [(r.out_dir / "report.md").read_text(encoding="utf-8") for r in results]
    text = _report.combined_report(
        results, quick=bool(kwargs.get("quick")), seed=int(kwargs.get("seed", 0)),
        seconds=time.perf_counter() - t0, data_dir=resolve_data_dir(kwargs.get("data_dir")),
        extra_abbreviations=extra, also_scan=reports,
    )
    root = Path(out)
    (root / "report.md").write_text(text, encoding="utf-8")
    parts = [(text, root)] + [(page, r.out_dir) for page, r in zip(reports, results)]
    _html.write_html(root / "report.html", "dpselect: reproduction report", parts)
    return results
