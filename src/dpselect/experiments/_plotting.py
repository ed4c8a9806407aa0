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
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "accuracy_panel",
    "figure_legend",
    "fmt",
    "group",
    "log_axis",
    "md_table",
    "nearest",
    "new_figure",
    "save_figure",
]


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
        v = (
            float(vals[np.argmin(np.abs(np.log(vals) - np.log(t)))])
            if (vals > 0).all()
            else float(vals[np.argmin(np.abs(vals - t))])
        )
        if v not in out:
            out.append(v)
    return out


def new_figure(nrows: int, ncols: int, width: float = 4.0, height: float = 3.2) -> tuple[Any, np.ndarray]:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False)
    return fig, axes


def save_figure(fig: Any, path: Path, *, tidy: bool = True) -> Path:
    """Write ``fig`` as a PNG (deterministic metadata) after :func:`tidy_figure` (unless ``tidy=False``)."""
    import matplotlib.pyplot as plt

    if tidy:
        tidy_figure(fig)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None}, bbox_inches="tight")
    plt.close(fig)
    return path


def tidy_figure(fig: Any) -> None:
    """The report conventions applied to any figure, whoever drew it.

    * every log-scaled axis not yet labelled by :func:`log_axis` is labelled
      by it from the data of its lines (round decades, or the values themselves for a short epsilon
      grid; minor ticks unlabelled), so tick labels never overlap;
    * legends drawn inside panels are replaced by one figure legend below the
      panels (:func:`figure_legend`), so no legend covers a curve.
    """
    from matplotlib.ticker import FuncFormatter

    axes = [ax for ax in fig.axes if ax.get_visible() and ax.axison]
    for ax in axes:
        for axis in ("x", "y"):
            if (ax.get_xscale() if axis == "x" else ax.get_yscale()) != "log":
                continue
            if isinstance((ax.xaxis if axis == "x" else ax.yaxis).get_major_formatter(), FuncFormatter):
                continue  # already labelled by log_axis from the plotted values (not the dodged positions)
            data = [np.asarray(ln.get_xdata() if axis == "x" else ln.get_ydata(), dtype=float) for ln in ax.lines]
            values = np.concatenate(data) if data else np.array([])
            limits = ax.get_xlim() if axis == "x" else ax.get_ylim()
            log_axis(ax, axis, values[np.isfinite(values) & (values > 0)])
            (ax.set_xlim if axis == "x" else ax.set_ylim)(limits)
    if any(ax.get_legend() is not None for ax in axes):
        for ax in axes:
            if ax.get_legend() is not None:
                ax.get_legend().remove()
        figure_legend(fig, np.array(axes, dtype=object))


def _decade_label(v: float, _pos: Any = None) -> str:
    """Tick label: "0" for zero, 10^k for the decades."""
    if v == 0:
        return "0"
    k = round(np.log10(abs(v)))
    return ("$-10^{%d}$" if v < 0 else "$10^{%d}$") % k


