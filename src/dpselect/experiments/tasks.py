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
from collections.abc import Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from .._params import Rule, validate_params
from .csvio import format_value

__all__ = ["CLAIMS", "EXPERIMENT", "EXPERIMENTS", "Claim", "ClaimCounts", "ExperimentResult", "Task", "load_experiment"]

#: The reproducible experiments, in the order ``all`` runs them.
EXPERIMENTS = ("percentile", "median", "tdt", "tree", "forest")


@dataclass(frozen=True, init=False)
class Task:
    """One unit of work of an experiment grid.

    Parameters
    ----------
    key : tuple
        A tuple of str / int / float naming the task uniquely within its
        experiment; tasks are ordered by it (seeds are assigned in that order).
    kwargs : mapping of str to object, default=None
        The task's parameters (picklable), read by ``run_task``; None: none.

    Examples
    --------
    >>> Task(("iris", 2), {"dataset": "iris", "depth": 2}).name
    'iris/2'
    """

    key: tuple[Hashable, ...]
    #: The parameters as given; the experiment module that built the task reads its own values back.
    kwargs: Mapping[str, Any] = field(hash=False)

    def __init__(self, key: tuple[Hashable, ...], kwargs: Mapping[str, object] | None = None) -> None:
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "kwargs", dict(kwargs) if kwargs is not None else {})

    @property
    def name(self) -> str:
        """The key joined by "/" (the ``task`` column of the results)."""
        return "/".join(format_value(k) for k in self.key)


#: Kinds of claims: the paper's own, or a new finding of this library.
CLAIM_KINDS = ("paper", "new")


@dataclass(frozen=True)
class Claim:
    """A published claim next to our number, or a new finding of this library.

    Parameters
    ----------
    text : str
        The claim, in words.
    ours : str
        Our number (or "not evaluated (...)").
    published : str
        The published number or statement.
    ok : bool or None
        True (holds), False (does not hold) or None (not evaluated, e.g. the
        grid does not contain the claim's setting).
    note : str, default=""
        A remark shown under the claim.
    kind : {"paper", "new"}, default="paper"
        ``"paper"`` for a claim the paper makes (marked ✓ reproduced / ✗ not
        reproduced), ``"new"`` for a finding about a baseline the paper does not
        have (marked + holds / ○ does not hold), counted apart from the paper's claims.

    See Also
    --------
    ExperimentResult : What :func:`dpselect.experiments.reproduce` returns
    load_experiment : The module ``dpselect.experiments.<name>``

    Examples
    --------
    >>> Claim("PF beats EM", "3/3 cells", "Fig. 1", True).mark
    '✓'
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
        """✓ / ✗ (paper claims), + / ○ (new findings) or – (not evaluated)."""
        if self.ok is None:
            return "–"
        if self.kind == "new":
            return "+" if self.ok else "○"
        return "✓" if self.ok else "✗"


@dataclass(frozen=True)
class ClaimCounts:
    """How many claims of one kind hold, do not hold and were not evaluated (iterable: ``a, b, c = counts``).

    Parameters
    ----------
    holds : int
        Claims that hold (✓ reproduced, or + for a new finding).
    fails : int
        Claims that do not hold (✗, or ○).
    not_evaluated : int
        Claims not evaluated (–).

    Examples
    --------
    >>> counts = ClaimCounts.of([Claim("A", "1", "2", True), Claim("B", "1", "2", None)], "paper")
    >>> counts, counts.total
    (ClaimCounts(holds=1, fails=0, not_evaluated=1), 2)
    """

    holds: int
    fails: int
    not_evaluated: int

    @classmethod
    def of(cls, claims: Iterable[Claim], kind: str) -> ClaimCounts:
        """The counts of the claims of ``kind`` ("paper" or "new") among ``claims``.

        Parameters
        ----------
        claims : iterable of Claim
            The claims; those of another kind are not counted.
        kind : {"paper", "new"}
            The kind counted.

        Returns
        -------
        ClaimCounts
            The counts.
        """
        marks = [c.ok for c in claims if c.kind == kind]
        return cls(sum(m is True for m in marks), sum(m is False for m in marks), sum(m is None for m in marks))

    @property
    def total(self) -> int:
        """All the claims counted."""
        return self.holds + self.fails + self.not_evaluated

    def __iter__(self) -> Iterator[int]:
        """``holds``, ``fails``, ``not_evaluated`` (so that the counts unpack).

        Returns
        -------
        iterator of int
            The three counts.
        """
        return iter((self.holds, self.fails, self.not_evaluated))


@dataclass
class ExperimentResult:
    """What :func:`dpselect.experiments.reproduce` returns.

    Parameters
    ----------
    name : str
        The experiment (one of :data:`EXPERIMENTS`).
    rows : list of dict
        The result rows (as in ``results.csv``, timing columns included).
    claims : list of Claim
        The published claims with our numbers, and the new findings.
    out_dir : pathlib.Path
        The directory of the experiment's files.
    files : list of pathlib.Path
        The files written (CSV, figures, reports).
    n_tasks : int
        The number of tasks run.
    seconds : float
        Wall time of the run.
    data_files : list of pathlib.Path, default=[]
        The real data files the run read (empty: embedded data only).
    title : str, default=""
        The experiment's title (its module's ``TITLE``).

    See Also
    --------
    load_experiment : The module ``dpselect.experiments.<name>``
    Claim : A published claim next to our number, or a new finding of this library
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


def _experiment_name(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    if value not in EXPERIMENTS:
        raise ValueError(f"unknown experiment {value!r}; choose one of: {', '.join(EXPERIMENTS)}, all")
    return value


def _claims(value: object, name: str) -> list[Claim]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(f"{name} must be an iterable of Claim, got {type(value).__name__}")
    out = list(value)
    bad = next((c for c in out if not isinstance(c, Claim)), None)
    if bad is not None:
        raise TypeError(f"{name} must hold Claim objects, got a {type(bad).__name__}")
    return out


#: The name of one experiment (ValueError naming the choices for another string).
EXPERIMENT = Rule(f"one of {EXPERIMENTS}", check=_experiment_name)
#: An iterable of :class:`Claim`, handed on as a list.
CLAIMS = Rule("an iterable of Claim", check=_claims)


@validate_params({"name": EXPERIMENT})
def load_experiment(name: str) -> ModuleType:
    """The module ``dpselect.experiments.<name>``.

    Parameters
    ----------
    name : str
        One of :data:`EXPERIMENTS` (another string is a ``ValueError`` naming the choices).

    Returns
    -------
    module
        The experiment module (``tasks``, ``run_task``, ``plot``, ``claims``, ...).

    See Also
    --------
    ExperimentResult : What :func:`dpselect.experiments.reproduce` returns
    Claim : A published claim next to our number, or a new finding of this library

    Examples
    --------
    >>> load_experiment("tdt").__name__
    'dpselect.experiments.tdt'
    """
    return importlib.import_module(f"dpselect.experiments.{name}")
