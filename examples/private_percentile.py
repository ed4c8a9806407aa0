"""A private 90th percentile over a public grid, and the exact expected error of two utilities.

The candidate values (the grid) are public and fixed in advance.  The
default utility is the *rank distance* — how many records must change before a
grid point becomes the percentile (sensitivity 1) — selected with
permute-and-flip.  The exact expected error of a mechanism is computed from
its output distribution; do this on a synthetic stand-in, as here, to compare
mechanisms before touching real data.
"""

from __future__ import annotations

import numpy as np

import dpselect
from dpselect.analysis import expected_error
from dpselect.apps import quantiles as percentile

EPSILON = 1.0
P = 90.0
GRID = np.linspace(0.0, 200_000.0, 401)  # public: salaries in steps of 500


def main() -> None:
    rng = np.random.default_rng(11)
    salaries = rng.lognormal(np.log(45_000), 0.5, size=20_000).clip(GRID[0], GRID[-1])

    released = percentile.private_percentile(salaries, P, EPSILON, GRID, rng=5)
    print(f"private p{P:g}: {released:.0f}")

    loss = percentile.absolute_error_loss(GRID, percentile.true_percentile(salaries, P, GRID))
    mech = dpselect.PermuteAndFlip(EPSILON)
    for utility in ("rank", "indicator"):
        problem = percentile.percentile_problem(salaries, P, GRID, utility=utility)
        error = expected_error(mech, problem, loss=loss)
        print(f"{utility}: exact expected error {error:.4g}; guarantee {mech.privacy(problem)}")


if __name__ == "__main__":
    main()
