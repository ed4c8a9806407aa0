"""The exact accuracies of the TDT reproduction: the mechanisms of each case and their accuracy table.

:func:`accuracy_table` computes the probability that each mechanism returns the SNP with the
largest chi2_TDT on simulated panels, exactly (from the output distributions), for
ND-PF, EM, PF, LD and Yamamoto & Shibuya's four SPS cases, under the proven accounting
or the paper's (:func:`paper_one_sided_sps`).  Behind :mod:`dpselect.experiments.tdt`,
which re-exports the public names.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._validation import check_epsilon, check_int, check_random_state
from ..analysis import accuracy
from ..apps import genomics as tdt_app
from ..mechanisms import ExponentialMechanism, LocalDampening, Mechanism, PermuteAndFlip, SmoothPrivateSelection
from ..noise import PolynomialTail
from ..problem import SelectionProblem
from ..typing import SeedLike
from .datasets import simulate_tdt

__all__ = ["CASE", "MECH_ORDER", "SPS_CASES", "SPS_NAMES", "accuracy_table", "paper_one_sided_sps"]

#: The mechanisms in the order of the tables.
MECH_ORDER = (
    "nd_pf",
    "em",
    "pf",
    "ld",
    "sps_thm4_two_sided",
    "sps_thm4_one_sided",
    "sps_thm5_two_sided",
    "sps_thm5_one_sided",
)
#: Their labels (the paper's SPS cases I-IV).
CASE = {
    "nd_pf": "ND-PF",
    "em": "EM",
    "pf": "PF",
    "ld": "LD",
    "sps_thm4_two_sided": "SPS I",
    "sps_thm4_one_sided": "SPS II",
    "sps_thm5_two_sided": "SPS III",
    "sps_thm5_one_sided": "SPS IV",
}
SPS_NAMES = ("sps_thm4_two_sided", "sps_thm4_one_sided", "sps_thm5_two_sided", "sps_thm5_one_sided")

#: YS's four SPS cases: case -> (mechanism name, bound, one_sided).
SPS_CASES: dict[str, tuple[str, str, bool]] = {
    "I": ("sps_thm4_two_sided", "thm4", False),
    "II": ("sps_thm4_one_sided", "thm4", True),
    "III": ("sps_thm5_two_sided", "thm5", False),
    "IV": ("sps_thm5_one_sided", "thm5", True),
}

_ACCOUNTINGS = ("proven", "paper")


def paper_one_sided_sps(
    epsilon: float, m: int, beta_max: float, gamma: float = 4.0, kappa: float = 0.5
) -> SmoothPrivateSelection:
    """One-sided SPS with the split of YS Thm 3 as published: k + (m-1) l / 2 = 1.

    l = min(2 (1 - kappa)/(m - 1), beta_max / (beta(1) eps)) (shrunk by 1e-12)
    and k = 1 - (m - 1) l / 2.  The paper claims eps-DP for replace neighbours (one
    family replaced, mathematics §4.4); YS-supp retracts the proof (mathematics §3.2,
    mathematics §7 item 2) and ``privacy()`` reports the proven (k + m l / 2) eps.  For
    reproducing the paper's accounting only.

    Parameters
    ----------
    epsilon : float
        The epsilon the paper claims (> 0).
    m : int
        The number of SNPs (>= 2).
    beta_max : float
        The largest beta the smooth bound is valid for (``apps.genomics.beta_max``).
    gamma : float, default=4.0
        The tail exponent of the polynomial-tail noise.
    kappa : float, default=0.5
        The share of the budget the paper's split gives the scale (before the beta_max cap).

    Returns
    -------
    SmoothPrivateSelection
        The mechanism with the paper's k and l.
    """
    epsilon = check_epsilon(epsilon)
    m = check_int(m, "m", minimum=2)
    beta_unit = float(PolynomialTail(gamma).admissible(1.0)[1])  # beta(e) = e beta(1)
    l = min(2.0 * (1.0 - kappa) / (m - 1), beta_max / (beta_unit * epsilon) * (1.0 - 1e-12))
    k = 1.0 - (m - 1) * l / 2.0
    return SmoothPrivateSelection(epsilon, gamma=gamma, one_sided=True, k=k, l=l)


def _mechanisms(
    eps: float, m: int, n: int, accounting: str, gamma: float = 4.0, kappa: float = 0.5, threshold: float = 6
) -> list[tuple[str, str, str, Mechanism]]:
    """(name, case, problem kind, mechanism): kind is "distance" or the SPS bound of the chi2 problem."""
    mech: Mechanism
    out: list[tuple[str, str, str, Mechanism]] = [
        ("nd_pf", "", "distance", PermuteAndFlip(eps)),
        ("em", "", "thm5", ExponentialMechanism(eps)),
        ("pf", "", "thm5", PermuteAndFlip(eps)),
        ("ld", "", "thm5", LocalDampening(eps)),
    ]
    for case, (name, bound, one_sided) in SPS_CASES.items():
        if accounting == "paper" and one_sided:
            mech = paper_one_sided_sps(eps, m, tdt_app.beta_max(n, bound, threshold), gamma, kappa)
        else:
            mech = SmoothPrivateSelection(eps, gamma=gamma, one_sided=one_sided, kappa=kappa)
        out.append((name, case, bound, mech))
    return out


def _problems(b: np.ndarray, c: np.ndarray, n: int, threshold: float = 6) -> dict[str, SelectionProblem]:
    out = {bound: tdt_app.tdt_problem(b, c, n, bound=bound, threshold=threshold) for bound in ("thm4", "thm5")}
    out["distance"] = tdt_app.distance_utility_problem(b, c, n)
    return out


def accuracy_table(
    ms: int | Sequence[int] = (5, 10, 15, 20),
    epsilons: float | Sequence[float] = (3, 6, 9, 12, 15, 18, 21),
    n_families: int = 150,
    n_reps: int = 40,
    *,
    rng: SeedLike = None,
    accounting: str = "proven",
    gamma: float = 4.0,
    kappa: float = 0.5,
    threshold: float = 6,
) -> list[dict[str, object]]:
    """Exact top-SNP accuracy of ND-PF, EM, PF, LD and SPS cases (I)-(IV) (YS §V-B, Fig. 1).

    For each m, ``n_reps`` panels from :func:`dpselect.experiments.datasets.simulate_tdt`
    (N = ``n_families``); on each the accuracy (probability of an SNP with
    the largest chi2) is computed exactly from the output distribution
    (:func:`dpselect.analysis.accuracy`) and averaged; the same panels serve
    every epsilon and mechanism.  "nd_pf" is permute-and-flip on the
    neighbour-distance utility (the library's default; distance 0 exactly on
    the optimal SNPs, so accuracy has the same meaning).  accounting:
    "proven" (every mechanism at the same proven epsilon), "paper" (the
    one-sided SPS cases with YS's published Thm 3 split), or "both".
    Every mechanism is private for replace neighbours (one family replaced, mathematics
    §4.4); the proven guarantees are those of mathematics §3.2 (SPS) and §9.1 (ND-PF).

    Parameters
    ----------
    ms : int or sequence of int, default=(5, 10, 15, 20)
        The numbers of SNPs (each >= 2).
    epsilons : float or sequence of float, default=(3, 6, 9, 12, 15, 18, 21)
        The epsilons (each > 0).
    n_families : int, default=150
        N, the families of each simulated panel.
    n_reps : int, default=40
        The panels per m.
    rng : SeedLike, default=None
        The randomness of the panels.
    accounting : {"proven", "paper", "both"}, default="proven"
        Which accounting the SPS cases use.
    gamma : float, default=4.0
        The tail exponent of SPS's noise.
    kappa : float, default=0.5
        SPS's budget split.
    threshold : float, default=6
        T of the Thm 5 bound.

    Returns
    -------
    list of dict
        Rows: m, epsilon, mechanism, case, accuracy, accounting, epsilon_proven.
    """
    if accounting not in (*_ACCOUNTINGS, "both"):
        raise ValueError(f"accounting must be one of {(*_ACCOUNTINGS, 'both')}, got {accounting!r}")
    accountings = _ACCOUNTINGS if accounting == "both" else (accounting,)
    n = check_int(n_families, "n_families", minimum=1)
    n_reps = check_int(n_reps, "n_reps", minimum=1)
    ms = [check_int(m, "m", minimum=2) for m in np.atleast_1d(ms).tolist()]
    epsilons = [check_epsilon(e) for e in np.atleast_1d(epsilons).tolist()]
    gen = check_random_state(rng)
    rows: dict[str, list[dict[str, object]]] = {a: [] for a in accountings}
    for m in ms:
        problems = [_problems(b, c, n, threshold) for b, c in (simulate_tdt(m, n, gen) for _ in range(n_reps))]
        memo: dict[tuple[Mechanism, str], float] = {}
        for eps in epsilons:
            for acc_name in accountings:
                for name, case, kind, mech in _mechanisms(eps, m, n, acc_name, gamma, kappa, threshold):
                    if (mech, kind) not in memo:
                        memo[(mech, kind)] = float(np.mean([accuracy(mech, p[kind]) for p in problems]))
                    rows[acc_name].append(
                        {
                            "m": m,
                            "epsilon": eps,
                            "mechanism": name,
                            "case": case,
                            "accuracy": memo[(mech, kind)],
                            "accounting": acc_name,
                            "epsilon_proven": mech.privacy(problems[0][kind]).epsilon,
                        }
                    )
    return [row for a in accountings for row in rows[a]]
