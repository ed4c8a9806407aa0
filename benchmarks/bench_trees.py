"""Benchmark: dpselect's private tree and forest vs diffprivlib and DP-EBM (accuracy grid and fit time).

Run by hand.  diffprivlib 0.6.6 needs scikit-learn < 1.7, so use a separate
environment with the peers and dpselect's dependencies, e.g.::

    python3 -m venv /work/venv-peers
    /work/venv-peers/bin/pip install "scikit-learn<1.7" diffprivlib interpret-core pandas pyarrow \
        scipy typer rich dask distributed matplotlib
    PYTHONPATH=src DPSELECT_DATA=/work/shared/data /work/venv-peers/bin/python benchmarks/bench_trees.py \
        --table --out trees.csv            # accuracy grid (see --datasets / --eps)
    PYTHONPATH=src /work/venv-peers/bin/python benchmarks/bench_trees.py --timing

Peers that are not importable are skipped (their columns stay empty).

* ``--table``: 5-fold stratified CV (shuffled, seed = the fold's repetition)
  of our tree and forest at their defaults, diffprivlib's tree and forest at
  theirs, DP-EBM (binary tasks only) and the majority-class rate, for each
  dataset and epsilon.  The public schema (bounds, categories, classes) comes
  from the whole file, as in the papers, and is given to every model.
  Results are appended to ``--out`` (CSV) as they come and summarised as a
  markdown table.
* ``--timing``: fit time on 100,000 x 16 uniform records (bounds [0, 1] public
  by construction), ours vs diffprivlib: medians (wall and process CPU time) of
  ``--repeat`` (default 7) runs interleaved across the models, after a warm-up.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dpselect.apps.trees import DPDecisionTreeClassifier, DPRandomForestClassifier
from dpselect.experiments._peers import available, fit_score
from dpselect.experiments._tabular import load

DATASETS = ("breast_cancer", "digits", "wine", "iris", "adult", "nltcs", "acs", "mushroom")
EPS = (0.1, 0.5, 1.0, 2.0, 5.0)
OURS = ("tree_default", "forest_default")


def table(datasets, eps_grid, out: Path, folds: int = 5, models=None) -> None:
    from sklearn.model_selection import StratifiedKFold

    peers = available()
    names = list(models) if models else ["majority", *OURS, *peers]
    data_dir = os.environ.get("DPSELECT_DATA")
    new = not out.exists()
    with out.open("a", newline="") as fh:
        w = csv.writer(fh)
        if new:
            w.writerow(["dataset", "model", "epsilon", "fold", "accuracy", "fit_seconds"])
        for ds in datasets:
            data = load(ds, None if ds in ("breast_cancer", "digits", "wine", "iris") else data_dir)
            splits = list(StratifiedKFold(folds, shuffle=True, random_state=0).split(np.zeros(data.n), data.y))
            for eps in eps_grid:
                for name in names:
                    if name == "dp_ebm" and len(data.classes) != 2:
                        continue
                    if name == "majority" and eps != eps_grid[0]:
                        continue
                    for k, (tr, te) in enumerate(splits):
                        t0 = time.perf_counter()
                        acc = fit_score(name, eps, data, tr, te, seed=k)
                        w.writerow([ds, name, eps, k, f"{acc:.4f}", f"{time.perf_counter() - t0:.3f}"])
                        fh.flush()
                    print(f"{ds:14s} eps={eps:<4} {name:20s} done", flush=True)
    summarise(out)


def summarise(path: Path) -> None:
    rows = list(csv.DictReader(path.open()))
    cells: dict = {}
    for r in rows:
        cells.setdefault((r["dataset"], float(r["epsilon"]), r["model"]), []).append(float(r["accuracy"]))
    models = list(dict.fromkeys(r["model"] for r in rows))
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    eps = sorted({float(r["epsilon"]) for r in rows})
    print("| dataset | eps | " + " | ".join(models) + " |")
    print("|---|---|" + "---|" * len(models))
    for ds in datasets:
        maj = [v for (d, _, m), v in cells.items() if d == ds and m == "majority"]
        for e in eps:
            vals = []
            for m in models:
                v = maj[0] if m == "majority" and maj else cells.get((ds, e, m))
                vals.append(f"{np.mean(v):.3f}" if v else "n/a")
            print(f"| {ds} | {e:g} | " + " | ".join(vals) + " |")


def timing(repeat: int = 7) -> None:
    rng = np.random.default_rng(0)
    n, d = 100_000, 16
    X = rng.uniform(0.0, 1.0, size=(n, d))
    y = (X[:, 0] + X[:, 1] + 0.5 * X[:, 2] - 0.5 * X[:, 3] + 0.2 * rng.normal(size=n) > 1.0).astype(int)
    lo, hi = np.zeros(d), np.ones(d)
    models = {
        "dpselect tree (defaults)": lambda: DPDecisionTreeClassifier(bounds=(0.0, 1.0), classes=[0, 1], random_state=0),
        "dpselect forest (defaults)": lambda: DPRandomForestClassifier(
            bounds=(0.0, 1.0), classes=[0, 1], random_state=0
        ),
    }
    if "diffprivlib_tree" in available():
        from diffprivlib.models import DecisionTreeClassifier, RandomForestClassifier

        models["diffprivlib tree"] = lambda: DecisionTreeClassifier(
            epsilon=1.0, bounds=(lo, hi), classes=[0, 1], random_state=0
        )
        models["diffprivlib forest"] = lambda: RandomForestClassifier(
            epsilon=1.0, bounds=(lo, hi), classes=[0, 1], random_state=0
        )
    wall: dict = {name: [] for name in models}
    cpu: dict = {name: [] for name in models}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        acc = {name: make().fit(X, y).score(X, y) for name, make in models.items()}  # also the warm-up
        for _ in range(repeat):  # interleaved: every model sees the same machine load
            for name, make in models.items():
                t0, c0 = time.perf_counter(), time.process_time()
                make().fit(X, y)
                wall[name].append(time.perf_counter() - t0)
                cpu[name].append(time.process_time() - c0)
    print(f"fit on {n:,} x {d}, epsilon = 1, median of {repeat} interleaved runs after a warm-up:")
    for name in models:
        print(
            f"  {name:28s} {np.median(wall[name]) * 1e3:9.1f} ms wall {np.median(cpu[name]) * 1e3:9.1f} ms CPU"
            f"   training accuracy {acc[name]:.3f}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--table", action="store_true")
    ap.add_argument("--timing", action="store_true")
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--eps", default=",".join(str(e) for e in EPS))
    ap.add_argument("--models", default="")
    ap.add_argument("--repeat", type=int, default=7, help="timing runs per model (median reported)")
    ap.add_argument("--out", default="bench_trees.csv")
    ap.add_argument("--summarise", action="store_true", help="only print the table of an existing --out")
    a = ap.parse_args()
    if a.summarise:
        summarise(Path(a.out))
        return
    if a.table:
        table(
            a.datasets.split(","),
            tuple(float(e) for e in a.eps.split(",")),
            Path(a.out),
            models=[m for m in a.models.split(",") if m],
        )
    if a.timing or not a.table:
        timing(a.repeat)


if __name__ == "__main__":
    main()
