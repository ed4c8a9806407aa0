"""Expected number of true top-k found: joint EM vs one-shot Gumbel (peeling EM) vs peeling PF.

Run by hand::

    DPSELECT_DATA=/work/shared/data PYTHONPATH=src python benchmarks/accuracy_top_k.py [--quick]

All three methods spend the **same total epsilon** (pure DP): the joint
exponential mechanism (Gillenwater et al. 2022) spends it at once; "gumbel"
(the exponential mechanism peeled k times, sampled one-shot) and "peel-PF"
(permute-and-flip peeled k times) spend epsilon/k per round.

Data (scores with sensitivity 1):

* DPBench 1-D histograms HEPTH / INCOME / PATENT (4096 bin counts; add/remove
  one record changes one count by one: monotone, Delta u = 1);
* TDT: the six significant SNPs of Justice et al. 2020 (b, c of the
  epsilon = 3 notebook of ``tdt_justice2020/enhancedsps_example_bc.csv``,
  N = 215 families) embedded in a null panel of 194 or 1994 simulated SNPs
  (``datasets.simulate_tdt``, seed 2020), scored by the neighbour-distance
  utility (one family replaced: Delta u = 1, not monotone; the default
  utility of ``apps.genomics``); true order by the TDT chi2.

"Found" counts the returned candidates whose true score is >= the k-th
largest (ties at the boundary count as found).  Monte Carlo with ``R`` draws
per setting (seed fixed, printed); the standard error of each mean is at
most sqrt(k^2 / 4R) and printed as the largest one over the table.
Sampling: joint with the library's level sampler
(``mechanisms.joint_top_k``), gumbel as the library's one-shot top-k, peel-PF
as k rounds of exponential noise (permute-and-flip's noisy-max form) on the
remaining candidates, vectorised over draws: the same laws as
``select_top_k(method=...)``.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time

import numpy as np

from dpselect import SelectionProblem
from dpselect.apps.genomics import neighbour_distances, tdt_statistic
from dpselect.experiments.datasets import simulate_tdt
from dpselect.mechanisms.joint_top_k import joint_lambda, joint_levels

KS = (3, 5, 10, 20)
EPSILONS = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
METHODS = ("joint", "gumbel", "peel-PF")
SEED = 24


def datasets(root: str) -> dict[str, tuple[np.ndarray, np.ndarray, bool]]:
    """{name: (scores, true order key, monotone)}."""
    out = {}
    for name in ("HEPTH", "INCOME", "PATENT"):
        c = np.load(os.path.join(root, "dpbench_1d", f"{name}.n4096.npy")).astype(np.float64)
        out[name] = (c, c, True)
    with open(os.path.join(root, "tdt_justice2020", "enhancedsps_example_bc.csv")) as f:
        rows = [r for r in csv.DictReader(f) if r["notebook_epsilon"] == "3"]
    bs, cs = np.array([int(r["b"]) for r in rows]), np.array([int(r["c"]) for r in rows])
    n = 215
    for null in (194, 1994):
        b0, c0 = simulate_tdt(null, n, rng=2020)
        b, c = np.concatenate([bs, b0]), np.concatenate([cs, c0])
        out[f"TDT-{b.size}"] = (-neighbour_distances(b, c, n).astype(np.float64), tdt_statistic(b, c), False)
    return out


def found(draws: np.ndarray, truth_key: np.ndarray, k: int) -> np.ndarray:
    """Per draw: how many returned candidates have a true score >= the k-th largest."""
    kth = np.sort(truth_key)[::-1][k - 1]
    return (truth_key[draws] >= kth).sum(axis=1)


def sample(
    method: str, u: np.ndarray, monotone: bool, k: int, eps: float, reps: int, gen: np.random.Generator
) -> np.ndarray:
    """(reps, k) ordered tuples of ``method`` at total budget ``eps`` (Delta u = 1)."""
    m = u.size
    if method == "joint":
        return joint_levels(u, k, joint_lambda(eps, 1.0, monotone)).sample(reps, gen)
    scale = (1.0 if monotone else 2.0) * k / eps  # one round's noise scale at eps / k
    if method == "gumbel":
        noisy = u + scale * gen.gumbel(size=(reps, m))
        part = np.argpartition(-noisy, k - 1, axis=1)[:, :k]
        order = np.argsort(-np.take_along_axis(noisy, part, axis=1), axis=1)
        return np.take_along_axis(part, order, axis=1)
    out = np.empty((reps, k), dtype=np.int64)
    taken = np.zeros((reps, m), dtype=bool)
    for j in range(k):
        noisy = u + scale * gen.exponential(size=(reps, m))
        noisy[taken] = -np.inf
        out[:, j] = np.argmax(noisy, axis=1)
        taken[np.arange(reps), out[:, j]] = True
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer draws and settings")
    args = ap.parse_args(argv)
    root = os.environ.get("DPSELECT_DATA")
    if not root:
        print("set DPSELECT_DATA to the data directory", file=sys.stderr)
        return 2
    reps = 100 if args.quick else 400
    data = datasets(root)
    eps_grid = EPSILONS[::3] if args.quick else EPSILONS
    t0 = time.process_time()
    print(f"# expected number of true top-k found (of k), total epsilon, R = {reps} draws, seed {SEED}")
    print("| data | d | k | eps | joint | gumbel (peel EM) | peel PF | best |")
    print("|---|---|---|---|---|---|---|---|")
    wins = {mth: 0 for mth in METHODS}
    max_se = 0.0
    rows = []
    for name, (u, key, mono) in data.items():
        SelectionProblem(u)  # validates the scores
        for k in KS:
            for eps in eps_grid:
                gen = np.random.default_rng([SEED, k, int(eps * 1000), len(name)])
                res = {}
                for mth in METHODS:
                    f = found(sample(mth, u, mono, k, eps, reps, gen), key, k)
                    res[mth] = float(f.mean())
                    max_se = max(max_se, float(f.std(ddof=1)) / np.sqrt(reps))
                best = max(res, key=lambda s: res[s])
                tied = [s for s in METHODS if res[best] - res[s] <= 0.02 * k]
                for s in tied:
                    wins[s] += 1
                rows.append((name, u.size, k, eps, res))
                print(
                    f"| {name} | {u.size} | {k} | {eps:g} | {res['joint']:.2f} | {res['gumbel']:.2f} | "
                    f"{res['peel-PF']:.2f} | {', '.join(tied)} |"
                )
    print(f"\nlargest standard error of a mean: {max_se:.3f}; settings within 2% of k of the best: {wins}")
    # joint vs gumbel (the choice for EM-type mechanisms), by k and total epsilon
    print("\n# joint - gumbel, mean over data sets, by k (rows) and total epsilon (columns)")
    print("| k | " + " | ".join(f"{e:g}" for e in eps_grid) + " |")
    print("|---|" + "---|" * len(eps_grid))
    for k in KS:
        diffs = [np.mean([r[4]["joint"] - r[4]["gumbel"] for r in rows if r[2] == k and r[3] == e]) for e in eps_grid]
        print(f"| {k} | " + " | ".join(f"{d:+.2f}" for d in diffs) + " |")
    print(f"\nCPU time {time.process_time() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
