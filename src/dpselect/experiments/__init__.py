"""Reproductions of the papers' experiments (``dpselect reproduce NAME``).

One module per experiment (:mod:`.percentile`, :mod:`.tree`, :mod:`.forest`,
:mod:`.tdt`, :mod:`.median`), each exposing ``tasks(quick, data_dir)``,
``run_task(task, seed)``, ``plot(rows, out_dir)`` and ``claims(rows)``; the
Dask runner that executes a grid deterministically is :mod:`.runner`.
"""
