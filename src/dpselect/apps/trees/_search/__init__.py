"""Private hyper-parameter search: DPSearchCV, its plan and the random number of repetitions (private).

The face is :mod:`dpselect.apps.trees`; this package only groups the modules of one family.
"""
