"""A private 90th percentile over a public grid, and its exact expected error.

The candidate values (the grid) are public and fixed in advance; the data
enter only through which grid point is the percentile.  The exact expected
error is computed from the mechanism's output distribution — here on a
synthetic stand-in, which is how you should compare mechanisms before
touching real data.
"""

from __future__ import annotations

import numpy as np

import dpselect
from dpselect.analysis import expected_error
from dpselect.apps import percentile

EPSILON = 1.0
P = 90.0
GRID = np.linspace(0.0, 200_000.0, 401)  # public: salaries in steps of 500


def main() -> None:
    rng = np.random.default_rng(11)
    salaries = rng.lognormal(np.log(45_000), 0.5, size=20_000).clip(GRID[0], GRID[-1])

    released = percentile.private_percentile(salaries, P, EPSILON, GRID, rng=5)
    print(f"private p{P:g}: {released:.0f}")

    problem = percentile.problem(salaries, P, GRID)
    loss = percentile.absolute_error_loss(GRID, percentile.true_percentile(salaries, P, GRID))
    for name in ("pf", "em"):
        mech = dpselect.make_mechanism(name, EPSILON)
        error = expected_error(mech, problem, loss)
        print(f"{name}: exact expected error {error:.1f}; guarantee {mech.privacy(problem)}")


if __name__ == "__main__":
    main()
