"""Benchmark: dpselect's private random forest vs diffprivlib's, side by side.

Run by hand (diffprivlib 0.6 needs scikit-learn < 1.8, so use a throwaway venv)::

    python -m venv /tmp/dpl && /tmp/dpl/bin/pip install diffprivlib "scikit-learn<1.8" pandas -e .
    /tmp/dpl/bin/python benchmarks/bench_trees.py            # add --quick for one repeat

Without diffprivlib only dpselect's rows are printed.

Workloads (same epsilon for every model, public feature bounds, public classes):
  * synthetic: 100,000 training + 20,000 test records, 16 features uniform on
    [0, 1] (so the bounds [0, 1] are public by construction), two classes
    y = 1[x0 + x1 + x2/2 - x3/2 + 0.2 N(0,1) > 1];
  * digits: scikit-learn's bundled 8x8 digits (1,797 records, 64 features with
    public bounds [0, 16], 10 classes), 80/20 split.
Reported: median fit wall time over the repeats, mean test accuracy.
Target (issue): dpselect's forest fits no slower than diffprivlib's and is
more accurate at epsilon = 1.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from dpselect.apps.forest import DPRandomForestClassifier

try:
    from diffprivlib.models import RandomForestClassifier as DiffprivlibForest
except Exception:  # pragma: no cover - optional comparison
    DiffprivlibForest = None


def synthetic(n_train: int = 100_000, n_test: int = 20_000, d: int = 16, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, size=(n_train + n_test, d))
    z = X[:, 0] + X[:, 1] + 0.5 * X[:, 2] - 0.5 * X[:, 3] + 0.2 * rng.normal(size=n_train + n_test)
    y = (z > 1.0).astype(int)
    lo, hi = np.zeros(d), np.ones(d)
    return X[:n_train], X[n_train:], y[:n_train], y[n_train:], (lo, hi), [0, 1]


def digits(seed: int = 0):
    dg = load_digits()
    Xtr, Xte, ytr, yte = train_test_split(dg.data, dg.target, test_size=0.2, random_state=seed, stratify=dg.target)
    d = dg.data.shape[1]
    return Xtr, Xte, ytr, yte, (np.zeros(d), np.full(d, 16.0)), list(range(10))


def models(eps: float, bounds, classes, seed: int):
    lo, hi = bounds
    ours_bounds = np.column_stack([lo, hi])
    out = {
        "dpselect forest (32 trees, F-I depth, snm_t)": lambda: DPRandomForestClassifier(
            epsilon=eps, bounds=ours_bounds, classes=classes, random_state=seed),
        "dpselect forest (32 trees, F-I depth, em)": lambda: DPRandomForestClassifier(
            epsilon=eps, selection="em", bounds=ours_bounds, classes=classes, random_state=seed),
        "dpselect forest (10 trees, depth 5, snm_t)": lambda: DPRandomForestClassifier(
            epsilon=eps, n_estimators=10, max_depth=5, bounds=ours_bounds, classes=classes, random_state=seed),
        "dpselect forest (10 trees, depth 5, em)": lambda: DPRandomForestClassifier(
            epsilon=eps, n_estimators=10, max_depth=5, selection="em", bounds=ours_bounds, classes=classes,
            random_state=seed),
        "dpselect forest (10 trees, depth 5, pf on counts)": lambda: DPRandomForestClassifier(
            epsilon=eps, n_estimators=10, max_depth=5, selection="pf", leaf_utility="count", bounds=ours_bounds,
            classes=classes, random_state=seed),
        "dpselect forest (32 trees, F-I depth, pf on counts)": lambda: DPRandomForestClassifier(
            epsilon=eps, selection="pf", leaf_utility="count", bounds=ours_bounds, classes=classes,
            random_state=seed),
    }
    if DiffprivlibForest is not None:
        out["diffprivlib RandomForestClassifier (10 trees, depth 5)"] = lambda: DiffprivlibForest(
            n_estimators=10, epsilon=eps, bounds=(lo, hi), classes=classes, max_depth=5, random_state=seed)
    return out


def run(repeats: int, epsilons=(1.0, 0.1)) -> None:
    for dname, loader in (("synthetic 100k x 16", synthetic), ("digits", digits)):
        Xtr, Xte, ytr, yte, bounds, classes = loader()
        for eps in epsilons:
            print(f"\n{dname}, epsilon = {eps}  (n_train = {len(ytr)}, n_test = {len(yte)})")
            print(f"  {'model':<58} {'fit s (median)':>14} {'accuracy':>9}")
            for mname, make in models(eps, bounds, classes, 0).items():
                times, accs = [], []
                for r in range(repeats):
                    clf = make()
                    clf.set_params(random_state=r)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        t0 = time.perf_counter()
                        clf.fit(Xtr, ytr)
                        times.append(time.perf_counter() - t0)
                        accs.append(float(np.mean(clf.predict(Xte) == yte)))
                print(f"  {mname:<58} {np.median(times):>14.3f} {np.mean(accs):>9.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one repeat instead of three")
    args = ap.parse_args()
    if DiffprivlibForest is None:
        print("diffprivlib is not importable: only dpselect's rows are shown")
    run(1 if args.quick else 3)


if __name__ == "__main__":
    main()
