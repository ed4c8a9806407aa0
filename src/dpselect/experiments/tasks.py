"""The task and result types of the reproductions, and the experiment modules by name.

An experiment module (``dpselect.experiments.<name>``) exposes

* ``tasks(quick, data_dir) -> list[Task]``: the grid (dataset x mechanism x
  epsilon x repetition, at whatever granularity the experiment chooses);
* ``run_task(task, seed) -> list[dict]``: a pure function of the task and its
  ``numpy.random.SeedSequence`` returning rows of results;
* ``plot(rows, out_dir) -> list[Path]``: PNG figures (matplotlib, Agg);
* ``claims(rows) -> list[Claim]``: the published claims with our numbers;
* optionally ``TITLE``, ``DESCRIPTION``, ``summary(rows) -> str`` (markdown),
  ``notes(quick, data_dir) -> list[str]`` and ``ABBREVIATIONS`` (a dict
  abbreviation -> meaning, collected in the combined report).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from .csvio import format_value

__all__ = ["EXPERIMENTS", "Claim", "ExperimentResult", "Task", "load_experiment"]

#: The reproducible experiments, in the order ``all`` runs them.
EXPERIMENTS = ("percentile", "median", "tdt", "tree", "forest")


@dataclass(frozen=True)
class Task:
    """One unit of work of an experiment grid.

    Parameters
    ----------
    key
        a tuple of str / int / float naming the task uniquely within its
        experiment; tasks are ordered by it (seeds are assigned in that order).
    kwargs
        the task's parameters (picklable), read by ``run_task``.
    """

    key: tuple
    kwargs: Mapping[str, Any] = field(default_factory=dict, hash=False)

    @property
    def name(self) -> str:
        return "/".join(format_value(k) for k in self.key)


#: Kinds of claims: the paper's own, or a new finding of this library.
CLAIM_KINDS = ("paper", "new")


@dataclass(frozen=True)
class Claim:
    """A published claim next to our number, or a new finding of this library.

    ok is True (holds), False (does not hold) or None (not evaluated, e.g. the
    grid does not contain the claim's setting).  ``kind`` is ``"paper"`` for a
    claim the paper makes (marked ✓ reproduced / ✗ not reproduced) and ``"new"``
    for a finding about a baseline the paper does not have (marked + holds /
    ○ does not hold), counted apart from the paper's claims.
    """

    text: str
    ours: str
    published: str
    ok: bool | None
    note: str = ""
    kind: str = "paper"

    def __post_init__(self) -> None:
        if self.kind not in CLAIM_KINDS:
            raise ValueError(f"kind must be one of {CLAIM_KINDS}, got {self.kind!r}")

    @property
    def mark(self) -> str:
        if self.ok is None:
            return "–"
        if self.kind == "new":
            return "+" if self.ok else "○"
        return "✓" if self.ok else "✗"


@dataclass
class ExperimentResult:
    """What :func:`dpselect.experiments.runner.reproduce` returns.

    ``data_files`` are the real data files the run read (empty: embedded data only).
    """

    name: str
    rows: list[dict]
    claims: list[Claim]
    out_dir: Path
    files: list[Path]
    n_tasks: int
    seconds: float
    data_files: list[Path] = field(default_factory=list)
    title: str = ""


def load_experiment(name: str) -> ModuleType:
    """The module ``dpselect.experiments.<name>`` (ValueError for an unknown name)."""
    if name not in EXPERIMENTS:
        raise ValueError(f"unknown experiment {name!r}; choose one of: {', '.join(EXPERIMENTS)}, all")
    return importlib.import_module(f"dpselect.experiments.{name}")
