"""Yamamoto & Shibuya (IPCCC 2024): private top-SNP selection by the TDT statistic.

* Baselines next to the paper's mechanisms: ND-PF (permute-and-flip on the
  neighbour-distance utility, mathematics §9.1 -- the library's default and the best
  sound mechanism measured) and local dampening (LD); claim rows compare
  ND-PF with the paper's SPS.
* Fig. 1 / Fig. 2 -- exact accuracy (probability of returning the SNP with the
  largest chi2_TDT) of EM, PF and Smooth Private Selection in the paper's four
  cases (I: Thm 4 bound, two-sided; II: Thm 4, one-sided; III: Thm 5,
  two-sided; IV: Thm 5, one-sided) on panels simulated with the paper's
  protocol (N = 150 families, m in {5, 10, 15, 20} SNPs, 40 panels; quick: m in
  {5, 10}, 4 panels), epsilon in {3, 6, ..., 21} (quick: {3, 9, 21}), under the
  proven accounting (k + m l/2 = 1 for every SPS case) and the paper's (the
  one-sided cases use the published Thm 3 split k + (m-1) l/2 = 1, whose proof
  the supplement retracts).  Computed by ``dpselect.experiments.tdt.accuracy_table`` (exact,
  from the output distributions).  Fig. 1 plots accuracy against epsilon (one
  panel per m), Fig. 2 against m (one panel per epsilon).
* Table I -- run time of one private selection (building the problem with the
  Thm 5 smooth bounds + one SPS draw) for m up to 10^5 SNPs (quick 10^4);
  the one-off state-space tables for N are built before timing.  Times go to
  ``timings.csv`` (not deterministic).
* Table II -- the real-data example of the EnhancedSPS follow-up: the six
  significant SNPs of Justice et al. (2020) (N = 215 trios): with a data
  directory, the notebooks' printed tables (``tdt_justice2020/``, one table
  set per repetition); otherwise tables regenerated from the published
  statistics (``dpselect.experiments.datasets.tdt_real_example``); exact accuracies.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypedDict

import numpy as np

from .._docstrings import fill_doc
from ._common import accuracy_figure, means_table, stats_by, task_grid
from ._plotting import fmt, md_table
from ._tdt_accuracy import CASE, MECH_ORDER, SPS_CASES, accuracy_table, paper_one_sided_sps
from ._tdt_claims import _REAL_KEYS, _table, claims
from ._tdt_tables import N_FAMILIES, RealTables, _real_rows, _runtime_rows, real_tables
from .tasks import Task

__all__ = [
    "CASE",
    "MECH_ORDER",
    "SPS_CASES",
    "Grid",
    "RealTables",
    "accuracy_table",
    "claims",
    "grid",
    "notes",
    "paper_one_sided_sps",
    "plot",
    "real_tables",
    "run_task",
    "summary",
    "tasks",
]

TITLE = "Private top-SNP selection by TDT (Yamamoto & Shibuya, IPCCC 2024)"
DESCRIPTION = __doc__.split("\n\n", 1)[1]


class Grid(TypedDict):
    """The axes of the TDT grid (see the module docstring)."""

    ms: tuple[int, ...]
    eps: tuple[float, ...]
    chunks: int
    reps_per_chunk: int
    runtime_ms: tuple[int, ...]
    real_reps: int


def grid(quick: bool) -> Grid:
    """The grid: simulated panel sizes and chunks, epsilons, run-time sizes, real-data repetitions.

    Parameters
    ----------
    quick : bool
        The reduced grid.

    Returns
    -------
    Grid
        The axes.
    """
    if quick:
        return {
            "ms": (5, 10),
            "eps": (3.0, 9.0, 21.0),
            "chunks": 2,
            "reps_per_chunk": 2,
            "runtime_ms": (100, 1000, 10000),
            "real_reps": 2,
        }
    return {
        "ms": (5, 10, 15, 20),
        "eps": tuple(float(e) for e in range(3, 22, 3)),
        "chunks": 8,
        "reps_per_chunk": 5,
        "runtime_ms": (100, 1000, 10000, 100000),
        "real_reps": 10,
    }


def tasks(quick: bool, data_dir: Path | None) -> list[Task]:
    """Simulated-panel chunks, run-time sizes and real-data repetitions (keys ("accuracy", m, chunk), ...).

    Parameters
    ----------
    quick : bool
        The reduced grid.
    data_dir : pathlib.Path or None
        The root of the real datasets (None: Table II from regenerated tables).

    Returns
    -------
    list of Task
        The grid.
    """
    g = grid(quick)
    real_dir = None if data_dir is None else str(data_dir)
    return (
        task_grid(
            {"kind": ["accuracy"], "m": g["ms"], "chunk": range(g["chunks"])},
            n_reps=g["reps_per_chunk"],
            epsilons=g["eps"],
        )
        + task_grid({"kind": ["runtime"], "m": g["runtime_ms"], "rep": [0]}, repeats=3)
        + task_grid({"kind": ["real"], "m": [6], "rep": range(g["real_reps"])}, epsilons=g["eps"], data_dir=real_dir)
    )


def run_task(task: Task, seed: np.random.SeedSequence | int) -> list[dict]:
    """Exact accuracies of a chunk of simulated panels, run times, or the real-data example.

    Parameters
    ----------
    task : Task
        A task of :func:`tasks` (its ``kind``: "accuracy", "runtime" or "real").
    seed : numpy.random.SeedSequence or int
        The task's seed (panels, tables and draws).

    Returns
    -------
    list of dict
        The rows of Fig. 1/2 ("fig1"), Table I ("table1") or Table II ("table2").
    """
    kw = task.kwargs
    rng = np.random.default_rng(seed)
    if kw["kind"] == "accuracy":
        rows = accuracy_table(
            ms=(kw["m"],),
            epsilons=kw["epsilons"],
            n_families=N_FAMILIES,
            n_reps=kw["n_reps"],
            rng=rng,
            accounting="both",
        )
        return [
            {
                "table": "fig1",
                "m": r["m"],
                "chunk": kw["chunk"],
                "n_reps": kw["n_reps"],
                "epsilon": r["epsilon"],
                "accounting": r["accounting"],
                "mechanism": r["mechanism"],
                "case": r["case"],
                "accuracy": r["accuracy"],
                "epsilon_proven": r["epsilon_proven"],
            }
            for r in rows
        ]
    if kw["kind"] == "runtime":
        return _runtime_rows(kw["m"], kw["repeats"], rng)
    data_dir = kw.get("data_dir")
    return _real_rows(
        real_tables(None if data_dir is None else Path(data_dir), kw["rep"], rng), kw["rep"], kw["epsilons"]
    )


#: the reference series of every accuracy figure: a uniformly random SNP is the top one with probability >= 1/m
CHANCE = "chance"
_LABELS = {**CASE, CHANCE: "chance (uniform pick, 1/m)"}
_STYLES = {_LABELS[CHANCE]: {"color": "0.35", "linestyle": "--", "marker": "", "capsize": 0, "dodge": False}}


def _with_chance(rows: list[dict], keys: tuple[str, ...]) -> list[dict]:
    """``rows`` sorted (paper accounting first, then m, epsilon) plus one "chance" row (accuracy 1/m) per cell."""
    order = {"paper": 0, "proven": 1}
    out = sorted(rows, key=lambda r: (order[r["accounting"]], r["m"], r["epsilon"]))
    cells = dict.fromkeys(tuple(r[k] for k in keys) for r in out)
    return out + [{**dict(zip(keys, c)), "mechanism": CHANCE, "accuracy": 1.0 / c[keys.index("m")]} for c in cells]


#: Caption of the TDT figures (see the report's Results section).
FIGURE_NOTE = (
    "points are exact mean accuracies; error bars are ± one standard deviation over the simulated panel "
    "chunks (Fig. 1/2) or the table sets (Table II), clipped to [0, 1]"
)


def _by_m(k: tuple) -> str:
    return f"m = {k[1]} ({k[0]} accounting)"


def _by_eps(k: tuple) -> str:
    return f"eps = {fmt(k[1])} ({k[0]})"


def _real_title(k: tuple) -> str:
    return f"Justice et al. 2020 example\nm = 6, N = 215, {k[0]} accounting"


def _figure(
    rows: list[dict],
    path: Path,
    panels: tuple[str, ...],
    x: str,
    ncols: int,
    title: Callable[[tuple], str],
    xlabel: str,
) -> Path:
    """:func:`accuracy_figure` of the TDT accuracies by mechanism (with the chance line)."""
    return accuracy_figure(
        rows,
        path,
        panels=panels,
        x=x,
        series="mechanism",
        labels=_LABELS,
        majority=None,
        styles=_STYLES,
        ncols=ncols,
        title=title,
        xlabel=xlabel,
        ylabel="accuracy (top SNP)",
    )


def plot(rows: list[dict], out_dir: Path) -> list[Path]:
    """Mean exact accuracy, error bars = spread over the panel chunks (Fig. 1/2) or the table sets (Table II).

    The dashed "chance" line is 1/m, the accuracy of a uniformly random SNP
    when the top SNP is unique (the reference line: a private selection
    should beat it).

    Parameters
    ----------
    rows : list of dict
        The rows of :func:`run_task`.
    out_dir : pathlib.Path
        Where the PNGs go.

    Returns
    -------
    list of pathlib.Path
        The figures written (Fig. 1, Fig. 2, Table II; those with rows).
    """
    files = []
    fig1 = _with_chance(_table(rows, "fig1"), ("accounting", "m", "epsilon"))
    if fig1:
        n_ms, n_eps = len({r["m"] for r in fig1}), len({r["epsilon"] for r in fig1})
        for name, panels, x, ncols, title, xlabel in (
            ("fig1_tdt_accuracy_vs_eps", ("accounting", "m"), "epsilon", n_ms, _by_m, "epsilon"),
            ("fig2_tdt_accuracy_vs_m", ("accounting", "epsilon"), "m", n_eps, _by_eps, "m (SNPs)"),
        ):
            files.append(_figure(fig1, out_dir / f"{name}.png", panels, x, ncols, title, xlabel))
    real = _with_chance(_table(rows, "table2"), ("accounting", "m", "epsilon"))
    if real:
        path = out_dir / "table2_tdt_real_example.png"
        files.append(_figure(real, path, ("accounting",), "epsilon", 2, _real_title, "epsilon"))
    return files


@fill_doc
def summary(rows: list[dict]) -> str:
    """The tables of Fig. 1/2 (both accountings), Table I and Table II.

    %(rows_to_markdown)s
    """
    parts = []
    fig1 = _table(rows, "fig1")
    for accounting in ("paper", "proven"):
        sub = [r for r in fig1 if r["accounting"] == accounting]
        if sub:
            stats = stats_by(sub, ("m", "epsilon", "mechanism"), "accuracy")
            cells = sorted({(r["m"], r["epsilon"]) for r in sub})
            parts.append(
                f"Fig. 1/2 -- mean exact accuracy ± spread over the panel chunks, {accounting} accounting "
                "(chance: 1/m):\n\n" + means_table(stats, cells, MECH_ORDER, ["m", "epsilon"], CASE)
            )
    rt = _table(rows, "table1")
    if rt:
        table = [[str(r["m"]), CASE[r["mechanism"]], f"{r['median_seconds'] * 1e3:.2f} ms"] for r in rt]
        parts.append(
            "Table I -- time of one private selection (problem with Thm 5 bounds + one draw, N = 150, "
            "median of 3; machine-dependent):\n\n" + md_table(["m", "mechanism", "time"], table)
        )
    real = _table(rows, "table2")
    if real:
        stats = stats_by(real, _REAL_KEYS, "accuracy")
        cells = [(a, e) for a in ("paper", "proven") for e in sorted({r["epsilon"] for r in real})]
        reps = len({r["rep"] for r in real})
        parts.append(
            f"Table II -- real-data example (Justice et al. 2020, m = 6, N = 215), mean exact accuracy ± "
            f"spread over {reps} table sets ({real[0]['source'].split(' (')[0]}):\n\n"
            + means_table(stats, cells, MECH_ORDER, ["accounting", "epsilon"], CASE)
        )
    return "\n\n".join(parts)


@fill_doc
def notes(quick: bool, data_dir: Path | None) -> list[str]:
    """The report's notes: exactness, accounting, the data of Table II, the figures.

    %(experiment_notes)s
    """
    return [
        "Accuracies are exact (from output distributions), averaged over simulated panels; the panels are drawn "
        "from each task's seed, the same panels serve every mechanism and epsilon.",
        "Under the paper's accounting the one-sided cases' proven guarantee is slightly above epsilon "
        "(column epsilon_proven of results.csv; YS-supp retracts Thm 3).",
        "The mapping 'Fig. 1 = accuracy vs epsilon, Fig. 2 = accuracy vs m' is ours (same computations).",
        "Table II: "
        + (
            "the EnhancedSPS notebooks' printed tables from " + str(data_dir)
            if data_dir is not None
            else "tables regenerated from the published statistics (only chi2 values are published); "
            "--data-dir uses the notebooks' printed tables"
        )
        + ".",
        "ND-PF = permute-and-flip on the neighbour-distance utility (mathematics §9.1), select_top_snp's default.",
        f"Figures: error bars = standard deviation over the panel chunks (each the mean of "
        f"{grid(quick)['reps_per_chunk']} panels) or over the Table II table sets; the dashed line is chance, "
        "1/m (a uniformly random SNP; the accuracy is higher only when several SNPs tie for the top).",
    ]
