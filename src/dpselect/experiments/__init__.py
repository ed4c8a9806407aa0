"""Reproductions of the papers' experiments (``dpselect reproduce NAME``).

The face: :func:`reproduce` runs one experiment end to end, :func:`reproduce_all` every
one of :data:`EXPERIMENTS` and the combined report; :func:`load_experiment` gives an
experiment's module, :func:`resolve_data_dir` the directory of the real datasets, and
:func:`claims_text` / :func:`count_line` say what a run found.  Names are imported on
first use, so ``import dpselect.experiments`` stays cheap.

One module per experiment (:mod:`.percentile`, :mod:`.tree`, :mod:`.forest`,
:mod:`.tdt`, :mod:`.median`), each exposing ``tasks(quick, data_dir)``,
``run_task(task, seed)``, ``plot(rows, out_dir)`` and ``claims(rows)``.
Shared infrastructure: :mod:`.runner` (the orchestrator: ``reproduce``,
``reproduce_all``), :mod:`.tasks` (``Task``, ``Claim``, results),
:mod:`.scheduler` (deterministic Dask execution), :mod:`.csvio`,
:mod:`.report` and :mod:`.html` (markdown / self-contained HTML reports),
:mod:`.datasets` (the papers' synthetic generators and regenerated examples),
:mod:`._data` (data directory, files read), :mod:`._progress`, and the
scaffolding the experiment modules share: :mod:`._common` (task grids,
means with spread, claim rows, accuracy figures) and :mod:`._plotting`.

Needs the ``experiments`` extra (``pip install "dpselect[experiments]"``): importing
this package without it raises an ImportError naming the extra.  The heavy packages
themselves are imported only where they are used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .._optional import require_installed

require_installed(
    ("matplotlib", "dask", "distributed", "pandas", "sklearn", "pyarrow", "rich"),
    "experiments",
    purpose="dpselect.experiments",
)

if TYPE_CHECKING:
    from ._data import resolve_data_dir
    from .report import claims_text, count_line
    from .runner import reproduce, reproduce_all
    from .tasks import EXPERIMENTS, Claim, ExperimentResult, load_experiment

__all__ = [
    "EXPERIMENTS",
    "Claim",
    "ExperimentResult",
    "claims_text",
    "count_line",
    "load_experiment",
    "reproduce",
    "reproduce_all",
    "resolve_data_dir",
]

#: Where each name of ``__all__`` is defined (imported on first access, PEP 562).
_HOMES = {
    "EXPERIMENTS": "tasks",
    "Claim": "tasks",
    "ExperimentResult": "tasks",
    "claims_text": "report",
    "count_line": "report",
    "load_experiment": "tasks",
    "reproduce": "runner",
    "reproduce_all": "runner",
    "resolve_data_dir": "_data",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
