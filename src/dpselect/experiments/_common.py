r"""Scaffolding shared by the experiments: task grids, means with spread, claim rows, tables, accuracy figures.

The tree, forest, median and percentile reproductions build on these (they
used to repeat each of them):

* :func:`task_grid` -- the cartesian product of named axes as :class:`Task`\ s;
* :func:`stats_by` -- mean, spread (standard deviation over repetitions) and
  count of a column per group;
* :func:`majority_accuracy` -- the accuracy of always predicting the
  training majority class (the reference line of accuracy plots);
* :func:`accuracy_figure` -- a grid of accuracy (or, with ``log_y``, error)
  panels with error bars, the majority-class line, optional published curves
  in the series' colours, one colour per series across panels and one legend
  outside;
* :func:`claim_at_least` / :func:`claim_matches_published` -- the two kinds of
  claim rows ("A is at least as accurate as B on average", "our value
  matches the published one"), with a "not evaluated" row when the grid has
  no comparable cell;
* :func:`means_table` -- the markdown summary table of means.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ._plotting import accuracy_panel, figure_legend, fmt, group, log_axis, md_table, new_figure, save_figure
from .tasks import Claim, Task

__all__ = [
    "Stat",
    "accuracy_figure",
    "claim_at_least",
    "claim_matches_published",
    "majority_accuracy",
    "means_table",
    "stats_by",
    "task_grid",
]


class Stat(NamedTuple):
    """Mean, spread (sample standard deviation over the rows; 0 for one row) and number of rows."""

    mean: float
    spread: float
    n: int


def task_grid(
    axes: Mapping[str, Iterable[Any]], kwargs: Callable[[dict[str, Any]], Mapping[str, Any]] | None = None, **fixed: Any
) -> list[Task]:
    """One :class:`Task` per point of the product of ``axes`` (name -> values), key in axis order.

    Each task's kwargs are the point's coordinates, ``fixed`` and, if given,
    ``kwargs(point)`` (e.g. a depth looked up from the dataset).
    """
    names = list(axes)
    out = []
    for values in itertools.product(*(list(v) for v in axes.values())):
        point = dict(zip(names, values))
        extra = dict(kwargs(point)) if kwargs is not None else {}
        out.append(Task(tuple(values), {**point, **fixed, **extra}))
    return out


def stats_by(rows: Iterable[Mapping[str, Any]], keys: Sequence[str], value: str) -> dict[tuple, Stat]:
    """{group key: Stat of ``value``} over the rows grouped by ``keys``."""
    out = {}
    for k, g in group(rows, *keys).items():
        v = np.array([float(r[value]) for r in g])
        out[k] = Stat(float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0, int(v.size))
    return out


def majority_accuracy(y_train: Any, y_test: Any) -> float:
    """Test accuracy of always predicting the most frequent training label (ties: the smallest label)."""
    labels, counts = np.unique(np.asarray(y_train), return_counts=True)
    return float(np.mean(np.asarray(y_test) == labels[np.argmax(counts)]))


def accuracy_figure(
    rows: Sequence[Mapping[str, Any]],
    path: Path,
    *,
    panels: Sequence[str],
    x: str,
    series: str,
    value: str = "accuracy",
    labels: Mapping[Any, str] | None = None,
    majority: str | None = "majority_accuracy",
    published: Callable[[tuple, Any, Any], float | None] | None = None,
    title: Callable[[tuple], str] | None = None,
    ncols: int = 3,
    xlabel: str = "epsilon",
    ylabel: str = "test accuracy",
    log_y: bool = False,
    linear_below: float | None = None,
    styles: Mapping[str, Mapping[str, Any]] | None = None,
) -> Path:
    """A grid of panels (accuracy, or any error with ``log_y``), one per value of the ``panels`` columns.

    Each panel: mean of ``value`` against ``x`` for every ``series`` value,
    error bars = spread over the rows (repetitions / folds), the mean of the
    ``majority`` column (if present) as the majority-class line, and
    ``published(panel, series, x)`` values (if given) as dotted curves in the
    series' colour.  ``log_y``: log y axis by :func:`log_axis` (exact zeros
    drawn at a labelled 0; linear below ``linear_below`` if given).  ``styles``: matplotlib keywords per series label.
    Written to ``path`` with one legend below the panels.
    """
    stats = stats_by(rows, [*panels, series, x], value)
    keys = list(dict.fromkeys(tuple(r[p] for p in panels) for r in rows))
    sers = list(dict.fromkeys(r[series] for r in rows))
    if labels:  # the order of ``labels``, whatever the row order
        sers.sort(key=lambda s: list(labels).index(s) if s in labels else len(labels))
    xs = sorted({r[x] for r in rows})
    ncols = max(1, min(ncols, len(keys)))
    nrows = -(-len(keys) // ncols)
    fig, axes = new_figure(nrows, ncols)
    name = lambda s: (labels or {}).get(s, str(s))
    # one colour per series in every panel (a panel without some series does not shift the others' colours)
    styles = {name(s): {"color": f"C{i % 10}", **dict((styles or {}).get(name(s), {}))} for i, s in enumerate(sers)}
    for k, key in enumerate(keys):
        ax = axes[k // ncols, k % ncols]
        data = {}
        for s in sers:
            st = [stats.get((*key, s, xv)) for xv in xs]
            if any(t is not None for t in st):
                data[name(s)] = (
                    [np.nan if t is None else t.mean for t in st],
                    [0.0 if t is None else t.spread for t in st],
                )
        maj = None
        if majority is not None:
            vals = [float(r[majority]) for r in rows if tuple(r[p] for p in panels) == key and majority in r]
            maj = float(np.mean(vals)) if vals else None
        accuracy_panel(ax, xs, data, majority=maj, styles=styles, limits=(0.0, math.inf if log_y else 1.0))
        colours = {lab: h[0].get_color() for h, lab in zip(*ax.get_legend_handles_labels()) if hasattr(h, "lines")}
        if published is not None:
            for s in sers:
                pub = [published(key, s, xv) for xv in xs]
                if any(p is not None for p in pub):
                    ax.plot(
                        xs,
                        [np.nan if p is None else p for p in pub],
                        linestyle=":",
                        linewidth=1.2,
                        color=colours.get(name(s), "gray"),
                        label=f"{name(s)} (published)",
                    )
        if log_y:
            log_axis(ax, "y", [v for mean, _ in data.values() for v in mean], linear_below=linear_below)
        ax.set_title(title(key) if title is not None else ", ".join(map(str, key)), fontsize=9)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
    for k in range(len(keys), nrows * ncols):
        axes[k // ncols, k % ncols].axis("off")
    figure_legend(fig, axes)
    return save_figure(fig, path)


def claim_at_least(
    text: str, diffs: Sequence[float], what: str, published: str, note: str = "", margin: float = 0.0
) -> Claim:
    """Claim "A is at least as good as B on average": ok iff mean(diffs) >= -margin (not evaluated if empty)."""
    if len(diffs) == 0:
        return Claim(text, "not evaluated (no comparable cell in the grid)", published, None, note)
    mean = float(np.mean(diffs))
    return Claim(text, f"mean {what} = {fmt(mean)} over {len(diffs)} cells", published, mean >= -margin, note)


def claim_matches_published(
    text: str,
    pairs: Sequence[tuple[float, float]],
    tolerance: float,
    published: str,
    missing: str,
    note: str = "",
    statistic: str = "max",
) -> Claim:
    """Claim "ours matches the published value within ``tolerance``" over (ours, published) pairs.

    statistic "max": max |ours - published|; "mean": |mean(ours - published)|.
    Without pairs the claim is "not evaluated" with the reason ``missing``.
    """
    if not pairs:
        return Claim(text, f"not evaluated ({missing})", published, None, note)
    d = np.array([a - b for a, b in pairs], dtype=float)
    if statistic == "max":
        gap, label = float(np.abs(d).max()), "max |ours - published|"
    else:
        gap, label = abs(float(d.mean())), "|mean(ours - published)|"
    return Claim(text, f"{label} = {fmt(gap)} over {len(pairs)} cells", published, gap <= tolerance, note)


def means_table(
    stats: Mapping[tuple, Stat],
    row_keys: Sequence[tuple],
    columns: Sequence[Any],
    header: Sequence[str],
    column_labels: Mapping[Any, str] | None = None,
    extra: Callable[[tuple], Sequence[Any]] | None = None,
    extra_header: Sequence[str] = (),
) -> str:
    """Markdown table: one row per ``row_keys`` entry, "mean ± spread" per column (stats keyed (*row, column))."""

    def cell(st: Stat | None) -> str:
        if st is None:
            return "–"
        return fmt(st.mean) if st.n <= 1 else f"{fmt(st.mean)} ± {fmt(st.spread, 2)}"

    table = []
    for rk in row_keys:
        table.append(
            [fmt(v) if not isinstance(v, str) else v for v in rk]
            + [cell(stats.get((*rk, c))) for c in columns]
            + (list(extra(rk)) if extra else [])
        )
    cols = [(column_labels or {}).get(c, str(c)) for c in columns]
    return md_table([*header, *cols, *extra_header], table)


def published_rows(name: str) -> list[dict[str, str]]:
    """The rows of a table of published results shipped with the package (``published/<name>.csv``).

    Parameters
    ----------
    name : str
        The table's file name without ``.csv``.

    Returns
    -------
    list of dict
        One dict per row, column name -> text.
    """
    import csv
    from importlib import resources

    text = resources.files(__package__).joinpath("published").joinpath(f"{name}.csv").read_text(encoding="utf-8")
    return list(csv.DictReader(text.splitlines()))
