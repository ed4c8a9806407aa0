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
import itertools
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .._params import Rule
from ._progress import Progress
from .tasks import Task

if TYPE_CHECKING:
    from distributed import Client

__all__ = ["CLIENT", "execute", "sorted_tasks", "task_seeds"]

LOCAL_SCHEDULERS = ("processes", "threads", "synchronous", "sync", "single-threaded")


def _client(value: object, name: str) -> object:
    from distributed import Client

    if not isinstance(value, Client):
        raise TypeError(f"{name} must be None or a dask.distributed.Client, got {type(value).__name__}")
    return value


#: None or a ``dask.distributed.Client`` (distributed is imported only to check one).
CLIENT = Rule("a dask.distributed.Client", check=_client, none=True)


def task_seeds(n: int, seed: int) -> list[np.random.SeedSequence]:
    """Per-task seeds: ``SeedSequence(seed).spawn(n)`` (task i gets element i).

    Parameters
    ----------
    n : int
        The number of tasks.
    seed : int
        The master seed (>= 0).

    Returns
    -------
    list of numpy.random.SeedSequence
        ``n`` independent seeds, the same for a given ``seed``.

    Examples
    --------
    >>> [s.spawn_key for s in task_seeds(2, seed=7)]
    [(0,), (1,)]
    """
    return np.random.SeedSequence(int(seed)).spawn(int(n))


def _run(module_name: str, task: Task, seed: np.random.SeedSequence) -> list[dict]:
    """Executed on the workers: import the experiment and run one task."""
    module = importlib.import_module(f"dpselect.experiments.{module_name}")
    return list(module.run_task(task, seed))


def sorted_tasks(tasks: Sequence[Task]) -> list[Task]:
    """Tasks in key order (ValueError for incomparable or duplicate keys).

    Parameters
    ----------
    tasks : sequence of Task
        The grid of an experiment.

    Returns
    -------
    list of Task
        The tasks sorted by their keys.
    """
    try:
        out = sorted(tasks, key=lambda t: t.key)
    except TypeError as exc:
        raise ValueError(f"task keys must be mutually comparable tuples: {exc}") from None
    for a, b in itertools.pairwise(out):
        if a.key == b.key:
            raise ValueError(f"duplicate task key {a.key!r}")
    return out


def execute(
    module_name: str,
    tasks: Sequence[Task],
    seed: int = 0,
    *,
    scheduler: str | None = None,
    client: Client | None = None,
    workers: int | None = None,
    progress: bool | None = None,
) -> list[dict]:
    """Run ``tasks`` of experiment ``module_name`` on Dask and return the rows in task order.

    Parameters
    ----------
    module_name : str
        The experiment (``dpselect.experiments.<module_name>`` runs the tasks).
    tasks : sequence of Task
        Its grid (unique, mutually comparable keys).
    seed : int, default=0
        The master seed: task ``i`` in key order gets ``task_seeds(len(tasks), seed)[i]``.
    scheduler : str or None, default=None
        Without ``client``: a dask.distributed scheduler address ("tcp://host:8786")
        to connect to, or a local dask scheduler name ("processes", "threads",
        "synchronous").
    client : distributed.Client or None, default=None
        A ``dask.distributed.Client`` to use (e.g. on a ``LocalCluster``).
    workers : int or None, default=None
        Number of local worker processes (None: all cores; 1 runs
        synchronously in this process).
    progress : bool or None, default=None
        True / False forces progress reports on stderr on / off; None shows a
        bar on a terminal and a plain line every few seconds elsewhere.

    Returns
    -------
    list of dict
        The rows of every task, in task order.

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


def _run_distributed(
    client: Client, module_name: str, tasks: list[Task], seeds: list, bar: Progress
) -> list[list[dict]]:
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
        def _posttask(self, key: Any, result: Any, dsk: Any, state: Any, id: Any) -> None:
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
