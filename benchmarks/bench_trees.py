"""Benchmark: dpselect's private tree and forest vs diffprivlib and DP-EBM (accuracy, balanced accuracy, fit time).

Run by hand.  diffprivlib 0.6.6 needs scikit-learn < 1.7, so use a separate
environment with the peers and dpselect's dependencies, e.g.::

    python3 -m venv /work/venv-peers
    /work/venv-peers/bin/pip install "scikit-learn<1.7" diffprivlib interpret-core pandas pyarrow \
        scipy typer rich dask distributed matplotlib statsmodels vega_datasets
    PYTHONPATH=src DPSELECT_DATA=/work/shared/data /work/venv-peers/bin/python benchmarks/bench_trees.py \
        --table --out trees.csv            # accuracy grid (see --datasets / --eps / --repeats)
    PYTHONPATH=src /work/venv-peers/bin/python benchmarks/bench_trees.py --timing

Peers that are not importable are skipped (their columns stay empty).

* ``--table``: 5-fold stratified CV repeated ``--repeats`` times (shuffled,
  seed = the repetition) of our tree and forest at their defaults,
  diffprivlib's tree and forest at theirs, DP-EBM (binary tasks only) and the
  majority class of the training fold, for each dataset and epsilon; every
  fold records accuracy AND balanced accuracy (the mean recall of the
  classes: a rule that predicts only the majority class scores 1/C there).
  The public schema (bounds, categories, classes) comes from the whole file,
  as in the papers, and is given to every model.  Datasets: the project's
  (``dpselect.experiments``' loaders: scikit-learn's bundled ones and those
  under ``DPSELECT_DATA``) and tables that ship inside other packages
  (:data:`PACKAGE_TABLES`: statsmodels' and vega_datasets' bundled files);
  ``name@N`` keeps a stratified subsample of N rows (seed 0).  Results are
  appended to ``--out`` (CSV) as they come and summarised as a markdown table
  of mean +- standard error over the folds x repetitions, a ``*`` marking
  ours below the best peer by more than one standard error and a ``!``
  marking a model below the majority class by more than two.
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
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dpselect.apps.trees import DPDecisionTreeClassifier, DPRandomForestClassifier
from dpselect.experiments._peers import PEERS, available, make_peer
from dpselect.experiments._tabular import SKLEARN, Tabular, _schema, load

DATASETS = (
    "breast_cancer",
    "pima_diabetes",
    "credit_approval",
    "acs@10000",
    "gamma@10000",
    "br2000@10000",
    "wall_following",
    "fair",
    "randhie_hlthp@10000",
    "anes96",
    "seattle_weather",
    "adult",
)
EPS = (0.1, 0.5, 1.0, 5.0)
OURS = ("tree_default", "forest_default")
#: Tables bundled inside other packages (never shipped by this project): name -> (package, what it is).
PACKAGE_TABLES = {
    "fair": ("statsmodels", "Fair's affairs survey, 6,366 rows; label: any affair (32%)"),
    "randhie_hlthp": ("statsmodels", "RAND health insurance, 20,190 rows; label: poor health (1.5%)"),
    "randhie_mdvis": ("statsmodels", "RAND health insurance; label: any doctor visit (69%)"),
    "anes96": ("statsmodels", "American National Election Study 1996, 944 rows; label: vote"),
    "seattle_weather": ("vega_datasets", "Seattle weather 2012-2015, 1,461 days; label: 5 weather types"),
}


def _package_table(name: str) -> Tabular:
    """A table of :data:`PACKAGE_TABLES` (needs statsmodels or vega_datasets installed)."""
    import pandas as pd

    if name == "seattle_weather":
        from vega_datasets import local_data

        df = local_data.seattle_weather()
        df["month"] = pd.to_datetime(df.pop("date")).dt.month
        y = df.pop("weather").to_numpy()
        return _schema(name, df, y, categorical_cols=["month"])
    import statsmodels.datasets as smd

    if name == "fair":
        df = smd.fair.load_pandas().data
        y = (df.pop("affairs") > 0).astype(int).to_numpy()
        return _schema(name, df, y, categorical_cols=["occupation", "occupation_husb"])
    if name == "anes96":
        df = smd.anes96.load_pandas().data.drop(columns=["logpopul"])
        y = df.pop("vote").astype(int).to_numpy()
        cats = ["TVnews", "selfLR", "ClinLR", "DoleLR", "PID", "educ", "income"]
        return _schema(name, df, y, categorical_cols=cats)
    df = smd.randhie.load_pandas().data
    if name == "randhie_hlthp":
        y = df.pop("hlthp").astype(int).to_numpy()
        df = df.drop(columns=["hlthg", "hlthf"])
    else:
        y = (df.pop("mdvis") > 0).astype(int).to_numpy()
    return _schema(name, df, y, categorical_cols=[c for c in df.columns if set(df[c].unique()) <= {0, 1}])


def get_table(spec: str) -> Tabular:
    """``name`` or ``name@N`` (a stratified subsample of N rows, seed 0)."""
    name, _, cap = spec.partition("@")
    if name in PACKAGE_TABLES:
        t = _package_table(name)
    else:
        t = load(name, None if name in SKLEARN else os.environ.get("DPSELECT_DATA"))
    if cap and t.n > int(cap):
        from sklearn.model_selection import train_test_split

        keep, _ = train_test_split(np.arange(t.n), train_size=int(cap), stratify=t.y, random_state=0)
        keep = np.sort(keep)
        t = Tabular(spec, t.X.iloc[keep].reset_index(drop=True), t.y[keep], t.categorical, t.bounds, t.classes)
    return t


def predict(name: str, eps: float, t: Tabular, train: np.ndarray, test: np.ndarray, seed: int) -> np.ndarray:
    """Test predictions of model ``name`` fitted on the ``train`` rows (peers get the same public schema)."""
    if name == "majority":
        labels, counts = np.unique(t.y[train], return_counts=True)
        return np.full(test.size, labels[np.argmax(counts)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name in OURS:
            cls = DPDecisionTreeClassifier if name == "tree_default" else DPRandomForestClassifier
            model = cls(epsilon=eps, random_state=seed, **t.estimator_kwargs()).fit(t.X.iloc[train], t.y[train])
            return np.asarray(model.predict(t.X.iloc[test]))
        peer, tf = make_peer(name, eps, t, seed)
        if name.startswith("diffprivlib"):  # labels as codes (diffprivlib 0.6.6's forest mislabels strings)
            classes = np.asarray(t.classes)
            peer.fit(tf(t.X.iloc[train]), np.searchsorted(classes, t.y[train]))
            return classes[np.asarray(peer.predict(tf(t.X.iloc[test]))).astype(np.int64)]
        peer.fit(tf(t.X.iloc[train]), t.y[train])
        return np.asarray(peer.predict(tf(t.X.iloc[test])))


def table(
    datasets: list[str],
    eps_grid: tuple[float, ...],
    out: Path,
    folds: int = 5,
    repeats: int = 3,
    models: list[str] | None = None,
) -> None:
    from sklearn.metrics import balanced_accuracy_score
    from sklearn.model_selection import StratifiedKFold

    peers = available()
    names = list(models) if models else ["majority", *OURS, *peers]
    new = not out.exists()
    with out.open("a", newline="") as fh:
        w = csv.writer(fh)
        if new:
            w.writerow(
                ["dataset", "model", "epsilon", "repeat", "fold", "accuracy", "balanced_accuracy", "fit_seconds"]
            )
        for ds in datasets:
            t = get_table(ds)
            for rep in range(repeats):
                splits = StratifiedKFold(folds, shuffle=True, random_state=rep).split(np.zeros(t.n), t.y)
                for k, (tr, te) in enumerate(splits):
                    for eps in eps_grid:
                        for name in names:
                            if name == "dp_ebm" and len(t.classes) != 2:
                                continue
                            t0 = time.perf_counter()
                            pred = predict(name, eps, t, tr, te, seed=1000 * rep + k)
                            acc, bacc = np.mean(pred == t.y[te]), balanced_accuracy_score(t.y[te], pred)
                            sec = time.perf_counter() - t0
                            w.writerow([ds, name, eps, rep, k, f"{acc:.5f}", f"{bacc:.5f}", f"{sec:.3f}"])
                    fh.flush()
                print(f"{ds:20s} repetition {rep} done", flush=True)
    summarise(out)


def _mean_se(v: list[float]) -> tuple[float, float]:
    a = np.asarray(v)
    return float(a.mean()), float(a.std(ddof=1) / np.sqrt(a.size)) if a.size > 1 else 0.0


def summarise(path: Path) -> None:
    """Markdown tables (accuracy, then balanced accuracy) of mean +- SE per dataset x epsilon x model."""
    rows = list(csv.DictReader(path.open()))
    models = list(dict.fromkeys(r["model"] for r in rows))
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    eps = sorted({float(r["epsilon"]) for r in rows})
    for metric in ("accuracy", "balanced_accuracy"):
        cells: dict[Any, list[float]] = {}
        for r in rows:
            cells.setdefault((r["dataset"], float(r["epsilon"]), r["model"]), []).append(float(r[metric]))
        tally = {m: [0, 0, 0] for m in OURS}  # within 1 SE of the best peer, cells, below majority by > 2 SE
        print(
            f"\n{metric} (mean +- SE over folds x repetitions; * below the best peer by > 1 SE, "
            "! below the majority class by > 2 SE)\n"
        )
        print("| dataset | eps | " + " | ".join(models) + " |")
        print("|---|---|" + "---|" * len(models))
        for ds in datasets:
            for e in eps:
                stats = {m: _mean_se(cells[(ds, e, m)]) for m in models if (ds, e, m) in cells}
                peer = [stats[m] for m in PEERS if m in stats]
                best = max(peer) if peer else None
                out = []
                for m in models:
                    if m not in stats:
                        out.append("n/a")
                        continue
                    mu, se = stats[m]
                    flag = ""
                    if m in OURS and best is not None:
                        ok = mu >= best[0] - max(best[1], se)
                        flag += "" if ok else "*"
                        tally[m][0] += int(ok)
                        tally[m][1] += 1
                    if "majority" in stats and mu < stats["majority"][0] - 2 * max(stats["majority"][1], se):
                        flag += "!"
                        if m in OURS:
                            tally[m][2] += 1
                    out.append(f"{mu:.3f}±{se:.3f}{flag}")
                print(f"| {ds} | {e:g} | " + " | ".join(out) + " |")
        for m, (n_ok, n, low) in tally.items():
            if n:
                print(f"\n{m}: within 1 SE of the best peer in {n_ok}/{n} cells; below majority by > 2 SE in {low}")


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
    ap.add_argument("--repeats", type=int, default=3, help="repetitions of the 5-fold CV (--table)")
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
            repeats=a.repeats,
            models=[m for m in a.models.split(",") if m],
        )
    if a.timing or not a.table:
        timing(a.repeat)


if __name__ == "__main__":
    main()
