"""Votes, modes and propose-test-release: selection from counts or raw labels.

- Majority vote from raw labels (one per record): :func:`private_majority`.
- Majority vote / argmax of counts: :func:`private_argmax`, :func:`majority_problem`
  (indicator, count and distance utilities), :func:`majority_neighbours`.
- Mode of a sample over a public candidate set (Duff's exponential mechanism):
  :func:`duff_mode`, :func:`mode_problem`, its exact law :func:`duff_mode_probabilities`
  (an :class:`~dpselect.OutputLaw`) and its utility :func:`duff_mode_utility`
  (a :class:`ModeUtility`).
- Partition selection (keys of a domain nobody can list, add/remove one user):
  :func:`select_partitions`, :func:`partition_selection_privacy`, its exact per-key law
  :func:`partition_release_probabilities`; the k most frequent keys :func:`select_top_k_keys`.
- Propose-test-release: :func:`propose_test_release`, :func:`ptr_mode`,
  :func:`stable_histogram`.

Neighbour relation: add/remove one record unless a function says otherwise.

Examples
--------
>>> from dpselect.apps.counts import private_argmax
>>> private_argmax([22, 8, 17, 4, 0], 1.0, rng=0)
0
"""

from __future__ import annotations

from ._instability import candidate_distances, distance_to_instability
from ._majority import majority_neighbours, majority_problem, private_argmax
from ._mode import ModeUtility, duff_mode, duff_mode_probabilities, duff_mode_utility, mode_problem
from ._partitions.selection import (
    PARTITION_METHODS,
    partition_release_probabilities,
    partition_selection_privacy,
    select_partitions,
)
from ._partitions.top_k_keys import TopKeys, select_top_k_keys
from ._ptr import propose_test_release
from ._ptr_mode import mode_distance_to_instability, ptr_mode, ptr_mode_probabilities
from ._rules import TIE_RULES, UTILITIES
from ._stable_histogram import stable_histogram, stable_histogram_probabilities
from ._vote import label_counts, private_majority

__all__ = [
    "PARTITION_METHODS",
    "TIE_RULES",
    "UTILITIES",
    "ModeUtility",
    "TopKeys",
    "candidate_distances",
    "distance_to_instability",
    "duff_mode",
    "duff_mode_probabilities",
    "duff_mode_utility",
    "label_counts",
    "majority_neighbours",
    "majority_problem",
    "mode_distance_to_instability",
    "mode_problem",
    "partition_release_probabilities",
    "partition_selection_privacy",
    "private_argmax",
    "private_majority",
    "propose_test_release",
    "ptr_mode",
    "ptr_mode_probabilities",
    "select_partitions",
    "select_top_k_keys",
    "stable_histogram",
    "stable_histogram_probabilities",
]
