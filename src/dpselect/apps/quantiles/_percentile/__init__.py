"""Percentiles over a public grid by the rank distance: grid, problem, target, neighbours (private).

The face is :mod:`dpselect.apps.quantiles`; this package only groups the modules of one family.
"""
