"""Regenerate the table of docs/choosing.md: exact accuracy of each mechanism per task.

Run from the repository root (dpselect importable, e.g. ``PYTHONPATH=src``)::

    python docs/scripts/choosing_table.py            # rewrite docs/_generated/choosing.md
    python docs/scripts/choosing_table.py --check    # exit 1 if the committed file is stale

Every figure is computed by the library's exact analysis (``dpselect.analysis``:
output distributions in closed form or by quadrature, no sampling) on a fixed,
seeded, public-looking input, so the output is deterministic.  The inputs are
synthetic: nothing here reads private or real data.

Plug-in points (:data:`PLUGINS`): mechanisms that depend on application code
that may not exist yet in a given checkout (the rank-distance utility for
percentiles, the neighbour-distance utility for TDT).  Each plug-in is a
function returning a :class:`~dpselect.problem.SelectionProblem` or ``None``
when the application code is missing; a missing one is shown as "not available
in this version" instead of a figure, never replaced by a guess.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import dpselect
from dpselect import analysis
from dpselect.mechanisms.distance import distance_problem

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generated_table import write_or_check

OUT = Path(__file__).resolve().parents[1] / "_generated" / "choosing.md"
SEED = 20240601


def _find(names: list[tuple[str, str]]) -> Any:
    """The first ``module.attribute`` that exists (modules are being reorganised), else None."""
    for module, attr in names:
        try:
            mod = importlib.import_module(module)
        except ImportError:
            continue
        if hasattr(mod, attr):
            return getattr(mod, attr)
    return None


# ---------------------------------------------------------------------------
# Plug-in points: distance utilities supplied by the applications
# ---------------------------------------------------------------------------


def percentile_rank_problem(data: np.ndarray, p: float, grid: np.ndarray) -> Any:
    """Rank-distance utility over the public grid (SPEC §9.1), if the app provides it.

    ``rank_distances(data, p, grid)`` (paper rank convention) gives d_j per grid
    point; the problem is the one ``apps.quantiles.percentile_problem(..., utility="rank")``
    builds.
    """
    distances = _find([("dpselect.apps.quantiles", "rank_distances")])
    if distances is None:
        return None
    return distance_problem(distances(data, p, grid), relation="add_remove")


def tdt_neighbour_distance_problem(b: np.ndarray, c: np.ndarray, n_families: int) -> Any:
    """Neighbour-distance utility for the top SNP (SPEC §9.1), if the app provides it."""
    distances = _find([("dpselect.apps.genomics", "neighbour_distances")])
    if distances is None:
        return None
    return distance_problem(distances(b, c, n_families), relation="replace")


PLUGINS: dict[str, Callable[..., Any]] = {
    "percentile_rank": percentile_rank_problem,
    "tdt_neighbour_distance": tdt_neighbour_distance_problem,
}


# ---------------------------------------------------------------------------
# Tasks
# ---------------------------------------------------------------------------


ACCURACY = "P(best)"
ERROR = "E abs. error"


@dataclass
class Row:
    mechanism: str
    value: float | None  # None: not available in this version


@dataclass
class Task:
    name: str
    setting: str
    metric: str  # ACCURACY (higher is better) or ERROR (lower is better)
    recommended: str
    why: str
    rows: list[Row]

    def best(self) -> str | None:
        have = [r for r in self.rows if r.value is not None]
        if not have:
            return None
        key = (lambda r: -r.value) if self.metric == ACCURACY else (lambda r: r.value)
        return min(have, key=key).mechanism


def majority() -> Task:
    counts = np.array([22, 8, 17, 4, 0])
    eps = 1.0
    on_counts = dpselect.SelectionProblem(counts, global_sensitivity=1.0, monotone=True, relation="add_remove")
    from dpselect.apps.counts import _majority as app

    indicator = app.majority_problem(counts)
    rows = [
        Row("PF on the counts", analysis.accuracy(dpselect.PermuteAndFlip(eps), on_counts)),
        Row("EM on the counts", analysis.accuracy(dpselect.ExponentialMechanism(eps), on_counts)),
        Row("EM on the argmax indicator", analysis.accuracy(dpselect.ExponentialMechanism(eps), indicator)),
        Row(
            "SNM (Student t) on the argmax indicator",
            analysis.accuracy(dpselect.make_mechanism("snm_t", eps), indicator),
        ),
    ]
    return Task(
        "Majority vote / mode / leaf label",
        f"votes {counts.tolist()}, ε = {eps:g}, add/remove",
        ACCURACY,
        "PF on the counts",
        "counts are monotone with sensitivity 1, so PF/EM pay half the noise; the 0/1 indicator "
        "carries no information about how far the runner-up is",
        rows,
    )


def percentile() -> Task:
    from dpselect.apps.quantiles._percentile import percentile as app

    rng = np.random.default_rng(SEED)
    data = rng.standard_normal(10_000).clip(-5, 5)
    grid = np.linspace(-5.0, 5.0, 1001)
    p, eps = 90.0, 1.0
    loss = app.absolute_error_loss(grid, app.true_percentile(data, p, grid))
    indicator = app.percentile_problem(data, p, grid)
    rank = PLUGINS["percentile_rank"](data, p, grid)
    rows = [
        Row(
            "PF on the rank distance",
            None if rank is None else analysis.expected_error(dpselect.PermuteAndFlip(eps), rank, loss=loss),
        ),
        Row(
            "EM on the rank distance",
            None if rank is None else analysis.expected_error(dpselect.ExponentialMechanism(eps), rank, loss=loss),
        ),
        Row("EM on the indicator", analysis.expected_error(dpselect.ExponentialMechanism(eps), indicator, loss=loss)),
        Row(
            "Local dampening on the indicator",
            analysis.expected_error(dpselect.LocalDampening(epsilon=eps), indicator, loss=loss),
        ),
    ]
    return Task(
        "Percentile over a public grid",
        f"p = {p:g}, n = {data.size:,} draws of N(0, 1), 1001-point grid on [-5, 5], ε = {eps:g}",
        ERROR,
        "PF on the rank distance",
        "the rank distance (how many records must change before a grid point becomes the percentile) "
        "has sensitivity 1 and falls off smoothly around the true value; the indicator is 1 at one "
        "grid point and 0 elsewhere, so EM on it is nearly uniform",
        rows,
    )


def top_snp() -> Task:
    from dpselect.apps import genomics as app
    from dpselect.experiments.datasets import simulate_tdt

    m, n_families, eps, panels = 20, 150, 3.0, 5
    rng = np.random.default_rng(SEED)
    acc: dict[str, list[float]] = {}
    for _ in range(panels):
        b, c = simulate_tdt(m, n_families, rng=rng)
        chi2 = app.tdt_problem(b, c, n_families)
        nd = PLUGINS["tdt_neighbour_distance"](b, c, n_families)
        figures = {
            "PF on the neighbour distance": None if nd is None else analysis.accuracy(dpselect.PermuteAndFlip(eps), nd),
            "Smooth Private Selection (sound)": analysis.accuracy(dpselect.make_mechanism("sps", eps), chi2),
            "EM on χ²": analysis.accuracy(dpselect.ExponentialMechanism(eps), chi2),
            "PF on χ²": analysis.accuracy(dpselect.PermuteAndFlip(eps), chi2),
        }
        for k, v in figures.items():
            acc.setdefault(k, [])
            if v is not None:
                acc[k].append(v)
    rows = [Row(k, float(np.mean(v)) if v else None) for k, v in acc.items()]
    return Task(
        "Top SNP by the TDT statistic",
        f"m = {m} SNPs, N = {n_families} families (simulated, mean over {panels} panels), ε = {eps:g}, "
        "one family replaced",
        ACCURACY,
        "PF on the neighbour distance",
        "χ² has global sensitivity ≈ 8, so EM/PF on χ² need a large ε; smooth sensitivity (SPS) pays "
        "for all m noises being rescaled ([§3.1](mathematics.md#sec-3-1)); the neighbour distance has "
        "sensitivity 1",
        rows,
    )


def median() -> Task:
    duff_error = _find(
        [("dpselect.apps.quantiles", "quantile_expected_error"), ("dpselect.apps.quantiles", "quantile_expected_error")]
    )
    smooth_error = _find([("dpselect.apps.quantiles", "expected_abs_error_smooth_sens_pure")])
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal(1000).clip(-10, 10)
    bounds, eps = (-10.0, 10.0), 0.5
    rows = [
        Row("Duff (dataset-distance EM)", float(duff_error(x, 0.5, eps, bounds=bounds, granularity=0))),
        Row("SmoothSens_ε (Cauchy noise, clipped)", float(smooth_error(x, eps, bounds=bounds, clip_output=True))),
    ]
    return Task(
        "Median of a bounded variable",
        f"n = 1000 draws of N(0, 1), bounds [-10, 10], ε = {eps:g}",
        ERROR,
        "Duff (dataset-distance EM)",
        "the dataset-distance utility has sensitivity 1 and needs no noise calibration from the data; "
        "smooth-sensitivity releases add heavy-tailed noise scaled by a smooth bound",
        rows,
    )


def split() -> Task:
    from dpselect.apps.trees._growing import nodes as app

    rng = np.random.default_rng(SEED)
    n, n_attr, n_values, n_classes, eps = 400, 8, 3, 2, 0.05
    codes = rng.integers(0, n_values, size=(n, n_attr))
    flip = rng.random(n) < 0.5  # attribute 0 predicts the class 75% of the time
    y = np.where(flip, rng.integers(0, n_classes, n), codes[:, 0] % n_classes)
    domain = np.full(n_attr, n_values)
    rows = []
    for name, label in (
        ("pf", "PF on the max operator"),
        ("em", "EM on the max operator"),
        ("snm_t", "SNM (Student t) on the max operator"),
        ("ld", "Local dampening"),
    ):
        prob = app.split_problem(codes, y, domain, n_classes, mechanism=name)
        rows.append(Row(label, analysis.accuracy(dpselect.make_mechanism(name, eps), prob)))
    return Task(
        "Decision-tree split selection",
        f"one node: n = {n} records, {n_attr} ternary attributes, 2 classes, ε = {eps:g} for the split",
        ACCURACY,
        "PF on the max operator",
        "the max-operator split score is monotone with sensitivity 1; the smooth mechanisms pay the "
        "m-fold dilation at every node ([§3.1](mathematics.md#sec-3-1))",
        rows,
    )


TASKS: list[Callable[[], Task]] = [majority, percentile, top_snp, median, split]


# ---------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------


def _fmt(row: Row, metric: str) -> str:
    if row.value is None:
        return f"{row.mechanism}: not available in this version"
    value = f"{row.value:.3f}" if metric == ACCURACY else f"{row.value:.3g}"
    return f"{row.mechanism}: {value}"


def render(tasks: list[Task]) -> str:
    lines = [
        "<!-- generated by docs/scripts/choosing_table.py; do not edit by hand -->",
        "",
        "| task (setting) | recommended: exact figure | alternatives: exact figures | why |",
        "|---|---|---|---|",
    ]
    for t in tasks:
        rec = [r for r in t.rows if r.mechanism == t.recommended]
        others = [r for r in t.rows if r.mechanism != t.recommended]
        best = t.best()
        note = ""
        if best is not None and rec and rec[0].value is not None and best != t.recommended:
            note = f" (here {best} is better)"
        cells = [
            f"**{t.name}** ({t.setting}); {t.metric}",
            (_fmt(rec[0], t.metric) if rec else t.recommended) + note,
            "<br>".join(_fmt(r, t.metric) for r in others),
            t.why,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        f"{ACCURACY}: exact probability of returning an optimal candidate (`dpselect.analysis.accuracy`). "
        f"{ERROR}: exact expected absolute error of the released value (`dpselect.analysis.expected_error`, "
        "or the application's closed form for medians).",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    return write_or_check(
        argv,
        __doc__.split("\n\n")[0],
        OUT,
        lambda: render([task() for task in TASKS]),
        "docs/scripts/choosing_table.py",
    )


if __name__ == "__main__":
    raise SystemExit(main())