def decade_ticks(lo_exp: int, hi_exp: int, max_ticks: int = 7) -> list[int]:
    """Exponents of the labelled decades in [lo_exp, hi_exp]: multiples of a round step, at most ``max_ticks``."""
    span = max(1, hi_exp - lo_exp)
    step = next((s for s in (1, 2, 3, 5, 10, 20, 25, 50, 100, 200, 250, 500) if span / s <= max_ticks - 1), 1000)
    first = -(-lo_exp // step) * step
    return list(range(first, hi_exp + 1, step))


def log_axis(
    ax: Any, axis: str = "x", values: Iterable[float] | None = None, linear_below: float | None = None
) -> None:
    """Log scale labelled at round decades only; exact zeros in ``values`` get their own "0" tick.

    ``values`` are the data plotted on that axis (optional).  Minor ticks stay
    unlabelled, so labels never overlap.  If the values contain exact zeros,
    the axis becomes symmetric-log with a linear stretch (about a tenth of the
    axis) below the smallest positive decade, and 0 is a labelled tick: zeros
    are shown as zeros, not floored at some small number.  ``linear_below``
    (a power of ten): the same symmetric-log axis, linear below that value
    (values of 1e-150 are drawn next to 0, where they belong, instead of
    stretching the axis over 150 decades; nothing is moved or floored).
    """
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

    arr = np.asarray(list(values) if values is not None else [], dtype=float)
    arr = arr[np.isfinite(arr) & (arr >= 0)]
    axis_obj = ax.xaxis if axis == "x" else ax.yaxis
    setter = ax.set_xscale if axis == "x" else ax.set_yscale
    positive = arr[arr > 0]
    linear = linear_below is not None and positive.size > 0 and bool((positive < linear_below).any())
    if positive.size:
        lo_exp = int(np.floor(np.log10(positive.min())))
        if linear and linear_below is not None:
            lo_exp = int(np.floor(np.log10(linear_below)))
            positive = positive[positive >= linear_below]
        hi_exp = int(np.ceil(np.log10(positive.max()))) if positive.size else lo_exp + 1
        ticks = [10.0**k for k in decade_ticks(lo_exp, hi_exp)]
    if linear or (positive.size and (arr == 0).any()):
        lo, hi = 10.0**lo_exp, 10.0**hi_exp
        setter("symlog", linthresh=lo, linscale=max(0.5, 0.12 * (hi_exp - lo_exp)))
        if ticks[0] > lo and len(ticks) > 1 and np.log10(ticks[0] / lo) < 0.5 * np.log10(ticks[1] / ticks[0]):
            ticks = ticks[1:]
        axis_obj.set_major_locator(FixedLocator([0.0, *ticks]))
        axis_obj.set_minor_locator(FixedLocator([]))
        (ax.set_xlim if axis == "x" else ax.set_ylim)(-0.05 * lo, hi * 1.5)
    elif positive.size and len(set(positive.tolist())) <= 8 and hi_exp - lo_exp <= 3:
        # a few values within a few decades (an epsilon grid): label the values themselves
        setter("log")
        axis_obj.set_major_locator(FixedLocator(sorted(set(positive.tolist()))))
        axis_obj.set_minor_locator(FixedLocator([]))
        axis_obj.set_major_formatter(FuncFormatter(lambda v, _pos=None: fmt(v)))
        axis_obj.set_minor_formatter(NullFormatter())
        return
    else:
        setter("log")
        if positive.size:
            axis_obj.set_major_locator(FixedLocator(ticks))
        else:
            axis_obj.set_major_locator(LogLocator(base=10.0, numticks=8))
        if not positive.size or hi_exp - lo_exp <= 8:
            axis_obj.set_minor_locator(LogLocator(base=10.0, subs=[k / 10 for k in range(2, 10)], numticks=80))
        else:
            axis_obj.set_minor_locator(FixedLocator([]))
    axis_obj.set_major_formatter(FuncFormatter(_decade_label))
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
    return fig.legend(
        list(handles.values()),
        list(handles),
        loc="upper center",
        bbox_to_anchor=(0.5, 0.0),
        ncol=ncol,
        fontsize=8,
        frameon=False,
    )


def accuracy_panel(
    ax: Any,
    x: Sequence[float],
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    majority: float | None = None,
    log_x: bool = True,
    styles: Mapping[str, Mapping[str, Any]] | None = None,
    limits: tuple[float, float] = (0.0, 1.0),
) -> None:
    """Mean accuracy per series with error bars (spread over repetitions) and the majority-class line.

    Error bars are mean ± spread clipped to ``limits``, the range of the metric ((0, 1) for an
    accuracy, (0, inf) for an error), so that no bar claims an impossible value.

    The series are dodged by a few percent along a log x axis so that error bars stay visible
    (except those whose style has ``"dodge": False``).

    Parameters
    ----------
    series
        label -> (means, spreads) over ``x`` (NaN means: no point).
    majority
        accuracy of always predicting the majority class (a
        horizontal dashed line labelled "majority class"), if known.
    """
    n = len(series)
    for i, (label, (mean, spread)) in enumerate(series.items()):
        kw = {"marker": ".", "capsize": 2.5, "elinewidth": 0.8, **dict((styles or {}).get(label, {}))}
        # dodge the series slightly along x so that their error bars do not hide each other
        # (style key "dodge": False keeps a reference series at its true x)
        dodge = bool(kw.pop("dodge", True))
        shift = 10.0 ** (0.012 * (i - (n - 1) / 2)) if log_x and dodge else 1.0
        m, sp = np.asarray(mean, dtype=float), np.asarray(spread, dtype=float)
        lower = np.clip(np.minimum(sp, m - limits[0]), 0.0, None)
        upper = np.clip(np.minimum(sp, limits[1] - m), 0.0, None)
        ax.errorbar([v * shift for v in x], list(m), yerr=np.vstack([lower, upper]), label=label, **kw)
    if majority is not None and np.isfinite(majority):
        ax.axhline(majority, color="0.35", linestyle="--", linewidth=1.0, label="majority class")
    if log_x:
        log_axis(ax, "x", x)
