"""Small helpers shared by the experiment modules (plots, tables, number formatting)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["group", "fmt", "md_table", "new_figure", "save_figure", "nearest"]


def group(rows: Iterable[Mapping[str, Any]], *keys: str) -> dict[tuple, list[Mapping[str, Any]]]:
    """Rows grouped by the tuple of the given columns (insertion-ordered)."""
    out: dict[tuple, list] = defaultdict(list)
    for r in rows:
        out[tuple(r[k] for k in keys)].append(r)
    return dict(out)


def fmt(x: Any, digits: int = 3) -> str:
    """Compact number formatting for reports."""
    if x is None:
        return "–"
    if isinstance(x, str):
        return x
    x = float(x)
    if not np.isfinite(x):
        return "inf" if x > 0 else ("-inf" if x < 0 else "nan")
    if x == 0:
        return "0"
    if abs(x) >= 1e4 or abs(x) < 1e-3:
        return f"{x:.{digits - 1}e}"
    return f"{x:.{digits}g}"


def md_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        lines.append("| " + " | ".join(fmt(v) if not isinstance(v, str) else v for v in r) + " |")
    return "\n".join(lines)


def nearest(values: Sequence[float], targets: Sequence[float]) -> list[float]:
    """For each target the nearest available value (deduplicated, in order)."""
    vals = np.asarray(sorted(set(values)), dtype=float)
    out: list[float] = []
    for t in targets:
        v = float(vals[np.argmin(np.abs(np.log(vals) - np.log(t)))]) if (vals > 0).all() else float(
            vals[np.argmin(np.abs(vals - t))])
        if v not in out:
            out.append(v)
    return out


def new_figure(nrows: int, ncols: int, width: float = 4.0, height: float = 3.2) -> tuple[Any, np.ndarray]:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False)
    return fig, axes


def save_figure(fig: Any, path: Path) -> Path:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return path


def mean_by(rows: Iterable[Mapping[str, Any]], keys: Sequence[str], value: str,
            reduce: Callable[[list[float]], float] = lambda v: float(np.mean(v))) -> dict[tuple, float]:
    """{key tuple: reduce(values)} over rows."""
    return {k: reduce([float(r[value]) for r in g]) for k, g in group(rows, *keys).items()}
