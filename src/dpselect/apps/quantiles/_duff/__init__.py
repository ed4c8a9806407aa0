"""Duff's exponential mechanism over continuous output ranges: the median, the mean, their exact laws (private).

The face is :mod:`dpselect.apps.quantiles`; this package only groups the modules of one family.
"""
