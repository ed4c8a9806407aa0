"""Deterministic Dask runner for the paper reproductions.

An experiment module (``dpselect.experiments.<name>``) exposes

* ``tasks(quick, data_dir) -> list[Task]``: the grid (dataset x mechanism x
  epsilon x repetition, at whatever granularity the experiment chooses);
* ``run_task(task, seed) -> list[dict]``: a pure function of the task and its
  ``numpy.random.SeedSequence`` returning rows of results;
* ``plot(rows, out_dir) -> list[Path]``: PNG figures (matplotlib, Agg);
* ``claims(rows) -> list[Claim]``: the published claims with our numbers;
* optionally ``TITLE``, ``DESCRIPTION``, ``summary(rows) -> str`` (markdown)
  and ``notes(quick, data_dir) -> list[str]``.

Determinism
-----------
Tasks are sorted by their key (keys must be unique), task ``i`` in that order
gets ``np.random.SeedSequence(seed).spawn(n_tasks)[i]``, and results are
assembled in task order whatever order they finish in.  So for a given seed
the rows -- and ``results.csv``, byte for byte -- are the same on the
synchronous, threaded or multi-process scheduler, on a ``LocalCluster`` or a
remote ``dask.distributed`` cluster, and for any number of workers.
Wall-clock measurements are not deterministic: columns whose name ends in
``_seconds`` are written to ``timings.csv`` instead of ``results.csv``.

Outputs (``out/NAME/``): ``results.csv``, ``timings.csv`` (only when the
experiment measures run times), one PNG per figure and ``report.md``;
``dpselect reproduce all`` also writes ``out/report.md`` with every claim.
"""

from __future__ import annotations

import csv
import importlib
import io
import math
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

__all__ = [
    "EXPERIMENTS",
    "Claim",
    "DataNotFoundError",
    "ExperimentResult",
    "Task",
    "claims_table",
    "execute",
    "format_value",
    "load_experiment",
    "reproduce",
    "reproduce_all",
    "resolve_data_dir",
    "task_seeds",
    "write_csv",
]

#: The reproducible experiments, in the order ``all`` runs them.
EXPERIMENTS = ("percentile", "median", "tdt", "tree", "forest")

#: Columns with this suffix are wall-clock times: written to timings.csv, not results.csv.
TIMING_SUFFIX = "_seconds"


class DataNotFoundError(FileNotFoundError):
    """A real dataset (``--data-dir`` / ``DPSELECT_DATA``) is needed but missing."""


@dataclass(frozen=True)
class Task:
    """One unit of work of an experiment grid.

    key : a tuple of str / int / float naming the task uniquely within its
        experiment; tasks are ordered by it (seeds are assigned in that order).
    kwargs : the task's parameters (picklable), read by ``run_task``.
    """

    key: tuple
    kwargs: Mapping[str, Any] = field(default_factory=dict, hash=False)

    @property
    def name(self) -> str:
        return "/".join(format_value(k) for k in self.key)


@dataclass(frozen=True)
class Claim:
    """A published claim next to our number.

    ok is True (reproduced), False (not reproduced) or None (not evaluated,
    e.g. the grid does not contain the claim's setting).
    """

    text: str
    ours: str
    published: str
    ok: bool | None
    note: str = ""

    @property
    def mark(self) -> str:
        return "–" if self.ok is None else ("✓" if self.ok else "✗")


@dataclass
class ExperimentResult:
    name: str
    rows: list[dict]
    claims: list[Claim]
    out_dir: Path
    files: list[Path]
    n_tasks: int
    seconds: float


def load_experiment(name: str) -> ModuleType:
    """The module ``dpselect.experiments.<name>`` (ValueError for an unknown name)."""
    if name not in EXPERIMENTS:
        raise ValueError(f"unknown experiment {name!r}; choose one of: {', '.join(EXPERIMENTS)}, all")
    return importlib.import_module(f"dpselect.experiments.{name}")


def resolve_data_dir(data_dir: str | os.PathLike[str] | None) -> Path | None:
    """--data-dir, else $DPSELECT_DATA, else None; an existing directory is required if given."""
    if data_dir is None:
        env = os.environ.get("DPSELECT_DATA")
        if not env:
            return None
        data_dir, origin = env, "DPSELECT_DATA"
    else:
        origin = "--data-dir"
    path = Path(data_dir).expanduser()
    if not path.is_dir():
        raise DataNotFoundError(f"{origin} {str(data_dir)!r} is not a directory")
    return path


