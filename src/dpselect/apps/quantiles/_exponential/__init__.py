"""The piecewise exponential mechanism and the single quantile/median it releases, with its exact law (private).

The face is :mod:`dpselect.apps.quantiles`; this package only groups the modules of one family.
"""
