"""Per-group medians over public groups: dpselect.grouped_quantiles against diffprivlib, and the top-k labels.

1. Five public groups of sizes 2000, 800, 300, 100, 30 (ages 18..89, bounds (0, 120)); the mean
   absolute error of each group's median over 200 seeds and the time per call, at epsilon 0.1 and 1:
   ``grouped_quantiles`` (epsilon once over all groups, parallel composition) against
   ``diffprivlib.tools.median`` group by group (the same epsilon per group: the same total by
   parallel composition).  diffprivlib runs only where it is installed (the peers' venv).
2. The exact accuracy of the sound top-3 mechanisms behind ``private_majority(k=3)`` (epsilon / 3
   per round): P[the true top 3 in order] and E[true top-3 labels found], from the exact laws.

Run by hand: ``PYTHONPATH=src /work/venv-peers/bin/python benchmarks/accuracy_grouped_quantiles.py``.
"""

from __future__ import annotations

import time

import numpy as np

from dpselect import ExponentialMechanism, PermuteAndFlip, SelectionProblem
from dpselect.apps.quantiles import grouped_quantiles
from dpselect.mechanisms import TopK

KEYS = ["a", "b", "c", "d", "e"]
SIZES = [2000, 800, 300, 100, 30]
REPS = 200


def grouped_medians() -> None:
    gen = np.random.default_rng(0)
    values = np.concatenate([gen.integers(18, 90, s) for s in SIZES])
    groups = np.repeat(KEYS, SIZES)
    truth = np.array([np.quantile(values[groups == k], 0.5, method="inverted_cdf") for k in KEYS])
    try:
        import diffprivlib.tools as dpl
    except ImportError:
        dpl = None
    for eps in (0.1, 1.0):
        t0 = time.perf_counter()
        ours = [
            grouped_quantiles(values, groups, 0.5, eps, bounds=(0, 120), keys=KEYS, rng=r).values for r in range(REPS)
        ]
        t1 = time.perf_counter()
        print(f"eps={eps}: mean |error| of each group's median (sizes {SIZES})")
        err = np.abs(np.array(ours) - truth).mean(axis=0)
        print(f"  dpselect grouped_quantiles   {np.round(err, 2)}  {(t1 - t0) / REPS * 1e3:.1f} ms/call")
        if dpl is not None:
            peer = [
                [dpl.median(values[groups == k], epsilon=eps, bounds=(0, 120), random_state=r) for k in KEYS]
                for r in range(REPS)
            ]
            t2 = time.perf_counter()
            err = np.abs(np.array(peer) - truth).mean(axis=0)
            print(f"  diffprivlib median per group {np.round(err, 2)}  {(t2 - t1) / REPS * 1e3:.1f} ms/call")


def top_k_labels() -> None:
    for counts in ([30, 20, 10, 3, 1, 0], [40, 38, 35, 10, 9, 8, 2, 0], [100, 90, 80, 70, 60, 50]):
        prob = SelectionProblem(np.array(counts, float), global_sensitivity=1.0, monotone=True, relation="add_remove")
        for eps in (0.5, 1.0, 3.0):
            row = []
            for name, mech, method in (
                ("PF peel", PermuteAndFlip(eps / 3), "peel"),
                ("EM gumbel", ExponentialMechanism(eps / 3), "gumbel"),
                ("EM joint", ExponentialMechanism(eps / 3), "joint"),
            ):
                top = TopK(mech, 3, method)
                tuples, p = top.outputs(prob), np.asarray(top.probabilities(prob))
                exact = p[(tuples == np.arange(3)).all(axis=1)].sum()
                found = (p * np.isin(tuples, np.arange(3)).sum(axis=1)).sum()
                row.append(f"{name} {exact:.3f} / {found:.2f}")
            print(f"counts {counts} eps {eps}: P[exact top 3] / E[found]: " + " | ".join(row))


if __name__ == "__main__":
    grouped_medians()
    top_k_labels()
