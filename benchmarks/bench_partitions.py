"""Benchmark: keys released by partition selection, dpselect's methods beside PipelineDP's.

Plain script (no pytest); PipelineDP lives in the peers' environment::

    PYTHONPATH=src /work/venv-peers/bin/python benchmarks/bench_partitions.py [--runs 10] [--no-real]

Every figure is the **exact expected number of released keys** (the sum over keys of the
release probability: mathematics §16, ``partition_release_probabilities``; for PipelineDP,
``probability_of_keep`` of its strategies on the same bounded user counts), at the same
(epsilon, delta) and the same contribution bound C.  The default (``auto``) is also run
``--runs`` times for real (mean and standard deviation of the count), with its CPU time.

Data:

* ``zipf-1key``: 30,000 users, one key each, ``numpy.random.zipf(1.5)`` (C = 1);
* ``zipf-10``: 30,000 users, ten draws of ``zipf(1.4)`` each, so up to 10 distinct keys (the
  cohort of the issue: the weighted Gaussian releases 193.8 keys there, PipelineDP's best 170);
* ``zipf-uniform``: 30,000 users, 1..10 keys from a Zipf(1.1) law over 100,000 keys;
* ``docstrings`` (real): the words of each numpy / scipy docstring (one user per docstring,
  a text corpus that ships with the packages);
* ``enron`` (real, ``$DPSELECT_DATA/enron``): each address's contacts;
* ``mushroom`` (real, ``$DPSELECT_DATA/mushroom``): the ``column=value`` items of each row
  (the classic FIMI basket data).
"""

from __future__ import annotations

import argparse
import inspect
import os
import re
import time
from pathlib import Path

import numpy as np

from dpselect.apps.counts import partition_release_probabilities, select_partitions

EPSILON, DELTA = 1.0, 1e-6
OURS = (
    "auto",
    "policy_gaussian",
    "policy_laplace",
    "weighted_gaussian",
    "weighted_laplace",
    "gaussian",
    "laplace",
    "truncated_geometric",
)


def zipf_users(kind: str, n: int = 30_000, seed: int = 0) -> list[list[int]]:
    gen = np.random.default_rng(seed)
    if kind == "zipf-1key":
        return [[int(v)] for v in gen.zipf(1.5, n)]
    if kind == "zipf-10":
        return [np.unique(row).tolist() for row in gen.zipf(1.4, (n, 10))]
    p = 1.0 / np.arange(1, 100_001) ** 1.1
    sizes = gen.integers(1, 11, n)
    flat = gen.choice(p.size, size=int(sizes.sum()), p=p / p.sum())
    return [np.unique(s).tolist() for s in np.split(flat, np.cumsum(sizes)[:-1])]


def docstring_users() -> list[list[str]]:
    import numpy
    import scipy.linalg
    import scipy.optimize
    import scipy.signal
    import scipy.special
    import scipy.stats

    docs = []
    for mod in (numpy, numpy.linalg, numpy.fft, numpy.random, scipy.stats, scipy.linalg, scipy.optimize, scipy.signal):
        for _, obj in inspect.getmembers(mod):
            doc = getattr(obj, "__doc__", None)
            if isinstance(doc, str) and len(doc) > 40:
                docs.append(sorted(set(re.findall(r"[a-z]{3,}", doc.lower()))))
    return docs


def data_users(name: str) -> list[list[str]] | None:
    root = Path(os.environ.get("DPSELECT_DATA", "/work/shared/data"))
    if name == "enron":
        path = root / "enron" / "Email-Enron.txt"
        if not path.exists():
            return None
        edges = np.loadtxt(path, dtype=np.int64, comments="#")
        order = np.argsort(edges[:, 0], kind="stable")
        src, dst = edges[order, 0], edges[order, 1]
        cuts = np.flatnonzero(np.diff(src)) + 1
        return [g.tolist() for g in np.split(dst, cuts)]
    path = root / "mushroom" / "mushroom.csv"
    if not path.exists():
        return None
    lines = path.read_text().splitlines()
    cols = lines[0].split(",")
    return [[f"{c}={v}" for c, v in zip(cols[1:], row.split(",")[1:], strict=True)] for row in lines[1:]]


