"""The smooth-sensitivity median baselines: SmoothSens pure and approximate, LaplaceLN (private).

The face is :mod:`dpselect.apps.quantiles`; this package only groups the modules of one family.
"""
