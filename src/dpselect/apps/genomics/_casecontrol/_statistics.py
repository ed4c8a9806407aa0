"""The five case-control tests of ``plink1.9 --model``, as functions of the count tables (mathematics §14).

Genotype rows ``(g2, g1, g0)`` count individuals with 2, 1, 0 copies of A1
(PLINK's AFF / UNAFF order); allele rows ``(A1, A2)``.  With cases ``r``,
controls ``s``:

* allelic: Pearson's 1-df chi2 of the allele table (``--assoc`` / ALLELIC);
* trend: Cochran–Armitage with weights (2, 1, 0),
  ``N (N T1 - R T)^2 / (R S (N Q - T^2))``, ``T1 = 2 r2 + r1``, ``T`` the
  total A1 count, ``Q = sum_i w_i^2 n_i`` (TREND);
* genotypic: Pearson's 2-df chi2 of the 2 x 3 genotype table (GENO);
* dominant: Pearson's 1-df chi2 of ``(g2 + g1, g0)`` (DOM, A1 dominant);
* recessive: Pearson's 1-df chi2 of ``(g2, g1 + g0)`` (REC).

Each is 0 where it is undefined (a zero margin), where PLINK prints NA.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "ASSOCIATION_TESTS",
    "DEGREES_OF_FREEDOM",
    "allele_tables",
    "collapsed_tables",
    "model_statistic",
    "pearson_2x2",
]

#: The association tests of ``plink1.9 --model``.
ASSOCIATION_TESTS = ("allelic", "trend", "genotypic", "dominant", "recessive")
#: Degrees of freedom of each test's chi2 reference law.
DEGREES_OF_FREEDOM = {"allelic": 1, "trend": 1, "genotypic": 2, "dominant": 1, "recessive": 1}


def pearson_2x2(a: Any, b: Any, c: Any, d: Any) -> np.ndarray:
    """Pearson's 1-df chi2 of [[a, b], [c, d]], ``N (ad - bc)^2 / ((a + b)(c + d)(a + c)(b + d))``; 0 at a 0 margin."""
    a, b, c, d = (np.asarray(v, dtype=np.float64) for v in (a, b, c, d))
    den = (a + b) * (c + d) * (a + c) * (b + d)
    num = (a + b + c + d) * (a * d - b * c) ** 2
    out = np.zeros(np.broadcast_shapes(a.shape, b.shape, c.shape, d.shape), dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _pearson_2x3(r: np.ndarray, s: np.ndarray) -> np.ndarray:
    r, s = r.astype(np.float64), s.astype(np.float64)
    n = r + s
    big_r, big_s = r.sum(axis=-1, keepdims=True), s.sum(axis=-1, keepdims=True)
    total = big_r + big_s
    out = np.zeros(r.shape[:-1])
    for obs, margin in ((r, big_r), (s, big_s)):
        exp = np.zeros_like(obs)
        np.divide(margin * n, total, out=exp, where=total > 0)
        term = np.zeros_like(obs)
        np.divide((obs - exp) ** 2, exp, out=term, where=exp > 0)
        out += term.sum(axis=-1)
    return out


def _trend(r: np.ndarray, s: np.ndarray) -> np.ndarray:
    r, s = r.astype(np.float64), s.astype(np.float64)
    n = r + s
    big_r, big_s = r.sum(axis=-1), s.sum(axis=-1)
    total = big_r + big_s
    t1 = 2 * r[..., 0] + r[..., 1]
    t = 2 * n[..., 0] + n[..., 1]
    q = 4 * n[..., 0] + n[..., 1]
    den = big_r * big_s * (total * q - t * t)
    out = np.zeros(den.shape)
    np.divide(total * (total * t1 - big_r * t) ** 2, den, out=out, where=den > 0)
    return out


def collapsed_tables(test: str, cases: np.ndarray, controls: np.ndarray) -> np.ndarray:
    """(m, 4) 2 x 2 tables (cases a, b; controls c, d) of the dominant or recessive test."""
    if test == "dominant":
        return np.stack([cases[:, 0] + cases[:, 1], cases[:, 2], controls[:, 0] + controls[:, 1], controls[:, 2]], 1)
    return np.stack([cases[:, 0], cases[:, 1] + cases[:, 2], controls[:, 0], controls[:, 1] + controls[:, 2]], 1)


def allele_tables(cases: np.ndarray, controls: np.ndarray) -> np.ndarray:
    """The allele rows ``(2 g2 + g1, g1 + 2 g0)`` of cases then controls, (m, 4), from genotype rows (m, 3)."""
    return np.stack(
        [
            2 * cases[:, 0] + cases[:, 1],
            cases[:, 1] + 2 * cases[:, 2],
            2 * controls[:, 0] + controls[:, 1],
            controls[:, 1] + 2 * controls[:, 2],
        ],
        axis=1,
    )


def model_statistic(
    test: str, cases: np.ndarray, controls: np.ndarray, alleles: np.ndarray | None = None
) -> np.ndarray:
    """The ``test`` statistic of genotype rows ``cases`` / ``controls`` (m, 3); ``alleles`` (m, 4) for "allelic".

    Without ``alleles`` the allelic test counts ``(2 g2 + g1, g1 + 2 g0)``.
    """
    cases, controls = np.asarray(cases), np.asarray(controls)
    if test == "allelic":
        if alleles is None:
            alleles = allele_tables(cases, controls)
        return pearson_2x2(*np.asarray(alleles).T)
    if test == "trend":
        return _trend(cases, controls)
    if test == "genotypic":
        return _pearson_2x3(cases, controls)
    return pearson_2x2(*collapsed_tables(test, cases, controls).T)
