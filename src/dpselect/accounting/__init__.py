"""Privacy accounting: every conversion and composition rule in one place.

Each rule is a pure function returning a number or a :class:`~dpselect.privacy.Privacy`
and cites the the mathematics page section (shipped in the documentation's *Mathematics*
page) that proves it.  :class:`Accountant` tracks a budget across calls.

Modules (one family of rules each):

* ``conversions`` — zCDP <-> (epsilon, delta) (mathematics §2.5) and the noise
  admissibility conditions of smooth-sensitivity releases (mathematics §2.2-§2.5);
* ``selection`` — smooth report-noisy-max and Smooth Private Selection
  (mathematics §3.1, §3.2), its LLN form in ``_lln_selection``;
* ``discrete`` — releases sampled exactly on a power-of-two grid (discrete Laplace);
* ``ptr`` — propose-test-release, stable histograms and the private
  sensitivity bound (mathematics §6.2, §6.3, §9.2);
* ``trees`` — decision trees and forests (mathematics §5);
* ``composition`` — basic, bounded-range (Dong, Durfee & Rogers 2020) and
  zCDP composition of many guarantees (mathematics page §10.1);
* ``bounded_range`` — the adaptive optimum of bounded-range mechanisms
  (Dong, Durfee & Rogers 2020) by dynamic programming;
* ``optimal`` — the optimal composition of pure epsilon-DP mechanisms
  (Kairouz, Oh & Viswanath 2015; Murtagh & Vadhan 2016);
* ``ledger`` — the running summary of an accountant's charges and the best
  valid composition of them (:func:`compose_privacy`);
* ``accountant`` — :class:`Accountant`, the budget across calls (default,
  basic and privacy-filter modes).

Every public name is importable from ``dpselect.accounting``.
"""

from __future__ import annotations

from ._charge import charge, repeated
from ._lln_selection import lln_selection_privacy, lln_selection_rho
from .accountant import Accountant, BudgetExceededError
from .bounded_range import br_adaptive_epsilon, br_nonadaptive_epsilon
from .composition import br_composition_epsilon, br_kl_bound, br_zcdp_rho, zcdp_epsilon
from .conversions import (
    dp_to_zcdp,
    laplace_smooth_beta,
    laplace_smooth_delta,
    lln_zcdp_rho,
    nrs_laplace_parameters,
    zcdp_to_dp,
)
from .discrete import grid_laplace_smooth_beta, grid_laplace_smooth_delta, grid_steps
from .ledger import compose_privacy
from .optimal import kov_epsilon, pure_composition_epsilon
from .ptr import (
    ptr_mode_privacy,
    ptr_privacy,
    sensitivity_bound_privacy,
    sensitivity_bound_shift,
    stable_histogram_privacy,
)
from .selection import (
    laplace_selection_beta,
    laplace_selection_eps_d,
    laplace_selection_log_delta,
    laplace_selection_privacy,
    smooth_rnm_epsilon,
    sps_epsilon,
    sps_split,
)
from .trees import forest_privacy, parallel_composition, tree_privacy, tree_query_epsilon

__all__ = [
    "Accountant",
    "BudgetExceededError",
    "br_adaptive_epsilon",
    "br_composition_epsilon",
    "br_kl_bound",
    "br_nonadaptive_epsilon",
    "br_zcdp_rho",
    "charge",
    "compose_privacy",
    "dp_to_zcdp",
    "forest_privacy",
    "grid_laplace_smooth_beta",
    "grid_laplace_smooth_delta",
    "grid_steps",
    "kov_epsilon",
    "laplace_selection_beta",
    "laplace_selection_eps_d",
    "laplace_selection_log_delta",
    "laplace_selection_privacy",
    "laplace_smooth_beta",
    "laplace_smooth_delta",
    "lln_selection_privacy",
    "lln_selection_rho",
    "lln_zcdp_rho",
    "nrs_laplace_parameters",
    "parallel_composition",
    "ptr_mode_privacy",
    "ptr_privacy",
    "pure_composition_epsilon",
    "repeated",
    "sensitivity_bound_privacy",
    "sensitivity_bound_shift",
    "smooth_rnm_epsilon",
    "sps_epsilon",
    "sps_split",
    "stable_histogram_privacy",
    "tree_privacy",
    "tree_query_epsilon",
    "zcdp_epsilon",
    "zcdp_to_dp",
]

# Documented (and shown in tracebacks) under their public path.
Accountant.__module__ = BudgetExceededError.__module__ = __name__
