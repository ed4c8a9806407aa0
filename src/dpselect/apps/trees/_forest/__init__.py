"""Private forests: the forest estimator, the partition ensemble and the Fletcher–Islam random forest (private).

The face is :mod:`dpselect.apps.trees`; this package only groups the modules of one family.
"""
