"""Deterministic execution of an experiment's tasks on Dask.

Tasks are sorted by their key (keys must be unique), task ``i`` in that order
gets ``np.random.SeedSequence(seed).spawn(n_tasks)[i]``, and results are
assembled in task order whatever order they finish in.  So for a given seed
the rows -- and ``results.csv``, byte for byte -- are the same on the
synchronous, threaded or multi-process scheduler, on a ``LocalCluster`` or a
remote ``dask.distributed`` cluster, and for any number of workers.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._progress import Progress
from .tasks import Task

__all__ = ["execute", "sorted_tasks", "task_seeds"]

LOCAL_SCHEDULERS = ("processes", "threads", "synchronous", "sync", "single-threaded")


def task_seeds(n: int, seed: int) -> list[np.random.SeedSequence]:
    """Per-task seeds: ``SeedSequence(seed).spawn(n)`` (task i gets element i)."""
    return np.random.SeedSequence(int(seed)).spawn(int(n))


def _run(module_name: str, task: Task, seed: np.random.SeedSequence) -> list[dict]:
    """Executed on the workers: import the experiment and run one task."""
    module = importlib.import_module(f"dpselect.experiments.{module_name}")
    return list(module.run_task(task, seed))


def sorted_tasks(tasks: Sequence[Task]) -> list[Task]:
    """Tasks in key order (ValueError for incomparable or duplicate keys)."""
    try:
        out = sorted(tasks, key=lambda t: t.key)
    except TypeError as exc:
        raise ValueError(f"task keys must be mutually comparable tuples: {exc}") from None
    for a, b in zip(out, out[1:]):
        if a.key == b.key:
            raise ValueError(f"duplicate task key {a.key!r}")
    return out


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

    Parameters
    ----------
    client
        a ``dask.distributed.Client`` to use (e.g. on a ``LocalCluster``);
    scheduler
        otherwise, a dask.distributed scheduler address
        ("tcp://host:8786") to connect to, or a local dask scheduler name
        ("processes", "threads", "synchronous");
    workers
        number of local worker processes (default: all cores; 1 runs
        synchronously in this process);
    progress
        True / False forces progress reports on stderr on / off; None
        (default) shows a bar on a terminal and a plain line every few seconds
        elsewhere.

    Notes
    -----
    Every row gets a leading ``task`` column (the task's key joined by "/").
    """
    ordered = sorted_tasks(tasks)
    seeds = task_seeds(len(ordered), seed)
    bar = Progress(module_name, len(ordered), progress)
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


def _run_distributed(client: Any, module_name: str, tasks: list[Task], seeds: list, bar: Progress) -> list[list[dict]]:
    from dask.distributed import as_completed

    futures = client.map(_run, [module_name] * len(tasks), tasks, seeds, pure=False)
    for _ in as_completed(futures):
        bar.advance()
    return list(client.gather(futures))


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
    module_name: str, tasks: list[Task], seeds: list, bar: Progress, scheduler: str | None, workers: int | None
) -> list[list[dict]]:
    n_workers = workers if workers is not None else (os.cpu_count() or 1)
    if scheduler is None:
        scheduler = "synchronous" if n_workers <= 1 or len(tasks) <= 1 else "processes"
    if scheduler not in LOCAL_SCHEDULERS:
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
