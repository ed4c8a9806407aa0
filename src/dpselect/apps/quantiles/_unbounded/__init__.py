"""Quantiles without bounds: private bounds by AboveThreshold, then the bounded mechanisms (private).

The face is :mod:`dpselect.apps.quantiles`; this package only groups the modules of one family.
"""
