"""Transmission disequilibrium test (TDT): private top-SNP and top-k selection.

Data and statistic
------------------
A trio study with ``N = n_families`` families (2N parents).  For one SNP,
``b`` (``c``) counts heterozygous parents transmitting the first (second)
allele; ``b, c >= 0``, ``b + c <= 2N``; chi2(b, c) = (b - c)^2 / (b + c)
(0 at b = c = 0).  Counts from PLINK files: :mod:`dpselect.apps.genomics`.

Neighbour relation (mathematics §1, §4.4)
-----------------------------------------
One **family** replaced ("replace"); see :mod:`._problem`.

Selection
---------
* :func:`dpselect.apps.genomics.select_top_snp` / ``select_top_snps`` (which dispatch
  here on a :class:`TransmissionCounts`) default to
  **permute-and-flip on the neighbour-distance utility**
  (``mechanism="pf", utility="distance"``; :func:`distance_utility_problem`):
  the most accurate sound choice measured (20 SNPs, N = 150, eps = 3: exact
  accuracy 0.998 vs 0.30 for YS's sound Smooth Private Selection; the
  Justice et al. 2020 example at eps = 9: 0.97 vs SPS 0.47 and EM 0.43).
  The seeds' mechanisms ("sps", "em", "pf", "ld", ...) run on the chi2
  scores of :func:`tdt_problem` with ``utility="chi2"``.
* Sensitivities in closed form (:mod:`._sensitivity`): GS = 8(N-1)/N, LS,
  Lemma 2/3, distances to G = {LS = GS} and U = {LS > T}; the Thm 4/5
  beta_max (exact minimum by branch and bound) and smooth upper bounds
  (:mod:`._beta_max`), at any N.
* The peeling rounds of :func:`dpselect.apps.genomics.select_top_snps`: :mod:`._peel`.

Sources: Yamamoto & Shibuya, IPCCC 2024, §V and supplement; mathematics §4.4,
§9.1 (which win over the paper).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ....accounting import Accountant, charge
from ....mechanisms import Mechanism
from ....privacy import Privacy
from .._counts import TransmissionCounts
from .._top_snps import TopSNPs, _forward_top_k
from ._peel import _peel, _stand_in, top_k_set_problem
from ._problem import build_tdt_problem, resolve_tdt_mechanism

__all__ = ["tdt_top_snp", "tdt_top_snps"]


def tdt_top_snp(
    counts: TransmissionCounts,
    epsilon: float | None,
    *,
    mechanism: str | Mechanism,
    utility: str,
    bound: str,
    threshold: float,
    accountant: Accountant | None,
    gen: np.random.Generator,
    mechanism_kwargs: Mapping[str, object],
) -> int:
    """One SNP (its index) by ``mechanism`` on the TDT utility; charged before drawing (arguments checked)."""
    mech, util = resolve_tdt_mechanism(mechanism, epsilon, utility, mechanism_kwargs)
    prob = build_tdt_problem(util, counts.b, counts.c, counts.n_families, bound, threshold, None, mech)
    charge(accountant, mech.privacy(prob))
    return int(mech.select(prob, rng=gen))


def tdt_top_snps(
    counts: TransmissionCounts,
    epsilon: float | None,
    k: int,
    *,
    mechanism: str | Mechanism,
    utility: str,
    method: str,
    bound: str,
    threshold: float,
    accountant: Accountant | None,
    gen: np.random.Generator,
) -> TopSNPs:
    """K SNPs on the TDT utility (arguments checked): peeling at epsilon / k a round, or a one-shot top-k.

    Guarantee of peeling: adaptive sequential composition of the k rounds
    (Dwork & Roth 2014, Thm 3.16), each round's guarantee computed on a
    data-free stand-in problem of its public shape.
    """
    b, c, n = counts.b, counts.c, counts.n_families
    mech, util = resolve_tdt_mechanism(mechanism, None if epsilon is None else epsilon / k, utility)
    if method != "peel":
        if util == "distance":
            full = top_k_set_problem(b, c, n, k)
        else:
            full = build_tdt_problem(util, b, c, n, bound, threshold, None, mech)
        idx, total = _forward_top_k(mech, full, k, method, accountant, gen)
        rounds: list[Privacy] = [total]
        name = method
    else:
        rounds = [mech.privacy(_stand_in(util, b.size - j, n, bound, threshold, mech)) for j in range(k)]
        total = sum(rounds[1:], rounds[0])
        charge(accountant, total)
        idx, name = _peel(mech, util, b, c, n, k, bound, threshold, gen)
    round_privacy = max(rounds, key=lambda p: (p.epsilon, p.delta))
    return TopSNPs(idx, counts.snp_ids[idx].tolist(), total, round_privacy, name)
