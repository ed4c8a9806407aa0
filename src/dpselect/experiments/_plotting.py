"""Small helpers shared by the experiment modules (plots, tables, number formatting).

Plot conventions (all figures): log axes labelled at the decades only (no
overlapping minor labels, :func:`log_axis`); exact zeros drawn at a labelled
"0" below the positive decades instead of being floored (:func:`log_axis`
with ``values``); one legend per figure placed outside the panels
(:func:`figure_legend`); accuracy panels with error bars (spread over
repetitions) and the majority-class reference line (:func:`accuracy_panel`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["accuracy_panel", "figure_legend", "fmt", "group", "log_axis", "md_table", "mean_by", "nearest",
           "new_figure", "save_figure"]


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
    fig.savefig(path, dpi=110, metadata={"Software": None}, bbox_inches="tight")
    plt.close(fig)
    return path


def mean_by(rows: Iterable[Mapping[str, Any]], keys: Sequence[str], value: str,
            reduce: Callable[[list[float]], float] = lambda v: float(np.mean(v))) -> dict[tuple, float]:
    """{key tuple: reduce(values)} over rows."""
    return {k: reduce([float(r[value]) for r in g]) for k, g in group(rows, *keys).items()}


def _decade_label(v: float, _pos: Any = None) -> str:
    """Tick label: "0" for zero, 10^k for the decades."""
    if v == 0:
        return "0"
    k = int(round(np.log10(abs(v))))
    return ("$-10^{%d}$" if v < 0 else "$10^{%d}$") % k


def log_axis(ax: Any, axis: str = "x", values: Iterable[float] | None = None) -> None:
    """Log scale labelled at the decades only; exact zeros in ``values`` get their own "0" tick.

    Minor ticks stay (unlabelled), so labels never overlap.  If ``values``
    (the data plotted on that axis) contain exact zeros, the axis becomes
    symmetric-log with a linear stretch below the smallest positive decade,
    and 0 is a labelled tick: zeros are shown as zeros, not floored.
    """
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogFormatterSciNotation, LogLocator, NullFormatter

    arr = np.asarray(list(values) if values is not None else [], dtype=float)
    arr = arr[np.isfinite(arr)]
    axis_obj = ax.xaxis if axis == "x" else ax.yaxis
    setter = ax.set_xscale if axis == "x" else ax.set_yscale
    if arr.size and (arr == 0).any() and (arr > 0).any():
        lo = 10.0 ** np.floor(np.log10(arr[arr > 0].min()))
        hi = 10.0 ** np.ceil(np.log10(arr.max()))
        setter("symlog", linthresh=lo, linscale=0.5)
        decades = [0.0] + [float(v) for v in 10.0 ** np.arange(np.log10(lo), np.log10(hi) + 1)]
        step = max(1, int(np.ceil((len(decades) - 1) / 6)))  # at most ~7 labels
        axis_obj.set_major_locator(FixedLocator([0.0] + decades[1::step]))
        axis_obj.set_major_formatter(FuncFormatter(_decade_label))
        axis_obj.set_minor_formatter(NullFormatter())
        (ax.set_xlim if axis == "x" else ax.set_ylim)(-0.15 * lo, hi * 1.3)
        return
    setter("log")
    axis_obj.set_major_locator(LogLocator(base=10.0, numticks=8))
    axis_obj.set_major_formatter(LogFormatterSciNotation())
    axis_obj.set_minor_locator(LogLocator(base=10.0, subs=[k / 10 for k in range(2, 10)], numticks=80))
    axis_obj.set_minor_formatter(NullFormatter())


def figure_legend(fig: Any, axes: np.ndarray, ncol: int | None = None) -> Any:
    """One legend for the whole figure, below the panels (never over a curve); duplicates merged."""
    handles: dict[str, Any] = {}
    for ax in np.ravel(axes):
        for h, label in zip(*ax.get_legend_handles_labels()):
            if label and not label.startswith("_"):
                handles.setdefault(label, h)
    if not handles:
        return None
    n = len(handles)
    ncol = ncol or min(n, 4)
    fig.tight_layout()
    return fig.legend(list(handles.values()), list(handles), loc="upper center", bbox_to_anchor=(0.5, 0.0),
                      ncol=ncol, fontsize=8, frameon=False)


def accuracy_panel(ax: Any, x: Sequence[float], series: Mapping[str, tuple[Sequence[float], Sequence[float]]], *,
                   majority: float | None = None, log_x: bool = True, styles: Mapping[str, Mapping[str, Any]]
                   | None = None) -> None:
    """Mean accuracy per series with error bars (spread over repetitions) and the majority-class line.

    series : label -> (means, spreads) over ``x`` (NaN means: no point).
    majority : accuracy of always predicting the majority class (a
        horizontal dashed line labelled "majority class"), if known.
    """
    for label, (mean, spread) in series.items():
        kw = {"marker": ".", "capsize": 2.5, "elinewidth": 0.8, **dict((styles or {}).get(label, {}))}
        ax.errorbar(list(x), list(mean), yerr=list(spread), label=label, **kw)
    if majority is not None and np.isfinite(majority):
        ax.axhline(majority, color="0.35", linestyle="--", linewidth=1.0, label="majority class")
    if log_x:
        log_axis(ax, "x")
