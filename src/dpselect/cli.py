"""Command-line interface: ``dpselect demo`` (more subcommands arrive with the experiments).

Errors print one line on stderr and exit with status 2 (no traceback).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import numpy as np

from . import analysis
from .mechanisms import ExponentialMechanism, PermuteAndFlip, ReportNoisyMax
from .problem import SelectionProblem

__all__ = ["main", "demo_table"]


def demo_table(epsilons: Sequence[float] = (0.1, 0.5, 1.0, 2.0), m: int = 50, seed: int = 0) -> str:
    """A comparison table of mechanisms on a synthetic selection problem.

    Scores are synthetic vote counts (one clear winner, a few close runners-up,
    a long tail) with global sensitivity 1 under add/remove; each row gives the
    exact probability of returning the winner and the exact expected score gap.
    """
    rng = np.random.default_rng(seed)
    counts = np.sort(rng.poisson(20, size=m))[::-1].astype(float)
    counts[0] += 5
    problem = SelectionProblem(counts, global_sensitivity=1.0, monotone=False)
    lines = [
        f"Synthetic selection: m={m} candidates (vote counts, top={counts[0]:.0f}, "
        f"runner-up={counts[1]:.0f}), global sensitivity 1 (add/remove)",
        f"{'mechanism':<28}{'epsilon':>8}{'P[best]':>10}{'E[gap]':>10}{'privacy':>14}",
    ]
    for eps in epsilons:
        for mech in (ExponentialMechanism(eps), PermuteAndFlip(eps), ReportNoisyMax(eps, noise="laplace")):
            name = type(mech).__name__ + (f"({mech.noise})" if isinstance(mech, ReportNoisyMax) else "")
            acc = analysis.accuracy(mech, problem)
            err = analysis.expected_error(mech, problem)
            lines.append(f"{name:<28}{eps:>8.2f}{acc:>10.4f}{err:>10.3f}{str(mech.privacy(problem)):>14}")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dpselect", description="Differentially private selection.")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="print a comparison table of mechanisms on a synthetic problem")
    demo.add_argument("--epsilon", type=float, nargs="+", default=[0.1, 0.5, 1.0, 2.0])
    demo.add_argument("--m", type=int, default=50, help="number of candidates")
    demo.add_argument("--seed", type=int, default=0)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dpselect`` console script."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed one line
        return 2 if exc.code else 0
    try:
        if args.command == "demo":
            if args.m < 2:
                raise ValueError("--m must be >= 2")
            print(demo_table(args.epsilon, args.m, args.seed))
    except (ValueError, TypeError) as exc:
        print(f"dpselect: error: {exc}", file=sys.stderr)
        return 2
    return 0
