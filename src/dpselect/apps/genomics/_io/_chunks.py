"""SNP chunks of a packed genotype file counted as Dask tasks: the driver shared by the TDT and case-control readers.

A *kernel* maps a (k, bytes per SNP) uint8 block of SNP-major ``.bed``
records (and the block's chromosome-X mask, or None) to a (rows, k) array of
counts.  Each Dask task reads its chunk of SNPs piece by piece through a
*source* (positioned reads of the ``.bed``, or a PLINK 2 ``.pgen`` decoded
and packed into the same 2-bit codes), counts each piece and frees it, so a
task holds a few MiB whatever the chunk size.  On the threaded scheduler
the tasks write into one shared result; on a cluster they return compact
blocks (the smallest unsigned dtype holding the largest possible count).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ...._optional import require
from ._chromosomes import chromosome_runs
from ._progress import Progress

__all__ = ["BedSource", "auto_chunk", "chromosome_masks", "count_chunks"]

Kernel = Callable[[np.ndarray, "np.ndarray | None"], np.ndarray]

#: Bytes of SNP records read at once inside a task (1 MiB measured as fast as 4 MiB for the TDT kernel and
#: holds a quarter of the memory per thread).
READ_BYTES = 1 << 20

#: Largest task of :func:`auto_chunk`, in bytes of SNP records.
TASK_BYTES = 1 << 23


def auto_chunk(n_snp: int, n_bytes: int) -> int:
    """SNPs per Dask task.

    At least 4 tasks per Dask worker thread (so threads finish together) and at most :data:`TASK_BYTES` of records
    per task.
    """
    import dask

    workers = dask.config.get("num_workers", None) or os.cpu_count() or 1
    return max(1, min(-(-n_snp // (4 * workers)), TASK_BYTES // max(n_bytes, 1)))


class BedSource:
    """SNP records of a PLINK 1 ``.bed``: positioned reads of whole records (picklable for a cluster)."""

    def __init__(self, bed: str, n_bytes: int) -> None:
        self.bed, self.n_bytes = bed, n_bytes

    def pieces(self, start: int, stop: int, step: int) -> Any:
        """(a, records) for consecutive pieces of at most ``step`` SNPs from ``start`` to ``stop``."""
        with open(self.bed, "rb") as f:
            f.seek(3 + start * self.n_bytes)
            for a in range(start, stop, step):
                z = min(a + step, stop)
                records = np.fromfile(f, dtype=np.uint8, count=(z - a) * self.n_bytes)
                if records.size != (z - a) * self.n_bytes:
                    raise ValueError(
                        f"path: {self.bed!r} ended inside SNP {a + records.size // self.n_bytes}: truncated"
                    )
                yield a, records.reshape(z - a, self.n_bytes)


def _chunk(
    source: Any,
    start: int,
    stop: int,
    kernel: Kernel,
    rows: int,
    dtype: Any,
    x_mask: np.ndarray | None,
    keep: np.ndarray | None,
    sink: np.ndarray | None,
    offset: int,
    progress: Progress | None,
) -> np.ndarray | None:
    """Counts of the kept SNPs among start..stop-1: into ``sink`` from column ``offset`` on, or returned."""
    out = sink if sink is not None else np.empty((rows, stop - start if keep is None else int(keep.sum())), dtype=dtype)
    j = offset if sink is not None else 0
    step = max(1, READ_BYTES // max(source.n_bytes, 1))
    for a, records in source.pieces(start, stop, step):
        z = a + records.shape[0]
        piece = kernel(records, None if x_mask is None else x_mask[a - start : z - start])
        if keep is not None:
            piece = piece[:, keep[a - start : z - start]]
        out[:, j : j + piece.shape[1]] = piece
        j += piece.shape[1]
    if progress is not None:
        progress.advance(stop - start)
    return None if sink is not None else out


def _assemble(blocks: list[np.ndarray], rows: int, n: int) -> np.ndarray:
    """(rows, n) int64 counts from the tasks' blocks in SNP order, each block freed once copied."""
    out = np.empty((rows, n), dtype=np.int64)
    j = 0
    while blocks:
        block = blocks.pop(0)
        out[:, j : j + block.shape[1]] = block
        j += block.shape[1]
    return out


def count_chunks(
    source: Any,
    n_snp: int,
    kernel: Kernel,
    rows: int,
    max_count: int,
    keep: np.ndarray,
    is_x: np.ndarray,
    chunk: int,
    scheduler: Any,
    bar: Progress | None,
) -> np.ndarray:
    """(rows, #kept) int64 counts of every kept SNP, one Dask task per ``chunk`` SNPs (module docstring)."""
    dask = require("dask", "gwas", purpose="dpselect.apps.genomics counting on Dask")
    local = scheduler is None or scheduler in ("threads", "sync", "synchronous", "single-threaded")
    starts = np.arange(0, n_snp, chunk)
    kept = np.add.reduceat(keep, starts) if n_snp else np.zeros(0, dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum(kept)))
    sink = np.zeros((rows, int(offsets[-1])), dtype=np.int64) if local else None
    dtype = np.min_scalar_type(max_count)
    tasks = [
        dask.delayed(_chunk)(
            source,
            a,
            min(a + chunk, n_snp),
            kernel,
            rows,
            dtype,
            is_x[a : a + chunk] if is_x[a : a + chunk].any() else None,
            None if kept[i] == min(chunk, n_snp - a) else keep[a : a + chunk],
            sink,
            int(offsets[i]),
            bar if local else None,
            pure=False,
        )
        for i, a in enumerate(starts.tolist())
    ]
    blocks = _compute(tasks, scheduler)
    out = sink if sink is not None else _assemble(blocks, rows, int(offsets[-1]))
    if bar is not None:
        if not local:
            bar.advance(n_snp)
        bar.close()
    return out


def chromosome_masks(chrom: np.ndarray, what: str, skip: dict[str, str]) -> tuple[np.ndarray, np.ndarray]:
    """Masks of the SNPs kept (not on the kinds in ``skip``) and of those on X.

    One UserWarning names what was skipped and why.

    ``what``: the statistic the skipped SNPs have none of (e.g. "a TDT");
    ``skip``: chromosome kind ("Y", "MT") -> why it has none.
    Built from the runs of equal chromosome codes: one byte a SNP per mask.
    """
    run_kind, run_len = chromosome_runs(chrom)
    skipped = np.isin(run_kind, list(skip))
    if skipped.any():
        parts = [
            f"{int(run_len[run_kind == k].sum())} on {k} ({why})" for k, why in skip.items() if (run_kind == k).any()
        ]
        warnings.warn(
            f"path: skipped {int(run_len[skipped].sum())} SNP(s) without {what}: " + "; ".join(parts),
            UserWarning,
            stacklevel=3,
        )
    return np.repeat(~skipped, run_len), np.repeat(run_kind == "X", run_len)


def _compute(tasks: list[Any], scheduler: Any) -> list[np.ndarray]:
    import dask

    if scheduler is None:
        return list(dask.compute(*tasks, scheduler="threads"))
    if isinstance(scheduler, str) and "://" in scheduler:
        Client = require("distributed", "gwas", purpose="counting with scheduler=ADDRESS").Client

        with Client(scheduler) as client:
            return list(client.gather(client.compute(tasks)))
    if hasattr(scheduler, "compute") and hasattr(scheduler, "scheduler_info"):
        return list(scheduler.gather(scheduler.compute(tasks)))
    if isinstance(scheduler, str):
        return list(dask.compute(*tasks, scheduler=scheduler))
    raise TypeError(f"scheduler must be None, a scheduler name, an address or a Client, got {type(scheduler).__name__}")
