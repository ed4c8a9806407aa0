"""Case-control association tests: statistics, distances, selection, releases.

Private (an empty ``__all__``: nothing here is public): the face is :mod:`dpselect.apps.genomics`;
the names below are what the other rooms of the package use.
"""

from __future__ import annotations

from ._release import association_release as association_release
from ._release import association_release_privacy as association_release_privacy
from ._release import released_columns as released_columns
from ._select import TEST as TEST
from ._select import allelic_sensitivity as allelic_sensitivity
from ._select import association_distances as association_distances
from ._select import association_problem as association_problem
from ._select import association_statistic as association_statistic
from ._select import association_top_snp as association_top_snp
from ._select import select_association_snps as select_association_snps
from ._statistics import ASSOCIATION_TESTS as ASSOCIATION_TESTS

#: Private room: nothing public (the genomics face exports what users see).
__all__: list[str] = []
