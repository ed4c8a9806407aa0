"""Reproductions of the papers' experiments (``dpselect reproduce NAME``).

One module per experiment (:mod:`.percentile`, :mod:`.tree`, :mod:`.forest`,
:mod:`.tdt`, :mod:`.median`), each exposing ``tasks(quick, data_dir)``,
``run_task(task, seed)``, ``plot(rows, out_dir)`` and ``claims(rows)``.
Shared infrastructure: :mod:`.runner` (the orchestrator: ``reproduce``,
``reproduce_all``), :mod:`.tasks` (``Task``, ``Claim``, results),
:mod:`.scheduler` (deterministic Dask execution), :mod:`.csvio`,
:mod:`.report` and :mod:`.html` (markdown / self-contained HTML reports),
:mod:`._data` (data directory, files read), :mod:`._progress`, and the
scaffolding the experiment modules share: :mod:`._common` (task grids,
means with spread, claim rows, accuracy figures) and :mod:`._plotting`.

Needs the ``experiments`` extra (``pip install "dpselect[experiments]"``): importing
this package without it raises an ImportError naming the extra.  The heavy packages
themselves are imported only where they are used.
"""

from .._optional import require_installed

require_installed(("matplotlib", "dask", "distributed", "pandas", "sklearn", "pyarrow", "rich"), "experiments",
                  purpose="dpselect.experiments")
