"""Many quantiles at once: JointExp and the recursive ApproximateQuantiles (private).

The face is :mod:`dpselect.apps.quantiles`; this package only groups the modules of one family.
"""
