"""Growing one private tree: split criteria, node selection, level-wise growth, leaf labels, shape, fit (private).

The face is :mod:`dpselect.apps.trees`; this package only groups the modules of one family.
"""
