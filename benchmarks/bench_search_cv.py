"""Benchmark: DPSearchCV vs a default private tree on held-out folds (accuracy), breast_cancer by default.

    PYTHONPATH=src python benchmarks/bench_search_cv.py [--eps 3] [--repeats 4] [--dataset breast_cancer]

Stratified 5-fold CV (shuffled, seed = the repetition), every model given the
public schema (bounds, categories, classes from the whole file, as in the
tree benchmark).  Models: the default tree at the total budget, DPSearchCV
over 6 tree configurations (Papernot–Steinke eta = 0 and Liu–Talwar), and the
default tree at the search's per-run budget (what one run can do).  Prints
mean accuracy +- its standard error over folds, the configurations chosen,
and process CPU seconds per fit.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from collections import Counter

import numpy as np
from sklearn.model_selection import StratifiedKFold

from dpselect.apps.trees import DPDecisionTreeClassifier, DPSearchCV
from dpselect.experiments._tabular import SKLEARN, load

GRID = {"max_depth": [None, 2, 4], "n_bins": [8, 16]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--eps", type=float, default=3.0)
    ap.add_argument("--repeats", type=int, default=4)
    ap.add_argument("--dataset", default="breast_cancer")
    a = ap.parse_args()
    data = load(a.dataset, None if a.dataset in SKLEARN else os.environ.get("DPSELECT_DATA"))
    kw = data.estimator_kwargs()
    base = DPDecisionTreeClassifier(**kw)
    models = {
        "tree (defaults, eps)": lambda s: DPDecisionTreeClassifier(epsilon=a.eps, random_state=s, **kw),
        "DPSearchCV papernot_steinke eta=0": lambda s: DPSearchCV(base, GRID, epsilon=a.eps, random_state=s),
        "DPSearchCV liu_talwar": lambda s: DPSearchCV(base, GRID, epsilon=a.eps, method="liu_talwar", random_state=s),
        "tree (defaults, eps/2)": lambda s: DPDecisionTreeClassifier(epsilon=a.eps / 2, random_state=s, **kw),
    }
    acc: dict = {m: [] for m in models}
    cpu: dict = {m: 0.0 for m in models}
    chosen: Counter = Counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for rep in range(a.repeats):
            folds = StratifiedKFold(5, shuffle=True, random_state=rep).split(np.zeros(data.n), data.y)
            for k, (tr, te) in enumerate(folds):
                for name, make in models.items():
                    c0 = time.process_time()
                    m = make(100 * rep + k).fit(data.X.iloc[tr], data.y[tr])
                    cpu[name] += time.process_time() - c0
                    acc[name].append(m.score(data.X.iloc[te], data.y[te]))
                    if name.startswith("DPSearchCV papernot"):
                        chosen[tuple(sorted(m.best_params_.items(), key=str))] += 1
            print(f"repetition {rep + 1}/{a.repeats} done", flush=True)
    n = len(acc[next(iter(acc))])
    print(f"{a.dataset}, total epsilon = {a.eps}, {n} held-out folds, grid {GRID} (6 configurations):")
    for name, v in acc.items():
        print(f"  {name:36s} {np.mean(v):.4f} +- {np.std(v, ddof=1) / np.sqrt(n):.4f}   {cpu[name] / n:.2f} s CPU/fit")
    d = np.array(acc["DPSearchCV papernot_steinke eta=0"]) - np.array(acc["tree (defaults, eps)"])
    print(f"  paired difference search - tree: {d.mean():+.4f} +- {d.std(ddof=1) / np.sqrt(n):.4f}")
    print("  configurations chosen (papernot_steinke):", dict(chosen.most_common()))


if __name__ == "__main__":
    main()