def require_file(data_dir: Path | None, *candidates: str, what: str) -> Path:
    """The first existing ``data_dir / candidate`` (DataNotFoundError naming what is missing)."""
    if data_dir is None:
        raise DataNotFoundError(
            f"the full grid needs the real {what} data: pass --data-dir DIR (or set DPSELECT_DATA), "
            "or use --quick for the embedded defaults"
        )
    for c in candidates:
        p = data_dir / c
        if p.is_file():
            return p
    raise DataNotFoundError(f"{what} data not found under {data_dir} (looked for {', '.join(candidates)})")


# ---------------------------------------------------------------------------
# formatting and CSV
# ---------------------------------------------------------------------------


def format_value(v: Any) -> str:
    """Deterministic text for a CSV cell: repr of floats (round-trips), str of the rest."""
    if v is None:
        return ""
    if isinstance(v, (bool, np.bool_)):
        return "True" if v else "False"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if math.isnan(f):
            return "nan"
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return repr(f)
    return str(v)


def _columns(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    cols: dict[str, None] = {}
    for r in rows:
        for k in r:
            cols.setdefault(k, None)
    return list(cols)


def write_csv(rows: Sequence[Mapping[str, Any]], path: str | os.PathLike[str], columns: Sequence[str] | None = None) -> Path:
    """Write rows (dicts) as CSV with ``\\n`` line ends; columns in first-seen order."""
    path = Path(path)
    cols = list(columns) if columns is not None else _columns(rows)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        w.writerow([format_value(r.get(c)) for c in cols])
    path.write_text(buf.getvalue(), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------
# execution
# ---------------------------------------------------------------------------


def task_seeds(n: int, seed: int) -> list[np.random.SeedSequence]:
    """Per-task seeds: ``SeedSequence(seed).spawn(n)`` (task i gets element i)."""
    return np.random.SeedSequence(int(seed)).spawn(int(n))


def _run(module_name: str, task: Task, seed: np.random.SeedSequence) -> list[dict]:
    """Executed on the workers: import the experiment and run one task."""
    module = importlib.import_module(f"dpselect.experiments.{module_name}")
    return list(module.run_task(task, seed))


def _sorted_tasks(tasks: Sequence[Task]) -> list[Task]:
    try:
        out = sorted(tasks, key=lambda t: t.key)
    except TypeError as exc:
        raise ValueError(f"task keys must be mutually comparable tuples: {exc}") from None
    for a, b in zip(out, out[1:]):
        if a.key == b.key:
            raise ValueError(f"duplicate task key {a.key!r}")
    return out


class _Progress:
    """A rich progress bar on stderr when it is a terminal; silent otherwise."""

    def __init__(self, label: str, total: int, enabled: bool | None = None) -> None:
        if enabled is None:
            enabled = sys.stderr.isatty()
        self._bar = None
        if enabled and total > 0:
            try:
                from rich.console import Console
                from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

                self._bar = Progress(
                    TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=Console(stderr=True), transient=False,
                )
                self._bar.start()
                self._id = self._bar.add_task(label, total=total)
            except ImportError:  # pragma: no cover - rich is a dependency
                self._bar = None

    def advance(self, n: int = 1) -> None:
        if self._bar is not None:
            self._bar.advance(self._id, n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def execute(
    module_name: str,
    tasks: Sequence[Task],
    seed: int = 0,
    *,
    scheduler: str | None = None,
    client: Any = None,
    workers: int | None = None,
    progress: bool | None = None,
) -> list[dict]:
    """Run ``tasks`` of experiment ``module_name`` on Dask and return the rows in task order.

    client : a ``dask.distributed.Client`` to use (e.g. on a ``LocalCluster``);
    scheduler : otherwise, a dask.distributed scheduler address
        ("tcp://host:8786") to connect to, or a local dask scheduler name
        ("processes", "threads", "synchronous");
    workers : number of local worker processes (default: all cores; 1 runs
        synchronously in this process).
    Every row gets a leading ``task`` column (the task's key joined by "/").
    """
    ordered = _sorted_tasks(tasks)
    seeds = task_seeds(len(ordered), seed)
    bar = _Progress(module_name, len(ordered), progress)
    try:
        if client is None and scheduler is not None and "://" in scheduler:
            from dask.distributed import Client

            try:
                with Client(scheduler, timeout="10s") as c:
                    results = _run_distributed(c, module_name, ordered, seeds, bar)
            except OSError as exc:
                raise ConnectionError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
        elif client is not None:
            results = _run_distributed(client, module_name, ordered, seeds, bar)
        else:
            results = _run_local(module_name, ordered, seeds, bar, scheduler, workers)
    finally:
        bar.close()
    rows: list[dict] = []
    for task, res in zip(ordered, results):
        for r in res:
            rows.append({"task": task.name, **r})
    return rows


def _run_distributed(client: Any, module_name: str, tasks: list[Task], seeds: list, bar: _Progress) -> list[list[dict]]:
    from dask.distributed import as_completed

    futures = client.map(_run, [module_name] * len(tasks), tasks, seeds, pure=False)
    for _ in as_completed(futures):
        bar.advance()
    return client.gather(futures)


_POOLS: dict[int, Any] = {}


def _process_pool(n_workers: int) -> Any:
    """A process pool of ``n_workers`` kept for the life of this process (dask's multiprocessing context)."""
    pool = _POOLS.get(n_workers)
    if pool is None:
        import atexit
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        import dask

        ctx = multiprocessing.get_context(dask.config.get("multiprocessing.context", "spawn"))
        pool = ProcessPoolExecutor(n_workers, mp_context=ctx)
        _POOLS[n_workers] = pool
        atexit.register(pool.shutdown, wait=False, cancel_futures=True)
    return pool


def _run_local(
    module_name: str, tasks: list[Task], seeds: list, bar: _Progress, scheduler: str | None, workers: int | None
) -> list[list[dict]]:
    n_workers = workers if workers is not None else (os.cpu_count() or 1)
    if scheduler is None:
        scheduler = "synchronous" if n_workers <= 1 or len(tasks) <= 1 else "processes"
    if scheduler not in ("processes", "threads", "synchronous", "sync", "single-threaded"):
        raise ValueError(f"unknown local scheduler {scheduler!r} (use processes, threads or synchronous)")
    import dask
    from dask.callbacks import Callback

    class _Advance(Callback):
        def _posttask(self, key: Any, result: Any, dsk: Any, state: Any, id: Any) -> None:  # noqa: A002
            name = key[0] if isinstance(key, tuple) else key
            if str(name).startswith("_run-"):
                bar.advance()

    delayed = [dask.delayed(_run, pure=False)(module_name, t, s) for t, s in zip(tasks, seeds)]
    kwargs: dict[str, Any] = {"scheduler": scheduler}
    if scheduler == "processes":
        kwargs["pool"] = _process_pool(n_workers)  # reused across experiments (workers import once)
    elif scheduler == "threads":
        kwargs["num_workers"] = n_workers
    with _Advance():
        return list(dask.compute(*delayed, **kwargs))


# ---------------------------------------------------------------------------
# reports
# ---------------------------------------------------------------------------


def _md_escape(s: str) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def claims_table(claims: Sequence[Claim], experiment: str | None = None) -> str:
    """Markdown table of claims: claim | ours | published | ✓/✗."""
    head = ("| experiment " if experiment is not None else "") + "| claim | ours | published | ✓/✗ |"
    sep = ("|---" if experiment is not None else "") + "|---|---|---|:-:|"
    lines = [head, sep]
    for c in claims:
        text = _md_escape(c.text) + (f" <br>*{_md_escape(c.note)}*" if c.note else "")
        pre = f"| {experiment} " if experiment is not None else ""
        lines.append(f"{pre}| {text} | {_md_escape(c.ours)} | {_md_escape(c.published)} | {c.mark} |")
    return "\n".join(lines)


def _write_report(
    module: ModuleType, name: str, out_dir: Path, rows: list[dict], claims: list[Claim], figures: list[Path],
    *, quick: bool, data_dir: Path | None, seed: int, n_tasks: int, seconds: float, has_timings: bool,
) -> Path:
    title = getattr(module, "TITLE", name)
    lines = [f"# {title}", ""]
    desc = getattr(module, "DESCRIPTION", "")
    if desc:
        lines += [desc.strip(), ""]
    data = f"real data from `{data_dir}`" if data_dir is not None else "embedded defaults (synthetic / bundled data)"
    lines += [
        f"- grid: {'quick (reduced)' if quick else 'full'}; data: {data}; seed: {seed}; "
        f"{n_tasks} tasks, {len(rows)} result rows; wall time {seconds:.1f} s",
        "- files: `results.csv`" + (", `timings.csv`" if has_timings else "")
        + "".join(f", `{f.name}`" for f in figures),
        "",
        "## Claims",
        "",
        claims_table(claims),
        "",
    ]
    summary = getattr(module, "summary", None)
    if summary is not None:
        text = summary(rows)
        if text:
            lines += ["## Results", "", text.strip(), ""]
    if figures:
        lines += ["## Figures", ""] + [f"![{f.stem}]({f.name})" for f in figures] + [""]
    notes_fn = getattr(module, "notes", None)
    notes = list(notes_fn(quick, data_dir)) if notes_fn is not None else []
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    path = out_dir / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


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
    """Run one experiment end to end; write ``out/NAME/{results.csv, *.png, report.md}``."""
    module = load_experiment(name)
    ddir = resolve_data_dir(data_dir)
    t0 = time.perf_counter()
    tasks = module.tasks(quick, ddir)
    rows = execute(name, tasks, seed, scheduler=scheduler, client=client, workers=workers, progress=progress)
    out_dir = Path(out) / name
    out_dir.mkdir(parents=True, exist_ok=True)
    cols = _columns(rows)
    timing_cols = [c for c in cols if c.endswith(TIMING_SUFFIX)]
    files = [write_csv(rows, out_dir / "results.csv", [c for c in cols if c not in timing_cols])]
    if timing_cols:  # the rows that measured a run time, with all their columns
        timed = [r for r in rows if any(c in r for c in timing_cols)]
        files.append(write_csv(timed, out_dir / "timings.csv"))
    import matplotlib

    matplotlib.use("Agg", force=True)
    figures = [Path(p) for p in module.plot(rows, out_dir)]
    claims = list(module.claims(rows))
    seconds = time.perf_counter() - t0
    report = _write_report(
        module, name, out_dir, rows, claims, figures, quick=quick, data_dir=ddir, seed=seed,
        n_tasks=len(tasks), seconds=seconds, has_timings=bool(timing_cols),
    )
    files += figures + [report]
    return ExperimentResult(name, rows, claims, out_dir, files, len(tasks), seconds)


def reproduce_all(
    *, out: str | os.PathLike[str] = "out", on_done: Callable[[ExperimentResult], None] | None = None, **kwargs: Any
) -> list[ExperimentResult]:
    """Every experiment in :data:`EXPERIMENTS`, then ``out/report.md`` with all the claims."""
    results = []
    t0 = time.perf_counter()
    for name in EXPERIMENTS:
        res = reproduce(name, out=out, **kwargs)
        results.append(res)
        if on_done is not None:
            on_done(res)
    total = time.perf_counter() - t0
    lines = [
        "# dpselect: reproduction report",
        "",
        f"All experiments, {'quick' if kwargs.get('quick') else 'full'} grid, seed {kwargs.get('seed', 0)}, "
        f"total wall time {total:.1f} s. Per-experiment details, tables and figures: "
        + ", ".join(f"[`{r.name}/report.md`]({r.name}/report.md)" for r in results) + ".",
        "",
        "| experiment | claim | ours | published | ✓/✗ |",
        "|---|---|---|---|:-:|",
    ]
    for r in results:
        for line in claims_table(r.claims, r.name).splitlines()[2:]:
            lines.append(line)
    ok = sum(c.ok is True for r in results for c in r.claims)
    bad = sum(c.ok is False for r in results for c in r.claims)
    lines += ["", f"{ok} claims reproduced (✓), {bad} not reproduced (✗).", ""]
    (Path(out) / "report.md").write_text("\n".join(lines), encoding="utf-8")
    return results
