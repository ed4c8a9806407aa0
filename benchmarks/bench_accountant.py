"""Benchmark: CPU time per charge of an :class:`~dpselect.accounting.Accountant` as charges accumulate.

Plain script (no pytest)::

    PYTHONPATH=src python benchmarks/bench_accountant.py [--sizes 1000 10000 100000]

Each size charges a fresh ``Accountant(inf, delta=1e-6)`` that many times with
an exponential mechanism's guarantee (epsilon = 0.001, bounded-range), so every
check composes by the bounded-range and zCDP routes.  The accountant keeps
running sums (``accounting.ledger.Ledger``), so the CPU per charge should
stay flat as the number of charges grows (before the ledger it grew linearly:
15 ms per charge at 1,000 charges).  The floor printed beside it is
``zcdp_epsilon`` alone, the one conversion every check makes.
"""

from __future__ import annotations

import argparse
import math
import time

from dpselect import Privacy
from dpselect.accounting import Accountant, zcdp_epsilon


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    args = parser.parse_args()
    charge = Privacy(0.001, bounded_range=0.001)
    zcdp_epsilon(0.01, 1e-6)  # warm: scipy.optimize is imported lazily
    t = time.process_time()
    for _ in range(200):
        zcdp_epsilon(0.01, 1e-6)
    floor = (time.process_time() - t) / 200
    print(f"{'charges':>9} {'CPU s':>8} {'ms/charge':>10} {'floor ms':>9} {'ratio':>6}  spent")
    for n in args.sizes:
        acc = Accountant(math.inf, delta=1e-6)
        t = time.process_time()
        for _ in range(n):
            acc.spend(charge)
        cpu = time.process_time() - t
        print(f"{n:>9} {cpu:>8.2f} {1e3 * cpu / n:>10.3f} {1e3 * floor:>9.3f} {cpu / n / floor:>6.2f}  {acc.spent}")


if __name__ == "__main__":
    main()
