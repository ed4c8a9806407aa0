"""Benchmark: CPU time per charge of an :class:`~dpselect.accounting.Accountant` as charges accumulate.

Plain script (no pytest)::

    PYTHONPATH=src python benchmarks/bench_accountant.py [--sizes 1000 10000 100000]

Each size charges a fresh ``Accountant(inf, delta=1e-6, composition=mode)``
that many times with an exponential mechanism's guarantee (epsilon = 0.001,
bounded-range): ``"tight"`` composes every check by the bounded-range and zCDP
routes, the default ``"filter"`` compares running sums; ``--size-draws`` also
times one charge of ``repeated(charge, n)`` (``size=n`` draws).  The accountant keeps
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
from dpselect.accounting import Accountant, repeated, zcdp_epsilon


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--modes", nargs="+", default=["filter", "tight"])
    parser.add_argument("--size-draws", action="store_true")
    args = parser.parse_args()
    charge = Privacy(0.001, bounded_range=0.001)
    zcdp_epsilon(0.01, 1e-6)  # warm: scipy.optimize is imported lazily
    t = time.process_time()
    for _ in range(200):
        zcdp_epsilon(0.01, 1e-6)
    floor = (time.process_time() - t) / 200
    print(f"{'mode':>7} {'charges':>9} {'CPU s':>8} {'ms/charge':>10} {'floor ms':>9} {'ratio':>6}  spent")
    for mode in args.modes:
        for n in args.sizes:
            acc = Accountant(math.inf, delta=1e-6, composition=mode)
            t = time.process_time()
            for _ in range(n):
                acc.spend(charge)
            cpu = time.process_time() - t
            row = f"{mode:>7} {n:>9} {cpu:>8.2f} {1e3 * cpu / n:>10.3f} {1e3 * floor:>9.3f} {cpu / n / floor:>6.2f}"
            print(f"{row}  {acc.spent}")
            if args.size_draws:
                once = Accountant(math.inf, delta=1e-6, composition=mode)
                t = time.process_time()
                once.spend(repeated(charge, n))
                print(f"{mode:>7} {n:>9} {time.process_time() - t:>8.3f} s for one size={n} charge  {once.spent}")


if __name__ == "__main__":
    main()