def pipeline_dp_expected(users: list, c: int) -> dict[str, float]:
    """PipelineDP's strategies on the same bounded user counts (exact: probability_of_keep)."""
    try:
        import pipeline_dp
        from pipeline_dp import partition_selection as ps
    except ImportError:
        return {}
    from dpselect.apps.counts._partitions.user_items import as_user_keys, parse_user_items

    uk = as_user_keys(parse_user_items(users), c, np.random.default_rng(0))
    values, mult = np.unique(np.bincount(uk.codes), return_counts=True)
    out = {}
    for name in ("TRUNCATED_GEOMETRIC", "LAPLACE_THRESHOLDING", "GAUSSIAN_THRESHOLDING"):
        strategy = getattr(pipeline_dp.PartitionSelectionStrategy, name)
        s = ps.create_partition_selection_strategy(strategy, EPSILON, DELTA, c)
        out[f"PipelineDP {name.lower()}"] = float(sum(m * s.probability_of_keep(int(v)) for v, m in zip(values, mult)))
    return out


def bench(name: str, users: list, c: int, runs: int) -> None:
    n_keys = len({k for u in users for k in u})
    print(f"\n## {name}: {len(users):,} users, {n_keys:,} distinct keys, C = {c}, (eps, delta) = ({EPSILON}, {DELTA})")
    rows = {}
    for method in OURS:
        probs = partition_release_probabilities(users, EPSILON, DELTA, max_contributions=c, method=method, rng=0)
        rows[f"dpselect {method}"] = sum(probs.values())
    rows.update(pipeline_dp_expected(users, c))
    best_peer = max(
        [v for k, v in rows.items() if k.startswith("PipelineDP")] + [rows["dpselect weighted_gaussian"]], default=1.0
    )
    print(f"| {'method':<38} | {'E[keys]':>9} | {'/ best peer':>11} |\n|{'-' * 40}|{'-' * 11}:|{'-' * 13}:|")
    for key, value in rows.items():
        print(f"| {key:<38} | {value:>9.1f} | {value / best_peer:>11.2f} |")
    t0 = time.process_time()
    counts = [len(select_partitions(users, EPSILON, DELTA, max_contributions=c, rng=r)) for r in range(runs)]
    cpu = (time.process_time() - t0) / runs
    print(f"auto, {runs} real runs: mean {np.mean(counts):.1f} keys (sd {np.std(counts):.1f}), {cpu:.2f} s CPU per run")


def bench_top_k(users: list, c: int, runs: int) -> None:
    """Recall of the true top-k keys by select_top_k_keys, per share of epsilon spent on selection."""
    from dpselect.apps.counts import select_top_k_keys

    counts: dict = {}
    for u in users:
        for key in set(u):
            counts[key] = counts.get(key, 0) + 1
    ranked = sorted(counts, key=counts.__getitem__, reverse=True)
    print(f"\n## top-k keys on zipf-10 (C = {c}, eps = {EPSILON}, delta = {DELTA}): recall of the true top k")
    print("| k | share 0.3 | share 0.5 | share 0.7 |\n|---:|---:|---:|---:|")
    for k in (10, 50, 200):
        row = []
        for share in (0.3, 0.5, 0.7):
            rec = [
                len(
                    set(
                        select_top_k_keys(
                            users, EPSILON, DELTA, k, max_contributions=c, selection_share=share, rng=r
                        ).keys
                    )
                    & set(ranked[:k])
                )
                / k
                for r in range(runs)
            ]
            row.append(f"{np.mean(rec):.3f}")
        print(f"| {k} | " + " | ".join(row) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--no-real", action="store_true")
    args = parser.parse_args()
    bench("zipf-1key", zipf_users("zipf-1key"), 1, args.runs)
    bench("zipf-10", zipf_users("zipf-10"), 10, args.runs)
    bench("zipf-uniform", zipf_users("zipf-uniform"), 10, args.runs)
    bench_top_k(zipf_users("zipf-10"), 10, max(args.runs // 2, 1))
    if args.no_real:
        return
    bench("docstrings (words per numpy/scipy docstring)", docstring_users(), 10, args.runs)
    for name in ("enron", "mushroom"):
        users = data_users(name)
        if users is not None:
            bench(f"{name} ({'contacts per address' if name == 'enron' else 'items per basket'})", users, 10, args.runs)


if __name__ == "__main__":
    main()
