"""The TDT: statistic, sensitivities, distances, selection, releases, peeling.

Private (an empty ``__all__``: nothing here is public): the face is :mod:`dpselect.apps.genomics`;
the names below are what the other rooms of the package use.
"""

from __future__ import annotations

from ._beta_max import beta_max as beta_max
from ._beta_max import smooth_upper_bound as smooth_upper_bound
from ._distance import distance_utility_problem as distance_utility_problem
from ._distance import neighbour_distances as neighbour_distances
from ._problem import UTILITIES as UTILITIES
from ._problem import tdt_neighbours as tdt_neighbours
from ._problem import tdt_problem as tdt_problem
from ._release import DF as DF
from ._release import GAMMA as GAMMA
from ._release import GRANULARITY as GRANULARITY
from ._release import KAPPA as KAPPA
from ._release import NOISE as NOISE
from ._release import release_mechanism as release_mechanism
from ._release import release_statistic as release_statistic
from ._release import tdt_release as tdt_release
from ._release import tdt_release_privacy as tdt_release_privacy
from ._select import tdt_top_snp as tdt_top_snp
from ._select import tdt_top_snps as tdt_top_snps
from ._sensitivity import MOVES as MOVES
from ._sensitivity import global_sensitivity as global_sensitivity
from ._sensitivity import lemma2_region as lemma2_region
from ._sensitivity import local_sensitivity as local_sensitivity
from ._sensitivity import table_distance as table_distance
from ._sensitivity import tdt_statistic as tdt_statistic
from ._set_distance import gs_distance as gs_distance
from ._set_distance import unstable_distance as unstable_distance

#: Private room: nothing public (the genomics face exports what users see).
__all__: list[str] = []
