"""The rows of Table I and Table II of the TDT reproduction: run times and the real-data example.

:func:`real_tables` reads (or regenerates) the (b, c) tables of the Justice et al. (2020)
example; ``_real_rows`` gives the exact accuracy of every mechanism on them (Table II) and
``_runtime_rows`` times one private selection on m simulated SNPs (Table I).  Behind
:mod:`dpselect.experiments.tdt`, which re-exports the public names.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._docstrings import fill_doc
from ..analysis import accuracy
from ..apps import genomics as tdt_app
from ..mechanisms import ExponentialMechanism, PermuteAndFlip, SmoothPrivateSelection
from ..typing import SeedLike
from ._data import require_file
from ._tdt_accuracy import _mechanisms, _problems
from .datasets import JUSTICE2020_N_FAMILIES, simulate_tdt, tdt_real_example

__all__ = ["N_FAMILIES", "REAL_CSV", "RealTables", "real_tables"]

N_FAMILIES = 150
REAL_CSV = "tdt_justice2020/enhancedsps_example_bc.csv"


@dataclass(frozen=True)
@fill_doc
class RealTables:
    """The (b, c) tables of the Justice et al. (2020) example and where they come from.

    %(tdt_tables)s
    n_families : int
        N, the number of trios (215).
    source : str
        "regenerated" or the file (and table set) read.
    """

    b: np.ndarray
    c: np.ndarray
    n_families: int
    source: str


def real_tables(data_dir: Path | None, rep: int, rng: SeedLike) -> RealTables:
    """The tables of the Justice et al. 2020 example: printed by the notebooks, or regenerated.

    Parameters
    ----------
    data_dir : pathlib.Path or None
        The root of the real datasets: the notebooks' printed tables are read from it
        (table set ``rep`` mod 7); None: tables regenerated from the published statistics.
    rep : int
        The repetition (picks the table set).
    rng : SeedLike
        The randomness of the regenerated tables.

    Returns
    -------
    RealTables
        The tables, N = 215 and their source.
    """
    if data_dir is None:
        example = tdt_real_example(rng)
        return RealTables(example.b, example.c, example.n_families, "regenerated")
    path = require_file(data_dir, REAL_CSV, what="TDT (Justice et al. 2020 example)")
    table = np.genfromtxt(path, delimiter=",", names=True)
    sets = np.unique(table["notebook_epsilon"])
    pick = table[table["notebook_epsilon"] == sets[rep % sets.size]]
    pick = pick[np.argsort(pick["snp_index"])]
    return RealTables(
        pick["b"].astype(np.int64),
        pick["c"].astype(np.int64),
        JUSTICE2020_N_FAMILIES,
        f"{REAL_CSV} (notebook eps = {sets[rep % sets.size]:g})",
    )


def _runtime_rows(m: int, repeats: int, rng: np.random.Generator) -> list[dict]:
    """Table I: the median time of one selection (problem with the Thm 5 bounds + one draw) on m SNPs."""
    tdt_app.beta_max(N_FAMILIES, "thm5")  # one-off state-space tables (cached per process)
    b, c = simulate_tdt(m, N_FAMILIES, rng)
    warm = tdt_app.tdt_problem(b[:2], c[:2], N_FAMILIES)
    SmoothPrivateSelection(10.0).select(warm, rng=rng)
    rows = []
    for mech_name, mech in (
        ("sps_thm5_one_sided", SmoothPrivateSelection(10.0)),
        ("em", ExponentialMechanism(10.0)),
        ("pf", PermuteAndFlip(10.0)),
    ):
        times, picks = [], []
        for _ in range(repeats):
            t0 = time.perf_counter()
            prob = tdt_app.tdt_problem(b, c, N_FAMILIES)  # the Thm 5 bounds are evaluated by SPS's select
            picks.append(int(mech.select(prob, rng=rng)))
            times.append(time.perf_counter() - t0)
        rows.append(
            {
                "table": "table1",
                "m": m,
                "mechanism": mech_name,
                "epsilon": 10.0,
                "selected_first": picks[0],
                "median_seconds": float(np.median(times)),
            }
        )
    return rows


def _real_rows(tables: RealTables, rep: int, epsilons: Sequence[float]) -> list[dict]:
    """Table II: the exact accuracy of every mechanism on the real-data example."""
    b, c, n = tables.b, tables.c, tables.n_families
    problems = _problems(b, c, n)
    rows = []
    for eps in epsilons:
        for accounting in ("proven", "paper"):
            for name, _, kind, selector in _mechanisms(eps, b.size, n, accounting):
                prob = problems[kind]
                rows.append(
                    {
                        "table": "table2",
                        "m": b.size,
                        "rep": rep,
                        "epsilon": eps,
                        "accounting": accounting,
                        "mechanism": name,
                        "accuracy": accuracy(selector, prob),
                        "epsilon_proven": selector.privacy(prob).epsilon,
                        "source": tables.source,
                        "b": " ".join(map(str, b)),
                        "c": " ".join(map(str, c)),
                    }
                )
    return rows
