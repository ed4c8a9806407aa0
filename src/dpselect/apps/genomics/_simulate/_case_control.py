"""Simulated case-control cohorts (for tests, examples and benchmarks), optionally written as PLINK 1 filesets."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...._params import BOOLEAN, PAIR, SEED, int_at_least, positive, validate_params
from ...._validation import check_random_state
from ....typing import SeedLike
from .._counts import CaseControlCounts
from .._io import BED_MAGIC
from .._rules import PATH
from ._trios import _pack

__all__ = ["CaseControlSimulation", "simulate_case_control"]


@dataclass(frozen=True)
class CaseControlSimulation:
    """Result of :func:`simulate_case_control`.

    Parameters
    ----------
    counts : CaseControlCounts
        The cohort's counts.
    causal : ndarray of int64
        Sorted indices of the causal SNPs.
    genotypes : ndarray of int8 or None
        (n_cases + n_controls, m) copies of A1, cases first; None unless
        asked for.
    is_case : ndarray of bool or None
        Case status per individual; None likewise.
    """

    counts: CaseControlCounts
    causal: np.ndarray
    genotypes: np.ndarray | None
    is_case: np.ndarray | None


@validate_params(
    {
        "n_cases": int_at_least(1),
        "n_controls": int_at_least(1),
        "n_snps": int_at_least(1),
        "n_causal": int_at_least(0),
        "odds_ratio": positive(),
        "maf": PAIR,
        "genotypes": BOOLEAN,
        "path": PATH.or_none(),
        "rng": SEED,
    }
)
def simulate_case_control(
    n_cases: int,
    n_controls: int,
    n_snps: int,
    *,
    n_causal: int = 10,
    odds_ratio: float = 1.5,
    maf: Sequence[float] = (0.05, 0.5),
    genotypes: bool = False,
    path: str | os.PathLike[str] | None = None,
    rng: SeedLike = None,
) -> CaseControlSimulation:
    r"""Simulate a case-control cohort with ``n_causal`` causal SNPs of a per-allele odds ratio.

    Per SNP an A1 frequency p ~ U(maf); controls are in Hardy-Weinberg
    proportions (1-p)^2, 2p(1-p), p^2 for 0, 1, 2 copies of A1; at a causal
    SNP the cases' genotype law is the multiplicative (rare-disease) model

    .. math:: P(g \mid \text{case}) \propto P(g)\, \mathrm{OR}^g, \quad g \in \{0, 1, 2\},

    every other SNP has the controls' law.  The counts are drawn as
    multinomials (fast); with ``genotypes=True`` or a ``path`` one genotype
    per individual and SNP is drawn instead (the counts are then those of the
    matrix), and a ``path`` writes ``.bed/.bim/.fam`` (cases phenotype 2,
    controls 1, sexes alternating 1, 2; chromosome 1, alleles A1 = "A",
    A2 = "G").  No missing calls.

    Parameters
    ----------
    n_cases : int
        Number of cases (>= 1).
    n_controls : int
        Number of controls (>= 1).
    n_snps : int
        Number of SNPs m.
    n_causal : int, default=10
        Number of causal SNPs (placed at random).
    odds_ratio : float, default=1.5
        Per-allele odds ratio of A1 at the causal SNPs (> 0).
    maf : (float, float), default=(0.05, 0.5)
        Range of the A1 frequency.
    genotypes : bool, default=False
        Also return the genotype matrix.
    path : str or path-like, default=None
        Fileset prefix to write.
    rng : None, int or numpy.random.Generator, default=None
        Randomness; a seed reproduces the cohort.

    Returns
    -------
    CaseControlSimulation
        The counts, the causal SNPs and (if asked for) the genotypes.

    Examples
    --------
    >>> from dpselect.apps.genomics import simulate_case_control
    >>> sim = simulate_case_control(100, 120, 50, n_causal=3, rng=0)
    >>> sim.counts.cases.shape, int(sim.counts.controls[0].sum()), sim.causal.size
    ((50, 3), 120, 3)
    """
    n1, n0, m, k, orr = n_cases, n_controls, n_snps, n_causal, odds_ratio
    if k > m:
        raise ValueError(f"n_causal must be <= n_snps = {m}, got {k}")
    lo, hi = maf
    if not 0.0 <= lo <= hi <= 1.0:
        raise ValueError(f"maf must be a range within [0, 1], got {maf!r}")
    gen = check_random_state(rng)
    causal = np.sort(gen.choice(m, size=k, replace=False))
    p = gen.uniform(lo, hi, size=m)
    law0 = np.stack([p * p, 2 * p * (1 - p), (1 - p) ** 2], axis=1)  # 2, 1, 0 copies of A1
    law1 = law0.copy()
    law1[causal] *= np.array([orr * orr, orr, 1.0])
    law1 /= law1.sum(axis=1, keepdims=True)
    want = genotypes or path is not None
    if not want:
        cases = gen.multinomial(n1, law1)
        controls = gen.multinomial(n0, law0)
        return CaseControlSimulation(CaseControlCounts(cases, controls), causal, None, None)
    # inverse-CDF draws: copies of A1 = 2 - (index of the law's category)
    u1, u0 = gen.random((n1, m)), gen.random((n0, m))
    g = np.concatenate(
        [
            2 - (u1[:, :, None] > np.cumsum(law1, axis=1)[None, :, :2]).sum(axis=2),
            2 - (u0[:, :, None] > np.cumsum(law0, axis=1)[None, :, :2]).sum(axis=2),
        ]
    ).astype(np.int8)
    is_case = np.arange(n1 + n0) < n1
    counts = CaseControlCounts(
        np.stack([(g[:n1] == c).sum(axis=0) for c in (2, 1, 0)], axis=1),
        np.stack([(g[n1:] == c).sum(axis=0) for c in (2, 1, 0)], axis=1),
        snp_ids=[f"rs{j}" for j in range(m)],
        chrom=np.full(m, "1"),
        pos=np.arange(1, m + 1),
        a1=np.full(m, "A"),
        a2=np.full(m, "G"),
    )
    if path is not None:
        _write(Path(path), g, is_case)
    return CaseControlSimulation(counts, causal, g if genotypes else None, is_case if genotypes else None)


def _write(prefix: Path, g: np.ndarray, is_case: np.ndarray) -> None:
    n, m = g.shape
    prefix.parent.mkdir(parents=True, exist_ok=True)
    prefix.with_suffix(".fam").write_text(
        "".join(f"I{i}\tI{i}\t0\t0\t{1 + i % 2}\t{2 if is_case[i] else 1}\n" for i in range(n))
    )
    prefix.with_suffix(".bim").write_text("".join(f"1\trs{j}\t0\t{j + 1}\tA\tG\n" for j in range(m)))
    with open(prefix.with_suffix(".bed"), "wb") as f:
        f.write(BED_MAGIC)
        f.write(_pack(g).tobytes())
